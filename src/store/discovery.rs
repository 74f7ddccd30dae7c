//! Typed reads behind discovery (pi's `list`, `listAll`, `findById`, continue-recent) and the
//! joined `allMessagesText` kept per session: each statement beside the function that binds it
//! (named parameters) and reads its columns by name.

use crate::error::Result;
use crate::store::handle::{columns, Db, Pg, PgParams};
use crate::store::keys::SessionKey;
use rusqlite::{named_params, OptionalExtension, Row};

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

/// The columns an [`InfoRow`] is read from, by name.
const INFO_COLUMNS: [&str; 12] = [
    "sid",
    "path",
    "id",
    "cwd",
    "name",
    "created",
    "parent_session",
    "message_count",
    "last_activity_ms",
    "first_message",
    "written_ns",
    "last_seq",
];

impl InfoRow {
    /// Reads a row whose [`INFO_COLUMNS`] are at `c` (see `handle::columns`).
    fn from_row(r: &Row<'_>, c: &[usize; 12]) -> rusqlite::Result<InfoRow> {
        Ok(InfoRow {
            sid: r.get(c[0])?,
            path: r.get(c[1])?,
            id: r.get(c[2])?,
            cwd: r.get(c[3])?,
            name: r.get(c[4])?,
            created: r.get(c[5])?,
            parent_session: r.get(c[6])?,
            message_count: r.get(c[7])?,
            last_activity_ms: r.get(c[8])?,
            first_message: r.get(c[9])?,
            written_ns: r.get(c[10])?,
            last_seq: r.get(c[11])?,
        })
    }
}

macro_rules! info_select {
    ($where:literal) => {
        concat!(
            "SELECT sid, path, id, cwd, name, created, parent_session, message_count, last_activity_ms, ",
            "first_message, coalesce(file_mtime_ns, written_ns) AS written_ns, last_seq FROM sessions",
            $where
        )
    };
}

/// SessionInfo columns of the sessions in folder `:dir`.
pub const SESSION_INFOS_IN_DIR: &str = info_select!(" WHERE dir = :dir");

/// SessionInfo columns of every session.
pub const SESSION_INFOS_ALL: &str = info_select!("");

/// SessionInfo columns of sessions whose folder sorts in `[:lo, :hi)` (below one root).
pub const SESSION_INFOS_UNDER: &str = info_select!(" WHERE dir >= :lo AND dir < :hi");

/// SessionInfo columns of sessions with header cwd `:cwd`.
pub const SESSION_INFOS_FOR_CWD: &str = info_select!(" WHERE cwd = :cwd");

/// [`info_select!`] on PostgreSQL, among the sessions made on the server (origin `''`).
macro_rules! pg_info_select {
    ($where:literal) => {
        concat!(
            "SELECT skey AS sid, path, id, cwd, name, created, parent_session, message_count, last_activity_ms, ",
            "first_message, coalesce(file_mtime_ns, written_ns) AS written_ns, last_seq FROM sessions WHERE origin = ''",
            $where
        )
    };
}

/// [`SESSION_INFOS_IN_DIR`] on PostgreSQL.
pub const PG_SESSION_INFOS_IN_DIR: &str = pg_info_select!(" AND dir = $1");

/// [`SESSION_INFOS_ALL`] on PostgreSQL.
pub const PG_SESSION_INFOS_ALL: &str = pg_info_select!("");

/// [`SESSION_INFOS_UNDER`] on PostgreSQL.
pub const PG_SESSION_INFOS_UNDER: &str = pg_info_select!(" AND dir >= $1 AND dir < $2");

/// [`SESSION_INFOS_FOR_CWD`] on PostgreSQL.
pub const PG_SESSION_INFOS_FOR_CWD: &str = pg_info_select!(" AND cwd = $1");

