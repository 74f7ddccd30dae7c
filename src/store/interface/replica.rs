//! Replication, the same on every backend: the local rows and lines `push` sends ([`Replica`],
//! implemented in `store::sqlite::replica`; a server is not pushed from), and what a database
//! that receives pushes keeps and stores ([`Receiver`], implemented in
//! `store::postgres::replica`; a SQLite file receives none).

use crate::error::Result;
use crate::store::derive::Derived;
use crate::store::keys::SessionKey;
use std::collections::HashMap;

/// A local session's row.
#[derive(Debug, Clone)]
pub struct LocalSession {
    /// Local key (changes when the session is imported again).
    pub sid: SessionKey,
    /// Absolute path of the session's file.
    pub path: String,
    /// Header id.
    pub id: String,
    /// Folder of the file.
    pub dir: String,
    /// Path below the directory it was imported from.
    pub rel_path: Option<String>,
    /// Header cwd.
    pub cwd: Option<String>,
    /// Header timestamp.
    pub created: Option<String>,
    /// Header parentSession.
    pub parent_session: Option<String>,
    /// The exact header line.
    pub header: String,
    /// File modification time at import.
    pub file_mtime_ns: Option<i64>,
    /// Newest write.
    pub written_ns: i64,
    /// Session name.
    pub name: Option<String>,
    /// Message entries.
    pub message_count: i64,
    /// First user message text.
    pub first_message: Option<String>,
    /// Newest activity.
    pub last_activity_ms: Option<f64>,
    /// Entries (header excluded).
    pub entry_count: i64,
    /// Number of the last stored line.
    pub last_seq: i64,
    /// Whether the derived columns of its lines are exact.
    pub tree_ok: bool,
}

/// One stored line and the fields `push` sends beside it.
pub struct LocalLine<'a> {
    /// 1-based position in the file.
    pub seq: i64,
    /// Entry id.
    pub id: Option<&'a str>,
    /// parentId.
    pub parent_id: Option<&'a str>,
    /// Entry type.
    pub kind: Option<&'a str>,
    /// Timestamp as written.
    pub ts: Option<&'a str>,
    /// The exact line.
    pub body: &'a str,
    /// `message.role`.
    pub role: Option<&'a str>,
    /// `new Date(timestamp).getTime()`.
    pub ts_ms: Option<i64>,
    /// The derived columns (`store::derive`): parent key, depth, compaction, thinking-level
    /// and model keys, with the local session's keys.
    pub derived: Derived,
}

/// What `push` reads of a local database.
pub trait Replica {
    /// Every session of the local database, in key order.
    fn local_sessions(&self) -> Result<Vec<LocalSession>>;
    /// Calls `f` with lines `from..=to` of session `sid`, in file order.
    fn local_lines(
        &self,
        sid: SessionKey,
        from: i64,
        to: i64,
        f: &mut dyn FnMut(LocalLine<'_>) -> Result<()>,
    ) -> Result<()>;
    /// pi's `allMessagesText` of session `sid`: its user and assistant texts, space-joined.
    fn local_all_messages_text(&self, sid: SessionKey) -> Result<String>;
}

/// What a receiving database holds of one of an origin's sessions.
#[derive(Debug, Clone)]
pub struct ReceivedSession {
    /// The receiver's session key.
    pub skey: SessionKey,
    /// The origin's key of the session when it was last pushed.
    pub local_sid: SessionKey,
    /// The origin's `written_ns` when it was last pushed.
    pub written_ns: i64,
    /// Lines held.
    pub last_seq: i64,
    /// FNV-1a of the header and lines `1..=last_seq`, each with its `\n`.
    pub lines_hash: u64,
}

/// A session of an origin as `import` and `sync` on a receiving database see it.
#[derive(Debug, Clone, Copy)]
pub struct KnownFile {
    /// The receiver's key of the session.
    pub skey: SessionKey,
    /// Size and modification time of the file it was imported from (`None`: not imported
    /// from a file, e.g. made by the SessionManager).
    pub signature: Option<(i64, i64)>,
    /// Its file was gone at the last sync.
    pub missing: bool,
}

/// One session of a batch a push sends.
pub struct Outgoing<'a> {
    /// Its local row.
    pub session: &'a LocalSession,
    /// Its `allMessagesText`.
    pub all_text: String,
    /// The receiver's key when it holds the session already.
    pub existing: Option<SessionKey>,
    /// Sent whole: the lines the receiver holds are dropped first.
    pub whole: bool,
}

/// Streams one session's lines of a batch (by its index in the batch) into `sink`; returns the
/// hash of the header and every line the receiver then holds.
pub type BatchLines<'f> = dyn FnMut(usize, &mut dyn FnMut(&LocalLine<'_>) -> Result<()>) -> Result<u64> + 'f;

/// What `push` (and `import` and `sync` on a server, through push) need of the receiving
/// database.
pub trait Receiver {
    /// `path` as this database keeps it (the key of [`Receiver::origin_files`]).
    fn stored_path(&self, path: &str) -> String;
    /// Holds the origin's push lock until [`Receiver::unlock_origin`]: two pushes of one
    /// origin take turns; pushes of different origins run at once.
    fn lock_origin(&self, origin: &str) -> Result<()>;
    /// Releases [`Receiver::lock_origin`]'s lock.
    fn unlock_origin(&self, origin: &str) -> Result<()>;
    /// The origin's sessions, by path: those at `paths` (as [`Receiver::stored_path`] gives
    /// them), or all of them with `None`.
    fn origin_sessions(&self, origin: &str, paths: Option<&[String]>) -> Result<HashMap<String, ReceivedSession>>;
    /// Stores one batch in one transaction: the session rows, then every line (`lines`
    /// streams each session's), then the hashes `lines` returned. Returns the receiver's keys.
    fn receive_batch(
        &self,
        origin: &str,
        batch: &[Outgoing<'_>],
        lines: &mut BatchLines<'_>,
    ) -> Result<Vec<SessionKey>>;
    /// Removes sessions (their lines go with them); returns how many.
    fn remove_sessions(&self, skeys: &[SessionKey]) -> Result<u64>;
    /// The origin's sessions with the signature of the file each was imported from, by path:
    /// those at `paths`, or all of them with `None`.
    fn origin_files(&self, origin: &str, paths: Option<&[String]>) -> Result<HashMap<String, KnownFile>>;
    /// Records `(path, size, mtime_ns)` of each file whose session of `origin` was just sent.
    fn record_files(&self, origin: &str, files: &[(String, i64, i64)]) -> Result<()>;
    /// Marks sessions whose file is gone (or back).
    fn set_files_missing(&self, skeys: &[SessionKey], missing: bool) -> Result<()>;
}
