//! A session's outline: every entry's key, id and parent id without its line, read from the
//! two indexes that hold them (a tree of 100,000 entries is drawn without reading 100,000
//! lines), and the type, role and time of the few entries a page shows. Each statement sits
//! beside the function that binds it and reads its columns by name.

use crate::error::Result;
use crate::store::handle::{columns, Db};
use rusqlite::{named_params, OptionalExtension};
use std::collections::HashSet;

/// One entry's place in the tree, without its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// Storage key (file order).
    pub key: i64,
    /// `id` when a string.
    pub id: Option<String>,
    /// `parentId` when a string.
    pub parent_id: Option<String>,
}

/// An entry's type, role and time, without its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kind {
    /// `type` when a string.
    pub kind: Option<String>,
    /// `message.role`.
    pub role: Option<String>,
    /// Entry time (ms).
    pub ts_ms: Option<i64>,
}

/// Keys and ids of a session's lines (the `entries_by_id` index alone).
pub const OUTLINE_IDS: &str = "SELECT key, id FROM entries INDEXED BY entries_by_id WHERE session = :sid";

/// Keys and parent ids of a session's lines (the `entries_by_parent` index alone).
pub const OUTLINE_PARENTS: &str =
    "SELECT key, parent_id FROM entries INDEXED BY entries_by_parent WHERE session = :sid";

/// Keys of a session's header lines: rows with the header's id (by index) that are headers.
pub const OUTLINE_HEADERS: &str = "SELECT key FROM entries WHERE session = :sid \
    AND id = (SELECT id FROM sessions WHERE sid = :sid) AND type = 'session'";

/// [`OUTLINE_IDS`] and [`OUTLINE_PARENTS`] on PostgreSQL, header lines left out.
pub const PG_OUTLINE: &str = "SELECT (session << 32) | seq AS key, id, parent_id FROM entries \
    WHERE session = $1 AND type IS DISTINCT FROM 'session' ORDER BY seq";

/// Every entry of session `sid` (header lines excluded) in file order, without lines.
pub fn links(db: &Db, sid: i64) -> Result<Vec<Link>> {
    if let Some(pg) = db.pg() {
        return Ok(pg
            .query(PG_OUTLINE, &[&sid])?
            .iter()
            .map(|r| Link { key: r.get("key"), id: r.get("id"), parent_id: r.get("parent_id") })
            .collect());
    }
    let conn = db.conn()?;
    let headers: HashSet<i64> = conn
        .prepare_cached(OUTLINE_HEADERS)?
        .query_map(named_params! { ":sid": sid }, |r| r.get("key"))?
        .collect::<rusqlite::Result<_>>()?;
    let mut st = conn.prepare_cached(OUTLINE_IDS)?;
    let c = columns(&st, ["key", "id"])?;
    let mut out: Vec<Link> = st
        .query_map(named_params! { ":sid": sid }, |r| {
            Ok(Link { key: r.get(c[0])?, id: r.get(c[1])?, parent_id: None })
        })?
        .filter(|l| l.as_ref().map_or(true, |l| !headers.contains(&l.key)))
        .collect::<rusqlite::Result<_>>()?;
    out.sort_unstable_by_key(|l| l.key);
    let mut st = conn.prepare_cached(OUTLINE_PARENTS)?;
    let c = columns(&st, ["key", "parent_id"])?;
    let parents = st.query_map(named_params! { ":sid": sid }, |r| {
        Ok((r.get::<_, i64>(c[0])?, r.get::<_, Option<String>>(c[1])?))
    })?;
    for p in parents {
        let (key, parent) = p?;
        if let Ok(i) = out.binary_search_by_key(&key, |l| l.key) {
            out[i].parent_id = parent;
        }
    }
    Ok(out)
}

/// The type, role and time of entry `:key`.
pub const ENTRY_KIND: &str = "SELECT type, role, ts_ms FROM entries WHERE key = :key";

/// [`ENTRY_KIND`] on PostgreSQL.
pub const PG_ENTRY_KIND: &str = "SELECT type, role, ts_ms FROM entries WHERE session = $1 AND seq = $2";

/// The type, role and time of the entry stored under `key`.
pub fn kind(db: &Db, key: i64) -> Result<Option<Kind>> {
    if let Some(pg) = db.pg() {
        let (session, seq) = (key >> 32, key & 0xffff_ffff);
        return Ok(pg.query_opt(PG_ENTRY_KIND, &[&session, &seq])?.map(|r| Kind {
            kind: r.get("type"),
            role: r.get("role"),
            ts_ms: r.get("ts_ms"),
        }));
    }
    let mut st = db.conn()?.prepare_cached(ENTRY_KIND)?;
    let c = columns(&st, ["type", "role", "ts_ms"])?;
    Ok(st
        .query_row(named_params! { ":key": key }, |r| {
            Ok(Kind { kind: r.get(c[0])?, role: r.get(c[1])?, ts_ms: r.get(c[2])? })
        })
        .optional()?)
}