fn pg_infos(pg: &Pg, sql: &'static str, params: PgParams<'_>) -> Result<Vec<InfoRow>> {
    let text = |r: &postgres::Row, c: &str| r.get::<_, Option<&[u8]>>(c).map(utf8);
    let mut out = Vec::new();
    pg.each(sql, params, |r| {
        out.push(InfoRow {
            sid: r.get("sid"),
            path: r.get("path"),
            id: r.get("id"),
            cwd: r.get("cwd"),
            name: text(r, "name"),
            created: r.get("created"),
            parent_session: r.get("parent_session"),
            message_count: r.get("message_count"),
            last_activity_ms: r.get("last_activity_ms"),
            first_message: text(r, "first_message"),
            written_ns: r.get("written_ns"),
            last_seq: r.get("last_seq"),
        })
    })?;
    Ok(out)
}

fn infos(db: &Db, sql: &str, params: &[(&str, &dyn rusqlite::ToSql)]) -> Result<Vec<InfoRow>> {
    let mut st = db.conn()?.prepare_cached(sql)?;
    let c = columns(&st, INFO_COLUMNS)?;
    let rows = st.query_map(params, |r| InfoRow::from_row(r, &c))?.collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// The sessions whose file is in folder `dir`, in no particular order.
pub fn infos_in_dir(db: &Db, dir: &str) -> Result<Vec<InfoRow>> {
    if let Some(pg) = db.pg() {
        return pg_infos(pg, PG_SESSION_INFOS_IN_DIR, &[&dir]);
    }
    infos(db, SESSION_INFOS_IN_DIR, named_params! { ":dir": dir })
}

/// Every session, in no particular order.
pub fn infos_all(db: &Db) -> Result<Vec<InfoRow>> {
    if let Some(pg) = db.pg() {
        return pg_infos(pg, PG_SESSION_INFOS_ALL, &[]);
    }
    infos(db, SESSION_INFOS_ALL, &[])
}

/// The sessions whose folder is below `root` (an index range over the folders).
pub fn infos_under(db: &Db, root: &str) -> Result<Vec<InfoRow>> {
    let (lo, hi) = (format!("{root}/"), format!("{root}0"));
    if let Some(pg) = db.pg() {
        return pg_infos(pg, PG_SESSION_INFOS_UNDER, &[&lo, &hi]);
    }
    infos(db, SESSION_INFOS_UNDER, named_params! { ":lo": lo, ":hi": hi })
}

/// The sessions whose header cwd is `cwd`.
pub fn infos_for_cwd(db: &Db, cwd: &str) -> Result<Vec<InfoRow>> {
    if let Some(pg) = db.pg() {
        return pg_infos(pg, PG_SESSION_INFOS_FOR_CWD, &[&cwd]);
    }
    infos(db, SESSION_INFOS_FOR_CWD, named_params! { ":cwd": cwd })
}

/// Number of sessions.
pub const SESSION_COUNT: &str = "SELECT count(*) AS n FROM sessions";

/// [`SESSION_COUNT`] on PostgreSQL (the sessions made on the server).
pub const PG_SESSION_COUNT: &str = "SELECT count(*) AS n FROM sessions WHERE origin = ''";

/// How many sessions the database holds.
pub fn session_count(db: &Db) -> Result<i64> {
    if let Some(pg) = db.pg() {
        return Ok(pg.query_opt(PG_SESSION_COUNT, &[])?.map_or(0, |r| r.get("n")));
    }
    Ok(db.conn()?.prepare_cached(SESSION_COUNT)?.query_row([], |r| r.get("n"))?)
}

/// Every session's joined `allMessagesText` (for listing most of the sessions at once).
pub const LIST_TEXT_CACHED_ALL: &str = "SELECT sid, upto_seq, text FROM list_texts";

/// [`LIST_TEXT_CACHED_ALL`] on PostgreSQL: the joined text, exact up to the last line.
pub const PG_LIST_TEXT_ALL: &str = concat!(
    "SELECT s.skey AS sid, s.last_seq, ",
    crate::store::pg::all_text_of_s!(),
    " AS all_text FROM sessions s WHERE s.origin = ''"
);

/// Hands every stored joined text to `f`: session key, the line it is exact up to, the text.
pub fn each_list_text(db: &Db, mut f: impl FnMut(i64, i64, String)) -> Result<()> {
    if let Some(pg) = db.pg() {
        for r in pg.query(PG_LIST_TEXT_ALL, &[])? {
            f(r.get("sid"), r.get("last_seq"), utf8(r.get("all_text")));
        }
        return Ok(());
    }
    let mut st = db.conn()?.prepare_cached(LIST_TEXT_CACHED_ALL)?;
    let [sid, upto, text] = columns(&st, ["sid", "upto_seq", "text"])?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        f(r.get(sid)?, r.get(upto)?, r.get(text)?);
    }
    Ok(())
}

