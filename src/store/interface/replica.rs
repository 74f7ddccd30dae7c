//! The local rows and lines `push` sends to a server, the same on every backend ([`Replica`],
//! implemented in `store::sqlite::replica`; a server is not pushed from).

//! The local rows and lines `push` sends to a server, the same on every backend ([`Replica`],
//! implemented in `store::sqlite::replica`; a server is not pushed from).

use crate::error::Result;

/// A local session's row.
#[derive(Debug, Clone)]
pub struct LocalSession {
    /// Local key (changes when the session is imported again).
    pub sid: i64,
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
    pub derived: [Option<i64>; 5],
}

/// What `push` reads of a local database.
pub(crate) trait Replica {
    /// Every session of the local database, in key order.
    fn local_sessions(&self) -> Result<Vec<LocalSession>>;
    /// Calls `f` with lines `from..=to` of session `sid`, in file order.
    fn local_lines(&self, sid: i64, from: i64, to: i64, f: &mut dyn FnMut(LocalLine<'_>) -> Result<()>) -> Result<()>;
    /// pi's `allMessagesText` of session `sid`: its user and assistant texts, space-joined.
    fn local_all_messages_text(&self, sid: i64) -> Result<String>;
}
