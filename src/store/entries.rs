//! Typed reads of entry rows: a session's tree (the entry by id, by key, the last one, paths
//! by recursive query, children, labels) and its lines in file order. Each statement sits
//! beside the function that binds it (named parameters) and reads its columns by name.

use crate::error::Result;
use crate::js::json::{self, Value};
use crate::pi::projection::ParsedEntry;
use crate::store::handle::{columns, Db, Pg};
use crate::store::keys::{EntryKey, SessionKey};
use rusqlite::{named_params, OptionalExtension, Row};

/// One stored entry line with its columns.
#[derive(Debug, Clone)]
pub struct EntryRow {
    /// Storage key (see `store::keys`).
    pub key: i64,
    /// `id` when a string.
    pub id: Option<String>,
    /// `parentId` when a string.
    pub parent_id: Option<String>,
    /// `type` when a string.
    pub kind: Option<String>,
    /// `message.role`.
    pub role: Option<String>,
    /// `new Date(timestamp).getTime()`.
    pub ts_ms: Option<i64>,
    /// The exact line.
    pub body: String,
    /// Key of the parent entry.
    pub parent_key: Option<i64>,
    /// Distance from the root (exact only in regular sessions).
    pub depth: Option<i64>,
    /// Nearest compaction on the path.
    pub compaction_key: Option<i64>,
    /// Nearest thinking-level change on the path.
    pub thinking_key: Option<i64>,
    /// Nearest model change or assistant message on the path.
    pub model_key: Option<i64>,
}

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

