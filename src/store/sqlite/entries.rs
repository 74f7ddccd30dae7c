//! [`Entries`] on SQLite: each statement beside the method that binds it (named parameters)
//! and reads its columns by name.

use crate::error::Result;
use crate::store::interface::entries::{Entries, EntryRow, Kind, PathStep};
use crate::store::interface::links::{LinkRef, Links};
use crate::store::keys::{EntryKey, SessionKey};
use crate::store::sqlite::keys::EntryKeyList;
use crate::store::sqlite::{columns, Sqlite};
use rusqlite::{named_params, Connection, OptionalExtension, Row};

/// The columns an [`EntryRow`] is read from, by name.
const ENTRY_COLUMNS: [&str; 12] = [
    "key",
    "id",
    "parent_id",
    "type",
    "role",
    "ts_ms",
    "body",
    "parent_key",
    "depth",
    "compaction_key",
    "thinking_key",
    "model_key",
];

/// A text column borrowed from the row (no `String` for it), `None` for null.
fn text<'r>(r: &'r Row<'_>, c: usize) -> rusqlite::Result<Option<&'r str>> {
    Ok(r.get_ref(c)?.as_str_or_null()?)
}

/// Reads a row whose [`ENTRY_COLUMNS`] are at `c` (see `sqlite::columns`).
fn entry_row(r: &Row<'_>, c: &[usize; 12]) -> rusqlite::Result<EntryRow> {
    Ok(EntryRow {
        key: r.get(c[0])?,
        id: r.get(c[1])?,
        parent_id: r.get(c[2])?,
        kind: r.get(c[3])?,
        role: r.get(c[4])?,
        ts_ms: r.get(c[5])?,
        body: r.get(c[6])?,
        parent_key: r.get(c[7])?,
        depth: r.get(c[8])?,
        compaction_key: r.get(c[9])?,
        thinking_key: r.get(c[10])?,
        model_key: r.get(c[11])?,
    })
}

fn range(sid: SessionKey) -> (EntryKey, EntryKey) {
    sid.range()
}

