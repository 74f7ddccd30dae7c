//! [`Writes`] on SQLite, and `EntryWriter`, which writes a new session's lines in bulk (an
//! import, a branched session): each line with its derived columns, search and usage rows, and
//! lines shared with a session of the same database copied as runs of rows.

use crate::error::Result;
use crate::js::json;
use crate::pi::migrate;
use crate::store::derive::{Derived, EntryFields, TreeIndexer};
use crate::store::interface::discovery::ListTextCache;
use crate::store::interface::write::{
    append_now, entry_key, key_range, now_ns, place_appended, AppendState, Appended, LineWriter, NewSession,
    ParsedLine, SharedLine, StoredStats, Writes, COPY_SLICE, LIST_TEXT_MAX,
};
use crate::store::keys::{EntryKey, SessionKey};
use crate::store::sqlite::extract::ExtrasWriter;
use crate::store::sqlite::lines::Stored;
use crate::store::sqlite::{columns, journal, Named, Sqlite};
use crate::store::stats::{Observation, Plain, SessionStats};
use rusqlite::{named_params, Connection, OptionalExtension};

/// The version as an integer column (`NULL` when it is not a whole number).
fn version_column(v: f64) -> Option<i64> {
    (v.is_finite() && v.fract() == 0.0 && v.abs() < 9e15).then_some(v as i64)
}

/// Adds a session row; statistics are filled in by [`UPDATE_SESSION_STATS`].
pub const INSERT_SESSION: &str = "INSERT INTO sessions \
    (id, path, dir, rel_path, cwd, version, source_version, created, parent_session, header, \
     file_size, file_mtime_ns, written_ns) \
    VALUES (:id, :path, :dir, :rel_path, :cwd, :version, :source_version, :created, :parent_session, :header, :file_size, :file_mtime_ns, :written_ns)";

/// [`LineWriter`] on SQLite: a session's entry lines in order, with their derived columns and
/// statistics, and lines shared with a session of the same database copied as runs of rows.
pub struct BulkWriter<'t> {
    stmt: Named<'t>,
    extras: ExtrasWriter<'t>,
    tx: &'t Connection,
    store: &'t Sqlite,
    sid: SessionKey,
    seq: i64,
    stats: SessionStats,
    tree: TreeIndexer,
    /// `allMessagesText` so far; `None` once it outgrew [`LIST_TEXT_MAX`].
    list_text: Option<String>,
    /// Shared lines not written yet.
    run: Option<CopyRun>,
    /// Sessions lines were shared from.
    sources: Vec<SessionKey>,
}

/// Consecutive source rows copied into consecutive new rows by one statement per table. The
/// derived columns of the copies are the source's shifted by the key distance, except the
/// first row's (given) and references to entries before the run (`before`); a row joins the
/// run only when that gives exactly what the tree indexer computed for it.
#[derive(Debug)]
struct CopyRun {
    /// First and last source keys.
    lo: EntryKey,
    hi: EntryKey,
    /// New key minus source key.
    delta: i64,
    /// Derived columns of the first row.
    first: Derived,
    /// New depth minus source depth.
    ddepth: Option<i64>,
    /// Nearest compaction, thinking and model entries in force before the run.
    before: Derived,
}

impl CopyRun {
    fn start(src: &SharedLine, key: EntryKey, d: &Derived) -> Self {
        let s = &src.derived;
        let inherited =
            |own: Option<EntryKey>, new: Option<EntryKey>| if own.is_some_and(|k| k >= src.key) { None } else { new };
        CopyRun {
            lo: src.key,
            hi: src.key,
            delta: key - src.key,
            first: *d,
            ddepth: d.depth.zip(s.depth).map(|(n, o)| n - o),
            before: Derived {
                compaction_key: inherited(s.compaction_key, d.compaction_key),
                thinking_key: inherited(s.thinking_key, d.thinking_key),
                model_key: inherited(s.model_key, d.model_key),
                ..Derived::default()
            },
        }
    }

