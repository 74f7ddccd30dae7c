//! Typed reads of the local SQLite database for `push`: every session's row and the lines of
//! one session in file order, each statement beside the function that binds it.

use crate::error::{Error, Result};
use crate::store::handle::Db;
use rusqlite::named_params;

/// What `push` sends of a session row.
pub const LOCAL_SESSIONS: &str = "SELECT sid, path, id, dir, rel_path, cwd, created, parent_session, header, \
    file_mtime_ns, written_ns, name, message_count, first_message, last_activity_ms, entry_count, last_seq, tree_ok \
    FROM sessions ORDER BY sid";

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

/// Every session of the local database, in key order.
pub fn sessions(db: &Db) -> Result<Vec<LocalSession>> {
    let mut st = db.conn()?.prepare(LOCAL_SESSIONS)?;
    let rows = st.query_map([], |r| {
        Ok(LocalSession {
            sid: r.get("sid")?,
            path: r.get("path")?,
            id: r.get("id")?,
            dir: r.get("dir")?,
            rel_path: r.get("rel_path")?,
            cwd: r.get("cwd")?,
            created: r.get("created")?,
            parent_session: r.get("parent_session")?,
            header: r.get("header")?,
            file_mtime_ns: r.get("file_mtime_ns")?,
            written_ns: r.get("written_ns")?,
            name: r.get("name")?,
            message_count: r.get("message_count")?,
            first_message: r.get("first_message")?,
            last_activity_ms: r.get("last_activity_ms")?,
            entry_count: r.get("entry_count")?,
            last_seq: r.get("last_seq")?,
            tree_ok: r.get::<_, i64>("tree_ok")? != 0,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
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

/// Lines of a session between two keys, in file order (shared lines resolved).
pub const LOCAL_LINES: &str =
    "SELECT seq, id, parent_id, type, ts, body, role, ts_ms, parent_key, depth, compaction_key, thinking_key, \
        model_key FROM entry_lines WHERE key BETWEEN :lo AND :hi ORDER BY key";

fn text(v: rusqlite::types::ValueRef<'_>) -> Result<Option<&str>> {
    v.as_str_or_null().map_err(|e| Error::from(rusqlite::Error::from(e)))
}

/// Calls `f` with lines `from..=to` of session `sid`, in file order.
pub fn lines(db: &Db, sid: i64, from: i64, to: i64, mut f: impl FnMut(LocalLine<'_>) -> Result<()>) -> Result<()> {
    if from > to {
        return Ok(());
    }
    let key = crate::store::keys::SessionKey(sid);
    let mut st = db.conn()?.prepare_cached(LOCAL_LINES)?;
    let mut rows = st.query(named_params! { ":lo": key.entry(from).0, ":hi": key.entry(to).0 })?;
    while let Some(r) = rows.next()? {
        let body = r.get_ref("body")?.as_str().map_err(|e| Error::from(rusqlite::Error::from(e)))?;
        f(LocalLine {
            seq: r.get("seq")?,
            id: text(r.get_ref("id")?)?,
            parent_id: text(r.get_ref("parent_id")?)?,
            kind: text(r.get_ref("type")?)?,
            ts: text(r.get_ref("ts")?)?,
            body,
            role: text(r.get_ref("role")?)?,
            ts_ms: r.get("ts_ms")?,
            derived: [
                r.get("parent_key")?,
                r.get("depth")?,
                r.get("compaction_key")?,
                r.get("thinking_key")?,
                r.get("model_key")?,
            ],
        })?;
    }
    Ok(())
}

/// The list texts of a session's lines, in file order.
pub const LIST_TEXTS: &str =
    "SELECT list_text FROM texts WHERE key BETWEEN :lo AND :hi AND list_text IS NOT NULL ORDER BY key";

/// pi's `allMessagesText` of session `sid`: its user and assistant texts, space-joined.
pub fn all_messages_text(db: &Db, sid: i64) -> Result<String> {
    let (lo, hi) = crate::store::keys::SessionKey(sid).range();
    let mut st = db.conn()?.prepare_cached(LIST_TEXTS)?;
    let mut rows = st.query(named_params! { ":lo": lo.0, ":hi": hi.0 })?;
    let mut out = String::new();
    while let Some(r) = rows.next()? {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(r.get_ref("list_text")?.as_str().unwrap_or_default());
    }
    Ok(out)
}
