//! What discovery reads (pi's `list`, `listAll`, `findById`, continue-recent), the joined
//! `allMessagesText` kept per session, and session references, the same on every backend
//! ([`Discovery`], implemented in `store::sqlite::discovery` and `store::postgres::discovery`).

use crate::error::Result;
use crate::store::handle::Db;

/// The stored columns a `SessionInfo` is made of.
#[derive(Debug, Clone)]
pub struct InfoRow {
    pub sid: i64,
    pub path: String,
    pub id: String,
    pub cwd: Option<String>,
    pub name: Option<String>,
    /// Header timestamp, as written.
    pub created: Option<String>,
    pub parent_session: Option<String>,
    pub message_count: i64,
    /// Newest message timestamp (ms), as pi computes it.
    pub last_activity_ms: Option<f64>,
    pub first_message: Option<String>,
    /// The file's modification time at import, or the last write (ns).
    pub written_ns: Option<i64>,
    pub last_seq: i64,
}

/// A session found by what a user typed: key, header id, path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRef {
    /// Internal session key.
    pub sid: i64,
    /// Header id.
    pub id: String,
    /// The session's file path.
    pub path: String,
    /// On PostgreSQL, the machine the session was pushed from (`""`: made on the server);
    /// `None` on SQLite.
    pub origin: Option<String>,
}

impl SessionRef {
    /// Where the session is, for messages: its path, after its origin when it has one.
    pub fn place(&self) -> String {
        match self.origin.as_deref() {
            Some(o) if !o.is_empty() => format!("{o}:{}", self.path),
            _ => self.path.clone(),
        }
    }
}

/// Discovery's reads.
pub(crate) trait Discovery {
    /// The sessions whose file is in folder `dir`, in no particular order.
    fn infos_in_dir(&self, dir: &str) -> Result<Vec<InfoRow>>;
    /// Every session, in no particular order.
    fn infos_all(&self) -> Result<Vec<InfoRow>>;
    /// The sessions whose folder is below `root` (an index range over the folders).
    fn infos_under(&self, root: &str) -> Result<Vec<InfoRow>>;
    /// The sessions whose header cwd is `cwd`.
    fn infos_for_cwd(&self, cwd: &str) -> Result<Vec<InfoRow>>;
    /// How many sessions the database holds.
    fn session_count(&self) -> Result<i64>;
    /// Hands every stored joined text to `f`: session key, the line it is exact up to, the text.
    fn each_list_text(&self, f: &mut dyn FnMut(i64, i64, String)) -> Result<()>;
    /// Session `sid`'s joined text and the line it is exact up to, if one is stored.
    fn list_text(&self, sid: i64) -> Result<Option<(i64, String)>>;
    /// The sessions whose joined text misses lines appended since.
    fn stale_list_texts(&self) -> Result<Vec<i64>>;
    /// The number of session `sid`'s last line.
    fn last_seq(&self, sid: i64) -> Result<i64>;
    /// Stores session `sid`'s joined text, exact up to line `upto`.
    fn save_list_text(&self, sid: i64, upto: i64, text: &str) -> Result<()>;
    /// Forgets session `sid`'s joined text.
    fn drop_list_text(&self, sid: i64) -> Result<()>;
    /// `out` followed by the message texts of session `sid` from line `from_seq` on,
    /// space-joined.
    fn append_list_texts(&self, sid: i64, from_seq: i64, out: String) -> Result<String>;
    /// The first session in folder `dir`, most recently written first, whose header cwd `pick`
    /// accepts: its key and path.
    fn most_recent_in_dir(
        &self,
        dir: &str,
        pick: &mut dyn FnMut(Option<&str>) -> bool,
    ) -> Result<Option<(i64, String)>>;
    /// The session written last anywhere: its key and path.
    fn most_recent(&self) -> Result<Option<(i64, String)>>;
    /// The path of the first session with header id `id` in folder `dir` whose header cwd `pick`
    /// accepts.
    fn path_with_id_in_dir(
        &self,
        id: &str,
        dir: &str,
        pick: &mut dyn FnMut(Option<&str>) -> bool,
    ) -> Result<Option<String>>;
    /// The sessions whose header id is `id`, oldest first.
    fn refs_by_id(&self, id: &str) -> Result<Vec<SessionRef>>;
    /// [`Discovery::list_text`] of each session of `sids`, in that order.
    fn list_texts_of(&self, sids: &[i64]) -> Result<Vec<Option<(i64, String)>>>;
    /// The sessions whose header id starts with `prefix` (at most 50), by id.
    fn refs_by_id_prefix(&self, prefix: &str) -> Result<Vec<SessionRef>>;
    /// The sessions whose file is at `path`: at most one on SQLite (paths are unique), one per
    /// origin on PostgreSQL.
    fn refs_by_path(&self, path: &str) -> Result<Vec<SessionRef>>;
}

