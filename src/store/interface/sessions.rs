//! One session's row and its entry ids: what the layers above read of them, the same on every
//! backend ([`Sessions`], implemented in `store::sqlite::sessions` and
//! `store::postgres::sessions`).

use crate::error::Result;
use crate::store::keys::SessionKey;

/// A session's header line and the fields of it stored as columns.
pub struct SessionRow {
    /// The exact header line.
    pub header: String,
    /// Path below the directory it was imported from.
    pub rel_path: Option<String>,
    /// Header `cwd` when it is a string.
    pub cwd: Option<String>,
    /// Header `id`.
    pub id: String,
    /// Header `timestamp`, as written.
    pub created: Option<String>,
    /// The machine a server's session was pushed from; `""` for the database's own.
    pub origin: String,
}

/// Where a moved session is (`sessiondb move`): its file and the header naming its new cwd.
pub struct SessionPlace<'a> {
    /// Absolute path of the session's file.
    pub path: &'a str,
    /// The folder holding that file.
    pub dir: &'a str,
    /// The path below the sessions folder.
    pub rel_path: &'a str,
    /// The header's new `cwd`.
    pub cwd: &'a str,
    /// The new exact header line.
    pub header: &'a str,
}

/// A session's key, and its file's size and modification time when it was imported from one.
pub type SessionFile = (SessionKey, Option<i64>, Option<i64>);

/// Reads of one session's row and its entry ids.
pub trait Sessions {
    /// The stored row of session `sid`.
    fn session_row(&self, sid: SessionKey) -> Result<SessionRow>;
    /// The key of the session whose file is at the absolute `path`.
    fn sid_by_path(&self, path: &str) -> Result<Option<SessionKey>>;
    /// Whether session `sid` has an entry with id `id`.
    fn entry_id_exists(&self, sid: SessionKey, id: &str) -> Result<bool>;
    /// pi's `getEntryCount()` for a session whose ids may repeat: distinct ids.
    fn distinct_entry_ids(&self, sid: SessionKey) -> Result<i64>;
    /// Removes session `sid` with its entries.
    fn delete_session(&self, sid: SessionKey) -> Result<()>;
    /// Moves session `sid` to `place`: its path, folder, cwd and header line; its entries stay.
    fn relocate_session(&self, sid: SessionKey, place: &SessionPlace<'_>) -> Result<()>;
}
