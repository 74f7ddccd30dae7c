//! Finding sessions across projects: pi's `SessionInfo`, `list`, `listAll`, answered
//! from the columns kept on every write.

use crate::error::Result;
use crate::js::json::{Object, Value};
use crate::js::jstime;
use crate::pi::layout;
use crate::store::handle::Db;
use crate::store::interface::discovery::InfoRow;
pub use crate::store::interface::discovery::Origins;
use crate::store::interface::write;
use crate::store::keys::SessionKey;

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
    pub sid: SessionKey,
    /// The file's modification time at import, or the last write (ns).
    pub written_ns: Option<i64>,
    /// Number of the session's last line.
    pub last_seq: i64,
    /// The machine a server's session was pushed from; `""` for the database's own.
    pub origin: String,
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

/// Builds a `SessionInfo` from its stored columns (`allMessagesText` is filled in later).
fn info_from_row(r: InfoRow) -> SessionInfo {
    let created_ms = r.created.as_deref().and_then(jstime::parse_ms);
    let modified_ms = match r.last_activity_ms {
        Some(t) if t > 0.0 => Some(t as i64),
        _ => created_ms.or(r.written_ns.map(|n| n / 1_000_000)),
    };
    SessionInfo {
        sid: r.sid,
        path: r.path,
        id: r.id,
        cwd: r.cwd.unwrap_or_default(),
        name: r.name,
        parent_session_path: r.parent_session,
        created_ms,
        modified_ms,
        message_count: r.message_count,
        first_message: r.first_message.unwrap_or_else(|| "(no messages)".into()),
        all_messages_text: String::new(),
        written_ns: r.written_ns,
        last_seq: r.last_seq,
        origin: r.origin,
    }
}

fn infos(rows: Vec<InfoRow>) -> Vec<SessionInfo> {
    rows.into_iter().map(info_from_row).collect()
}

/// Fills in `allMessagesText`: the text joined when the session was written, plus the
/// messages of any lines appended since.
pub fn fill_all_text(db: &Db, infos: &mut [SessionInfo]) -> Result<()> {
    // One read transaction for all the lookups: without it each one takes and drops the
    // database's locks (four fcntl calls), a sixth of the time for a folder of 2,000 sessions.
    db.reading(|| {
        let sids: Vec<SessionKey> = infos.iter().map(|i| i.sid).collect();
        for (info, c) in infos.iter_mut().zip(db.store().list_texts_of(&sids)?) {
            info.all_messages_text = complete_text(db, info.sid, info.last_seq, c)?;
        }
        Ok(())
    })
}

/// `allMessagesText` of the sessions `(sid, last_seq)` (as [`SessionInfo::sid`] and
/// [`SessionInfo::last_seq`]), in that order: what a host that lists first and reads the texts
/// only when they are searched asks for.
pub fn texts_of(db: &Db, sessions: &[(SessionKey, i64)]) -> Result<Vec<String>> {
    db.reading(|| {
        let sids: Vec<SessionKey> = sessions.iter().map(|s| s.0).collect();
        let mut out = Vec::with_capacity(sessions.len());
        for (&(sid, last_seq), c) in sessions.iter().zip(db.store().list_texts_of(&sids)?) {
            out.push(complete_text(db, sid, last_seq, c)?);
        }
        Ok(out)
    })
}

/// The session's `allMessagesText` from its joined text (exact up to a line), reading the
/// messages of later lines.
fn complete_text(db: &Db, sid: SessionKey, last_seq: i64, cached: Option<(i64, String)>) -> Result<String> {
    let (upto, text) = cached.unwrap_or((0, String::new()));
    if upto >= last_seq {
        return Ok(text);
    }
    match db.store().list_text_cache() {
        Some(cache) => cache.append_list_texts(sid, upto + 1, text),
        // Each append folded its text in: the joined text is whole.
        None => Ok(text),
    }
}

/// Folds the messages of lines appended since into the joined `allMessagesText` of every
/// session that has one (`index`); returns how many sessions were brought up to date.
pub fn refresh_list_texts(db: &mut Db) -> Result<usize> {
    let tx = db.write()?;
    // Where each append folds its text in, none is ever stale.
    let Some(cache) = tx.store().list_text_cache() else { return Ok(0) };
    let stale = cache.stale_list_texts()?;
    for &sid in &stale {
        let cached = tx.store().list_text(sid)?.unwrap_or((0, String::new()));
        let last_seq = cache.last_seq(sid)?;
        let text = complete_text(&tx, sid, last_seq, Some(cached))?;
        if text.len() < write::LIST_TEXT_MAX {
            cache.save_list_text(sid, last_seq, &text)?;
        } else {
            cache.drop_list_text(sid)?;
        }
    }
    tx.commit()?;
    Ok(stale.len())
}