fn rows(db: &Connection, sql: &str, params: &[(&str, &dyn rusqlite::ToSql)]) -> Result<Vec<EntryRow>> {
    let mut st = db.prepare_cached(sql)?;
    let c = columns(&st, ENTRY_COLUMNS)?;
    let rows = st.query_map(params, |r| entry_row(r, &c))?.collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

fn row(db: &Connection, sql: &str, params: &[(&str, &dyn rusqlite::ToSql)]) -> Result<Option<EntryRow>> {
    let mut st = db.prepare_cached(sql)?;
    let c = columns(&st, ENTRY_COLUMNS)?;
    Ok(st.query_row(params, |r| entry_row(r, &c)).optional()?)
}

/// Whether a session's derived entry columns can be trusted, and its entry count.
pub const SESSION_TREE_STATE: &str = "SELECT tree_ok, entry_count FROM sessions WHERE sid = :sid";

/// The last entry of a session (keys `:lo..=:hi`), header lines excluded.
pub const LAST_ENTRY: &str = "SELECT key, id, parent_id, type, role, ts_ms, body, parent_key, depth, \
    compaction_key, thinking_key, model_key FROM entry_lines \
    WHERE key BETWEEN :lo AND :hi AND type IS NOT 'session' ORDER BY key DESC LIMIT 1";

/// The entry with id `:id` in session `:sid`: the later line wins for a repeated id.
pub const ENTRY_BY_ID: &str = "SELECT key, id, parent_id, type, role, ts_ms, body, parent_key, depth, \
    compaction_key, thinking_key, model_key FROM entry_lines \
    WHERE session = :sid AND id = :id AND type IS NOT 'session' ORDER BY key DESC LIMIT 1";

/// The entry stored under a key.
pub const ENTRY_BY_KEY: &str = "SELECT key, id, parent_id, type, role, ts_ms, body, parent_key, depth, \
    compaction_key, thinking_key, model_key FROM entry_lines WHERE key = :key";

/// Every entry of a session (keys `:lo..=:hi`) in file order, header lines excluded.
pub const ALL_ENTRIES: &str = "SELECT key, id, parent_id, type, role, ts_ms, body, parent_key, depth, \
    compaction_key, thinking_key, model_key FROM entry_lines \
    WHERE key BETWEEN :lo AND :hi AND type IS NOT 'session' ORDER BY key";

/// Label lines of a session (keys `:lo..=:hi`) in file order, through the partial label index.
pub const LABEL_ENTRIES: &str = "SELECT key, id, parent_id, type, role, ts_ms, body, parent_key, depth, \
    compaction_key, thinking_key, model_key FROM entry_lines \
    WHERE key BETWEEN :lo AND :hi AND type = 'label' ORDER BY key";

/// Children of entry `:id` in session `:sid` (regular trees), in file order.
pub const CHILDREN: &str = "SELECT key, id, parent_id, type, role, ts_ms, body, parent_key, depth, \
    compaction_key, thinking_key, model_key FROM entry_lines \
    WHERE session = :sid AND parent_id = :id AND type IS NOT 'session' ORDER BY key";

/// Walks from entry `:key` to its root through `parent_key`, one primary-key lookup per step
/// (the CTE drives, the table is searched: never a scan). Stops after entry `:stop` (when not
/// NULL) and after `:limit` rows (at least one), so a parent cycle cannot run forever. Leaf first.
/// The row limit is a condition, not `LIMIT :limit`: a bound LIMIT makes SQLite prepare the
/// statement again every time it is run.
pub const WALK_UP: &str = "WITH RECURSIVE walk(n, key, id, parent_id, type, role, ts_ms, body, parent_key, depth, \
        compaction_key, thinking_key, model_key) AS ( \
        SELECT 0, key, id, parent_id, type, role, ts_ms, body, parent_key, depth, compaction_key, thinking_key, \
            model_key FROM entry_lines WHERE key = :key \
        UNION ALL \
        SELECT w.n + 1, e.key, e.id, e.parent_id, e.type, e.role, e.ts_ms, e.body, e.parent_key, e.depth, \
            e.compaction_key, e.thinking_key, e.model_key \
        FROM walk w CROSS JOIN entry_lines e ON e.key = w.parent_key \
        WHERE w.key IS NOT :stop AND w.n + 1 < :limit) \
    SELECT key, id, parent_id, type, role, ts_ms, body, parent_key, depth, compaction_key, thinking_key, model_key \
    FROM walk";

/// [`WALK_UP`] without the lines: key, type and role of each entry from `:key` up, at most
/// `:limit` of them, leaf first.
pub const WALK_UP_STEPS: &str = "WITH RECURSIVE walk(n, key, id, type, role, parent_key) AS ( \
        SELECT 1, key, id, type, role, parent_key FROM entries WHERE key = :key \
        UNION ALL \
        SELECT w.n + 1, e.key, e.id, e.type, e.role, e.parent_key FROM walk w CROSS JOIN entries e ON e.key = w.parent_key \
        WHERE w.n < :limit) \
    SELECT key, id, type, role FROM walk";

/// The linking columns of every entry of a session (keys `:lo..=:hi`) in file order, header
/// lines excluded: from the covering index `entries_links` (migration 14), so no page holding
/// lines is read (SQLite would otherwise take the table's own key range).
pub const LINKS: &str = "SELECT key, id, parent_id, type, role FROM entries INDEXED BY entries_links \
    WHERE key BETWEEN :lo AND :hi AND type IS NOT 'session' ORDER BY key";

/// The type, role and time of the entry stored under `:key`.
pub const ENTRY_KIND: &str = "SELECT type, role, ts_ms FROM entries WHERE key = :key";

/// The lines of the keys in `:keys` (a JSON array) in key order: a primary-key lookup each (the
/// keys sorted by SQLite, no sort of the lines), so that only these lines are unpacked.
pub const LINES_AT: &str =
    "SELECT key, body FROM entry_lines WHERE key IN (SELECT value FROM json_each(:keys)) ORDER BY key";

/// Keys and stored tree rows of the entries under `:keys` (`EntryKeyList`) that have one, by key.
pub const TREE_ROWS_AT: &str = "SELECT key, tree_row FROM entries \
    WHERE key IN (SELECT value FROM json_each(:keys)) AND tree_row IS NOT NULL ORDER BY key";

/// Keys and lines of the entries of a session (keys `:lo..=:hi`) in file order, header lines
/// excluded. (Readers stop stepping after a batch: a bound LIMIT would make SQLite prepare it
/// again on every run.)
pub const LINES_FROM: &str = "SELECT key, body FROM entry_lines \
    WHERE key BETWEEN :lo AND :hi AND type IS NOT 'session' ORDER BY key";

/// A session's entry lines in file order: one range of the table b-tree.
pub const ENTRY_BODIES: &str = "SELECT body FROM entry_lines WHERE key BETWEEN :lo AND :hi ORDER BY key";

/// Every session, for `export --all`.
pub const ALL_SESSIONS: &str = "SELECT sid FROM sessions ORDER BY sid";

impl Entries for Sqlite {
    fn tree_state(&self, sid: SessionKey) -> Result<Option<(bool, i64)>> {
        let db = &self.conn;
        let mut st = db.prepare_cached(SESSION_TREE_STATE)?;
        let found = st
            .query_row(named_params! { ":sid": sid }, |r| Ok((r.get::<_, i64>("tree_ok")? != 0, r.get("entry_count")?)))
            .optional()?;
        Ok(found)
    }

    fn last_entry(&self, sid: SessionKey) -> Result<Option<EntryRow>> {
        let db = &self.conn;
        let (lo, hi) = range(sid);
        row(db, LAST_ENTRY, named_params! { ":lo": lo, ":hi": hi })
    }

    fn entry_by_id(&self, sid: SessionKey, id: &str) -> Result<Option<EntryRow>> {
        let db = &self.conn;
        row(db, ENTRY_BY_ID, named_params! { ":sid": sid, ":id": id })
    }

    fn entry_by_key(&self, key: EntryKey) -> Result<Option<EntryRow>> {
        let db = &self.conn;
        row(db, ENTRY_BY_KEY, named_params! { ":key": key })
    }

    fn all_entries(&self, sid: SessionKey) -> Result<Vec<EntryRow>> {
        let db = &self.conn;
        let (lo, hi) = range(sid);
        rows(db, ALL_ENTRIES, named_params! { ":lo": lo, ":hi": hi })
    }

    fn label_entries(&self, sid: SessionKey) -> Result<Vec<EntryRow>> {
        let db = &self.conn;
        let (lo, hi) = range(sid);
        rows(db, LABEL_ENTRIES, named_params! { ":lo": lo, ":hi": hi })
    }

    fn children(&self, sid: SessionKey, id: &str) -> Result<Vec<EntryRow>> {
        let db = &self.conn;
        rows(db, CHILDREN, named_params! { ":sid": sid, ":id": id })
    }

    fn walk_up(&self, key: EntryKey, stop: Option<EntryKey>, limit: i64) -> Result<Vec<EntryRow>> {
        let db = &self.conn;
        rows(db, WALK_UP, named_params! { ":key": key, ":stop": stop, ":limit": limit })
    }

    fn walk_up_steps(&self, key: EntryKey, limit: i64) -> Result<Vec<PathStep>> {
        let db = &self.conn;
        let mut st = db.prepare_cached(WALK_UP_STEPS)?;
        let [k, i, t, r_] = columns(&st, ["key", "id", "type", "role"])?;
        let steps = st
            .query_map(named_params! { ":key": key, ":limit": limit }, |r| {
                Ok(PathStep { key: r.get(k)?, id: r.get(i)?, kind: r.get(t)?, role: r.get(r_)? })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(steps)
    }

    fn links(&self, sid: SessionKey) -> Result<Links> {
        self.links_after(sid, EntryKey::MIN)
    }

    fn links_after(&self, sid: SessionKey, after: EntryKey) -> Result<Links> {
        let (lo, hi) = range(sid);
        let lo = if after < lo { lo } else { EntryKey(after.0.saturating_add(1)) };
        let mut st = self.conn.prepare_cached(LINKS)?;
        let [k, i, p, t, r_] = columns(&st, ["key", "id", "parent_id", "type", "role"])?;
        let mut rows = st.query(named_params! { ":lo": lo, ":hi": hi })?;
        let mut links = Links::default();
        while let Some(r) = rows.next()? {
            links.push(LinkRef {
                key: r.get(k)?,
                id: text(r, i)?,
                parent_id: text(r, p)?,
                kind: text(r, t)?,
                role: text(r, r_)?,
            });
        }
        Ok(links)
    }

    fn entry_kind(&self, key: EntryKey) -> Result<Option<Kind>> {
        let mut st = self.conn.prepare_cached(ENTRY_KIND)?;
        let [t, r_, ts] = columns(&st, ["type", "role", "ts_ms"])?;
        Ok(st
            .query_row(named_params! { ":key": key }, |r| {
                Ok(Kind { kind: r.get(t)?, role: r.get(r_)?, ts_ms: r.get(ts)? })
            })
            .optional()?)
    }

    fn lines_at(&self, keys: &[EntryKey], f: &mut dyn FnMut(EntryKey, &[u8])) -> Result<()> {
        let mut st = self.conn.prepare_cached(LINES_AT)?;
        let [key, body] = columns(&st, ["key", "body"])?;
        let mut rows = st.query(named_params! { ":keys": EntryKeyList(keys) })?;
        while let Some(r) = rows.next()? {
            let body = r.get_ref(body)?;
            f(r.get(key)?, body.as_bytes().map_err(rusqlite::Error::from)?);
        }
        Ok(())
    }

    fn tree_rows_at(&self, keys: &[EntryKey], f: &mut dyn FnMut(EntryKey, &str)) -> Result<()> {
        let mut st = self.conn.prepare_cached(TREE_ROWS_AT)?;
        let [key, row] = columns(&st, ["key", "tree_row"])?;
        let mut rows = st.query(named_params! { ":keys": EntryKeyList(keys) })?;
        while let Some(r) = rows.next()? {
            let row = r.get_ref(row)?;
            f(r.get(key)?, row.as_str().map_err(rusqlite::Error::from)?);
        }
        Ok(())
    }

    fn lines_from(
        &self,
        sid: SessionKey,
        from: EntryKey,
        limit: i64,
        f: &mut dyn FnMut(EntryKey, &[u8]),
    ) -> Result<()> {
        let (lo, hi) = range(sid);
        let lo = lo.max(from);
        let mut st = self.conn.prepare_cached(LINES_FROM)?;
        let [key, body] = columns(&st, ["key", "body"])?;
        let mut rows = st.query(named_params! { ":lo": lo, ":hi": hi })?;
        let mut n = 0;
        while n < limit {
            let Some(r) = rows.next()? else { break };
            n += 1;
            let body = r.get_ref(body)?;
            f(r.get(key)?, body.as_bytes().map_err(rusqlite::Error::from)?);
        }
        Ok(())
    }

    fn write_lines(&self, sid: SessionKey, f: &mut dyn FnMut(&mut Vec<u8>) -> Result<()>) -> Result<()> {
        let (lo, hi) = range(sid);
        let mut un = self.unpacker.borrow_mut();
        crate::store::sqlite::unpack_ahead::write_lines(&self.conn, &mut un, lo, hi, f)
    }

    fn all_sessions(&self) -> Result<Vec<SessionKey>> {
        let db = &self.conn;
        let mut st = db.prepare(ALL_SESSIONS)?;
        let sids = st.query_map([], |r| r.get("sid"))?.collect::<rusqlite::Result<_>>()?;
        Ok(sids)
    }
}
