//! Entry rows: a session's tree (the entry by id, by key, the last one, paths up to the root,
//! children, labels) and its lines in file order, the same on every backend ([`Entries`],
//! implemented in `store::sqlite::entries` and `store::postgres::entries`).

use crate::error::Result;
use crate::store::handle::Db;
use crate::store::keys::{EntryKey, SessionKey};

pub use crate::store::interface::entries::*;

/// Whether session `sid`'s derived entry columns can be trusted, and its entry count (`None`
/// when there is no such session).
pub fn tree_state(db: &Db, sid: SessionKey) -> Result<Option<(bool, i64)>> {
    db.store().tree_state(sid)
}

/// The last entry of session `sid` in file order.
pub fn last_entry(db: &Db, sid: SessionKey) -> Result<Option<EntryRow>> {
    db.store().last_entry(sid)
}

/// The entry with `id` in session `sid` (the later line wins for a repeated id).
pub fn entry_by_id(db: &Db, sid: SessionKey, id: &str) -> Result<Option<EntryRow>> {
    db.store().entry_by_id(sid, id)
}

/// The entry stored under `key`.
pub fn entry_by_key(db: &Db, key: EntryKey) -> Result<Option<EntryRow>> {
    db.store().entry_by_key(key)
}

/// Every entry of session `sid` (header lines excluded) in file order.
pub fn all_entries(db: &Db, sid: SessionKey) -> Result<Vec<EntryRow>> {
    db.store().all_entries(sid)
}

/// The label lines of session `sid` in file order.
pub fn label_entries(db: &Db, sid: SessionKey) -> Result<Vec<EntryRow>> {
    db.store().label_entries(sid)
}

/// The entries of session `sid` whose `parentId` is `id`, in file order.
pub fn children(db: &Db, sid: SessionKey, id: &str) -> Result<Vec<EntryRow>> {
    db.store().children(sid, id)
}

/// The entries from `key` up through their parents, leaf first: after `stop` (when given) and
/// after `limit` rows the walk ends.
pub fn walk_up(db: &Db, key: EntryKey, stop: Option<EntryKey>, limit: i64) -> Result<Vec<EntryRow>> {
    db.store().walk_up(key, stop, limit)
}

/// Keys, ids, types and roles from `key` up through the parents, at most `limit`, leaf first.
pub fn walk_up_steps(db: &Db, key: EntryKey, limit: i64) -> Result<Vec<PathStep>> {
    db.store().walk_up_steps(key, limit)
}

/// The linking columns of every entry of session `sid` (header lines excluded) in file order,
/// without reading a line.
pub fn links(db: &Db, sid: SessionKey) -> Result<Vec<Link>> {
    db.store().links(sid)
}

/// The type, role and time of the entry stored under `key`, without its line.
pub fn entry_kind(db: &Db, key: EntryKey) -> Result<Option<Kind>> {
    db.store().entry_kind(key)
}

/// Hands `f` the key and line of at most `limit` entries of session `sid` from key `from` on
/// (header lines excluded), in file order, without copying the lines.
pub fn lines_from(
    db: &Db,
    sid: SessionKey,
    from: EntryKey,
    limit: i64,
    f: &mut dyn FnMut(EntryKey, &[u8]),
) -> Result<()> {
    db.store().lines_from(sid, from, limit, f)
}

/// Hands `f` every line of session `sid` (header lines included) in file order, each followed
/// by `\n`, as one stream of bytes in pieces.
/// `f` may keep a piece's buffer, leaving another in its place.
pub fn write_lines(db: &Db, sid: SessionKey, mut f: impl FnMut(&mut Vec<u8>) -> Result<()>) -> Result<()> {
    db.store().write_lines(sid, &mut f)
}

/// The key of every session, in order.
pub fn all_sessions(db: &Db) -> Result<Vec<SessionKey>> {
    db.store().all_sessions()
}
