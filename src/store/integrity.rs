//! Typed reads behind `check`: SQLite's own checks, the shared-line check, and the session
//! and entry columns the session-level checks compare. Each statement sits beside the
//! function that binds it (named parameters) and reads its columns by name.
//!
//! On PostgreSQL the session and entry reads run their `PG_…` statement (every origin's
//! sessions); SQLite's file checks and the shared-line check have no counterpart there (the
//! server keeps its own pages and foreign keys, and copies hold their own lines) and find
//! nothing.

use crate::error::{Error, Result};
use crate::store::handle::Db;
use crate::store::keys::SessionKey;
use crate::store::postgres::Pg;
use crate::store::sqlite::columns;
use rusqlite::{named_params, OptionalExtension};

/// True for the errors of a damaged database file, which `check` reports instead of failing.
pub fn is_corruption(e: &Error) -> bool {
    matches!(e, Error::Database { kind: crate::error::DbFailure::Corrupt, .. })
}

/// Steps through `sql`'s rows, handing each to `f` until it returns `false`.
fn each<T>(
    db: &Db,
    sql: &str,
    read: impl Fn(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    mut f: impl FnMut(T) -> bool,
) -> Result<()> {
    let mut st = db.conn()?.prepare(sql)?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        if !f(read(r)?) {
            break;
        }
    }
    Ok(())
}

/// SQLite's check of the database file (at most 100 problems).
pub const INTEGRITY_CHECK: &str = "PRAGMA integrity_check(100)";

/// Hands `f` each line of SQLite's integrity check (`ok` when it found nothing), until `f`
/// returns `false`.
pub fn integrity_check(db: &Db, f: impl FnMut(String) -> bool) -> Result<()> {
    if db.pg().is_some() {
        return Ok(());
    }
    each(db, INTEGRITY_CHECK, |r| r.get("integrity_check"), f)
}

/// Rows whose foreign key points at a missing row.
pub const FOREIGN_KEY_CHECK: &str = "PRAGMA foreign_key_check";

/// A row whose foreign key points at a missing row.
pub struct ForeignKeyProblem {
    pub table: String,
    pub rowid: Option<i64>,
    pub parent: String,
}

/// Hands `f` each broken foreign key, until `f` returns `false`.
pub fn foreign_key_check(db: &Db, f: impl FnMut(ForeignKeyProblem) -> bool) -> Result<()> {
    if db.pg().is_some() {
        return Ok(());
    }
    each(
        db,
        FOREIGN_KEY_CHECK,
        |r| Ok(ForeignKeyProblem { table: r.get("table")?, rowid: r.get("rowid")?, parent: r.get("parent")? }),
        f,
    )
}

/// Copies whose line is not where they point (`missing` = 1), or whose session is not recorded
/// as sharing lines of the session holding it (so deleting that session would lose the line).
pub const CHECK_SHARED_LINES: &str = "SELECT c.key, c.body_key, (o.key IS NULL OR o.body_key IS NOT NULL) AS missing \
    FROM entries c LEFT JOIN entries o ON o.key = c.body_key \
    WHERE c.body_key IS NOT NULL AND (o.key IS NULL OR o.body_key IS NOT NULL \
        OR NOT EXISTS (SELECT 1 FROM shares s WHERE s.copy = c.key >> 32 AND s.owner = c.body_key >> 32)) \
    ORDER BY c.key";

/// A copied row whose line is not where it points, or not recorded as shared.
pub struct SharedLineProblem {
    /// The copy's key.
    pub key: i64,
    /// The key it takes its line from.
    pub from: i64,
    /// The line is missing (or held by another copy), not merely unrecorded.
    pub missing: bool,
}

/// Hands `f` each copied row with a problem, until `f` returns `false`.
pub fn shared_line_check(db: &Db, f: impl FnMut(SharedLineProblem) -> bool) -> Result<()> {
    if db.pg().is_some() {
        return Ok(());
    }
    each(
        db,
        CHECK_SHARED_LINES,
        |r| Ok(SharedLineProblem { key: r.get("key")?, from: r.get("body_key")?, missing: r.get("missing")? }),
        f,
    )
}

/// A session row as the check reads it.
pub struct CheckedSession {
    pub sid: i64,
    pub id: String,
    pub path: String,
    pub cwd: Option<String>,
    pub entry_count: i64,
    pub last_seq: i64,
    pub tree_ok: bool,
}

