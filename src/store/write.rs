//! Writing sessions and entry lines to the database: session rows, entry rows with their
//! derived columns, and the per-session statistics kept up to date on every write.

use crate::error::Result;
use crate::js::json::{self, RawObject, Value};
use crate::jsonl::signature::FileSignature;
use crate::pi::migrate;
use crate::store::derive::{Derived, EntryFields, TreeIndexer};
use crate::store::extract::{Extras, ExtrasWriter};
use crate::store::handle::Db;
use crate::store::keys::{EntryKey, SessionKey};
use crate::store::postgres::Pg;
use crate::store::sqlite::{columns, Named};
use crate::store::stats::{Observation, SessionStats};
use rusqlite::{named_params, Connection, OptionalExtension};
use std::path::Path;

/// A session row to insert.
pub struct NewSession<'a> {
    /// Absolute path of the session's file.
    pub path: &'a Path,
    /// Path below the directory it was imported from.
    pub rel_path: Option<&'a str>,
    /// The header object.
    pub header: &'a json::Object,
    /// The exact header line.
    pub header_line: &'a str,
    /// Header version before migration.
    pub source_version: f64,
    /// Size and modification time (ns) of the imported file.
    pub file: Option<FileSignature>,
    /// When the session was last written (ns since the epoch).
    pub written_ns: i64,
}

impl<'a> NewSession<'a> {
    /// A session made now by the SessionManager: written as version 3, from no file.
    pub fn made_now(path: &'a Path, header: &'a json::Object, header_line: &'a str) -> Self {
        let (rel_path, file) = (None, None);
        NewSession { path, rel_path, header, header_line, source_version: 3.0, file, written_ns: now_ns() }
    }

    /// A session imported from the file at `path` (`rel` below the imported folder), as
    /// the file was when its signature `sig` was taken.
    pub fn imported(
        path: &'a Path,
        rel: &'a str,
        header: &'a json::Object,
        header_line: &'a str,
        source_version: f64,
        sig: FileSignature,
    ) -> Self {
        let (rel_path, file, written_ns) = (Some(rel), Some(sig), sig.mtime_ns);
        NewSession { path, rel_path, header, header_line, source_version, file, written_ns }
    }
}

/// Nanoseconds since the Unix epoch, now.
pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// The version as an integer column (`NULL` when it is not a whole number).
fn version_column(v: f64) -> Option<i64> {
    (v.is_finite() && v.fract() == 0.0 && v.abs() < 9e15).then_some(v as i64)
}

/// Adds a session row; statistics are filled in by [`UPDATE_SESSION_STATS`].
pub const INSERT_SESSION: &str = "INSERT INTO sessions \
    (id, path, dir, rel_path, cwd, version, source_version, created, parent_session, header, \
     file_size, file_mtime_ns, written_ns) \
    VALUES (:id, :path, :dir, :rel_path, :cwd, :version, :source_version, :created, :parent_session, :header, :file_size, :file_mtime_ns, :written_ns)";

/// [`INSERT_SESSION`] on PostgreSQL: a session made on the server (origin `''`), whose
/// derived entry columns are exact (`tree_ok`).
pub const PG_INSERT_SESSION: &str = "INSERT INTO sessions (origin, path, id, dir, rel_path, cwd, created, \
        parent_session, header, file_mtime_ns, written_ns, message_count, entry_count, last_seq, all_text, \
        lines_hash, local_sid, tree_ok) \
    VALUES ('', $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 0, 0, 0, ''::bytea, 0, 0, true) RETURNING skey";

/// Adds the session row; returns its sid.
pub fn insert_session(db: &Db, n: &NewSession<'_>) -> Result<i64> {
    let s = |k: &str| n.header.get(k).and_then(Value::as_str).map(str::to_owned);
    let dir = n.path.parent().map(|d| d.to_string_lossy().into_owned()).unwrap_or_default();
    if let Some(pg) = db.pg() {
        let path = n.path.to_string_lossy();
        let id = s("id").unwrap_or_default();
        let header = crate::store::postgres::pg_text(n.header_line);
        let mtime = n.file.map(|f| f.mtime_ns);
        let params: crate::store::postgres::PgParams<'_> = &[
            &path.as_ref(),
            &id,
            &dir,
            &n.rel_path,
            &s("cwd"),
            &s("timestamp"),
            &s("parentSession"),
            &header.as_bytes(),
            &mtime,
            &n.written_ns,
        ];
        let row = pg.query_opt(PG_INSERT_SESSION, params)?;
        return row.map(|r| r.get("skey")).ok_or_else(|| crate::Error::NotFound("the new session has no key".into()));
    }
    let tx = db.conn()?;
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
    Ok(tx.last_insert_rowid())
}

