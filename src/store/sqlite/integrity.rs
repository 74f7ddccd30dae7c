//! [`Integrity`] on SQLite: `PRAGMA integrity_check`, `foreign_key_check`, the shared
//! lines, and the columns `check` compares lines against.

use crate::error::Result;
use crate::store::interface::integrity::{
    CheckedEntry, CheckedSession, ForeignKeyProblem, Integrity, SharedLineProblem,
};
use crate::store::keys::{EntryKey, SessionKey};
use crate::store::sqlite::lines::read_line;
use crate::store::sqlite::{columns, Sqlite};
use rusqlite::{named_params, Connection, OptionalExtension};

/// Steps through `sql`'s rows, handing each to `f` until it returns `false`.
fn each<T>(
    db: &Connection,
    sql: &str,
    read: impl Fn(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    mut f: impl FnMut(T) -> bool,
) -> Result<()> {
    let mut st = db.prepare(sql)?;
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

/// Rows whose foreign key points at a missing row.
pub const FOREIGN_KEY_CHECK: &str = "PRAGMA foreign_key_check";

/// Copies whose line is not where they point (`missing` = 1), or whose session is not recorded
/// as sharing lines of the session holding it (so deleting that session would lose the line).
pub const CHECK_SHARED_LINES: &str = "SELECT c.key, c.body_key, (o.key IS NULL OR o.body_key IS NOT NULL) AS missing \
    FROM entries c LEFT JOIN entries o ON o.key = c.body_key \
    WHERE c.body_key IS NOT NULL AND (o.key IS NULL OR o.body_key IS NOT NULL \
        OR NOT EXISTS (SELECT 1 FROM shares s WHERE s.copy = c.key >> 32 AND s.owner = c.body_key >> 32)) \
    ORDER BY c.key";

fn checked_session(r: &rusqlite::Row<'_>) -> rusqlite::Result<CheckedSession> {
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

/// Every session with what `check` compares its lines against.
pub const CHECK_SESSIONS: &str = "SELECT sid, id, path, cwd, entry_count, last_seq, tree_ok FROM sessions ORDER BY sid";

/// One session with what `check` compares its lines against.
pub const CHECK_SESSION: &str =
    "SELECT sid, id, path, cwd, entry_count, last_seq, tree_ok FROM sessions WHERE sid = :sid";

/// A session's lines (keys `:lo..=:hi`) in file order for `check`, as stored (packed or not;
/// a copy's line is in the row `body_key` names).
pub const CHECK_ENTRIES: &str = "SELECT seq, id, parent_id, type, body, body_dict, body_key \
    FROM entries WHERE key BETWEEN :lo AND :hi ORDER BY key";

/// The line of a copy, for `check`.
pub const CHECK_COPIED_LINE: &str = "SELECT body FROM entry_lines WHERE key = :key";

/// Whether `check` needs the text of an entry of this type (it checks its targets).
fn checks_body(kind: Option<&str>) -> bool {
    matches!(kind, Some("label" | "context_edit" | "compaction"))
}

impl Integrity for Sqlite {
    fn integrity_check(&self, f: &mut dyn FnMut(String) -> bool) -> Result<()> {
        let db = &self.conn;
        each(db, INTEGRITY_CHECK, |r| r.get("integrity_check"), f)
    }

    fn foreign_key_check(&self, f: &mut dyn FnMut(ForeignKeyProblem) -> bool) -> Result<()> {
        let db = &self.conn;
        each(
            db,
            FOREIGN_KEY_CHECK,
            |r| Ok(ForeignKeyProblem { table: r.get("table")?, rowid: r.get("rowid")?, parent: r.get("parent")? }),
            f,
        )
    }

    fn shared_line_check(&self, f: &mut dyn FnMut(SharedLineProblem) -> bool) -> Result<()> {
        let db = &self.conn;
        each(
            db,
            CHECK_SHARED_LINES,
            |r| Ok(SharedLineProblem { key: r.get("key")?, from: r.get("body_key")?, missing: r.get("missing")? }),
            f,
        )
    }

    fn checked_sessions(&self) -> Result<Vec<CheckedSession>> {
        let db = &self.conn;
        let mut st = db.prepare(CHECK_SESSIONS)?;
        let rows = st.query_map([], checked_session)?.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    fn checked_session(&self, sid: SessionKey) -> Result<Option<CheckedSession>> {
        let db = &self.conn;
        let mut st = db.prepare_cached(CHECK_SESSION)?;
        Ok(st.query_row(named_params! { ":sid": sid }, checked_session).optional()?)
    }

    fn checked_entries(&self, sid: SessionKey) -> Result<Vec<CheckedEntry>> {
        let db = &self.conn;
        let (lo, hi) = sid.range();
        let mut st = db.prepare_cached(CHECK_ENTRIES)?;
        let c = columns(&st, ["seq", "id", "parent_id", "type", "body", "body_dict", "body_key"])?;
        let mut unpacker = self.unpacker.borrow_mut();
        let mut rows = st.query(named_params! { ":lo": lo, ":hi": hi })?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let kind: Option<String> = r.get(c[3])?;
            let wanted = checks_body(kind.as_deref());
            let (body, damaged) = match r.get::<_, Option<EntryKey>>(c[6])? {
                // A copy: its line is checked where it is stored; only its text is needed here.
                Some(from) if wanted => {
                    match db.prepare_cached(CHECK_COPIED_LINE)?.query_row(named_params! { ":key": from }, |r| r.get(0))
                    {
                        Ok(text) => (Some(text), None),
                        Err(e) => (None, Some(e.to_string())),
                    }
                }
                Some(_) => (None, None),
                None => match read_line(db, &mut unpacker, r.get_ref(c[4])?, r.get(c[5])?) {
                    Ok(text) => (wanted.then_some(text), None),
                    Err(why) => (None, Some(why)),
                },
            };
            out.push(CheckedEntry {
                seq: r.get(c[0])?,
                id: r.get(c[1])?,
                parent_id: r.get(c[2])?,
                kind,
                body,
                damaged,
            });
        }
        Ok(out)
    }
}
