//! [`Entries`] on PostgreSQL: entries are keyed by (session, seq) there; the walks up a path
//! carry keys only and join the lines once at the end.

use crate::error::Result;
use crate::store::interface::entries::{Entries, EntryRow, Kind, PathStep};
use crate::store::interface::links::{LinkRef, Links};
use crate::store::keys::{EntryKey, SessionKey};
use crate::store::postgres::{Pg, PgParams};

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

/// Reads a row of a [`pg_entries!`] statement.
fn entry_row(r: &postgres::Row) -> EntryRow {
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

fn pg_rows(pg: &Pg, sql: &'static str, params: PgParams<'_>) -> Result<Vec<EntryRow>> {
    Ok(pg.query(sql, params)?.iter().map(entry_row).collect())
}

fn pg_row(pg: &Pg, sql: &'static str, params: PgParams<'_>) -> Result<Option<EntryRow>> {
    Ok(pg.query_opt(sql, params)?.as_ref().map(entry_row))
}

/// The session and line number of a key, as PostgreSQL's primary key holds them.
fn pg_key(key: EntryKey) -> (i64, i64) {
    key.parts()
}

/// [`SESSION_TREE_STATE`] on PostgreSQL.
pub const PG_SESSION_TREE_STATE: &str = "SELECT tree_ok, entry_count FROM sessions WHERE skey = $1";

/// [`LAST_ENTRY`] on PostgreSQL.
pub const PG_LAST_ENTRY: &str =
    pg_entries!("WHERE session = $1 AND type IS DISTINCT FROM 'session' ORDER BY seq DESC LIMIT 1");

/// [`ENTRY_BY_ID`] on PostgreSQL.
pub const PG_ENTRY_BY_ID: &str =
    pg_entries!("WHERE session = $1 AND id = $2 AND type IS DISTINCT FROM 'session' ORDER BY seq DESC LIMIT 1");

/// [`ENTRY_BY_KEY`] on PostgreSQL.
pub const PG_ENTRY_BY_KEY: &str = pg_entries!("WHERE session = $1 AND seq = $2");

/// [`ALL_ENTRIES`] on PostgreSQL.
pub const PG_ALL_ENTRIES: &str = pg_entries!("WHERE session = $1 AND type IS DISTINCT FROM 'session' ORDER BY seq");

/// [`LABEL_ENTRIES`] on PostgreSQL (the partial index `entries_labels`).
pub const PG_LABEL_ENTRIES: &str = pg_entries!("WHERE session = $1 AND type = 'label' ORDER BY seq");

/// [`CHILDREN`] on PostgreSQL.
pub const PG_CHILDREN: &str =
    pg_entries!("WHERE session = $1 AND parent_id = $2 AND type IS DISTINCT FROM 'session' ORDER BY seq");

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

/// [`WALK_UP_STEPS`] on PostgreSQL.
pub const PG_WALK_UP_STEPS: &str = "WITH RECURSIVE walk(n, session, seq, id, type, role, parent_key) AS ( \
        SELECT 1, session, seq, id, type, role, parent_key FROM entries WHERE session = $1 AND seq = $2 \
        UNION ALL \
        SELECT w.n + 1, e.session, e.seq, e.id, e.type, e.role, e.parent_key FROM walk w \
            JOIN entries e ON e.session = w.parent_key >> 32 AND e.seq = w.parent_key & 4294967295 \
        WHERE w.n < $3::bigint) \
    SELECT (session << 32) | seq AS key, id, type, role FROM walk ORDER BY n";

/// [`LINKS`](crate::store::sqlite::entries::LINKS) on PostgreSQL.
pub const PG_LINKS: &str = "SELECT (session << 32) | seq AS key, id, parent_id, type, role FROM entries \
    WHERE session = $1 AND seq > $2 AND type IS DISTINCT FROM 'session' ORDER BY seq";

/// [`ENTRY_KIND`](crate::store::sqlite::entries::ENTRY_KIND) on PostgreSQL.
pub const PG_ENTRY_KIND: &str = "SELECT type, role, ts_ms FROM entries WHERE session = $1 AND seq = $2";

/// [`LINES_AT`] on PostgreSQL: `$1` the keys.
pub const PG_LINES_AT: &str = "SELECT (e.session << 32) | e.seq AS key, e.body \
    FROM (SELECT DISTINCT unnest($1::bigint[]) AS key) AS k \
    JOIN entries e ON e.session = k.key >> 32 AND e.seq = k.key & 4294967295 ORDER BY e.session, e.seq";

/// [`LINES_FROM`] on PostgreSQL.
pub const PG_LINES_FROM: &str = "SELECT (session << 32) | seq AS key, body FROM entries \
    WHERE session = $1 AND seq >= $2 AND type IS DISTINCT FROM 'session' ORDER BY seq LIMIT $3";

/// A session's lines in file order (every row holds its line on a server).
pub const PG_ENTRY_BODIES: &str = "SELECT body FROM entries WHERE session = $1 ORDER BY seq";

/// Every session, for `export --all`.
pub const PG_ALL_SESSIONS: &str = "SELECT skey FROM sessions ORDER BY skey";

impl Entries for Pg {
    fn tree_state(&self, sid: SessionKey) -> Result<Option<(bool, i64)>> {
        let row = self.query_opt(PG_SESSION_TREE_STATE, &[&sid])?;
        Ok(row.map(|r| (r.get("tree_ok"), r.get("entry_count"))))
    }

    fn last_entry(&self, sid: SessionKey) -> Result<Option<EntryRow>> {
        pg_row(self, PG_LAST_ENTRY, &[&sid])
    }

    fn entry_by_id(&self, sid: SessionKey, id: &str) -> Result<Option<EntryRow>> {
        pg_row(self, PG_ENTRY_BY_ID, &[&sid, &id])
    }

    fn entry_by_key(&self, key: EntryKey) -> Result<Option<EntryRow>> {
        let (sid, seq) = pg_key(key);
        pg_row(self, PG_ENTRY_BY_KEY, &[&sid, &seq])
    }

    fn all_entries(&self, sid: SessionKey) -> Result<Vec<EntryRow>> {
        pg_rows(self, PG_ALL_ENTRIES, &[&sid])
    }

    fn label_entries(&self, sid: SessionKey) -> Result<Vec<EntryRow>> {
        pg_rows(self, PG_LABEL_ENTRIES, &[&sid])
    }

    fn children(&self, sid: SessionKey, id: &str) -> Result<Vec<EntryRow>> {
        pg_rows(self, PG_CHILDREN, &[&sid, &id])
    }

    fn walk_up(&self, key: EntryKey, stop: Option<EntryKey>, limit: i64) -> Result<Vec<EntryRow>> {
        let (sid, seq) = pg_key(key);
        pg_rows(self, PG_WALK_UP, &[&sid, &seq, &stop, &limit])
    }

    fn walk_up_steps(&self, key: EntryKey, limit: i64) -> Result<Vec<PathStep>> {
        let (sid, seq) = pg_key(key);
        let rows = self.query(PG_WALK_UP_STEPS, &[&sid, &seq, &limit])?;
        Ok(rows
            .iter()
            .map(|r| PathStep { key: r.get("key"), id: r.get("id"), kind: r.get("type"), role: r.get("role") })
            .collect())
    }

    fn links(&self, sid: SessionKey) -> Result<Links> {
        self.links_after(sid, EntryKey::MIN)
    }

    fn links_after(&self, sid: SessionKey, after: EntryKey) -> Result<Links> {
        // Sequence numbers start at 1: 0 takes every entry.
        let after_seq = if after < sid.range().0 { 0 } else { pg_key(after).1 };
        let rows = self.query(PG_LINKS, &[&sid, &after_seq])?;
        let mut links = Links::with_capacity(rows.len());
        for r in &rows {
            links.push(LinkRef {
                key: r.get("key"),
                id: r.get("id"),
                parent_id: r.get("parent_id"),
                kind: r.get("type"),
                role: r.get("role"),
            });
        }
        Ok(links)
    }

    fn entry_kind(&self, key: EntryKey) -> Result<Option<Kind>> {
        let (sid, seq) = pg_key(key);
        Ok(self.query(PG_ENTRY_KIND, &[&sid, &seq])?.first().map(|r| Kind {
            kind: r.get("type"),
            role: r.get("role"),
            ts_ms: r.get("ts_ms"),
        }))
    }

    fn lines_at(&self, keys: &[EntryKey], f: &mut dyn FnMut(EntryKey, &[u8])) -> Result<()> {
        for r in self.query(PG_LINES_AT, &[&keys])? {
            f(r.get("key"), r.get::<_, &[u8]>("body"));
        }
        Ok(())
    }

    // A server stores no tree rows (its lines come from pushes and appends alike): readers scan
    // the lines.
    fn tree_rows_at(&self, _keys: &[EntryKey], _f: &mut dyn FnMut(EntryKey, &str)) -> Result<()> {
        Ok(())
    }

    fn lines_from(
        &self,
        sid: SessionKey,
        from: EntryKey,
        limit: i64,
        f: &mut dyn FnMut(EntryKey, &[u8]),
    ) -> Result<()> {
        let lo = sid.range().0;
        let seq = from.max(lo) - lo;
        for r in self.query(PG_LINES_FROM, &[&sid, &seq, &limit])? {
            f(r.get("key"), r.get::<_, &[u8]>("body"));
        }
        Ok(())
    }

    fn write_lines(&self, sid: SessionKey, f: &mut dyn FnMut(&mut Vec<u8>) -> Result<()>) -> Result<()> {
        // Rows arrive one at a time: gathered into pieces of a MiB.
        const PIECE: usize = 1 << 20;
        let mut failed = None;
        let mut piece = Vec::new();
        self.each(PG_ENTRY_BODIES, &[&sid], |r| {
            if failed.is_none() {
                piece.extend_from_slice(r.get::<_, &[u8]>("body"));
                piece.push(b'\n');
                if piece.len() >= PIECE {
                    failed = f(&mut piece).err();
                    piece.clear();
                }
            }
        })?;
        if failed.is_none() && !piece.is_empty() {
            failed = f(&mut piece).err();
        }
        failed.map_or(Ok(()), Err)
    }

    fn all_sessions(&self) -> Result<Vec<SessionKey>> {
        Ok(self.query(PG_ALL_SESSIONS, &[])?.iter().map(|r| r.get("skey")).collect())
    }
}
