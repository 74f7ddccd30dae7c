//! Finding sessions across projects: pi's `SessionInfo`, `list`, `listAll`, answered
//! from the columns kept on every write.

use crate::error::Result;
use crate::js::json::{Object, Value};
use crate::js::jstime;
use crate::pi::layout;
use crate::store::queries;
use crate::store::write;
use rusqlite::{params, Connection, OptionalExtension, Row as SqlRow};

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
    /// The file's modification time at import, or the last write (ns).
    pub written_ns: Option<i64>,
    /// Number of the session's last line.
    pub last_seq: i64,
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
fn info_from_row(r: &SqlRow<'_>) -> rusqlite::Result<SessionInfo> {
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
        all_messages_text: String::new(),
        written_ns: mtime_ns,
        last_seq: r.get(11)?,
    })
}

/// Fills in `allMessagesText`: the text joined when the session was written, plus the
/// messages of any lines appended since.
pub fn fill_all_text(conn: &Connection, infos: &mut [SessionInfo]) -> Result<()> {
    // One read transaction for all the lookups: without it each one takes and drops the
    // database's locks (four fcntl calls), a sixth of the time for a folder of 2,000 sessions.
    let _snapshot = if conn.is_autocommit() { Some(conn.unchecked_transaction()?) } else { None };
    let sessions: i64 = conn.query_row(queries::SESSION_COUNT, [], |r| r.get(0))?;
    if infos.len() as i64 * 2 >= sessions {
        // Most sessions: one pass over the joined texts beats a lookup per session.
        let at: std::collections::HashMap<i64, usize> = infos.iter().enumerate().map(|(i, s)| (s.sid, i)).collect();
        let mut cached = vec![None; infos.len()];
        let mut st = conn.prepare_cached(queries::LIST_TEXT_CACHED_ALL)?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            if let Some(&i) = at.get(&r.get::<_, i64>(0)?) {
                cached[i] = Some((r.get::<_, i64>(1)?, r.get::<_, String>(2)?));
            }
        }
        for (info, c) in infos.iter_mut().zip(cached) {
            info.all_messages_text = complete_text(conn, info.sid, info.last_seq, c)?;
        }
    } else {
        let mut st = conn.prepare_cached(queries::LIST_TEXT_CACHED)?;
        for info in infos {
            let c = st.query_row([info.sid], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))).optional()?;
            info.all_messages_text = complete_text(conn, info.sid, info.last_seq, c)?;
        }
    }
    Ok(())
}

/// The session's `allMessagesText` from its joined text (exact up to a line), reading the
/// messages of later lines.
fn complete_text(conn: &Connection, sid: i64, last_seq: i64, cached: Option<(i64, String)>) -> Result<String> {
    let (upto, text) = cached.unwrap_or((0, String::new()));
    if upto >= last_seq {
        return Ok(text);
    }
    let (_, hi) = write::key_range(sid);
    append_texts(conn, write::entry_key(sid, upto + 1), hi, text)
}

/// Folds the messages of lines appended since into the joined `allMessagesText` of every
/// session that has one (`index`); returns how many sessions were brought up to date.
pub fn refresh_list_texts(conn: &mut Connection) -> Result<usize> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let stale: Vec<i64> =
        tx.prepare(queries::STALE_LIST_TEXTS)?.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
    for &sid in &stale {
        let cached: (i64, String) = tx.query_row(queries::LIST_TEXT_CACHED, [sid], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let last_seq: i64 = tx.query_row(queries::SESSION_LAST_SEQ, [sid], |r| r.get(0))?;
        let text = complete_text(&tx, sid, last_seq, Some(cached))?;
        if text.len() < write::LIST_TEXT_MAX {
            tx.execute(queries::SAVE_LIST_TEXT, params![sid, last_seq, text])?;
        } else {
            tx.execute(queries::DROP_LIST_TEXT, [sid])?;
        }
    }
    tx.commit()?;
    Ok(stale.len())
}

/// Text of all user and assistant messages of a session, space-joined (pi's `allMessagesText`).
pub fn all_messages_text(conn: &Connection, sid: i64) -> Result<String> {
    let (lo, hi) = write::key_range(sid);
    append_texts(conn, lo, hi, String::new())
}

