//! What a host that keeps pi's JSONL files beside the database (the `sessiondb-pi` launcher)
//! needs of the manager: the exact header line, the key of the last line, and recording that
//! the session's file now holds every stored line, so that a later sync finds it unchanged.

use super::{Persistence, SessionManager};
use crate::error::Result;
use crate::jsonl::signature::file_signature;
use crate::jsonl::signature::tail_hash;
use crate::read::tree::SessionTree;
use crate::store::keys::EntryKey;
use std::path::Path;

impl SessionManager {
    /// The session's header line exactly as stored (and as pi writes it first in the file).
    pub fn header_line(&self) -> Result<String> {
        Ok(self.db()?.store().session_row(self.sid)?.header)
    }

    /// The storage key of the session's last line (`None` when it has no entries): what a
    /// host that copies lines out asks [`SessionManager::lines_after`] to start after.
    pub fn last_key(&self) -> Result<Option<EntryKey>> {
        Ok(SessionTree::open(self.db()?, self.sid)?.last_entry()?.map(|r| r.key))
    }

    /// Records that the saved session's file holds exactly its stored lines now: its size and
    /// modification time (and, where the database keeps read positions, the hash of its last
    /// bytes), as a sync would after reading it. A session not saved yet is left alone.
    pub fn note_file_written(&mut self) -> Result<()> {
        let Persistence::Saved { file, .. } = &self.persistence else { return Ok(()) };
        if file.is_empty() {
            return Ok(());
        }
        let path = Path::new(file);
        let sig = file_signature(path)?;
        let sid = self.sid;
        let tx = self.conn.write()?;
        if let Some(states) = tx.store().sync_states() {
            let tail = tail_hash(path, u64::try_from(sig.size).unwrap_or(0))?;
            states.set_position(sid, sig.size, tail)?;
        }
        tx.store().set_signature(sid, sig)?;
        tx.commit()
    }
}