/// What writing an entry line needs from its text besides the text itself: its fields, search
/// and usage rows and statistics, read once (by an import, on another thread).
#[derive(Debug, Clone, Default)]
pub struct ParsedLine {
    /// Its top-level fields.
    pub fields: EntryFields,
    /// Its search and usage rows.
    pub extras: Extras,
    /// What it adds to its session's statistics.
    pub seen: Observation,
}

impl ParsedLine {
    /// Reads it from a scanned line.
    pub fn of(obj: &RawObject<'_>) -> Self {
        let (fields, message) = EntryFields::read(obj);
        let extras = Extras::of(&fields, obj, message.as_ref());
        let seen = Observation::of(&fields, obj, message.as_ref());
        ParsedLine { fields, extras, seen }
    }
}

/// Writes a session's entry lines in order, with their derived columns and statistics.
pub struct EntryWriter<'t> {
    stmt: Named<'t>,
    extras: ExtrasWriter<'t>,
    tx: &'t Connection,
    db: &'t Db,
    sid: i64,
    seq: i64,
    stats: SessionStats,
    tree: TreeIndexer,
    /// `allMessagesText` so far; `None` once it outgrew [`LIST_TEXT_MAX`].
    list_text: Option<String>,
    /// Shared lines not written yet.
    run: Option<CopyRun>,
    /// Sessions lines were shared from.
    sources: Vec<i64>,
}

/// A line of a session in the same database that a new session shares, with what the source
/// row holds besides the line.
#[derive(Debug, Clone)]
pub struct SharedLine {
    /// Key of the source row.
    pub key: i64,
    /// Its columns.
    pub fields: EntryFields,
    /// Its derived columns.
    pub derived: Derived,
    /// Its part of `allMessagesText` (its search row's list text).
    pub list_text: Option<String>,
}

/// Most rows one copy statement moves: a copy within one table goes through a temporary
/// table of the rows it reads, which must stay small whatever the session's length.
pub const COPY_SLICE: i64 = 1024;