    /// Takes the next shared line into the run when the copy statement would give it `d`.
    fn extend(&mut self, src: &SharedLine, key: EntryKey, d: &Derived) -> bool {
        let s = &src.derived;
        let shifted = |k: Option<EntryKey>, before: Option<EntryKey>| match k {
            Some(k) if k >= self.lo => Some(k + self.delta),
            _ => before,
        };
        let fits = src.key == self.hi + 1
            && key - src.key == self.delta
            && self.hi - self.lo + 1 < COPY_SLICE
            && d.parent_key == s.parent_key.map(|p| p + self.delta)
            && d.depth == s.depth.zip(self.ddepth).map(|(o, dd)| o + dd)
            && d.compaction_key == shifted(s.compaction_key, self.before.compaction_key)
            && d.thinking_key == shifted(s.thinking_key, self.before.thinking_key)
            && d.model_key == shifted(s.model_key, self.before.model_key);
        if fits {
            self.hi = src.key;
        }
        fits
    }
}

/// Sets a session's discovery fields and counters after its entries were written.
pub const UPDATE_SESSION_STATS: &str = "UPDATE sessions SET name = :name, message_count = :message_count, \
    first_message = :first_message, last_activity_ms = :last_activity_ms, entry_count = :entry_count, last_seq = :last_seq WHERE sid = :sid";

/// Re-links every entry of a session (keys `:lo..=:hi`) to its parent as pi resolves it: the
/// last line with the parent's id wins; header lines and `""` are no parents.
pub const RELINK_PARENTS: &str = "UPDATE entries SET parent_key = ( \
        SELECT max(p.key) FROM entries p \
        WHERE p.session = entries.session AND p.id = entries.parent_id AND p.type IS NOT 'session') \
    WHERE key BETWEEN :lo AND :hi AND parent_id <> '' AND type IS NOT 'session'";

/// Marks a session whose derived entry columns must not be trusted.
pub const MARK_TREE_IRREGULAR: &str = "UPDATE sessions SET tree_ok = 0 WHERE sid = :sid";

/// Records that session `:copy` may share lines held by session `:owner` or by the sessions `:owner`
/// shares lines of (a copy points at the row holding a line, never at another copy).
pub const RECORD_SHARES: &str = "INSERT OR IGNORE INTO shares (copy, owner) \
    SELECT :copy, :owner UNION ALL SELECT :copy, owner FROM shares WHERE copy = :owner";

/// Copies the source rows `:lo..=:hi` (consecutive lines of a path) as the rows `:delta` keys further
/// on in session `:sid`, sharing their lines: the first row gets the derived columns `:parent_key..=:model_key`,
/// the others the source's shifted by `:delta` (depth by `:ddepth`), except references to entries
/// before the run, which become `:before_compaction_key..=:before_model_key` (see `store::CopyRun`).
pub const COPY_PATH_RUN: &str = "INSERT INTO entries (key, session, seq, id, parent_id, type, ts, ts_ms, role, body, \
        body_key, plain, activity_ms, tree_row, parent_key, depth, compaction_key, thinking_key, model_key) \
    SELECT key + :delta, :sid, (key + :delta) & 4294967295, id, parent_id, type, ts, ts_ms, role, '', coalesce(body_key, key), \
        plain, activity_ms, tree_row, \
        CASE WHEN key = :lo THEN :parent_key ELSE parent_key + :delta END, \
        CASE WHEN key = :lo THEN :depth ELSE depth + :ddepth END, \
        CASE WHEN key = :lo THEN :compaction_key WHEN compaction_key >= :lo THEN compaction_key + :delta ELSE :before_compaction_key END, \
        CASE WHEN key = :lo THEN :thinking_key WHEN thinking_key >= :lo THEN thinking_key + :delta ELSE :before_thinking_key END, \
        CASE WHEN key = :lo THEN :model_key WHEN model_key >= :lo THEN model_key + :delta ELSE :before_model_key END \
    FROM entries WHERE key BETWEEN :lo AND :hi";