/// A session's joined `allMessagesText` and the line it is exact up to.
pub const LIST_TEXT_CACHED: &str = "SELECT upto_seq, text FROM list_texts WHERE sid = :sid";

/// [`LIST_TEXT_CACHED`] on PostgreSQL.
pub const PG_LIST_TEXT: &str = concat!(
    "SELECT s.last_seq, ",
    crate::store::pg::all_text_of_s!(),
    " AS all_text FROM sessions s WHERE s.skey = $1"
);

/// Session `sid`'s joined text and the line it is exact up to, if one is stored.
pub fn list_text(db: &Db, sid: i64) -> Result<Option<(i64, String)>> {
    if let Some(pg) = db.pg() {
        return Ok(pg.query_opt(PG_LIST_TEXT, &[&sid])?.map(|r| (r.get("last_seq"), utf8(r.get("all_text")))));
    }
    let mut st = db.conn()?.prepare_cached(LIST_TEXT_CACHED)?;
    Ok(st.query_row(named_params! { ":sid": sid }, |r| Ok((r.get("upto_seq")?, r.get("text")?))).optional()?)
}

/// The joined texts of sessions `$1` on PostgreSQL, in one round trip.
pub const PG_LIST_TEXTS_OF: &str = concat!(
    "SELECT s.skey, s.last_seq, ",
    crate::store::pg::all_text_of_s!(),
    " AS all_text FROM sessions s WHERE s.skey = ANY($1)"
);

/// [`list_text`] of each session of `sids`, in that order. On PostgreSQL one statement (the
/// round trip a count would cost is a tenth of `list` there); on SQLite, for most of the
/// sessions one pass over the joined texts, else a lookup per session.
pub fn list_texts_of(db: &Db, sids: &[i64]) -> Result<Vec<Option<(i64, String)>>> {
    let Some(pg) = db.pg() else {
        if (sids.len() as i64) * 2 < session_count(db)? {
            return sids.iter().map(|&sid| list_text(db, sid)).collect();
        }
        let at: std::collections::HashMap<i64, usize> = sids.iter().enumerate().map(|(i, &s)| (s, i)).collect();
        let mut cached = vec![None; sids.len()];
        each_list_text(db, |sid, upto, text| {
            if let Some(&i) = at.get(&sid) {
                cached[i] = Some((upto, text));
            }
        })?;
        return Ok(cached);
    };
    let at: std::collections::HashMap<i64, usize> = sids.iter().enumerate().map(|(i, &s)| (s, i)).collect();
    let mut out = vec![None; sids.len()];
    pg.each(PG_LIST_TEXTS_OF, &[&sids], |r| {
        if let Some(&i) = at.get(&r.get::<_, i64>("skey")) {
            out[i] = Some((r.get("last_seq"), utf8(r.get("all_text"))));
        }
    })?;
    Ok(out)
}

/// UTF-8 the server keeps as bytes (`bytea` holds NUL, which `text` cannot): checked first,
/// copied once; replaced lossily only when invalid.
fn utf8(b: &[u8]) -> String {
    match std::str::from_utf8(b) {
        Ok(s) => s.to_owned(),
        Err(_) => String::from_utf8_lossy(b).into_owned(),
    }
}

/// Sessions whose joined `allMessagesText` misses lines appended since (`index` folds them in).
pub const STALE_LIST_TEXTS: &str =
    "SELECT s.sid FROM sessions s JOIN list_texts l ON l.sid = s.sid WHERE l.upto_seq < s.last_seq";

