//! Finding sessions across projects (SPEC 6): pi's `SessionInfo`, `list`, `listAll`, answered
//! from the columns kept on every write.

use crate::error::Result;
use crate::json::{Object, Value};
use crate::jstime;
use crate::layout;
use crate::queries;
use crate::stats::message_text;
use crate::store;
use rusqlite::{params, Connection, Row as SqlRow};

/// pi's `SessionInfo`.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfo {
    /// The session's file path.
    pub path: String,
    /// Header id.
    pub id: String,
    /// Header cwd (`""` when absent).
    pub cwd: String,
    /// Session name.
    pub name: Option<String>,
    /// Header `parentSession`.
    pub parent_session_path: Option<String>,
    /// Header timestamp (ms; `None` when invalid).
    pub created_ms: Option<i64>,
    /// Newest activity (ms; `None` when invalid).
    pub modified_ms: Option<i64>,
    /// `message` entries.
    pub message_count: i64,
    /// First user message text, or `(no messages)`.
    pub first_message: String,
    /// Text of all user and assistant messages, space-joined.
    pub all_messages_text: String,
    /// Internal key.
    pub sid: i64,
}

impl SessionInfo {
    /// pi's JSON shape (Dates as ISO strings, `"Invalid Date"` when invalid).
    pub fn to_value(&self) -> Value {
        let date =
            |ms: Option<i64>| Value::String(ms.map_or_else(|| "Invalid Date".to_string(), jstime::iso_from_ms).into());
        let mut o = Object::new();
        o.set("path", Value::String(self.path.as_str().into()));
        o.set("id", Value::String(self.id.as_str().into()));
        o.set("cwd", Value::String(self.cwd.as_str().into()));
        if let Some(n) = &self.name {
            o.set("name", Value::String(n.as_str().into()));
        }
        if let Some(p) = &self.parent_session_path {
            o.set("parentSessionPath", Value::String(p.as_str().into()));
        }
        o.set("created", date(self.created_ms));
        o.set("modified", date(self.modified_ms));
        o.set("messageCount", Value::Number(self.message_count as f64));
        o.set("firstMessage", Value::String(self.first_message.as_str().into()));
        o.set("allMessagesText", Value::String(self.all_messages_text.as_str().into()));
        Value::Object(o)
    }
}

/// Builds a `SessionInfo` from a row of [`queries::SESSION_INFO_COLUMNS`]-shaped queries.
fn info_from_row(conn: &Connection, r: &SqlRow<'_>) -> rusqlite::Result<SessionInfo> {
    let sid: i64 = r.get(0)?;
    let created: Option<String> = r.get(5)?;
    let last_activity: Option<f64> = r.get(8)?;
    let mtime_ns: Option<i64> = r.get(10)?;
    let created_ms = created.as_deref().and_then(jstime::parse_ms);
    let modified_ms = match last_activity {
        Some(t) if t > 0.0 => Some(t as i64),
        _ => created_ms.or(mtime_ns.map(|n| n / 1_000_000)),
    };
    Ok(SessionInfo {
        sid,
        path: r.get(1)?,
        id: r.get(2)?,
        cwd: r.get::<_, Option<String>>(3)?.unwrap_or_default(),
        name: r.get(4)?,
        parent_session_path: r.get(6)?,
        created_ms,
        modified_ms,
        message_count: r.get(7)?,
        first_message: r.get::<_, Option<String>>(9)?.unwrap_or_else(|| "(no messages)".into()),
        all_messages_text: all_messages_text(conn, sid).unwrap_or_default(),
    })
}

/// Text of all user and assistant messages of a session, space-joined (pi's `allMessagesText`).
pub fn all_messages_text(conn: &Connection, sid: i64) -> Result<String> {
    let (lo, hi) = store::key_range(sid);
    let mut st = conn.prepare_cached(queries::CONVERSATION_BODIES)?;
    let mut rows = st.query(params![lo, hi])?;
    let mut parts = Vec::new();
    while let Some(r) = rows.next()? {
        let body: String = r.get(0)?;
        let Ok(Some(e)) = crate::json::scan_object(body.as_bytes()) else { continue };
        let Some(m) = e.raw("message").and_then(|m| crate::json::scan_object(m).ok().flatten()) else { continue };
        let Some(content) = m.get("content") else { continue };
        let text = message_text(&content);
        if !text.is_empty() {
            parts.push(text);
        }
    }
    Ok(parts.join(" "))
}

fn sort_newest_first(mut v: Vec<SessionInfo>) -> Vec<SessionInfo> {
    // pi sorts by `modified` descending (stable); invalid dates compare as NaN (kept in place).
    v.sort_by(|a, b| match (a.modified_ms, b.modified_ms) {
        (Some(x), Some(y)) => y.cmp(&x),
        _ => std::cmp::Ordering::Equal,
    });
    v
}

/// pi's `list(cwd, sessionDir?)`: sessions whose file is in that folder (with the header cwd
/// filter pi applies for a non-default folder), newest first.
pub fn list_dir(conn: &Connection, dir: &str, cwd_filter: Option<&str>) -> Result<Vec<SessionInfo>> {
    let mut st = conn.prepare_cached(queries::SESSION_INFOS_IN_DIR)?;
    let rows = st.query_map([dir], |r| info_from_row(conn, r))?.collect::<rusqlite::Result<Vec<_>>>()?;
    let rows = rows
        .into_iter()
        .filter(|i| match cwd_filter {
            Some(c) => !i.cwd.is_empty() && layout::resolve_path(&i.cwd).to_string_lossy() == c,
            None => true,
        })
        .collect();
    Ok(sort_newest_first(rows))
}

/// Every session in the database, newest first.
pub fn list_everything(conn: &Connection) -> Result<Vec<SessionInfo>> {
    let mut st = conn.prepare_cached(queries::SESSION_INFOS_ALL)?;
    let rows = st.query_map([], |r| info_from_row(conn, r))?.collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(sort_newest_first(rows))
}

/// pi's `listAll()`: sessions in the folders directly below pi's sessions folder.
pub fn list_all(conn: &Connection) -> Result<Vec<SessionInfo>> {
    let root = layout::sessions_dir().to_string_lossy().into_owned();
    let all = list_everything(conn)?;
    Ok(all
        .into_iter()
        .filter(|i| {
            std::path::Path::new(&i.path)
                .parent()
                .and_then(std::path::Path::parent)
                .map(|p| p.to_string_lossy() == root.as_str())
                == Some(true)
        })
        .collect())
}