impl<'t> BulkWriter<'t> {
    /// A writer for the (new, empty) session `sid`, inside an open transaction.
    fn new(store: &'t Sqlite, sid: SessionKey) -> Result<Self> {
        let tx = &store.conn;
        Ok(BulkWriter {
            stmt: Named::prepare(tx, INSERT_ENTRY)?,
            extras: ExtrasWriter::new(tx),
            tx,
            store,
            sid,
            seq: 0,
            stats: SessionStats::default(),
            tree: TreeIndexer::new(),
            list_text: Some(String::new()),
            run: None,
            sources: Vec::new(),
        })
    }

    /// Stores one entry line read beforehand ([`ParsedLine::of`] of `text`).
    fn write_parsed(&mut self, text: &str, line: ParsedLine) -> Result<()> {
        self.flush_run()?;
        self.seq += 1;
        let key = entry_key(self.sid, self.seq);
        let ParsedLine { fields: f, extras, seen, packed, plain, tree_row } = line;
        let d = self.tree.place(key, &f);
        let body = self.store.stored(text, packed)?;
        insert_entry_row(&mut self.stmt, (self.sid, self.seq), &f, (&body, plain, tree_row.as_deref()), &d)?;
        self.extras.write(self.sid, key, &f, &extras)?;
        self.count(&seen, extras.list_text());
        Ok(())
    }

    /// Stores one entry line that row `src.key` of the same database holds exactly: the line
    /// is shared, and the row with its search and usage rows is copied together with the rows
    /// of the source lines around it (`seen` is read from the line as [`ParsedLine::of`]
    /// reads it).
    fn share(&mut self, src: &SharedLine, seen: &Observation) -> Result<()> {
        self.seq += 1;
        let key = entry_key(self.sid, self.seq);
        let d = self.tree.place(key, &src.fields);
        self.count(seen, src.list_text.as_deref());
        let source = src.key.session();
        if !self.sources.contains(&source) {
            self.sources.push(source);
        }
        if !self.run.as_mut().is_some_and(|r| r.extend(src, key, &d)) {
            self.flush_run()?;
            self.run = Some(CopyRun::start(src, key, &d));
        }
        Ok(())
    }

    /// Writes the shared lines gathered so far.
    fn flush_run(&mut self) -> Result<()> {
        let Some(r) = self.run.take() else { return Ok(()) };
        let (new_lo, first, before) = (r.lo + r.delta, r.first, r.before);
        self.tx.prepare_cached(COPY_PATH_RUN)?.execute(named_params! {
            ":lo": r.lo,
            ":hi": r.hi,
            ":delta": r.delta,
            ":sid": self.sid,
            ":parent_key": first.parent_key,
            ":depth": first.depth,
            ":compaction_key": first.compaction_key,
            ":thinking_key": first.thinking_key,
            ":model_key": first.model_key,
            ":ddepth": r.ddepth,
            ":before_compaction_key": before.compaction_key,
            ":before_thinking_key": before.thinking_key,
            ":before_model_key": before.model_key,
        })?;
        for copy in [COPY_TEXTS, COPY_USAGE, COPY_USAGE_LINES] {
            self.tx.prepare_cached(copy)?.execute(named_params! {
                ":base": r.lo, ":new_base": new_lo, ":copy": self.sid, ":from": r.lo, ":to": r.hi,
            })?;
        }
        Ok(())
    }

    /// Adds a written line to the statistics and to `allMessagesText` (`part`, its share).
    fn count(&mut self, seen: &Observation, part: Option<&str>) {
        if let (Some(joined), Some(part)) = (self.list_text.as_mut(), part) {
            if joined.len() + part.len() < LIST_TEXT_MAX {
                if !joined.is_empty() {
                    joined.push(' ');
                }
                joined.push_str(part);
            } else {
                self.list_text = None;
            }
        }
        self.stats.apply(seen, part);
    }