/// Text of all user and assistant messages of a session, space-joined (pi's `allMessagesText`).
pub fn all_messages_text(db: &Db, sid: SessionKey) -> Result<String> {
    match db.store().list_text_cache() {
        Some(cache) => cache.append_list_texts(sid, 0, String::new()),
        // Each append folded its text in: the joined text is whole.
        None => Ok(db.store().list_text(sid)?.map(|(_, text)| text).unwrap_or_default()),
    }
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

/// In key order (the order sessions were stored), so that sessions with the same activity
/// time (or none) keep one order on every backend.
fn by_key(mut v: Vec<SessionInfo>) -> Vec<SessionInfo> {
    v.sort_unstable_by_key(|i| i.sid);
    v
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
pub fn list_dir(db: &Db, dir: &str, cwd_filter: Option<&str>) -> Result<Vec<SessionInfo>> {
    let rows = infos(db.store().infos_in_dir(dir, Origins::Own)?)
        .into_iter()
        .filter(|i| cwd_filter.is_none_or(|c| cwd_matches(Some(&i.cwd), c)))
        .collect();
    Ok(sort_like_list(rows))
}

/// Every session in folder `dir`, of every origin on a server (no cwd filter), in pi's order
/// for a folder: what a look at a folder shows (`sessiondb list --session-dir`).
pub fn list_folder(db: &Db, dir: &str) -> Result<Vec<SessionInfo>> {
    Ok(sort_like_list(infos(db.store().infos_in_dir(dir, Origins::Every)?)))
}

/// Every session in the database (of every origin on a server), newest first.
pub fn list_everything(db: &Db) -> Result<Vec<SessionInfo>> {
    Ok(sort_newest_first(by_key(infos(db.store().infos_all(Origins::Every)?))))
}

/// pi's `listAll()`: sessions in the folders directly below pi's sessions folder.
pub fn list_all(db: &Db) -> Result<Vec<SessionInfo>> {
    let root = layout::sessions_root().to_string_lossy().into_owned();
    let direct: Vec<SessionInfo> = infos(db.store().infos_under(&root)?)
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

/// Sessions with header cwd `cwd` (of every origin on a server), newest first.
pub fn list_cwd(db: &Db, cwd: &str) -> Result<Vec<SessionInfo>> {
    Ok(sort_newest_first(by_key(infos(db.store().infos_for_cwd(cwd, Origins::Every)?))))
}

/// The session continue-recent opens in folder `dir`: the one written last (with header cwd
/// `cwd_filter` when given). Returns its key and path.
pub fn recent_in_dir(db: &Db, dir: &str, cwd_filter: Option<&str>) -> Result<Option<(SessionKey, String)>> {
    db.store().most_recent_in_dir(dir, &mut |hcwd| cwd_filter.is_none_or(|c| cwd_matches(hcwd, c)))
}

/// The session written last anywhere.
pub fn recent_anywhere(db: &Db) -> Result<Option<(SessionKey, String)>> {
    db.store().most_recent()
}

/// pi's findById in folder `dir` (with the header cwd filter when given): the first path.
pub fn find_in_dir(db: &Db, id: &str, dir: &str, cwd_filter: Option<&str>) -> Result<Option<String>> {
    db.store().path_with_id_in_dir(id, dir, &mut |hcwd| cwd_filter.is_none_or(|c| cwd_matches(hcwd, c)))
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
pub fn find_everywhere(db: &Db, id: &str) -> Result<Vec<String>> {
    Ok(db.store().refs_by_id(id)?.into_iter().map(|r| r.path).collect())
}

/// Paths of the sessions whose header id starts with `prefix` (at most 50).
pub fn find_prefix(db: &Db, prefix: &str) -> Result<Vec<String>> {
    Ok(db.store().refs_by_id_prefix(prefix)?.into_iter().map(|r| r.path).collect())
}

/// The SessionInfo of session `sid` (internal key), `allMessagesText` left empty.
pub fn info(db: &Db, sid: SessionKey) -> Result<Option<SessionInfo>> {
    Ok(db.store().info_by_sid(sid)?.map(info_from_row))
}