/// Consecutive source rows copied into consecutive new rows by one statement per table. The
/// derived columns of the copies are the source's shifted by the key distance, except the
/// first row's (given) and references to entries before the run (`before`); a row joins the
/// run only when that gives exactly what the tree indexer computed for it.
#[derive(Debug)]
struct CopyRun {
    /// First and last source keys.
    lo: i64,
    hi: i64,
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
    fn start(src: &SharedLine, key: i64, d: &Derived) -> Self {
        let s = &src.derived;
        let inherited = |own: Option<i64>, new: Option<i64>| if own.is_some_and(|k| k >= src.key) { None } else { new };
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
    fn extend(&mut self, src: &SharedLine, key: i64, d: &Derived) -> bool {
        let s = &src.derived;
        let shifted = |k: Option<i64>, before: Option<i64>| match k {
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

/// Largest `allMessagesText` kept joined per session: bounds the writer's memory; longer
/// sessions are joined from their message rows when listed.
pub const LIST_TEXT_MAX: usize = 8 << 20;

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
        body_key, parent_key, depth, compaction_key, thinking_key, model_key) \
    SELECT key + :delta, :sid, (key + :delta) & 4294967295, id, parent_id, type, ts, ts_ms, role, '', coalesce(body_key, key), \
        CASE WHEN key = :lo THEN :parent_key ELSE parent_key + :delta END, \
        CASE WHEN key = :lo THEN :depth ELSE depth + :ddepth END, \
        CASE WHEN key = :lo THEN :compaction_key WHEN compaction_key >= :lo THEN compaction_key + :delta ELSE :before_compaction_key END, \
        CASE WHEN key = :lo THEN :thinking_key WHEN thinking_key >= :lo THEN thinking_key + :delta ELSE :before_thinking_key END, \
        CASE WHEN key = :lo THEN :model_key WHEN model_key >= :lo THEN model_key + :delta ELSE :before_model_key END \
    FROM entries WHERE key BETWEEN :lo AND :hi";

impl<'t> EntryWriter<'t> {
    /// A writer for the (new, empty) session `sid`, inside an open transaction.
    pub fn new(db: &'t Db, sid: i64) -> Result<Self> {
        let tx = db.conn()?;
        Ok(EntryWriter {
            stmt: Named::prepare(tx, INSERT_ENTRY)?,
            extras: ExtrasWriter::new(tx),
            tx,
            db,
            sid,
            seq: 0,
            stats: SessionStats::default(),
            tree: TreeIndexer::new(),
            list_text: Some(String::new()),
            run: None,
            sources: Vec::new(),
        })
    }

    /// Stores one entry line (`obj` is `text` scanned).
    pub fn write(&mut self, obj: &RawObject<'_>, text: &str) -> Result<()> {
        self.write_parsed(text, ParsedLine::of(obj))
    }

    /// Stores one entry line read beforehand ([`ParsedLine::of`] of `text`).
    pub fn write_parsed(&mut self, text: &str, line: ParsedLine) -> Result<()> {
        self.flush_run()?;
        self.seq += 1;
        let key = entry_key(self.sid, self.seq);
        let ParsedLine { fields: f, extras, seen } = line;
        let d = self.tree.place(key, &f);
        insert_entry_row(&mut self.stmt, (self.sid, self.seq), &f, (text, None), &d)?;
        self.extras.write(self.sid, key, &f, &extras)?;
        self.count(&seen, extras.list_text());
        Ok(())
    }

    /// Stores one entry line that row `src.key` of the same database holds exactly: the line
    /// is shared, and the row with its search and usage rows is copied together with the rows
    /// of the source lines around it (`seen` is read from the line as [`ParsedLine::of`]
    /// reads it).
    pub fn share(&mut self, src: &SharedLine, seen: &Observation) -> Result<()> {
        self.seq += 1;
        let key = entry_key(self.sid, self.seq);
        let d = self.tree.place(key, &src.fields);
        self.count(seen, src.list_text.as_deref());
        let source = EntryKey(src.key).session().0;
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
        for copy in [COPY_TEXTS, COPY_USAGE] {
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
    pub fn finish(mut self) -> Result<SessionStats> {
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
            crate::store::discovery::save_list_text(self.db, self.sid, self.seq, text)?;
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
    body, parent_key, depth, compaction_key, thinking_key, model_key, body_key) \
    VALUES (:key, :session, :seq, :id, :parent_id, :type, :ts, :ts_ms, :role, :body, :parent_key, :depth, :compaction_key, :thinking_key, :model_key, :body_key)";

/// Inserts one entry row (line `seq` of session `sid`) with its columns and derived data.
fn insert_entry_row(
    stmt: &mut Named<'_>,
    (sid, seq): (i64, i64),
    f: &EntryFields,
    (text, owner): (&str, Option<i64>),
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
        ":body": text,
        ":parent_key": d.parent_key,
        ":depth": d.depth,
        ":compaction_key": d.compaction_key,
        ":thinking_key": d.thinking_key,
        ":model_key": d.model_key,
        ":body_key": owner,
    })?;
    Ok(())
}

/// Key of the entry stored as line `seq` of session `sid`.
pub fn entry_key(sid: i64, seq: i64) -> i64 {
    SessionKey(sid).entry(seq).0
}

/// Copies the entry lines of a session (keys `:from..=:to`, base `:base`) to session `:copy` (base
/// `:new_base`), header lines left out: keys and key-valued derived columns move by the base shift;
/// the lines themselves are shared (see `entry_lines`), not copied. The same parameters as
/// [`COPY_TEXTS`] and [`COPY_USAGE`], which run with it.
pub const COPY_ENTRIES: &str = "INSERT INTO entries (key, session, seq, id, parent_id, type, ts, ts_ms, role, body, \
        body_key, parent_key, depth, compaction_key, thinking_key, model_key) \
    SELECT key - :base + :new_base, :copy, seq, id, parent_id, type, ts, ts_ms, role, '', coalesce(body_key, key), \
        parent_key - :base + :new_base, depth, compaction_key - :base + :new_base, thinking_key - :base + :new_base, model_key - :base + :new_base \
    FROM entries WHERE key BETWEEN :from AND :to AND type IS NOT 'session'";

/// Copies search rows along with `write::COPY_ENTRIES` (same parameters).
pub const COPY_TEXTS: &str = "INSERT INTO texts (key, session, role, ts_ms, list_text) \
    SELECT key - :base + :new_base, :copy, role, ts_ms, list_text FROM texts WHERE key BETWEEN :from AND :to";

/// Copies usage rows along with `write::COPY_ENTRIES` (same parameters).
pub const COPY_USAGE: &str = "INSERT INTO usage (key, session, entry_id, ts, ts_ms, provider, model, input, output, \
        cache_read, cache_write, total, cost, invalid) \
    SELECT key - :base + :new_base, :copy, entry_id, ts, ts_ms, provider, model, input, output, cache_read, cache_write, total, cost, \
        invalid \
    FROM usage WHERE key BETWEEN :from AND :to";

/// Gives session `:copy` the statistics of session `:source` (a copy of all its entries).
const COPY_SESSION_STATS: &str = "UPDATE sessions SET (name, message_count, first_message, last_activity_ms, \
        entry_count, last_seq, tree_ok) = \
    (SELECT name, message_count, first_message, last_activity_ms, entry_count, last_seq, tree_ok \
     FROM sessions WHERE sid = :source) WHERE sid = :copy";

/// Copies the joined `allMessagesText` of session `:source` to session `:copy`.
pub const COPY_LIST_TEXT: &str =
    "INSERT INTO list_texts (sid, upto_seq, text) SELECT :copy, upto_seq, text FROM list_texts WHERE sid = :source";

/// [`COPY_ENTRIES`] on PostgreSQL: every line of session `$1` copied into session `$2`, the
/// keys in its derived columns moved to the copy's range.
pub const PG_COPY_ENTRIES: &str = "INSERT INTO entries (session, seq, id, parent_id, type, ts, body, role, ts_ms, \
        parent_key, depth, compaction_key, thinking_key, model_key, list_text) \
    SELECT $2::bigint, seq, id, parent_id, type, ts, body, role, ts_ms, parent_key + (($2::bigint - $1::bigint) << 32), \
        depth, compaction_key + (($2::bigint - $1::bigint) << 32), thinking_key + (($2::bigint - $1::bigint) << 32), \
        model_key + (($2::bigint - $1::bigint) << 32), list_text \
    FROM entries WHERE session = $1::bigint ORDER BY seq";

/// [`COPY_SESSION_STATS`] on PostgreSQL (with the joined message text).
pub const PG_COPY_SESSION_STATS: &str = "UPDATE sessions SET (name, message_count, first_message, last_activity_ms, \
        entry_count, last_seq, tree_ok, all_text, has_text, text_seq) = \
    (SELECT name, message_count, first_message, last_activity_ms, entry_count, last_seq, tree_ok, all_text, has_text, \
        text_seq FROM sessions WHERE skey = $1) WHERE skey = $2";

/// Makes the new, empty session `copy` a copy of every entry of session `source` (pi's
/// `forkFrom`): entry rows sharing the source's lines, search and usage rows, statistics and
/// the joined message text. Runs in the caller's transaction.
pub fn copy_session(db: &Db, source: i64, copy: i64) -> Result<()> {
    if let Some(pg) = db.pg() {
        pg.execute(PG_COPY_ENTRIES, &[&source, &copy])?;
        pg.execute(PG_COPY_SESSION_STATS, &[&source, &copy])?;
        return Ok(());
    }
    let tx = db.conn()?;
    let (lo, _) = key_range(source);
    let (new_lo, _) = key_range(copy);
    let last_seq = load_stats(db, source)?.last_seq;
    // In slices of lines (see `COPY_SLICE`).
    for first in (0..=last_seq).step_by(COPY_SLICE as usize) {
        let (from, to) = (lo + first, lo + (first + COPY_SLICE - 1).min(last_seq));
        for statement in [COPY_ENTRIES, COPY_TEXTS, COPY_USAGE] {
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

/// The key range holding session `sid`'s lines.
pub fn key_range(sid: i64) -> (i64, i64) {
    let (lo, hi) = SessionKey(sid).range();
    (lo.0, hi.0)
}

/// A session's statistics, last line number and tree regularity.
pub const SESSION_STATS: &str = "SELECT name, message_count, first_message, last_activity_ms, entry_count, last_seq, \
    tree_ok FROM sessions WHERE sid = :sid";

/// [`SESSION_STATS`] on PostgreSQL, with what an append checks and folds (`written_ns`,
/// `text_seq`).
pub const PG_SESSION_STATS: &str = "SELECT name, message_count, first_message, last_activity_ms, entry_count, \
    last_seq, tree_ok, written_ns, text_seq FROM sessions WHERE skey = $1";

/// [`PG_SESSION_STATS`], locking the session's row until the transaction ends: the appends of
/// two writers of one session take turns, each after the other's last line.
pub const PG_SESSION_STATS_FOR_UPDATE: &str = "SELECT name, message_count, first_message, last_activity_ms, \
    entry_count, last_seq, tree_ok, written_ns, text_seq FROM sessions WHERE skey = $1 FOR UPDATE";

/// A session's row as an append on PostgreSQL sees it.
#[derive(Debug, Clone)]
struct PgSessionRow {
    stored: StoredStats,
    /// The write time the next append checks is still there (nobody else wrote since).
    written_ns: i64,
    /// `all_text` joins the message texts of lines up to this one; later lines keep theirs in
    /// `entries.list_text` until [`PG_FOLD_TEXT`].
    text_seq: i64,
}

fn pg_session_row(pg: &Pg, sql: &'static str, sid: i64) -> Result<PgSessionRow> {
    let text =
        |r: &postgres::Row, c: &str| r.get::<_, Option<&[u8]>>(c).map(|b| String::from_utf8_lossy(b).into_owned());
    let r = pg
        .query_opt(sql, &[&sid])?
        .ok_or_else(|| crate::Error::NotFound(format!("no session with internal key {sid}")))?;
    Ok(PgSessionRow {
        stored: StoredStats {
            stats: SessionStats {
                name: text(&r, "name"),
                message_count: r.get("message_count"),
                first_message: text(&r, "first_message"),
                last_activity_ms: r.get("last_activity_ms"),
                entry_count: r.get("entry_count"),
            },
            last_seq: r.get("last_seq"),
            tree_ok: r.get("tree_ok"),
        },
        written_ns: r.get("written_ns"),
        text_seq: r.get("text_seq"),
    })
}

/// Appends one line and updates its session's row in one statement, on condition that the
/// session still ends at line `$2 - 1` with the write time `$23` (nobody else wrote since it
/// was read) and, when `$24`, that no entry of the session has the line's id: outside a
/// transaction this is the whole append, one round trip committed by itself. When the
/// condition fails nothing is written. The line's message text goes into `list_text`, not
/// into the session's joined `all_text`: rewriting that on every append made an append's cost
/// grow with the session (1.1 ms after 2,000 appends of 1 KiB).
pub const PG_APPEND_AT: &str = "WITH s AS ( \
        UPDATE sessions SET name = $15, message_count = $16, first_message = $17, last_activity_ms = $18, \
            entry_count = $19, last_seq = $2::bigint, written_ns = $20, tree_ok = tree_ok AND NOT $22::boolean \
        WHERE skey = $1::bigint AND last_seq = $2::bigint - 1 AND written_ns = $23::bigint \
            AND (NOT $24::boolean OR NOT EXISTS (SELECT 1 FROM entries WHERE session = $1::bigint AND id = $3::text)) \
        RETURNING skey) \
    INSERT INTO entries (session, seq, id, parent_id, type, ts, body, role, ts_ms, parent_key, depth, \
        compaction_key, thinking_key, model_key, list_text) \
    SELECT skey, $2::bigint, $3::text, $4::text, $5::text, $6::text, $7::bytea, $8::text, $9::bigint, $10::bigint, \
        $11::bigint, $12::bigint, $13::bigint, $14::bigint, $21::bytea FROM s";

/// Whether session `$1` has an entry with id `$2` (why a checked append wrote nothing).
pub const PG_ID_TAKEN: &str = "SELECT EXISTS (SELECT 1 FROM entries WHERE session = $1 AND id = $2) AS taken";

/// Joins the message texts of lines after `text_seq` up to `$2` onto the session's `all_text`
/// (pi's `allMessagesText`, space-joined), so that reading it never gathers more than
/// [`PG_FOLD_EVERY`] lines' texts.
pub const PG_FOLD_TEXT: &str = "UPDATE sessions s SET \
        all_text = CASE WHEN p.t IS NULL THEN s.all_text WHEN s.has_text THEN s.all_text || '\\x20'::bytea || p.t \
            ELSE p.t END, \
        has_text = s.has_text OR p.t IS NOT NULL, text_seq = $2::bigint \
    FROM (SELECT string_agg(e.list_text, '\\x20'::bytea ORDER BY e.seq) AS t FROM entries e \
          WHERE e.session = $1::bigint AND e.seq > (SELECT text_seq FROM sessions WHERE skey = $1::bigint) \
            AND e.seq <= $2::bigint AND e.list_text IS NOT NULL) p \
    WHERE s.skey = $1::bigint AND s.text_seq < $2::bigint";

/// Lines whose texts an append leaves in `entries.list_text` before it folds them.
const PG_FOLD_EVERY: i64 = 256;

/// Appends that found another writer's line in their place, at most, before giving up.
const PG_APPEND_TRIES: usize = 1000;

/// What a SessionManager knows of the session it appends to on PostgreSQL, between its
/// appends: the session's row as its last append left it, and that append's entry (the next
/// one's parent, usually). With it an append is one round trip; [`PG_APPEND_AT`]'s condition
/// tells when another writer moved the row, and the append then reads it again.
#[derive(Debug, Default)]
pub struct AppendState {
    known: Option<(i64, PgSessionRow)>,
    /// The last appended entry: session, id, key and derived columns.
    last: Option<(i64, String, i64, Derived)>,
}

impl AppendState {
    /// Key and derived columns of entry `id` of session `sid`, when it is the one appended last.
    pub fn node(&self, sid: i64, id: &str) -> Option<(i64, Derived)> {
        match &self.last {
            Some((s, last, key, d)) if *s == sid && last == id => Some((*key, *d)),
            _ => None,
        }
    }
}

/// What [`append_new_entry`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Appended {
    /// The line was stored under this key.
    Key(i64),
    /// The session has an entry with the line's id already; nothing was written.
    IdTaken,
}

/// [`append_entry`] for a new entry of a SessionManager, whose id was drawn without asking
/// the database: on PostgreSQL the append itself checks the id is free (saving a round trip)
/// and reads the session's row only when `state` does not know it.
pub fn append_new_entry(
    db: &Db,
    sid: i64,
    text: &str,
    parent: Option<(i64, Derived)>,
    state: &mut AppendState,
) -> Result<Appended> {
    match db.pg() {
        Some(pg) => pg_append_entry(db, pg, sid, text, parent, state, true),
        None => append_entry(db, sid, text, parent).map(Appended::Key),
    }
}

/// [`append_entry`] on PostgreSQL. Without `parent`, the parent named by the line is looked
/// up. Inside a transaction the session's row is locked first (`FOR UPDATE`), so the writers
/// of one session take turns; outside one, [`PG_APPEND_AT`] appends and commits in one round
/// trip, trying again after a concurrent append to the same session.
fn pg_append_entry(
    db: &Db,
    pg: &Pg,
    sid: i64,
    text: &str,
    mut parent: Option<(i64, Derived)>,
    state: &mut AppendState,
    check_id: bool,
) -> Result<Appended> {
    let obj = scan(text).ok_or_else(|| crate::Error::InvalidArgument("entry is not a JSON object".into()))?;
    let ParsedLine { fields: f, extras, seen } = ParsedLine::of(&obj);
    let body = crate::store::postgres::pg_text(text);
    let list_text = extras.list_text();
    let locked = pg.in_transaction();
    for attempt in 0..PG_APPEND_TRIES {
        if attempt > 0 || parent.is_none() {
            // The caller's parent may have come from `state`, which another writer made stale.
            parent = match f.parent_id.as_deref() {
                Some(pid) => entry_node(db, sid, pid)?,
                None => None,
            };
        }
        let row = match state.known.take() {
            Some((s, row)) if s == sid && !locked => row,
            _ => pg_session_row(pg, if locked { PG_SESSION_STATS_FOR_UPDATE } else { PG_SESSION_STATS }, sid)?,
        };
        let PgSessionRow { stored: StoredStats { mut stats, last_seq, tree_ok: regular }, written_ns, text_seq } = row;
        let seq = last_seq + 1;
        let key = entry_key(sid, seq);
        let (d, tree) = place_appended(key, &f, parent, regular);
        stats.apply(&seen, list_text);
        let bytes = |t: &Option<String>| t.as_ref().map(|t| t.as_bytes().to_vec());
        let irregular = tree.is_irregular() && regular;
        let now = now_ns();
        let written = pg.execute(
            PG_APPEND_AT,
            &[
                &sid,
                &seq,
                &f.id,
                &f.parent_id,
                &f.kind,
                &f.ts,
                &body.as_bytes(),
                &f.role,
                &f.ts_ms,
                &d.parent_key,
                &d.depth,
                &d.compaction_key,
                &d.thinking_key,
                &d.model_key,
                &bytes(&stats.name),
                &stats.message_count,
                &bytes(&stats.first_message),
                &stats.last_activity_ms,
                &stats.entry_count,
                &now,
                &list_text.map(str::as_bytes),
                &irregular,
                &written_ns,
                &check_id,
            ],
        )?;
        if written == 1 {
            let mut text_seq = text_seq;
            if seq - text_seq >= PG_FOLD_EVERY {
                pg.execute(PG_FOLD_TEXT, &[&sid, &seq])?;
                text_seq = seq;
            }
            let stored = StoredStats { stats, last_seq: seq, tree_ok: regular && !irregular };
            state.known = Some((sid, PgSessionRow { stored, written_ns: now, text_seq }));
            state.last = f.id.clone().map(|id| (sid, id, key, d));
            return Ok(Appended::Key(key));
        }
        state.last = None;
        if check_id && f.id.is_some() {
            let taken = pg.query_opt(PG_ID_TAKEN, &[&sid, &f.id])?.is_some_and(|r| r.get::<_, bool>("taken"));
            if taken {
                return Ok(Appended::IdTaken);
            }
        }
        if locked {
            break; // the row is locked: nobody else can have moved it
        }
    }
    Err(crate::Error::database(
        pg.name(),
        format!("could not append to session {sid}: its last line kept moving (concurrent writers)"),
    ))
}

/// What [`load_stats`] reads of a session.
#[derive(Debug, Clone)]
pub struct StoredStats {
    /// The discovery fields.
    pub stats: SessionStats,
    /// The line number of the session's last stored line.
    pub last_seq: i64,
    /// Every parent precedes its child and ids are unique, so the derived columns are exact.
    pub tree_ok: bool,
}

/// A session's statistics as stored, and its last line number and tree regularity.
pub fn load_stats(db: &Db, sid: i64) -> Result<StoredStats> {
    if let Some(pg) = db.pg() {
        return pg_session_row(pg, PG_SESSION_STATS, sid).map(|r| r.stored);
    }
    let conn = db.conn()?;
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
    row.ok_or_else(|| crate::Error::NotFound(format!("no session with internal key {sid}")))
}

/// Sets a session's statistics after an append, and records the write time (`:written_ns`, what
/// continue-recent orders by).
pub const APPEND_SESSION_STATS: &str = "UPDATE sessions SET name = :name, message_count = :message_count, first_message = :first_message, \
    last_activity_ms = :last_activity_ms, entry_count = :entry_count, last_seq = :last_seq, written_ns = :written_ns WHERE sid = :sid";

/// The derived columns of a line appended as `key` under `parent` (its key and columns), in a
/// session whose tree is `regular` or not; with the indexer, which knows whether the line made
/// the tree irregular.
fn place_appended(key: i64, f: &EntryFields, parent: Option<(i64, Derived)>, regular: bool) -> (Derived, TreeIndexer) {
    let mut tree = TreeIndexer::resume(!regular);
    if let (Some((pkey, pd)), Some(pid)) = (parent, f.parent_id.as_deref()) {
        tree.remember(pid, pkey, pd);
    }
    let d = tree.place(key, f);
    (d, tree)
}

/// Appends one entry line to session `sid` under its parent (the leaf), with derived columns
/// from the parent and the session's statistics and write time updated. Returns the new key.
pub fn append_entry(db: &Db, sid: i64, text: &str, parent: Option<(i64, Derived)>) -> Result<i64> {
    if let Some(pg) = db.pg() {
        return match pg_append_entry(db, pg, sid, text, parent, &mut AppendState::default(), false)? {
            Appended::Key(key) => Ok(key),
            Appended::IdTaken => Err(crate::Error::InvalidArgument("entry id already in the session".into())),
        };
    }
    let tx = db.conn()?;
    let StoredStats { mut stats, last_seq, tree_ok: regular } = load_stats(db, sid)?;
    let obj = json::scan_object(text.as_bytes())
        .ok()
        .flatten()
        .ok_or_else(|| crate::Error::InvalidArgument("entry is not a JSON object".into()))?;
    let ParsedLine { fields: f, extras, seen } = ParsedLine::of(&obj);
    let seq = last_seq + 1;
    let key = entry_key(sid, seq);
    let (d, _) = place_appended(key, &f, parent, regular);
    insert_entry_row(&mut Named::prepare(tx, INSERT_ENTRY)?, (sid, seq), &f, (text, None), &d)?;
    crate::store::extract::write_extras(db, sid, key, &f, &extras)?;
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

/// Reads the object of an entry line written by sessiondb itself.
pub fn scan(text: &str) -> Option<RawObject<'_>> {
    json::scan_object(text.as_bytes()).ok().flatten()
}

/// Key and derived columns of entry `:id` in session `:sid` (the later line for a repeated id).
pub const ENTRY_NODE: &str = "SELECT key, parent_key, depth, compaction_key, thinking_key, model_key FROM entries \
    WHERE session = :sid AND id = :id AND type IS NOT 'session' ORDER BY key DESC LIMIT 1";

/// [`ENTRY_NODE`] on PostgreSQL.
pub const PG_ENTRY_NODE: &str = "SELECT (session << 32) | seq AS key, parent_key, depth, compaction_key, \
    thinking_key, model_key FROM entries \
    WHERE session = $1 AND id = $2 AND type IS DISTINCT FROM 'session' ORDER BY seq DESC LIMIT 1";

/// Key and derived columns of entry `id` in session `sid` (the later line for a repeated id).
pub fn entry_node(db: &Db, sid: i64, id: &str) -> Result<Option<(i64, Derived)>> {
    if let Some(pg) = db.pg() {
        return Ok(pg.query_opt(PG_ENTRY_NODE, &[&sid, &id])?.map(|r| {
            let derived = Derived {
                parent_key: r.get("parent_key"),
                depth: r.get("depth"),
                compaction_key: r.get("compaction_key"),
                thinking_key: r.get("thinking_key"),
                model_key: r.get("model_key"),
            };
            (r.get("key"), derived)
        }));
    }
    let conn = db.conn()?;
    let mut st = conn.prepare_cached(ENTRY_NODE)?;
    Ok(st.query_row(named_params! { ":sid": sid, ":id": id }, |r| Ok((r.get("key")?, derived(r)?))).optional()?)
}

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
/// derived columns and the search row's list text.
pub const BRANCH_SOURCE_ROWS: &str = "SELECT e.key, e.id, e.parent_id, e.type, e.ts, e.ts_ms, e.role, \
        CASE WHEN e.body_key IS NULL THEN e.body ELSE (SELECT o.body FROM entries o WHERE o.key = e.body_key) END AS body, \
        e.parent_key, e.depth, e.compaction_key, e.thinking_key, e.model_key, t.list_text \
    FROM entries e LEFT JOIN texts t ON t.key = e.key WHERE e.key BETWEEN :lo AND :hi ORDER BY e.key";

/// [`BRANCH_SOURCE_ROWS`] on PostgreSQL (without the list text: the server's writer reads
/// the lines again).
pub const PG_BRANCH_SOURCE_ROWS: &str = "SELECT (session << 32) | seq AS key, id, parent_id, type, ts, ts_ms, role, \
        body, parent_key, depth, compaction_key, thinking_key, model_key \
    FROM entries WHERE session = $1 AND seq BETWEEN $2 AND $3 ORDER BY seq";

fn pg_branch_source_rows(pg: &Pg, keys: &[i64]) -> Result<Vec<(SharedLine, String)>> {
    let mut out = Vec::with_capacity(keys.len());
    let mut rest = keys;
    while let Some(&lo) = rest.first() {
        let len = rest.windows(2).take_while(|w| w[1] == w[0] + 1).count() + 1;
        let (sid, seq) = (EntryKey(lo).session().0, lo & 0xffff_ffff);
        for r in pg.query(PG_BRANCH_SOURCE_ROWS, &[&sid, &seq, &(seq + len as i64 - 1)])? {
            let line = SharedLine {
                key: r.get("key"),
                fields: EntryFields {
                    id: r.get("id"),
                    parent_id: r.get("parent_id"),
                    kind: r.get("type"),
                    ts: r.get("ts"),
                    ts_ms: r.get("ts_ms"),
                    role: r.get("role"),
                },
                derived: Derived {
                    parent_key: r.get("parent_key"),
                    depth: r.get("depth"),
                    compaction_key: r.get("compaction_key"),
                    thinking_key: r.get("thinking_key"),
                    model_key: r.get("model_key"),
                },
                list_text: None,
            };
            out.push((line, String::from_utf8_lossy(r.get::<_, &[u8]>("body")).into_owned()));
        }
        rest = &rest[len..];
    }
    Ok(out)
}

/// The rows stored under `keys` (absent keys skipped), in that order, each as a line a new
/// session may share and the line itself: consecutive keys are read by one range query.
pub fn branch_source_rows(db: &Db, keys: &[i64]) -> Result<Vec<(SharedLine, String)>> {
    if let Some(pg) = db.pg() {
        return pg_branch_source_rows(pg, keys);
    }
    let mut st = db.conn()?.prepare_cached(BRANCH_SOURCE_ROWS)?;
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
        ],
    )?;
    let mut out = Vec::with_capacity(keys.len());
    let mut rest = keys;
    while let Some(&lo) = rest.first() {
        let len = rest.windows(2).take_while(|w| w[1] == w[0] + 1).count() + 1;
        let mut rows = st.query(named_params! { ":lo": lo, ":hi": lo + len as i64 - 1 })?;
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
            };
            out.push((line, r.get(c[13])?));
        }
        rest = &rest[len..];
    }
    Ok(out)
}