    /// Saves the statistics (and re-links parents of an irregular tree); returns them.
    fn finish(mut self) -> Result<SessionStats> {
        self.flush_run()?;
        for &source in &self.sources {
            self.tx.prepare_cached(RECORD_SHARES)?.execute(named_params! { ":copy": self.sid, ":owner": source })?;
        }
        let st = self.stats;
        self.tx.prepare_cached(UPDATE_SESSION_STATS)?.execute(named_params! {
            ":sid": self.sid,
            ":name": st.name,
            ":message_count": st.message_count,
            ":first_message": st.first_message,
            ":last_activity_ms": st.last_activity_ms,
            ":entry_count": st.entry_count,
            ":last_seq": self.seq,
        })?;
        if let Some(text) = &self.list_text {
            self.store.save_list_text(self.sid, self.seq, text)?;
        }
        if self.tree.is_irregular() {
            let (lo, hi) = key_range(self.sid);
            self.tx.execute(RELINK_PARENTS, named_params! { ":lo": lo, ":hi": hi })?;
            self.tx.execute(MARK_TREE_IRREGULAR, named_params! { ":sid": self.sid })?;
        }
        Ok(st)
    }
}

/// Adds one entry line.
pub const INSERT_ENTRY: &str = "INSERT INTO entries (key, session, seq, id, parent_id, type, ts, ts_ms, role, \
    body, body_dict, plain, activity_ms, tree_row, parent_key, depth, compaction_key, thinking_key, model_key) \
    VALUES (:key, :session, :seq, :id, :parent_id, :type, :ts, :ts_ms, :role, :body, :body_dict, :plain, :activity_ms, :tree_row, \
    :parent_key, :depth, :compaction_key, :thinking_key, :model_key)";