/// The sessions whose file is in folder `dir`, in no particular order.
pub fn infos_in_dir(db: &Db, dir: &str) -> Result<Vec<InfoRow>> {
    db.store().infos_in_dir(dir)
}

/// Every session, in no particular order.
pub fn infos_all(db: &Db) -> Result<Vec<InfoRow>> {
    db.store().infos_all()
}

/// The sessions whose folder is below `root` (an index range over the folders).
pub fn infos_under(db: &Db, root: &str) -> Result<Vec<InfoRow>> {
    db.store().infos_under(root)
}

/// The sessions whose header cwd is `cwd`.
pub fn infos_for_cwd(db: &Db, cwd: &str) -> Result<Vec<InfoRow>> {
    db.store().infos_for_cwd(cwd)
}

/// How many sessions the database holds.
pub fn session_count(db: &Db) -> Result<i64> {
    db.store().session_count()
}

/// Hands every stored joined text to `f`: session key, the line it is exact up to, the text.
pub fn each_list_text(db: &Db, mut f: impl FnMut(i64, i64, String)) -> Result<()> {
    db.store().each_list_text(&mut f)
}

/// Session `sid`'s joined text and the line it is exact up to, if one is stored.
pub fn list_text(db: &Db, sid: i64) -> Result<Option<(i64, String)>> {
    db.store().list_text(sid)
}

/// The sessions whose joined text misses lines appended since.
pub fn stale_list_texts(db: &Db) -> Result<Vec<i64>> {
    db.store().stale_list_texts()
}

/// The number of session `sid`'s last line.
pub fn last_seq(db: &Db, sid: i64) -> Result<i64> {
    db.store().last_seq(sid)
}

/// Stores session `sid`'s joined text, exact up to line `upto`.
pub fn save_list_text(db: &Db, sid: i64, upto: i64, text: &str) -> Result<()> {
    db.store().save_list_text(sid, upto, text)
}

/// Forgets session `sid`'s joined text.
pub fn drop_list_text(db: &Db, sid: i64) -> Result<()> {
    db.store().drop_list_text(sid)
}

/// `out` followed by the message texts of session `sid` from line `from_seq` on,
/// space-joined.
pub fn append_list_texts(db: &Db, sid: i64, from_seq: i64, out: String) -> Result<String> {
    db.store().append_list_texts(sid, from_seq, out)
}

/// The first session in folder `dir`, most recently written first, whose header cwd `pick`
/// accepts: its key and path.
pub fn most_recent_in_dir(
    db: &Db,
    dir: &str,
    mut pick: impl FnMut(Option<&str>) -> bool,
) -> Result<Option<(i64, String)>> {
    db.store().most_recent_in_dir(dir, &mut pick)
}

/// The session written last anywhere: its key and path.
pub fn most_recent(db: &Db) -> Result<Option<(i64, String)>> {
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
pub fn list_texts_of(db: &Db, sids: &[i64]) -> Result<Vec<Option<(i64, String)>>> {
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
