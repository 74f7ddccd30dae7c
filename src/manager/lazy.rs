//! Reads by storage key, for hosts that parse a large session lazily: the keys of a branch
//! (keys, ids and types: no line read), then the lines of the few keys a caller looks at.

use super::SessionManager;
use crate::error::Result;
use crate::read::tree::PathStep;
use crate::store::{entries, write};

impl SessionManager {
    /// The storage keys, ids and types of pi's `getBranch(from)` (default: from the leaf),
    /// root first; empty for an unknown id. No line is read.
    /// With `limit`, only the last `limit` steps of that path (the ones nearest `from`), for
    /// a host that holds the path to an earlier entry already.
    pub fn branch_steps(&self, from: Option<&str>, limit: Option<i64>) -> Result<Vec<PathStep>> {
        let Some(id) = from.or(self.leaf.as_deref()) else { return Ok(Vec::new()) };
        let Some(limit) = limit else { return self.tree()?.branch_keys(id) };
        let db = self.db()?;
        let Some((key, _)) = write::entry_node(db, self.sid, id)? else { return Ok(Vec::new()) };
        let mut steps = entries::walk_up_steps(db, key, limit)?;
        steps.reverse();
        Ok(steps)
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
