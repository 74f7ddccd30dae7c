//! [`SyncStates`] on PostgreSQL: none; a server keeps file signatures of its own
//! (`store::postgres::files`).

use crate::store::keys::SessionKey;
use crate::store::postgres::Pg;
use crate::store::sync_state::{Position, SyncState, SyncStates};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

impl SyncStates for Pg {
    fn keeps_file_states(&self) -> bool {
        false
    }

    fn states_under(&self, _dir: &Path) -> crate::error::Result<HashMap<PathBuf, SyncState>> {
        Err(self.unsupported("reading the sync state of a local folder's files"))
    }

    fn state_at(&self, _path: &Path) -> crate::error::Result<Option<SyncState>> {
        Err(self.unsupported("reading the sync state of a local file"))
    }

    fn position(&self, _sid: SessionKey) -> crate::error::Result<Option<Position>> {
        Err(self.unsupported("reading how far a local file was synced"))
    }

    fn set_position(&self, _sid: SessionKey, _offset: i64, _tail: i64) -> crate::error::Result<()> {
        Err(self.unsupported("recording how far a local file was synced"))
    }

    fn set_missing(&self, _sid: SessionKey, _missing: bool) -> crate::error::Result<()> {
        Err(self.unsupported("marking a local file missing"))
    }
}