/// The sessions whose joined text misses lines appended since.
pub fn stale_list_texts(db: &Db) -> Result<Vec<i64>> {
    let mut st = db.conn()?.prepare(STALE_LIST_TEXTS)?;
    let rows = st.query_map([], |r| r.get("sid"))?.collect::<rusqlite::Result<_>>()?;
    Ok(rows)
}

/// A session's last line number.
pub const SESSION_LAST_SEQ: &str = "SELECT last_seq FROM sessions WHERE sid = :sid";

/// The number of session `sid`'s last line.
pub fn last_seq(db: &Db, sid: i64) -> Result<i64> {
    Ok(db.conn()?.prepare_cached(SESSION_LAST_SEQ)?.query_row(named_params! { ":sid": sid }, |r| r.get("last_seq"))?)
}

/// Stores a session's joined `allMessagesText`, exact up to line `:upto`.
pub const SAVE_LIST_TEXT: &str = "INSERT OR REPLACE INTO list_texts (sid, upto_seq, text) VALUES (:sid, :upto, :text)";

/// Stores session `sid`'s joined text, exact up to line `upto`.
pub fn save_list_text(db: &Db, sid: i64, upto: i64, text: &str) -> Result<()> {
    db.conn()?.prepare_cached(SAVE_LIST_TEXT)?.execute(named_params! { ":sid": sid, ":upto": upto, ":text": text })?;
    Ok(())
}

/// Forgets a session's joined `allMessagesText` (it outgrew the limit).
pub const DROP_LIST_TEXT: &str = "DELETE FROM list_texts WHERE sid = :sid";

/// Forgets session `sid`'s joined text.
pub fn drop_list_text(db: &Db, sid: i64) -> Result<()> {
    db.conn()?.prepare_cached(DROP_LIST_TEXT)?.execute(named_params! { ":sid": sid })?;
    Ok(())
}

/// The user/assistant message texts of a session (keys `:lo..=:hi`) in file order.
pub const LIST_TEXTS: &str =
    "SELECT list_text FROM texts WHERE key BETWEEN :lo AND :hi AND list_text IS NOT NULL ORDER BY key";

/// `out` followed by the message texts of session `sid` from line `from_seq` on,
/// space-joined.
pub fn append_list_texts(db: &Db, sid: i64, from_seq: i64, mut out: String) -> Result<String> {
    let key = SessionKey(sid);
    let (lo, hi) = (key.entry(from_seq), key.range().1);
    let mut st = db.conn()?.prepare_cached(LIST_TEXTS)?;
    let [text] = columns(&st, ["list_text"])?;
    let mut rows = st.query(named_params! { ":lo": lo.0, ":hi": hi.0 })?;
    while let Some(r) = rows.next()? {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(r.get_ref(text)?.as_str().unwrap_or_default());
    }
    Ok(out)
}

/// Sessions whose file is in folder `:dir`, most recently written first (continue-recent).
pub const SESSIONS_IN_DIR_BY_RECENCY: &str =
    "SELECT sid, path, cwd FROM sessions WHERE dir = :dir ORDER BY written_ns DESC";

/// [`SESSIONS_IN_DIR_BY_RECENCY`] on PostgreSQL, among the sessions made on the server. Ties
/// go to the newest key, as SQLite's backward walk of `sessions_by_dir` gives them.
pub const PG_SESSIONS_IN_DIR_BY_RECENCY: &str =
    "SELECT skey, path, cwd FROM sessions WHERE origin = '' AND dir = $1 ORDER BY written_ns DESC, skey DESC";