impl CheckedSession {
    fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
        Ok(CheckedSession {
            sid: r.get("sid")?,
            id: r.get("id")?,
            path: r.get("path")?,
            cwd: r.get("cwd")?,
            entry_count: r.get("entry_count")?,
            last_seq: r.get("last_seq")?,
            tree_ok: r.get::<_, i64>("tree_ok")? != 0,
        })
    }

    fn from_pg(r: &postgres::Row) -> Self {
        CheckedSession {
            sid: r.get("sid"),
            id: r.get("id"),
            path: r.get("path"),
            cwd: r.get("cwd"),
            entry_count: r.get("entry_count"),
            last_seq: r.get("last_seq"),
            tree_ok: r.get("tree_ok"),
        }
    }
}

/// Every session with what `check` compares its lines against.
pub const CHECK_SESSIONS: &str = "SELECT sid, id, path, cwd, entry_count, last_seq, tree_ok FROM sessions ORDER BY sid";

/// [`CHECK_SESSIONS`] on PostgreSQL: the sessions of every origin.
pub const PG_CHECK_SESSIONS: &str =
    "SELECT skey AS sid, id, path, cwd, entry_count, last_seq, tree_ok FROM sessions ORDER BY skey";

/// Every session, as the check reads it.
pub fn sessions(db: &Db) -> Result<Vec<CheckedSession>> {
    if let Some(pg) = db.pg() {
        return Ok(pg.query(PG_CHECK_SESSIONS, &[])?.iter().map(CheckedSession::from_pg).collect());
    }
    let mut st = db.conn()?.prepare(CHECK_SESSIONS)?;
    let rows = st.query_map([], CheckedSession::from_row)?.collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// One session with what `check` compares its lines against.
pub const CHECK_SESSION: &str =
    "SELECT sid, id, path, cwd, entry_count, last_seq, tree_ok FROM sessions WHERE sid = :sid";

/// [`CHECK_SESSION`] on PostgreSQL.
pub const PG_CHECK_SESSION: &str =
    "SELECT skey AS sid, id, path, cwd, entry_count, last_seq, tree_ok FROM sessions WHERE skey = $1";

/// Session `sid`, as the check reads it.
pub fn session(db: &Db, sid: i64) -> Result<Option<CheckedSession>> {
    if let Some(pg) = db.pg() {
        return Ok(pg.query_opt(PG_CHECK_SESSION, &[&sid])?.as_ref().map(CheckedSession::from_pg));
    }
    let mut st = db.conn()?.prepare_cached(CHECK_SESSION)?;
    Ok(st.query_row(named_params! { ":sid": sid }, CheckedSession::from_row).optional()?)
}

/// An entry line as the check reads it.
pub struct CheckedEntry {
    pub seq: i64,
    pub id: Option<String>,
    pub parent_id: Option<String>,
    pub kind: Option<String>,
    /// Only for labels, context edits and compactions.
    pub body: Option<String>,
}

/// A session's lines (keys `:lo..=:hi`) in file order for `check`: the bodies only of the
/// entries whose targets it checks.
pub const CHECK_ENTRIES: &str = "SELECT seq, id, parent_id, type, \
        CASE WHEN type IN ('label', 'context_edit', 'compaction') THEN body END AS body \
    FROM entry_lines WHERE key BETWEEN :lo AND :hi ORDER BY key";

/// [`CHECK_ENTRIES`] on PostgreSQL (the primary key's range; every row holds its line).
pub const PG_CHECK_ENTRIES: &str = "SELECT seq, id, parent_id, type, \
        CASE WHEN type IN ('label', 'context_edit', 'compaction') THEN body END AS body \
    FROM entries WHERE session = $1 ORDER BY seq";

fn pg_entries(pg: &Pg, sid: i64) -> Result<Vec<CheckedEntry>> {
    Ok(pg
        .query(PG_CHECK_ENTRIES, &[&sid])?
        .iter()
        .map(|r| CheckedEntry {
            seq: r.get("seq"),
            id: r.get("id"),
            parent_id: r.get("parent_id"),
            kind: r.get("type"),
            body: r.get::<_, Option<&[u8]>>("body").map(|b| String::from_utf8_lossy(b).into_owned()),
        })
        .collect())
}

/// Every line of session `sid` in file order, as the check reads it.
pub fn entries(db: &Db, sid: i64) -> Result<Vec<CheckedEntry>> {
    if let Some(pg) = db.pg() {
        return pg_entries(pg, sid);
    }
    let (lo, hi) = SessionKey(sid).range();
    let mut st = db.conn()?.prepare_cached(CHECK_ENTRIES)?;
    let c = columns(&st, ["seq", "id", "parent_id", "type", "body"])?;
    let rows = st
        .query_map(named_params! { ":lo": lo.0, ":hi": hi.0 }, |r| {
            Ok(CheckedEntry {
                seq: r.get(c[0])?,
                id: r.get(c[1])?,
                parent_id: r.get(c[2])?,
                kind: r.get(c[3])?,
                body: r.get(c[4])?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}
