//! What SQLite stores beside each line at import and append (its search and usage rows), and
//! the maintenance that rebuilds them from the lines (`reindex`, `usage`, `list-texts`,
//! `usage-lines`).

use crate::error::Result;
use crate::js::json::{self, RawObject};
use crate::store::derive::EntryFields;
use crate::store::extract::{usage_in_line, usage_of, Extras};
use crate::store::keys::{EntryKey, SessionKey};
use crate::store::sqlite::Named;
use rusqlite::{named_params, Connection};

/// Marks an entry as searchable (queued for the index by trigger).
pub const INSERT_TEXT: &str =
    "INSERT INTO texts (key, session, role, ts_ms, list_text) VALUES (:key, :session, :role, :ts_ms, :list_text)";

/// Adds an entry's token usage.
pub const INSERT_USAGE: &str = "INSERT INTO usage (key, session, entry_id, ts, ts_ms, provider, model, input, output, \
    cache_read, cache_write, total, cost, invalid) VALUES (:key, :session, :entry_id, :ts, :ts_ms, :provider, :model, :input, :output, :cache_read, :cache_write, :total, :cost, :invalid)";

/// Lists an entry whose usage a reader must read from its line (`extract::usage_in_line`).
pub const INSERT_USAGE_LINE: &str = "INSERT INTO usage_lines (key, session) VALUES (:key, :session)";

/// Writes the search and usage rows of entries, holding its statements (prepared when first
/// needed) across the entries of a session.
pub struct ExtrasWriter<'c> {
    conn: &'c Connection,
    text: Option<Named<'c>>,
    usage: Option<Named<'c>>,
    usage_line: Option<Named<'c>>,
}

impl<'c> ExtrasWriter<'c> {
    /// A writer into `conn` (inside the caller's transaction).
    pub fn new(conn: &'c Connection) -> Self {
        ExtrasWriter { conn, text: None, usage: None, usage_line: None }
    }

    /// Writes the search and usage rows of the entry stored under `key`.
    pub fn write(&mut self, sid: SessionKey, key: EntryKey, f: &EntryFields, x: &Extras) -> Result<()> {
        if let Some((role, list_text)) = &x.search {
            let st = match &mut self.text {
                Some(st) => st,
                None => self.text.insert(Named::prepare(self.conn, INSERT_TEXT)?),
            };
            st.execute(named_params! { ":key": key, ":session": sid, ":role": role, ":ts_ms": f.ts_ms, ":list_text": list_text })?;
        }
        if let Some(u) = &x.usage {
            let st = match &mut self.usage {
                Some(st) => st,
                None => self.usage.insert(Named::prepare(self.conn, INSERT_USAGE)?),
            };
            st.execute(named_params! {
                ":key": key,
                ":session": sid,
                ":entry_id": f.id,
                ":ts": f.ts,
                ":ts_ms": f.ts_ms,
                ":provider": u.provider,
                ":model": u.model,
                ":input": u.input,
                ":output": u.output,
                ":cache_read": u.cache_read,
                ":cache_write": u.cache_write,
                ":total": u.total,
                ":cost": u.cost,
                ":invalid": u.invalid,
            })?;
        }
        if x.usage_in_line {
            let st = match &mut self.usage_line {
                Some(st) => st,
                None => self.usage_line.insert(Named::prepare(self.conn, INSERT_USAGE_LINE)?),
            };
            st.execute(named_params! { ":key": key, ":session": sid })?;
        }
        Ok(())
    }
}

/// Every stored entry line (for rebuilding derived tables).
pub const ALL_ENTRY_BODIES: &str = "SELECT key, session, body FROM entry_lines ORDER BY key";

/// What [`each_stored_entry`] hands on: the session, the key, the scanned line, its fields and
/// its message.
type EntryVisitor<'f> =
    dyn FnMut(SessionKey, EntryKey, &RawObject<'_>, &EntryFields, Option<&RawObject<'_>>) -> Result<()> + 'f;

/// Hands `f` every stored entry line that is a JSON object, scanned, with its fields and its
/// message (lines that are not objects are skipped): what rebuilding a derived table reads.
fn each_stored_entry(conn: &Connection, f: &mut EntryVisitor<'_>) -> Result<()> {
    let mut st = conn.prepare(ALL_ENTRY_BODIES)?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let (key, sid, body): (EntryKey, SessionKey, String) = (r.get("key")?, r.get("session")?, r.get("body")?);
        let Some(obj) = json::scan_object(body.as_bytes()).ok().flatten() else { continue };
        let (fields, message) = EntryFields::read(&obj);
        f(sid, key, &obj, &fields, message.as_ref())?;
    }
    Ok(())
}

