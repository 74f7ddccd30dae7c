//! Replication: the local rows and lines `push` sends ([`Replica`]) and what a receiving
//! database keeps and stores ([`Receiver`]), on the `Db` given.

use crate::error::Result;
use crate::store::handle::Db;
use crate::store::keys::SessionKey;
use std::collections::HashMap;

pub use crate::store::interface::replica::*;

/// Every session of the local database, in key order.
pub fn sessions(db: &Db) -> Result<Vec<LocalSession>> {
    db.store().local_sessions()
}

/// Calls `f` with lines `from..=to` of session `sid`, in file order.
pub fn lines(
    db: &Db,
    sid: SessionKey,
    from: i64,
    to: i64,
    mut f: impl FnMut(LocalLine<'_>) -> Result<()>,
) -> Result<()> {
    db.store().local_lines(sid, from, to, &mut f)
}

/// pi's `allMessagesText` of session `sid`: its user and assistant texts, space-joined.
pub fn all_messages_text(db: &Db, sid: SessionKey) -> Result<String> {
    db.store().local_all_messages_text(sid)
}

/// Whether files are imported into `db` through a staging database and a push (a server).
pub fn imports_by_push(db: &Db) -> bool {
    db.store().imports_by_push()
}

/// `path` as `db` keeps it (the key of [`origin_files`]).
pub fn stored_path(db: &Db, path: &str) -> String {
    db.store().stored_path(path)
}

/// Holds the origin's push lock until [`unlock_origin`].
pub fn lock_origin(db: &Db, origin: &str) -> Result<()> {
    db.store().lock_origin(origin)
}

/// Releases [`lock_origin`]'s lock.
pub fn unlock_origin(db: &Db, origin: &str) -> Result<()> {
    db.store().unlock_origin(origin)
}

/// The origin's sessions `db` holds, by path: those at `paths` (stored paths), or all.
pub fn origin_sessions(db: &Db, origin: &str, paths: Option<&[String]>) -> Result<HashMap<String, ReceivedSession>> {
    db.store().origin_sessions(origin, paths)
}

/// Stores one batch of a push in one transaction; returns the receiver's keys.
pub fn receive_batch(
    db: &Db,
    origin: &str,
    batch: &[Outgoing<'_>],
    lines: &mut BatchLines<'_>,
) -> Result<Vec<SessionKey>> {
    db.store().receive_batch(origin, batch, lines)
}

/// Removes sessions; returns how many.
pub fn remove_sessions(db: &Db, skeys: &[SessionKey]) -> Result<u64> {
    if skeys.is_empty() {
        return Ok(0);
    }
    db.store().remove_sessions(skeys)
}

/// The origin's sessions with their files' signatures, by path: those at `paths`, or all.
pub fn origin_files(db: &Db, origin: &str, paths: Option<&[String]>) -> Result<HashMap<String, KnownFile>> {
    db.store().origin_files(origin, paths)
}

/// Records the signatures of files just sent.
pub fn record_files(db: &Db, origin: &str, files: &[(String, i64, i64)]) -> Result<()> {
    if files.is_empty() {
        return Ok(());
    }
    db.store().record_files(origin, files)
}

/// Marks sessions whose file is gone (or back).
pub fn set_files_missing(db: &Db, skeys: &[SessionKey], missing: bool) -> Result<()> {
    if skeys.is_empty() {
        return Ok(());
    }
    db.store().set_files_missing(skeys, missing)
}