impl EntryRow {
    /// Reads a row whose [`ENTRY_COLUMNS`] are at `c` (see `handle::columns`).
    fn from_row(r: &Row<'_>, c: &[usize; 12]) -> rusqlite::Result<EntryRow> {
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

    /// The line parsed (verbatim when too deeply nested to parse as a tree).
    pub fn parse(&self) -> ParsedEntry {
        ParsedEntry { key: self.key, value: json::parse_or_raw(&self.body).unwrap_or(Value::Null) }
    }
}

/// One entry of a path, without its line.
#[derive(Debug, Clone)]
pub struct PathStep {
    /// Storage key.
    pub key: i64,
    /// Entry id, when a string.
    pub id: Option<String>,
    /// Entry type.
    pub kind: Option<String>,
    /// Message role.
    pub role: Option<String>,
}

/// A PostgreSQL statement reading [`EntryRow`]s: the columns, then `$rest`.
macro_rules! pg_entries {
    ($rest:literal) => {
        concat!(
            "SELECT (session << 32) | seq AS key, id, parent_id, type, role, ts_ms, body, parent_key, depth, \
                compaction_key, thinking_key, model_key FROM entries ",
            $rest
        )
    };
}

impl EntryRow {
    /// Reads a row of a [`pg_entries!`] statement.
    fn from_pg(r: &postgres::Row) -> EntryRow {
        EntryRow {
            key: r.get("key"),
            id: r.get("id"),
            parent_id: r.get("parent_id"),
            kind: r.get("type"),
            role: r.get("role"),
            ts_ms: r.get("ts_ms"),
            body: String::from_utf8_lossy(r.get::<_, &[u8]>("body")).into_owned(),
            parent_key: r.get("parent_key"),
            depth: r.get("depth"),
            compaction_key: r.get("compaction_key"),
            thinking_key: r.get("thinking_key"),
            model_key: r.get("model_key"),
        }
    }
}

fn pg_rows(pg: &Pg, sql: &'static str, params: crate::store::handle::PgParams<'_>) -> Result<Vec<EntryRow>> {
    Ok(pg.query(sql, params)?.iter().map(EntryRow::from_pg).collect())
}

fn pg_row(pg: &Pg, sql: &'static str, params: crate::store::handle::PgParams<'_>) -> Result<Option<EntryRow>> {
    Ok(pg.query_opt(sql, params)?.as_ref().map(EntryRow::from_pg))
}

/// The session and line number of a key, as PostgreSQL's primary key holds them.
fn pg_key(key: i64) -> (i64, i64) {
    let k = EntryKey(key);
    (k.session().0, key & 0xffff_ffff)
}

fn rows(db: &Db, sql: &str, params: &[(&str, &dyn rusqlite::ToSql)]) -> Result<Vec<EntryRow>> {
    let mut st = db.conn()?.prepare_cached(sql)?;
    let c = columns(&st, ENTRY_COLUMNS)?;
    let rows = st.query_map(params, |r| EntryRow::from_row(r, &c))?.collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

fn row(db: &Db, sql: &str, params: &[(&str, &dyn rusqlite::ToSql)]) -> Result<Option<EntryRow>> {
    let mut st = db.conn()?.prepare_cached(sql)?;
    let c = columns(&st, ENTRY_COLUMNS)?;
    Ok(st.query_row(params, |r| EntryRow::from_row(r, &c)).optional()?)
}

fn range(sid: i64) -> (EntryKey, EntryKey) {
    SessionKey(sid).range()
}

/// Whether a session's derived entry columns can be trusted, and its entry count.
pub const SESSION_TREE_STATE: &str = "SELECT tree_ok, entry_count FROM sessions WHERE sid = :sid";

/// [`SESSION_TREE_STATE`] on PostgreSQL.
pub const PG_SESSION_TREE_STATE: &str = "SELECT tree_ok, entry_count FROM sessions WHERE skey = $1";

/// Whether session `sid`'s derived entry columns can be trusted, and its entry count (`None`
/// when there is no such session).
pub fn tree_state(db: &Db, sid: i64) -> Result<Option<(bool, i64)>> {
    if let Some(pg) = db.pg() {
        let row = pg.query_opt(PG_SESSION_TREE_STATE, &[&sid])?;
        return Ok(row.map(|r| (r.get("tree_ok"), r.get("entry_count"))));
    }
    let mut st = db.conn()?.prepare_cached(SESSION_TREE_STATE)?;
    let found = st
        .query_row(named_params! { ":sid": sid }, |r| Ok((r.get::<_, i64>("tree_ok")? != 0, r.get("entry_count")?)))
        .optional()?;
    Ok(found)
}

/// The last entry of a session (keys `:lo..=:hi`), header lines excluded.
pub const LAST_ENTRY: &str = "SELECT key, id, parent_id, type, role, ts_ms, body, parent_key, depth, \
    compaction_key, thinking_key, model_key FROM entry_lines \
    WHERE key BETWEEN :lo AND :hi AND type IS NOT 'session' ORDER BY key DESC LIMIT 1";

/// [`LAST_ENTRY`] on PostgreSQL.
pub const PG_LAST_ENTRY: &str =
    pg_entries!("WHERE session = $1 AND type IS DISTINCT FROM 'session' ORDER BY seq DESC LIMIT 1");

/// The last entry of session `sid` in file order.
pub fn last_entry(db: &Db, sid: i64) -> Result<Option<EntryRow>> {
    if let Some(pg) = db.pg() {
        return pg_row(pg, PG_LAST_ENTRY, &[&sid]);
    }
    let (lo, hi) = range(sid);
    row(db, LAST_ENTRY, named_params! { ":lo": lo.0, ":hi": hi.0 })
}

/// The entry with id `:id` in session `:sid`: the later line wins for a repeated id.
pub const ENTRY_BY_ID: &str = "SELECT key, id, parent_id, type, role, ts_ms, body, parent_key, depth, \
    compaction_key, thinking_key, model_key FROM entry_lines \
    WHERE session = :sid AND id = :id AND type IS NOT 'session' ORDER BY key DESC LIMIT 1";

/// [`ENTRY_BY_ID`] on PostgreSQL.
pub const PG_ENTRY_BY_ID: &str =
    pg_entries!("WHERE session = $1 AND id = $2 AND type IS DISTINCT FROM 'session' ORDER BY seq DESC LIMIT 1");

/// The entry with `id` in session `sid` (the later line wins for a repeated id).
pub fn entry_by_id(db: &Db, sid: i64, id: &str) -> Result<Option<EntryRow>> {
    if let Some(pg) = db.pg() {
        return pg_row(pg, PG_ENTRY_BY_ID, &[&sid, &id]);
    }
    row(db, ENTRY_BY_ID, named_params! { ":sid": sid, ":id": id })
}

/// The entry stored under a key.
pub const ENTRY_BY_KEY: &str = "SELECT key, id, parent_id, type, role, ts_ms, body, parent_key, depth, \
    compaction_key, thinking_key, model_key FROM entry_lines WHERE key = :key";

/// [`ENTRY_BY_KEY`] on PostgreSQL.
pub const PG_ENTRY_BY_KEY: &str = pg_entries!("WHERE session = $1 AND seq = $2");

/// The entry stored under `key`.
pub fn entry_by_key(db: &Db, key: i64) -> Result<Option<EntryRow>> {
    if let Some(pg) = db.pg() {
        let (sid, seq) = pg_key(key);
        return pg_row(pg, PG_ENTRY_BY_KEY, &[&sid, &seq]);
    }
    row(db, ENTRY_BY_KEY, named_params! { ":key": key })
}

/// Every entry of a session (keys `:lo..=:hi`) in file order, header lines excluded.
pub const ALL_ENTRIES: &str = "SELECT key, id, parent_id, type, role, ts_ms, body, parent_key, depth, \
    compaction_key, thinking_key, model_key FROM entry_lines \
    WHERE key BETWEEN :lo AND :hi AND type IS NOT 'session' ORDER BY key";

/// [`ALL_ENTRIES`] on PostgreSQL.
pub const PG_ALL_ENTRIES: &str = pg_entries!("WHERE session = $1 AND type IS DISTINCT FROM 'session' ORDER BY seq");

/// Every entry of session `sid` (header lines excluded) in file order.
pub fn all_entries(db: &Db, sid: i64) -> Result<Vec<EntryRow>> {
    if let Some(pg) = db.pg() {
        return pg_rows(pg, PG_ALL_ENTRIES, &[&sid]);
    }
    let (lo, hi) = range(sid);
    rows(db, ALL_ENTRIES, named_params! { ":lo": lo.0, ":hi": hi.0 })
}

/// Label lines of a session (keys `:lo..=:hi`) in file order, through the partial label index.
pub const LABEL_ENTRIES: &str = "SELECT key, id, parent_id, type, role, ts_ms, body, parent_key, depth, \
    compaction_key, thinking_key, model_key FROM entry_lines \
    WHERE key BETWEEN :lo AND :hi AND type = 'label' ORDER BY key";

/// [`LABEL_ENTRIES`] on PostgreSQL (the partial index `entries_labels`).
pub const PG_LABEL_ENTRIES: &str = pg_entries!("WHERE session = $1 AND type = 'label' ORDER BY seq");

/// The label lines of session `sid` in file order.
pub fn label_entries(db: &Db, sid: i64) -> Result<Vec<EntryRow>> {
    if let Some(pg) = db.pg() {
        return pg_rows(pg, PG_LABEL_ENTRIES, &[&sid]);
    }
    let (lo, hi) = range(sid);
    rows(db, LABEL_ENTRIES, named_params! { ":lo": lo.0, ":hi": hi.0 })
}

/// Children of entry `:id` in session `:sid` (regular trees), in file order.
pub const CHILDREN: &str = "SELECT key, id, parent_id, type, role, ts_ms, body, parent_key, depth, \
    compaction_key, thinking_key, model_key FROM entry_lines \
    WHERE session = :sid AND parent_id = :id AND type IS NOT 'session' ORDER BY key";

/// [`CHILDREN`] on PostgreSQL.
pub const PG_CHILDREN: &str =
    pg_entries!("WHERE session = $1 AND parent_id = $2 AND type IS DISTINCT FROM 'session' ORDER BY seq");

/// The entries of session `sid` whose `parentId` is `id`, in file order.
pub fn children(db: &Db, sid: i64, id: &str) -> Result<Vec<EntryRow>> {
    if let Some(pg) = db.pg() {
        return pg_rows(pg, PG_CHILDREN, &[&sid, &id]);
    }
    rows(db, CHILDREN, named_params! { ":sid": sid, ":id": id })
}

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

/// [`WALK_UP`] on PostgreSQL: the walk carries keys only (primary-key lookups), the lines are
/// joined once at the end.
pub const PG_WALK_UP: &str = "WITH RECURSIVE walk(n, session, seq, parent_key) AS ( \
        SELECT 0, session, seq, parent_key FROM entries WHERE session = $1 AND seq = $2 \
        UNION ALL \
        SELECT w.n + 1, e.session, e.seq, e.parent_key FROM walk w \
            JOIN entries e ON e.session = w.parent_key >> 32 AND e.seq = w.parent_key & 4294967295 \
        WHERE ((w.session << 32) | w.seq) IS DISTINCT FROM $3::bigint AND w.n + 1 < $4::bigint) \
    SELECT (e.session << 32) | e.seq AS key, e.id, e.parent_id, e.type, e.role, e.ts_ms, e.body, e.parent_key, \
        e.depth, e.compaction_key, e.thinking_key, e.model_key \
    FROM walk w JOIN entries e ON e.session = w.session AND e.seq = w.seq ORDER BY w.n";

/// The entries from `key` up through their parents, leaf first: after `stop` (when given) and
/// after `limit` rows the walk ends.
pub fn walk_up(db: &Db, key: i64, stop: Option<i64>, limit: i64) -> Result<Vec<EntryRow>> {
    if let Some(pg) = db.pg() {
        let (sid, seq) = pg_key(key);
        return pg_rows(pg, PG_WALK_UP, &[&sid, &seq, &stop, &limit]);
    }
    rows(db, WALK_UP, named_params! { ":key": key, ":stop": stop, ":limit": limit })
}

/// [`WALK_UP`] without the lines: key, id, type and role of each entry from `:key` up, at most
/// `:limit` of them, leaf first.
pub const WALK_UP_STEPS: &str = "WITH RECURSIVE walk(n, key, id, type, role, parent_key) AS ( \
        SELECT 1, key, id, type, role, parent_key FROM entries WHERE key = :key \
        UNION ALL \
        SELECT w.n + 1, e.key, e.id, e.type, e.role, e.parent_key FROM walk w CROSS JOIN entries e ON e.key = w.parent_key \
        WHERE w.n < :limit) \
    SELECT key, id, type, role FROM walk";

/// [`WALK_UP_STEPS`] on PostgreSQL.
pub const PG_WALK_UP_STEPS: &str = "WITH RECURSIVE walk(n, session, seq, id, type, role, parent_key) AS ( \
        SELECT 1, session, seq, id, type, role, parent_key FROM entries WHERE session = $1 AND seq = $2 \
        UNION ALL \
        SELECT w.n + 1, e.session, e.seq, e.id, e.type, e.role, e.parent_key FROM walk w \
            JOIN entries e ON e.session = w.parent_key >> 32 AND e.seq = w.parent_key & 4294967295 \
        WHERE w.n < $3::bigint) \
    SELECT (session << 32) | seq AS key, id, type, role FROM walk ORDER BY n";

/// Keys, ids, types and roles from `key` up through the parents, at most `limit`, leaf first.
pub fn walk_up_steps(db: &Db, key: i64, limit: i64) -> Result<Vec<PathStep>> {
    if let Some(pg) = db.pg() {
        let (sid, seq) = pg_key(key);
        let rows = pg.query(PG_WALK_UP_STEPS, &[&sid, &seq, &limit])?;
        return Ok(rows
            .iter()
            .map(|r| PathStep { key: r.get("key"), id: r.get("id"), kind: r.get("type"), role: r.get("role") })
            .collect());
    }
    let mut st = db.conn()?.prepare_cached(WALK_UP_STEPS)?;
    let [k, i, t, r_] = columns(&st, ["key", "id", "type", "role"])?;
    let steps = st
        .query_map(named_params! { ":key": key, ":limit": limit }, |r| {
            Ok(PathStep { key: r.get(k)?, id: r.get(i)?, kind: r.get(t)?, role: r.get(r_)? })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(steps)
}

/// The linking columns of every entry of a session (keys `:lo..=:hi`) in file order, header
/// lines excluded: all stored before the line, so no line is read.
pub const LINKS: &str = "SELECT key, id, parent_id, type, role FROM entries \
    WHERE key BETWEEN :lo AND :hi AND type IS NOT 'session' ORDER BY key";

/// An entry's place in the tree, without its line.
#[derive(Debug, Clone)]
pub struct Link {
    /// Storage key.
    pub key: i64,
    /// `id` when a string.
    pub id: Option<String>,
    /// `parentId` when a string.
    pub parent_id: Option<String>,
    /// Entry type.
    pub kind: Option<String>,
    /// Message role.
    pub role: Option<String>,
}

/// [`LINKS`] of session `sid`, in file order (SQLite only: `None` on PostgreSQL, where the
/// path is walked by the server).
pub fn links(db: &Db, sid: i64) -> Result<Option<Vec<Link>>> {
    if db.pg().is_some() {
        return Ok(None);
    }
    let (lo, hi) = range(sid);
    let mut st = db.conn()?.prepare_cached(LINKS)?;
    let [k, i, p, t, r_] = columns(&st, ["key", "id", "parent_id", "type", "role"])?;
    let links = st
        .query_map(named_params! { ":lo": lo.0, ":hi": hi.0 }, |r| {
            Ok(Link { key: r.get(k)?, id: r.get(i)?, parent_id: r.get(p)?, kind: r.get(t)?, role: r.get(r_)? })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(Some(links))
}

/// Keys and lines of the entries of a session (keys `:lo..=:hi`) in file order, header lines
/// excluded. (Readers stop stepping after a batch: a bound LIMIT would make SQLite prepare it
/// again on every run.)
pub const LINES_FROM: &str = "SELECT key, body FROM entry_lines \
    WHERE key BETWEEN :lo AND :hi AND type IS NOT 'session' ORDER BY key";

/// [`LINES_FROM`] on PostgreSQL.
pub const PG_LINES_FROM: &str = "SELECT (session << 32) | seq AS key, body FROM entries \
    WHERE session = $1 AND seq >= $2 AND type IS DISTINCT FROM 'session' ORDER BY seq LIMIT $3";

/// Hands `f` the key and line of at most `limit` entries of session `sid` from key `from` on
/// (header lines excluded), in file order, without copying the lines.
pub fn lines_from(db: &Db, sid: i64, from: i64, limit: i64, f: &mut dyn FnMut(i64, &[u8])) -> Result<()> {
    let (lo, hi) = range(sid);
    let lo = lo.0.max(from);
    if let Some(pg) = db.pg() {
        let seq = lo - range(sid).0 .0;
        for r in pg.query(PG_LINES_FROM, &[&sid, &seq, &limit])? {
            f(r.get("key"), r.get::<_, &[u8]>("body"));
        }
        return Ok(());
    }
    let mut st = db.conn()?.prepare_cached(LINES_FROM)?;
    let [key, body] = columns(&st, ["key", "body"])?;
    let mut rows = st.query(named_params! { ":lo": lo, ":hi": hi.0 })?;
    let mut n = 0;
    while n < limit {
        let Some(r) = rows.next()? else { break };
        n += 1;
        let body = r.get_ref(body)?;
        f(r.get(key)?, body.as_bytes().map_err(rusqlite::Error::from)?);
    }
    Ok(())
}

/// A session's entry lines in file order: one range of the table b-tree.
pub const ENTRY_BODIES: &str = "SELECT body FROM entry_lines WHERE key BETWEEN :lo AND :hi ORDER BY key";

/// Hands `f` every line of session `sid` (header lines included) in file order.
pub fn each_line(db: &Db, sid: i64, mut f: impl FnMut(&str) -> Result<()>) -> Result<()> {
    let (lo, hi) = range(sid);
    let mut st = db.conn()?.prepare_cached(ENTRY_BODIES)?;
    let [body] = columns(&st, ["body"])?;
    let mut rows = st.query(named_params! { ":lo": lo.0, ":hi": hi.0 })?;
    while let Some(r) = rows.next()? {
        f(r.get_ref(body)?.as_str().map_err(rusqlite::Error::from)?)?;
    }
    Ok(())
}

/// Every session, for `export --all`.
pub const ALL_SESSIONS: &str = "SELECT sid FROM sessions ORDER BY sid";

/// The key of every session, in order.
pub fn all_sessions(db: &Db) -> Result<Vec<i64>> {
    let mut st = db.conn()?.prepare(ALL_SESSIONS)?;
    let sids = st.query_map([], |r| r.get("sid"))?.collect::<rusqlite::Result<_>>()?;
    Ok(sids)
}
