//! What discovery reads (pi's `list`, `listAll`, `findById`, continue-recent), the joined
//! `allMessagesText` kept per session, and session references, the same on every backend
//! ([`Discovery`], implemented in `store::sqlite::discovery` and `store::postgres::discovery`).

use crate::error::Result;
use crate::store::handle::Db;
use crate::store::keys::SessionKey;

pub use crate::store::interface::discovery::*;

/// The sessions whose file is in folder `dir`, in no particular order.
pub fn infos_in_dir(db: &Db, dir: &str, origins: Origins) -> Result<Vec<InfoRow>> {
    db.store().infos_in_dir(dir, origins)
}

/// Every session, in no particular order.
pub fn infos_all(db: &Db, origins: Origins) -> Result<Vec<InfoRow>> {
    db.store().infos_all(origins)
}

/// The sessions whose folder is below `root` (an index range over the folders).
pub fn infos_under(db: &Db, root: &str) -> Result<Vec<InfoRow>> {
    db.store().infos_under(root)
}

/// The sessions whose header cwd is `cwd`.
pub fn infos_for_cwd(db: &Db, cwd: &str, origins: Origins) -> Result<Vec<InfoRow>> {
    db.store().infos_for_cwd(cwd, origins)
}

/// How many sessions the database holds.
pub fn session_count(db: &Db) -> Result<i64> {
    db.store().session_count()
}

/// Hands every stored joined text to `f`: session key, the line it is exact up to, the text.
pub fn each_list_text(db: &Db, mut f: impl FnMut(SessionKey, i64, String)) -> Result<()> {
    db.store().each_list_text(&mut f)
}

/// Session `sid`'s joined text and the line it is exact up to, if one is stored.
pub fn list_text(db: &Db, sid: SessionKey) -> Result<Option<(i64, String)>> {
    db.store().list_text(sid)
}

/// The first session in folder `dir`, most recently written first, whose header cwd `pick`
/// accepts: its key and path.
pub fn most_recent_in_dir(
    db: &Db,
    dir: &str,
    mut pick: impl FnMut(Option<&str>) -> bool,
) -> Result<Option<(SessionKey, String)>> {
    db.store().most_recent_in_dir(dir, &mut pick)
}

/// The session written last anywhere: its key and path.
pub fn most_recent(db: &Db) -> Result<Option<(SessionKey, String)>> {
    db.store().most_recent()
}

/// The path of the first session with header id `id` in folder `dir` whose header cwd `pick`
/// accepts.
pub fn path_with_id_in_dir(
    db: &Db,
    id: &str,
    dir: &str,
    mut pick: impl FnMut(Option<&str>) -> bool,
) -> Result<Option<String>> {
    db.store().path_with_id_in_dir(id, dir, &mut pick)
}

/// The sessions whose header id is `id`, oldest first.
pub fn refs_by_id(db: &Db, id: &str) -> Result<Vec<SessionRef>> {
    db.store().refs_by_id(id)
}

/// [`list_text`] of each session of `sids`, in that order. On PostgreSQL one statement (the
/// round trip a count would cost is a tenth of `list` there); on SQLite, for most of the
/// sessions one pass over the joined texts, else a lookup per session.
pub fn list_texts_of(db: &Db, sids: &[SessionKey]) -> Result<Vec<Option<(i64, String)>>> {
    db.store().list_texts_of(sids)
}

/// The sessions whose header id starts with `prefix` (at most 50), by id.
pub fn refs_by_id_prefix(db: &Db, prefix: &str) -> Result<Vec<SessionRef>> {
    db.store().refs_by_id_prefix(prefix)
}

/// The sessions whose file is at `path`: at most one on SQLite (paths are unique), one per
/// origin on PostgreSQL.
pub fn refs_by_path(db: &Db, path: &str) -> Result<Vec<SessionRef>> {
    db.store().refs_by_path(path)
}

/// The stored SessionInfo columns of session `sid` (of any origin on a server).
pub fn info_by_sid(db: &Db, sid: SessionKey) -> Result<Option<InfoRow>> {
    db.store().info_by_sid(sid)
}