/// The first session in folder `dir`, most recently written first, whose header cwd `pick`
/// accepts: its key and path.
pub fn most_recent_in_dir(
    db: &Db,
    dir: &str,
    mut pick: impl FnMut(Option<&str>) -> bool,
) -> Result<Option<(i64, String)>> {
    if let Some(pg) = db.pg() {
        for r in pg.query(PG_SESSIONS_IN_DIR_BY_RECENCY, &[&dir])? {
            if pick(r.get("cwd")) {
                return Ok(Some((r.get("skey"), r.get("path"))));
            }
        }
        return Ok(None);
    }
    let mut st = db.conn()?.prepare_cached(SESSIONS_IN_DIR_BY_RECENCY)?;
    let mut rows = st.query(named_params! { ":dir": dir })?;
    while let Some(r) = rows.next()? {
        let cwd: Option<String> = r.get("cwd")?;
        if pick(cwd.as_deref()) {
            return Ok(Some((r.get("sid")?, r.get("path")?)));
        }
    }
    Ok(None)
}

/// The session written last.
pub const MOST_RECENT_SESSION: &str = "SELECT sid, path FROM sessions ORDER BY written_ns DESC LIMIT 1";

/// [`MOST_RECENT_SESSION`] on PostgreSQL, among the sessions made on the server (as
/// continue-recent in a folder; ties to the newest key, as on SQLite).
pub const PG_MOST_RECENT_SESSION: &str =
    "SELECT skey, path FROM sessions WHERE origin = '' ORDER BY written_ns DESC, skey DESC LIMIT 1";

/// The session written last anywhere: its key and path.
pub fn most_recent(db: &Db) -> Result<Option<(i64, String)>> {
    if let Some(pg) = db.pg() {
        return Ok(pg.query_opt(PG_MOST_RECENT_SESSION, &[])?.map(|r| (r.get("skey"), r.get("path"))));
    }
    let mut st = db.conn()?.prepare_cached(MOST_RECENT_SESSION)?;
    Ok(st.query_row([], |r| Ok((r.get("sid")?, r.get("path")?))).optional()?)
}

/// Sessions with header id `:id` whose file is in folder `:dir` (find-by-id).
pub const SESSIONS_WITH_ID_IN_DIR: &str = "SELECT path, cwd FROM sessions WHERE id = :id AND dir = :dir ORDER BY sid";

/// [`SESSIONS_WITH_ID_IN_DIR`] on PostgreSQL, among the sessions made on the server.
pub const PG_SESSIONS_WITH_ID_IN_DIR: &str =
    "SELECT path, cwd FROM sessions WHERE id = $1 AND origin = '' AND dir = $2 ORDER BY skey";

