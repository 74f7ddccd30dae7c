//! Reads by storage key, for hosts that parse a large session lazily: the keys of a branch
//! (no line read), then the lines of the few keys a caller looks at.

use super::SessionManager;
use crate::error::Result;

impl SessionManager {
    /// The storage keys of pi's `getBranch(from)` (default: from the leaf), root first; empty
    /// for an unknown id. No line is read.
    pub fn branch_keys(&self, from: Option<&str>) -> Result<Vec<i64>> {
        let Some(id) = from.or(self.leaf.as_deref()) else { return Ok(Vec::new()) };
        Ok(self.tree()?.branch_keys(id)?.into_iter().map(|s| s.key).collect())
    }

    /// Hands `f` the line stored under each of `keys`, in that order (a key with no line is
    /// skipped).
    pub fn lines_at(&self, keys: &[i64], f: &mut dyn FnMut(i64, &[u8])) -> Result<()> {
        let tree = self.tree()?;
        for &k in keys {
            if let Some(row) = tree.entry_at(k)? {
                f(k, row.body.as_bytes());
            }
        }
        Ok(())
    }
}