/// Inserts one entry row (line `seq` of session `sid`) with its columns and derived data
/// (`plain`: the line is in `JSON.stringify` form; `tree_row`: an assistant's, `pi::tree_row`).
fn insert_entry_row(
    stmt: &mut Named<'_>,
    (sid, seq): (SessionKey, i64),
    f: &EntryFields,
    (body, plain, tree_row): (&Stored<'_>, Option<Plain>, Option<&str>),
    d: &Derived,
) -> Result<()> {
    stmt.execute(named_params! {
        ":key": entry_key(sid, seq),
        ":session": sid,
        ":seq": seq,
        ":id": f.id,
        ":parent_id": f.parent_id,
        ":type": f.kind,
        ":ts": f.ts,
        ":ts_ms": f.ts_ms,
        ":role": f.role,
        ":body": body.body(),
        ":body_dict": body.dict(),
        ":plain": plain.map(|p| p.column()),
        ":activity_ms": plain.and_then(|p| p.activity_ms),
        ":tree_row": tree_row,
        ":parent_key": d.parent_key,
        ":depth": d.depth,
        ":compaction_key": d.compaction_key,
        ":thinking_key": d.thinking_key,
        ":model_key": d.model_key,
    })?;
    Ok(())
}

/// Copies the entry lines of a session (keys `:from..=:to`, base `:base`) to session `:copy` (base
/// `:new_base`), header lines left out: keys and key-valued derived columns move by the base shift;
/// the lines themselves are shared (see `entry_lines`), not copied. The same parameters as
/// [`COPY_TEXTS`], [`COPY_USAGE`] and [`COPY_USAGE_LINES`], which run with it.
pub const COPY_ENTRIES: &str = "INSERT INTO entries (key, session, seq, id, parent_id, type, ts, ts_ms, role, body, \
        body_key, plain, activity_ms, tree_row, parent_key, depth, compaction_key, thinking_key, model_key) \
    SELECT key - :base + :new_base, :copy, seq, id, parent_id, type, ts, ts_ms, role, '', coalesce(body_key, key), plain, activity_ms, tree_row, \
        parent_key - :base + :new_base, depth, compaction_key - :base + :new_base, thinking_key - :base + :new_base, model_key - :base + :new_base \
    FROM entries WHERE key BETWEEN :from AND :to AND type IS NOT 'session'";

/// Copies search rows along with `write::COPY_ENTRIES` or `COPY_PATH_RUN` (same parameters),
/// whose rows share their lines: a copy's list text is the one of the row holding its line,
/// stored as '' (`text_parts`, V24), not stored again.
pub const COPY_TEXTS: &str = "INSERT INTO texts (key, session, role, ts_ms, list_text) \
    SELECT key - :base + :new_base, :copy, role, ts_ms, CASE WHEN list_text IS NULL THEN NULL ELSE '' END \
    FROM texts WHERE key BETWEEN :from AND :to";

/// Copies usage rows along with `write::COPY_ENTRIES` (same parameters). A copy comes after
/// the row it copies (the new session's keys are the largest), so it is not the first of its
/// entry id and timestamp (migration 15), unless it has no entry id.
pub const COPY_USAGE: &str = "INSERT INTO usage (key, session, entry_id, ts, ts_ms, provider, model, input, output, \
        cache_read, cache_write, total, cost, invalid, first) \
    SELECT key - :base + :new_base, :copy, entry_id, ts, ts_ms, provider, model, input, output, cache_read, cache_write, total, cost, \
        invalid, entry_id IS NULL \
    FROM usage WHERE key BETWEEN :from AND :to";

/// Copies the list of entries whose usage is read from the line along with
/// `write::COPY_ENTRIES` (same parameters).
pub const COPY_USAGE_LINES: &str = "INSERT INTO usage_lines (key, session) \
    SELECT key - :base + :new_base, :copy FROM usage_lines WHERE key BETWEEN :from AND :to";

/// Gives session `:copy` the statistics of session `:source` (a copy of all its entries).
const COPY_SESSION_STATS: &str = "UPDATE sessions SET (name, message_count, first_message, last_activity_ms, \
        entry_count, last_seq, tree_ok) = \
    (SELECT name, message_count, first_message, last_activity_ms, entry_count, last_seq, tree_ok \
     FROM sessions WHERE sid = :source) WHERE sid = :copy";

/// Copies the joined `allMessagesText` of session `:source` to session `:copy`.
pub const COPY_LIST_TEXT: &str = "INSERT INTO list_texts (sid, upto_seq, text, text_dict) \
    SELECT :copy, upto_seq, text, text_dict FROM list_texts WHERE sid = :source";

/// A session's statistics, last line number and tree regularity.
pub const SESSION_STATS: &str = "SELECT name, message_count, first_message, last_activity_ms, entry_count, last_seq, \
    tree_ok FROM sessions WHERE sid = :sid";

/// Sets a session's statistics after an append, and records the write time (`:written_ns`, what
/// continue-recent orders by).
pub const APPEND_SESSION_STATS: &str = "UPDATE sessions SET name = :name, message_count = :message_count, first_message = :first_message, \
    last_activity_ms = :last_activity_ms, entry_count = :entry_count, last_seq = :last_seq, written_ns = :written_ns WHERE sid = :sid";

/// Key and derived columns of entry `:id` in session `:sid` (the later line for a repeated id).
pub const ENTRY_NODE: &str = "SELECT key, parent_key, depth, compaction_key, thinking_key, model_key FROM entries \
    WHERE session = :sid AND id = :id AND type IS NOT 'session' ORDER BY key DESC LIMIT 1";

/// The derived columns of a result row, by name (`parent_key` to `model_key`).
fn derived(r: &rusqlite::Row<'_>) -> rusqlite::Result<Derived> {
    Ok(Derived {
        parent_key: r.get("parent_key")?,
        depth: r.get("depth")?,
        compaction_key: r.get("compaction_key")?,
        thinking_key: r.get("thinking_key")?,
        model_key: r.get("model_key")?,
    })
}

/// Path rows `:lo..=:hi` of a session to branch from: columns, the line wherever it is stored,
/// derived columns and the search row's list text (`text_parts`: a copied line's is its
/// holder's). Unless `:every_line`, the line of a plain row is left unread (`NULL`) where a
/// branch neither edits it (a compaction) nor needs it for the statistics (a name): unpacking
/// and checking every line was most of a long branch's time.
pub const BRANCH_SOURCE_ROWS: &str = "SELECT e.key, e.id, e.parent_id, e.type, e.ts, e.ts_ms, e.role, \
        CASE WHEN NOT :every_line AND e.plain IS NOT NULL AND e.type NOT IN ('compaction', 'session_info') THEN NULL \
            WHEN e.body_key IS NULL THEN sessiondb_line(e.body, e.body_dict) \
            ELSE (SELECT sessiondb_line(o.body, o.body_dict) FROM entries o WHERE o.key = e.body_key) END AS body, \
        e.plain, e.activity_ms, e.parent_key, e.depth, e.compaction_key, e.thinking_key, e.model_key, t.list_text \
    FROM entries e LEFT JOIN text_parts t ON t.key = e.key WHERE e.key BETWEEN :lo AND :hi ORDER BY e.key";

impl<'t> LineWriter for BulkWriter<'t> {
    fn write_parsed(&mut self, text: &str, line: ParsedLine) -> Result<()> {
        BulkWriter::write_parsed(self, text, line)
    }

    fn share(&mut self, src: &SharedLine, _text: Option<&str>, seen: &Observation) -> Result<()> {
        BulkWriter::share(self, src, seen)
    }

    fn finish(self: Box<Self>) -> Result<SessionStats> {
        BulkWriter::finish(*self)
    }
}

impl Writes for Sqlite {
    fn line_packer(&self) -> Result<Option<crate::store::codec::Packer>> {
        if self.packing.borrow().text_only() {
            return Ok(None);
        }
        self.import_packer().map(Some)
    }

    fn enter_bulk(&self) {
        *self.bulk.borrow_mut() = Some(super::bulk::BulkJournal::enter(&self.conn));
    }

    fn between_bulk_transactions(&self) {
        if let Some(b) = self.bulk.borrow_mut().as_mut() {
            b.between_transactions(&self.conn);
        }
    }

    fn leave_bulk(&self) {
        if let Some(mut b) = self.bulk.borrow_mut().take() {
            b.leave(&self.conn);
        }
    }

    fn line_writer<'a>(&'a self, sid: SessionKey) -> Result<Box<dyn LineWriter + 'a>> {
        Ok(Box::new(BulkWriter::new(self, sid)?))
    }

    /// A database file's appends go to its journal, one `write` each, and are settled every
    /// [`journal::BATCH`]; a database in memory (staging, sessions never saved) has none.
    fn append_saved(
        &self,
        sid: SessionKey,
        file: &str,
        text: &str,
        parent_id: Option<&str>,
        state: &mut AppendState,
    ) -> Result<Appended> {
        let Some(db) = &self.path else { return append_now(self, sid, text, parent_id, state) };
        let due = {
            let mut slot = self.journal.borrow_mut();
            let (journal, count) = &mut *slot;
            let journal = match journal {
                Some(j) => j,
                None => journal.insert(journal::Journal::open(db)?),
            };
            journal.append(file, text)?;
            *count += 1;
            *count >= journal::BATCH
        };
        if due {
            // The append is durable already; a failure here surfaces at the next read.
            let _ = self.settle_appends();
        }
        Ok(Appended::Pending)
    }

    fn settle_appends(&self) -> Result<()> {
        let Some(db) = &self.path else { return Ok(()) };
        if journal::has_pending(db) {
            journal::settle_into(self, db)?;
        }
        self.journal.borrow_mut().1 = 0;
        Ok(())
    }

    fn append_checks_id(&self) -> bool {
        false
    }

    fn insert_session(&self, n: &NewSession<'_>) -> Result<SessionKey> {
        let s = |k: &str| n.header_str(k);
        let dir = n.dir();
        let tx = &self.conn;
        let version = migrate::header_version(n.header);
        // Cached: a fork or branched session of a small session is mostly fixed costs like this.
        tx.prepare_cached(INSERT_SESSION)?.execute(named_params! {
            ":id": s("id").unwrap_or_default(),
            ":path": n.path.to_string_lossy(),
            ":dir": dir,
            ":rel_path": n.rel_path,
            ":cwd": s("cwd"),
            ":version": version_column(version),
            ":source_version": version_column(n.source_version),
            ":created": s("timestamp"),
            ":parent_session": s("parentSession"),
            ":header": n.header_line,
            ":file_size": n.file.map(|f| f.size),
            ":file_mtime_ns": n.file.map(|f| f.mtime_ns),
            ":written_ns": n.written_ns,
        })?;
        Ok(SessionKey(tx.last_insert_rowid()))
    }

    fn copy_session(&self, source: SessionKey, copy: SessionKey) -> Result<()> {
        let tx = &self.conn;
        let (lo, _) = key_range(source);
        let (new_lo, _) = key_range(copy);
        let last_seq = self.load_stats(source)?.last_seq;
        // In slices of lines (see `COPY_SLICE`).
        for first in (0..=last_seq).step_by(COPY_SLICE as usize) {
            let (from, to) = (lo + first, lo + (first + COPY_SLICE - 1).min(last_seq));
            for statement in [COPY_ENTRIES, COPY_TEXTS, COPY_USAGE, COPY_USAGE_LINES] {
                let p = named_params! { ":base": lo, ":new_base": new_lo, ":copy": copy, ":from": from, ":to": to };
                tx.prepare_cached(statement)?.execute(p)?;
            }
        }
        tx.prepare_cached(RECORD_SHARES)?.execute(named_params! { ":copy": copy, ":owner": source })?;
        let pair = named_params! { ":copy": copy, ":source": source };
        tx.prepare_cached(COPY_SESSION_STATS)?.execute(pair)?;
        tx.prepare_cached(COPY_LIST_TEXT)?.execute(pair)?;
        Ok(())
    }

    fn append_new_entry(
        &self,
        sid: SessionKey,
        text: &str,
        parent: Option<(EntryKey, Derived)>,
        _state: &mut AppendState,
    ) -> Result<Appended> {
        // One transaction of its own, unless the caller's is open.
        let own = self.conn.is_autocommit();
        if own {
            self.conn.execute_batch("BEGIN IMMEDIATE")?;
        }
        let appended = self.append_entry(sid, text, parent);
        if own {
            match &appended {
                Ok(_) => self.conn.execute_batch("COMMIT")?,
                Err(_) => self.conn.execute_batch("ROLLBACK")?,
            }
        }
        appended.map(Appended::Key)
    }

    fn load_stats(&self, sid: SessionKey) -> Result<StoredStats> {
        let conn = &self.conn;
        let row = conn
            .prepare_cached(SESSION_STATS)?
            .query_row(named_params! { ":sid": sid }, |r| {
                Ok(StoredStats {
                    stats: SessionStats {
                        name: r.get("name")?,
                        message_count: r.get("message_count")?,
                        first_message: r.get("first_message")?,
                        last_activity_ms: r.get("last_activity_ms")?,
                        entry_count: r.get("entry_count")?,
                    },
                    last_seq: r.get("last_seq")?,
                    tree_ok: r.get::<_, i64>("tree_ok")? != 0,
                })
            })
            .optional()?;
        row.ok_or_else(|| crate::error::Error::NotFound(format!("no session with internal key {sid}")))
    }

    fn append_entry(&self, sid: SessionKey, text: &str, parent: Option<(EntryKey, Derived)>) -> Result<EntryKey> {
        let tx = &self.conn;
        let StoredStats { mut stats, last_seq, tree_ok: regular } = self.load_stats(sid)?;
        let obj = json::scan_object(text.as_bytes())
            .ok()
            .flatten()
            .ok_or_else(|| crate::error::Error::InvalidArgument("entry is not a JSON object".into()))?;
        let ParsedLine { fields: f, extras, seen, plain, tree_row, .. } = ParsedLine::of_line(text, &obj);
        let seq = last_seq + 1;
        let key = entry_key(sid, seq);
        let (d, _) = place_appended(key, &f, parent, regular);
        let body = self.stored(text, None)?;
        insert_entry_row(
            &mut Named::prepare(tx, INSERT_ENTRY)?,
            (sid, seq),
            &f,
            (&body, plain, tree_row.as_deref()),
            &d,
        )?;
        ExtrasWriter::new(tx).write(sid, key, &f, &extras)?;
        stats.apply(&seen, extras.list_text());
        tx.prepare_cached(APPEND_SESSION_STATS)?.execute(named_params! {
            ":sid": sid,
            ":name": stats.name,
            ":message_count": stats.message_count,
            ":first_message": stats.first_message,
            ":last_activity_ms": stats.last_activity_ms,
            ":entry_count": stats.entry_count,
            ":last_seq": seq,
            ":written_ns": now_ns(),
        })?;
        Ok(key)
    }

    fn entry_node(&self, sid: SessionKey, id: &str) -> Result<Option<(EntryKey, Derived)>> {
        let conn = &self.conn;
        let mut st = conn.prepare_cached(ENTRY_NODE)?;
        Ok(st.query_row(named_params! { ":sid": sid, ":id": id }, |r| Ok((r.get("key")?, derived(r)?))).optional()?)
    }

    fn branch_source_rows(&self, keys: &[EntryKey], every_line: bool) -> Result<Vec<(SharedLine, Option<String>)>> {
        let mut st = self.conn.prepare_cached(BRANCH_SOURCE_ROWS)?;
        let c = columns(
            &st,
            [
                "key",
                "id",
                "parent_id",
                "type",
                "ts",
                "ts_ms",
                "role",
                "parent_key",
                "depth",
                "compaction_key",
                "thinking_key",
                "model_key",
                "list_text",
                "body",
                "plain",
                "activity_ms",
            ],
        )?;
        let mut out = Vec::with_capacity(keys.len());
        let mut rest = keys;
        while let Some(&lo) = rest.first() {
            let len = rest.windows(2).take_while(|w| w[1] == w[0] + 1).count() + 1;
            let mut rows =
                st.query(named_params! { ":lo": lo, ":hi": lo + len as i64 - 1, ":every_line": every_line })?;
            while let Some(r) = rows.next()? {
                let line = SharedLine {
                    key: r.get(c[0])?,
                    fields: EntryFields {
                        id: r.get(c[1])?,
                        parent_id: r.get(c[2])?,
                        kind: r.get(c[3])?,
                        ts: r.get(c[4])?,
                        ts_ms: r.get(c[5])?,
                        role: r.get(c[6])?,
                    },
                    derived: Derived {
                        parent_key: r.get(c[7])?,
                        depth: r.get(c[8])?,
                        compaction_key: r.get(c[9])?,
                        thinking_key: r.get(c[10])?,
                        model_key: r.get(c[11])?,
                    },
                    list_text: r.get(c[12])?,
                    plain: Plain::from_columns(r.get(c[14])?, r.get(c[15])?),
                };
                out.push((line, r.get(c[13])?));
            }
            rest = &rest[len..];
        }
        Ok(out)
    }
}