/// The path of the first session with header id `id` in folder `dir` whose header cwd `pick`
/// accepts.
pub fn path_with_id_in_dir(
    db: &Db,
    id: &str,
    dir: &str,
    mut pick: impl FnMut(Option<&str>) -> bool,
) -> Result<Option<String>> {
    if let Some(pg) = db.pg() {
        for r in pg.query(PG_SESSIONS_WITH_ID_IN_DIR, &[&id, &dir])? {
            if pick(r.get("cwd")) {
                return Ok(Some(r.get("path")));
            }
        }
        return Ok(None);
    }
    let mut st = db.conn()?.prepare_cached(SESSIONS_WITH_ID_IN_DIR)?;
    let mut rows = st.query(named_params! { ":id": id, ":dir": dir })?;
    while let Some(r) = rows.next()? {
        let cwd: Option<String> = r.get("cwd")?;
        if pick(cwd.as_deref()) {
            return Ok(Some(r.get("path")?));
        }
    }
    Ok(None)
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

fn refs(db: &Db, sql: &str, params: &[(&str, &dyn rusqlite::ToSql)]) -> Result<Vec<SessionRef>> {
    let mut st = db.conn()?.prepare_cached(sql)?;
    let rows = st
        .query_map(params, |r| {
            Ok(SessionRef { sid: r.get("sid")?, id: r.get("id")?, path: r.get("path")?, origin: None })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// A PostgreSQL statement's [`SessionRef`]s. A server holds the sessions of every origin:
/// references find them all (a path or id on two origins is ambiguous), as `export` does.
fn pg_refs(pg: &Pg, sql: &'static str, params: PgParams<'_>) -> Result<Vec<SessionRef>> {
    Ok(pg
        .query(sql, params)?
        .iter()
        .map(|r| SessionRef { sid: r.get("sid"), id: r.get("id"), path: r.get("path"), origin: Some(r.get("origin")) })
        .collect())
}

/// Sessions whose header id is exactly `:id`.
pub const SESSIONS_BY_ID: &str = "SELECT sid, id, path FROM sessions WHERE id = :id ORDER BY sid";

/// [`SESSIONS_BY_ID`] on PostgreSQL (every origin).
pub const PG_SESSIONS_BY_ID: &str = "SELECT skey AS sid, id, path, origin FROM sessions WHERE id = $1 ORDER BY skey";

/// The sessions whose header id is `id`, oldest first.
pub fn refs_by_id(db: &Db, id: &str) -> Result<Vec<SessionRef>> {
    if let Some(pg) = db.pg() {
        return pg_refs(pg, PG_SESSIONS_BY_ID, &[&id]);
    }
    refs(db, SESSIONS_BY_ID, named_params! { ":id": id })
}

/// Sessions whose header id starts with `:lo` (`:hi` is `:lo` followed by U+10FFFF): an index
/// range, not a scan.
pub const SESSIONS_BY_ID_PREFIX: &str =
    "SELECT sid, id, path FROM sessions WHERE id >= :lo AND id < :hi ORDER BY id LIMIT 50";

/// [`SESSIONS_BY_ID_PREFIX`] on PostgreSQL (every origin).
pub const PG_SESSIONS_BY_ID_PREFIX: &str =
    "SELECT skey AS sid, id, path, origin FROM sessions WHERE id >= $1 AND id < $2 ORDER BY id, skey LIMIT 50";

/// The sessions whose header id starts with `prefix` (at most 50), by id.
pub fn refs_by_id_prefix(db: &Db, prefix: &str) -> Result<Vec<SessionRef>> {
    let upper = format!("{prefix}\u{10FFFF}");
    if let Some(pg) = db.pg() {
        return pg_refs(pg, PG_SESSIONS_BY_ID_PREFIX, &[&prefix, &upper]);
    }
    refs(db, SESSIONS_BY_ID_PREFIX, named_params! { ":lo": prefix, ":hi": upper })
}

/// [`crate::store::sessions::SESSION_REF_BY_PATH`] on PostgreSQL: one session per origin.
pub const PG_SESSIONS_AT_PATH: &str =
    "SELECT skey AS sid, id, path, origin FROM sessions WHERE path = $1 ORDER BY skey";

/// The sessions whose file is at `path`: at most one on SQLite (paths are unique), one per
/// origin on PostgreSQL.
pub fn refs_by_path(db: &Db, path: &str) -> Result<Vec<SessionRef>> {
    if let Some(pg) = db.pg() {
        return pg_refs(pg, PG_SESSIONS_AT_PATH, &[&path]);
    }
    refs(db, crate::store::sessions::SESSION_REF_BY_PATH, named_params! { ":path": path })
}

/// SessionInfo columns of session `:sid`.
pub const SESSION_INFO_BY_SID: &str = info_select!(" WHERE sid = :sid");

/// [`SESSION_INFO_BY_SID`] on PostgreSQL (a session of any origin).
pub const PG_SESSION_INFO_BY_SID: &str = concat!(
    "SELECT skey AS sid, path, id, cwd, name, created, parent_session, message_count, last_activity_ms, ",
    "first_message, coalesce(file_mtime_ns, written_ns) AS written_ns, last_seq FROM sessions WHERE skey = $1"
);

/// The stored SessionInfo columns of session `sid`.
pub fn info_by_sid(db: &Db, sid: i64) -> Result<Option<InfoRow>> {
    if let Some(pg) = db.pg() {
        return Ok(pg_infos(pg, PG_SESSION_INFO_BY_SID, &[&sid])?.into_iter().next());
    }
    Ok(infos(db, SESSION_INFO_BY_SID, named_params! { ":sid": sid })?.into_iter().next())
}
