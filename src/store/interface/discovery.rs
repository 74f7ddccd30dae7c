//! What discovery reads (pi's `list`, `listAll`, `findById`, continue-recent), the joined
//! `allMessagesText` kept per session, and session references, the same on every backend
//! ([`Discovery`], implemented in `store::sqlite::discovery` and `store::postgres::discovery`).

use crate::error::Result;
use crate::store::keys::SessionKey;

/// The stored columns a `SessionInfo` is made of.
#[derive(Debug, Clone)]
pub struct InfoRow {
    pub sid: SessionKey,
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
    /// The machine a server's session was pushed from; `""` for the database's own sessions
    /// (every session on SQLite).
    pub origin: String,
}

/// Which sessions a listing covers. A PostgreSQL server also holds the sessions other
/// machines pushed to it; pi's own listings (the SessionManager's `list`, `listAll`) cover
/// only the server's own, while a look at everything (`sessiondb list`, `export --all`,
/// `serve`) covers every origin. On SQLite both are every session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origins {
    /// The database's own sessions (made or imported there).
    Own,
    /// Every session, wherever it was pushed from.
    Every,
}

/// A session found by what a user typed: key, header id, path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRef {
    /// Internal session key.
    pub sid: SessionKey,
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
pub trait Discovery {
    /// The sessions whose file is in folder `dir`, in no particular order.
    fn infos_in_dir(&self, dir: &str, origins: Origins) -> Result<Vec<InfoRow>>;
    /// Every session, in no particular order.
    fn infos_all(&self, origins: Origins) -> Result<Vec<InfoRow>>;
    /// The sessions whose folder is below `root` (an index range over the folders).
    fn infos_under(&self, root: &str) -> Result<Vec<InfoRow>>;
    /// The sessions whose header cwd is `cwd`.
    fn infos_for_cwd(&self, cwd: &str, origins: Origins) -> Result<Vec<InfoRow>>;
    /// The session with key `sid` (of any origin on a server).
    fn info_by_sid(&self, sid: SessionKey) -> Result<Option<InfoRow>>;
    /// How many sessions the database holds.
    fn session_count(&self) -> Result<i64>;
    /// Hands every stored joined text to `f`: session key, the line it is exact up to, the text.
    fn each_list_text(&self, f: &mut dyn FnMut(SessionKey, i64, String)) -> Result<()>;
    /// Session `sid`'s joined text and the line it is exact up to, if one is stored.
    fn list_text(&self, sid: SessionKey) -> Result<Option<(i64, String)>>;
    /// The first session in folder `dir`, most recently written first, whose header cwd `pick`
    /// accepts: its key and path.
    fn most_recent_in_dir(
        &self,
        dir: &str,
        pick: &mut dyn FnMut(Option<&str>) -> bool,
    ) -> Result<Option<(SessionKey, String)>>;
    /// The session written last anywhere: its key and path.
    fn most_recent(&self) -> Result<Option<(SessionKey, String)>>;
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
    fn list_texts_of(&self, sids: &[SessionKey]) -> Result<Vec<Option<(i64, String)>>>;
    /// The sessions whose header id starts with `prefix` (at most 50), by id.
    fn refs_by_id_prefix(&self, prefix: &str) -> Result<Vec<SessionRef>>;
    /// The sessions whose file is at `path`: at most one on SQLite (paths are unique), one per
    /// origin on PostgreSQL.
    fn refs_by_path(&self, path: &str) -> Result<Vec<SessionRef>>;
}

/// The joined texts kept as a cache that may fall behind the lines appended since, brought up
/// to date by `index` (SQLite: a manager's append does not fold its text in). A server folds
/// each append's text in as it is written, and has no such role.
pub trait ListTextCache {
    /// The sessions whose joined text misses lines appended since.
    fn stale_list_texts(&self) -> Result<Vec<SessionKey>>;
    /// The number of session `sid`'s last line.
    fn last_seq(&self, sid: SessionKey) -> Result<i64>;
    /// Stores session `sid`'s joined text, exact up to line `upto`.
    fn save_list_text(&self, sid: SessionKey, upto: i64, text: &str) -> Result<()>;
    /// Forgets session `sid`'s joined text.
    fn drop_list_text(&self, sid: SessionKey) -> Result<()>;
    /// `out` followed by the message texts of session `sid` from line `from_seq` on,
    /// space-joined.
    fn append_list_texts(&self, sid: SessionKey, from_seq: i64, out: String) -> Result<String>;
}