/// `out` followed by the message texts of keys `lo..=hi`, space-joined.
fn append_texts(conn: &Connection, lo: i64, hi: i64, mut out: String) -> Result<String> {
    let mut st = conn.prepare_cached(queries::LIST_TEXTS)?;
    let mut rows = st.query(params![lo, hi])?;
    while let Some(r) = rows.next()? {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(r.get_ref(0)?.as_str().unwrap_or_default());
    }
    Ok(out)
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// pi's order for a folder: file names descending (`localeCompare`), then newest first
/// (a stable sort, so ties keep the name order).
fn sort_like_list(mut v: Vec<SessionInfo>) -> Vec<SessionInfo> {
    v.sort_by_cached_key(|i| std::cmp::Reverse(crate::js::collate::sort_key(file_name(&i.path))));
    sort_newest_first(v)
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
    let rows = st.query_map([dir], info_from_row)?.collect::<rusqlite::Result<Vec<_>>>()?;
    let rows = rows.into_iter().filter(|i| cwd_filter.is_none_or(|c| cwd_matches(Some(&i.cwd), c))).collect();
    Ok(sort_like_list(rows))
}

/// Every session in the database, newest first.
pub fn list_everything(conn: &Connection) -> Result<Vec<SessionInfo>> {
    let mut st = conn.prepare_cached(queries::SESSION_INFOS_ALL)?;
    let rows = st.query_map([], info_from_row)?.collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(sort_newest_first(rows))
}

/// pi's `listAll()`: sessions in the folders directly below pi's sessions folder.
pub fn list_all(conn: &Connection) -> Result<Vec<SessionInfo>> {
    let root = layout::agent_dir().join("sessions").to_string_lossy().into_owned();
    let (lo, hi) = (format!("{root}/"), format!("{root}0")); // every folder below root, by index range
    let mut st = conn.prepare_cached(queries::SESSION_INFOS_UNDER)?;
    let rows = st.query_map([&lo, &hi], info_from_row)?.collect::<rusqlite::Result<Vec<_>>>()?;
    let direct: Vec<SessionInfo> = rows
        .into_iter()
        .filter(|i| {
            let dir = std::path::Path::new(&i.path).parent();
            dir.and_then(std::path::Path::parent).is_some_and(|p| p.to_string_lossy() == root.as_str())
        })
        .collect();
    Ok(sort_like_list_all(direct))
}

/// pi's order for listAll: file modification time descending, then file name descending,
/// then newest activity first (stable).
fn sort_like_list_all(mut v: Vec<SessionInfo>) -> Vec<SessionInfo> {
    use std::cmp::Reverse;
    v.sort_by_cached_key(|i| (Reverse(i.written_ns), Reverse(crate::js::collate::sort_key(file_name(&i.path)))));
    sort_newest_first(v)
}

/// Sessions with header cwd `cwd`, newest first.
pub fn list_cwd(conn: &Connection, cwd: &str) -> Result<Vec<SessionInfo>> {
    let mut st = conn.prepare_cached(queries::SESSION_INFOS_FOR_CWD)?;
    let rows = st.query_map([cwd], info_from_row)?.collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(sort_newest_first(rows))
}

/// The session continue-recent opens in folder `dir`: the one written last (with header cwd
/// `cwd_filter` when given). Returns its key and path.
pub fn recent_in_dir(conn: &Connection, dir: &str, cwd_filter: Option<&str>) -> Result<Option<(i64, String)>> {
    let mut st = conn.prepare_cached(queries::SESSIONS_IN_DIR_BY_RECENCY)?;
    let mut rows = st.query([dir])?;
    while let Some(r) = rows.next()? {
        let (sid, path, hcwd): (i64, String, Option<String>) = (r.get(0)?, r.get(1)?, r.get(2)?);
        if cwd_filter.is_none_or(|c| cwd_matches(hcwd.as_deref(), c)) {
            return Ok(Some((sid, path)));
        }
    }
    Ok(None)
}

/// The session written last anywhere.
pub fn recent_anywhere(conn: &Connection) -> Result<Option<(i64, String)>> {
    Ok(conn.query_row(queries::MOST_RECENT_SESSION, [], |r| Ok((r.get(0)?, r.get(1)?))).optional()?)
}

/// pi's findById in folder `dir` (with the header cwd filter when given): the first path.
pub fn find_in_dir(conn: &Connection, id: &str, dir: &str, cwd_filter: Option<&str>) -> Result<Option<String>> {
    let mut st = conn.prepare_cached(queries::SESSIONS_WITH_ID_IN_DIR)?;
    let mut rows = st.query(params![id, dir])?;
    while let Some(r) = rows.next()? {
        let (path, hcwd): (String, Option<String>) = (r.get(0)?, r.get(1)?);
        if cwd_filter.is_none_or(|c| cwd_matches(hcwd.as_deref(), c)) {
            return Ok(Some(path));
        }
    }
    Ok(None)
}

/// pi's `sessionCwdMatches`: a non-empty header cwd that resolves to `resolved_cwd`.
pub fn cwd_matches(header_cwd: Option<&str>, resolved_cwd: &str) -> bool {
    matches!(header_cwd, Some(c) if !c.is_empty() && layout::resolve_path(c).to_string_lossy() == resolved_cwd)
}

/// The session folder pi uses for `cwd`: the explicit one (resolved) or the cwd's default.
pub fn session_dir_for(cwd: &str, session_dir: Option<&str>) -> String {
    match session_dir {
        Some(d) => layout::resolve_path(d).to_string_lossy().into_owned(),
        None => layout::default_session_dir(cwd).to_string_lossy().into_owned(),
    }
}

/// pi filters by header cwd only when an explicit folder is not the cwd's default one:
/// returns the resolved cwd to filter by.
pub fn cwd_filter(cwd: &str, session_dir: Option<&str>, dir: &str) -> Option<String> {
    match session_dir {
        Some(_) if dir != layout::default_session_dir(cwd).to_string_lossy() => {
            Some(layout::resolve_path(cwd).to_string_lossy().into_owned())
        }
        _ => None,
    }
}

/// Paths of every session with header id `id`, in any folder.
pub fn find_everywhere(conn: &Connection, id: &str) -> Result<Vec<String>> {
    let mut st = conn.prepare_cached(queries::SESSIONS_BY_ID)?;
    let rows = st.query_map([id], |r| r.get(2))?.collect::<rusqlite::Result<Vec<String>>>()?;
    Ok(rows)
}

/// Paths of the sessions whose header id starts with `prefix` (at most 50).
pub fn find_prefix(conn: &Connection, prefix: &str) -> Result<Vec<String>> {
    let upper = format!("{prefix}\u{10FFFF}");
    let mut st = conn.prepare_cached(queries::SESSIONS_BY_ID_PREFIX)?;
    let rows = st.query_map([prefix, upper.as_str()], |r| r.get(2))?.collect::<rusqlite::Result<Vec<String>>>()?;
    Ok(rows)
}