/// Rebuilds the joined `allMessagesText` of every session from the texts (`text_parts`: a
/// copied line's is its holder's, V24).
pub const REBUILD_LIST_TEXTS: &str = "INSERT OR REPLACE INTO list_texts (sid, upto_seq, text) \
    SELECT s.sid, s.last_seq, coalesce((SELECT group_concat(t.list_text, ' ' ORDER BY t.key) FROM text_parts t \
        WHERE t.key BETWEEN s.sid << 32 AND (s.sid << 32) | 4294967295 AND t.list_text IS NOT NULL), '') \
    FROM sessions s";

/// Marks maintenance work done.
pub const MAINTENANCE_DONE: &str = "DELETE FROM maintenance WHERE task = :task";

/// Rebuilds the text and usage rows of every session from the stored lines (after a
/// migration added them).
pub fn reindex_all(conn: &mut Connection) -> Result<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    tx.execute("DELETE FROM texts", [])?;
    tx.execute("DELETE FROM usage", [])?;
    tx.execute("DELETE FROM usage_lines", [])?;
    each_stored_entry(&tx, &mut |sid, key, obj, f, message| {
        ExtrasWriter::new(&tx).write(sid, key, f, &Extras::of(f, obj, message))
    })?;
    tx.execute(REBUILD_LIST_TEXTS, [])?;
    tx.execute(MAINTENANCE_DONE, named_params! { ":task": "reindex" })?;
    tx.execute(MAINTENANCE_DONE, named_params! { ":task": "list-texts" })?;
    tx.execute(MAINTENANCE_DONE, named_params! { ":task": "usage-lines" })?;
    tx.commit()?;
    Ok(())
}

/// Lists again, from every stored line, the entries whose usage a reader must read from the
/// line (after the migration that added the list).
pub fn reindex_usage_lines(conn: &mut Connection) -> Result<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    tx.execute("DELETE FROM usage_lines", [])?;
    {
        let mut insert = Named::prepare(&tx, INSERT_USAGE_LINE)?;
        each_stored_entry(&tx, &mut |sid, key, obj, f, message| {
            if usage_in_line(f, obj, message, usage_of(f, obj, message).as_ref()) {
                insert.execute(named_params! { ":key": key, ":session": sid })?;
            }
            Ok(())
        })?;
    }
    tx.execute(MAINTENANCE_DONE, named_params! { ":task": "usage-lines" })?;
    tx.commit()?;
    Ok(())
}

/// The key and session of every usage row.
pub const ALL_USAGE_KEYS: &str = "SELECT key, session FROM usage ORDER BY key";

/// Removes every usage row (before extracting them again).
pub const DELETE_ALL_USAGE: &str = "DELETE FROM usage";

/// The line of entry `:key`, wherever it is stored.
pub const ENTRY_LINE_BY_KEY: &str = "SELECT body FROM entry_lines WHERE key = :key";

/// Extracts every usage row again from the stored lines (after the migration that made
/// out-of-range values count as invalid).
pub fn reindex_usage(conn: &mut Connection) -> Result<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let keys: Vec<(EntryKey, SessionKey)> = tx
        .prepare(ALL_USAGE_KEYS)?
        .query_map([], |r| Ok((r.get("key")?, r.get("session")?)))?
        .collect::<rusqlite::Result<_>>()?;
    tx.execute(DELETE_ALL_USAGE, [])?;
    {
        let mut line = tx.prepare(ENTRY_LINE_BY_KEY)?;
        for (key, sid) in keys {
            let body: String = line.query_row(named_params! { ":key": key }, |r| r.get("body"))?;
            let Some(obj) = json::scan_object(body.as_bytes()).ok().flatten() else { continue };
            let (f, message) = EntryFields::read(&obj);
            // Only the rows: the entries read from their lines are `usage-lines`' to list.
            let x = Extras { search: None, usage: usage_of(&f, &obj, message.as_ref()), usage_in_line: false };
            ExtrasWriter::new(&tx).write(sid, key, &f, &x)?;
        }
    }
    tx.execute(MAINTENANCE_DONE, named_params! { ":task": "usage" })?;
    tx.commit()?;
    Ok(())
}

/// Rebuilds every session's joined `allMessagesText` (after the migration that added them).
pub fn rebuild_list_texts(conn: &mut Connection) -> Result<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    tx.execute(REBUILD_LIST_TEXTS, [])?;
    tx.execute(MAINTENANCE_DONE, named_params! { ":task": "list-texts" })?;
    tx.commit()?;
    Ok(())
}
