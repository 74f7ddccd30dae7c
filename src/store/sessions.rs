//! Typed reads of one session's row and its entry ids, each statement beside the function that
//! binds it and reads its columns by name.

use crate::store::handle::Db;
use rusqlite::{named_params, OptionalExtension};

/// Header line and storage fields of a session.
pub const SESSION_HEADER: &str = "SELECT header, path, rel_path, cwd, id, created FROM sessions WHERE sid = :sid";

/// A session's header line and the fields of it stored as columns.
pub struct SessionRow {
    /// The exact header line.
    pub header: String,
    /// Path below the directory it was imported from.
    pub rel_path: Option<String>,
    /// Header `cwd` when it is a string.
    pub cwd: Option<String>,
    /// Header `id`.
    pub id: String,
    /// Header `timestamp`, as written.
    pub created: Option<String>,
}

/// [`SESSION_HEADER`] on PostgreSQL.
pub const PG_SESSION_HEADER: &str = "SELECT header, rel_path, cwd, id, created FROM sessions WHERE skey = $1";

/// The stored row of session `sid`.
pub fn session_row(db: &Db, sid: i64) -> crate::error::Result<SessionRow> {
    if let Some(pg) = db.pg() {
        let r = pg
            .query_opt(PG_SESSION_HEADER, &[&sid])?
            .ok_or_else(|| crate::Error::NotFound(format!("no session with internal key {sid}")))?;
        return Ok(SessionRow {
            header: String::from_utf8_lossy(r.get::<_, &[u8]>("header")).into_owned(),
            rel_path: r.get("rel_path"),
            cwd: r.get("cwd"),
            id: r.get("id"),
            created: r.get("created"),
        });
    }
    let conn = db.conn()?;
    Ok(conn.prepare_cached(SESSION_HEADER)?.query_row(named_params! { ":sid": sid }, |r| {
        Ok(SessionRow {
            header: r.get("header")?,
            rel_path: r.get("rel_path")?,
            cwd: r.get("cwd")?,
            id: r.get("id")?,
            created: r.get("created")?,
        })
    })?)
}

/// The session recorded at a path.
pub const SESSION_REF_BY_PATH: &str = "SELECT sid, id, path FROM sessions WHERE path = :path";

/// The session made on the server (origin `''`, not pushed) at a path.
pub const PG_SESSION_BY_PATH: &str = "SELECT skey FROM sessions WHERE origin = '' AND path = $1";

/// The key of the session whose file is at the absolute `path`.
pub fn sid_by_path(db: &Db, path: &str) -> crate::error::Result<Option<i64>> {
    if let Some(pg) = db.pg() {
        return Ok(pg.query_opt(PG_SESSION_BY_PATH, &[&path])?.map(|r| r.get("skey")));
    }
    let conn = db.conn()?;
    Ok(conn
        .prepare_cached(SESSION_REF_BY_PATH)?
        .query_row(named_params! { ":path": path }, |r| r.get("sid"))
        .optional()?)
}

/// Whether an entry id is taken in a session (id collision check).
pub const ENTRY_ID_EXISTS: &str = "SELECT EXISTS (SELECT 1 FROM entries WHERE session = :sid AND id = :id) AS taken";

/// [`ENTRY_ID_EXISTS`] on PostgreSQL.
pub const PG_ENTRY_ID_EXISTS: &str = "SELECT 1 AS taken FROM entries WHERE session = $1 AND id = $2 LIMIT 1";

/// Whether session `sid` has an entry with id `id`.
pub fn entry_id_exists(db: &Db, sid: i64, id: &str) -> crate::error::Result<bool> {
    if let Some(pg) = db.pg() {
        return Ok(pg.query_opt(PG_ENTRY_ID_EXISTS, &[&sid, &id])?.is_some());
    }
    let conn = db.conn()?;
    Ok(conn.prepare_cached(ENTRY_ID_EXISTS)?.query_row(named_params! { ":sid": sid, ":id": id }, |r| r.get("taken"))?)
}

/// Number of distinct entry ids of a session (keys `:lo..=:hi`), id-less entries counting as one.
pub const DISTINCT_ENTRY_IDS: &str = "SELECT count(DISTINCT id) + EXISTS (SELECT 1 FROM entries \
        WHERE key BETWEEN :lo AND :hi AND id IS NULL AND type IS NOT 'session') AS n \
    FROM entries WHERE key BETWEEN :lo AND :hi AND type IS NOT 'session'";

/// [`DISTINCT_ENTRY_IDS`] on PostgreSQL.
pub const PG_DISTINCT_ENTRY_IDS: &str = "SELECT count(DISTINCT id) + (EXISTS (SELECT 1 FROM entries \
        WHERE session = $1 AND id IS NULL AND type IS DISTINCT FROM 'session'))::int AS n \
    FROM entries WHERE session = $1 AND type IS DISTINCT FROM 'session'";

/// pi's `getEntryCount()` for a session whose ids may repeat: distinct ids.
pub fn distinct_entry_ids(db: &Db, sid: i64) -> crate::error::Result<i64> {
    if let Some(pg) = db.pg() {
        return Ok(pg.query_opt(PG_DISTINCT_ENTRY_IDS, &[&sid])?.map_or(0, |r| r.get("n")));
    }
    let conn = db.conn()?;
    let (lo, hi) = crate::store::keys::SessionKey(sid).range();
    Ok(conn
        .prepare_cached(DISTINCT_ENTRY_IDS)?
        .query_row(named_params! { ":lo": lo.0, ":hi": hi.0 }, |r| r.get("n"))?)
}

/// Removes a session (its entries go by cascade; copies sharing its lines keep them, see the
/// `sessions_keep_shared_lines` trigger).
pub const DELETE_SESSION: &str = "DELETE FROM sessions WHERE sid = :sid";

/// Removes session `sid` with its entries.
pub fn delete(db: &Db, sid: i64) -> crate::error::Result<()> {
    db.conn()?.prepare_cached(DELETE_SESSION)?.execute(named_params! { ":sid": sid })?;
    Ok(())
}

/// A session's key and its file's signature, by path.
pub const SESSION_FILE_BY_PATH: &str = "SELECT sid, file_size, file_mtime_ns FROM sessions WHERE path = :path";

/// A session's key, and its file's size and modification time when it was imported from one.
pub type SessionFile = (i64, Option<i64>, Option<i64>);

/// The session recorded at `path`, with its file's signature.
pub fn file_at(db: &Db, path: &str) -> crate::error::Result<Option<SessionFile>> {
    let mut st = db.conn()?.prepare_cached(SESSION_FILE_BY_PATH)?;
    let found = st
        .query_row(named_params! { ":path": path }, |r| {
            Ok((r.get("sid")?, r.get("file_size")?, r.get("file_mtime_ns")?))
        })
        .optional()?;
    Ok(found)
}
