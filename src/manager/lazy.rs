//! Reads by storage key, for hosts that parse a large session lazily: the keys of a branch
//! (keys, ids and types: no line read), then the lines of the few keys a caller looks at.

use super::SessionManager;
use crate::error::Result;
use crate::read::tree::PathStep;

impl SessionManager {
    /// The storage keys, ids and types of pi's `getBranch(from)` (default: from the leaf),
    /// root first; empty for an unknown id. No line is read.
    pub fn branch_steps(&self, from: Option<&str>) -> Result<Vec<PathStep>> {
        let Some(id) = from.or(self.leaf.as_deref()) else { return Ok(Vec::new()) };
        self.tree()?.branch_keys(id)
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
