//! The local rows and lines `push` sends to a server, the same on every backend ([`Replica`],
//! implemented in `store::sqlite::replica`; a server is not pushed from).

//! The local rows and lines `push` sends to a server, the same on every backend ([`Replica`],
//! implemented in `store::sqlite::replica`; a server is not pushed from).

use crate::error::Result;
use crate::store::handle::Db;

pub use crate::store::interface::replica::*;

/// Every session of the local database, in key order.
pub fn sessions(db: &Db) -> Result<Vec<LocalSession>> {
    db.store().local_sessions()
}

/// Calls `f` with lines `from..=to` of session `sid`, in file order.
pub fn lines(db: &Db, sid: i64, from: i64, to: i64, mut f: impl FnMut(LocalLine<'_>) -> Result<()>) -> Result<()> {
    db.store().local_lines(sid, from, to, &mut f)
}

/// pi's `allMessagesText` of session `sid`: its user and assistant texts, space-joined.
pub fn all_messages_text(db: &Db, sid: i64) -> Result<String> {
    db.store().local_all_messages_text(sid)
}
