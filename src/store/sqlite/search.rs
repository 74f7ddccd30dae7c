//! The search index on SQLite (migrations V9, V10, V12, V16): the queue of entries to index
//! (`search_pending`), the postings written in token order per build batch (merged after a
//! catch-up: `search_merge`), the vocabulary, the runs of copies, and the statements a query
//! runs.

use crate::error::Result;
use crate::store::keys::{EntryKey, SessionKey};
use crate::store::search::build::{gather, tokenize, Gathered, Queued, Tokenized, REBUILD_MIN_DELETED};
use crate::store::search::query::{HitRow, RowFilter};
use crate::store::search::vocab::Vocab;
use crate::store::search::SearchIndex;
use crate::store::sqlite::search_merge::{self, BATCH_SET};
use crate::store::sqlite::Sqlite;
use rusqlite::{named_params, Connection, OptionalExtension, TransactionBehavior};

const PENDING_COUNT: &str = "SELECT count(*) FROM search_pending";

/// The next `:n` queued entries after key `:after`: the owner of a copy's line, and the line
/// of an entry holding its own (entries gone since they were queued give neither).
pub const PENDING_BATCH: &str =
    "SELECT p.key, e.body_key, CASE WHEN e.body_key IS NULL THEN sessiondb_line(e.body, e.body_dict) END \
    FROM (SELECT key FROM search_pending WHERE key > :after ORDER BY key LIMIT :n) p \
    LEFT JOIN entries e ON e.key = p.key ORDER BY p.key";

const PENDING_IN_RANGE: &str = "SELECT count(*) FROM search_pending WHERE key BETWEEN :lo AND :hi";

const DEQUEUE_RANGE: &str = "DELETE FROM search_pending WHERE key BETWEEN :lo AND :hi";

const DEQUEUE_ONE: &str = "DELETE FROM search_pending WHERE key = :key";

const QUEUE_ALL: &str = "INSERT OR IGNORE INTO search_pending (key) SELECT key FROM texts";

const POSTINGS_INSERT: &str =
    "INSERT OR REPLACE INTO search_postings (token, batch, keys) VALUES (:token, :batch, :keys)";

const TERM_INSERT: &str = "INSERT OR IGNORE INTO search_terms (term) VALUES (:term)";

const COPIES_INSERT: &str = "INSERT OR IGNORE INTO search_copies (owner_lo, owner_hi, shift) VALUES (:lo, :hi, :shift)";

const META_GET: &str = "SELECT value FROM search_meta WHERE name = :name";

const META_ADD: &str = "UPDATE search_meta SET value = value + :by WHERE name = :name";

const META_RESET: &str = "UPDATE search_meta SET value = 0";

const DELETE_POSTINGS: &str = "DELETE FROM search_postings";

const DELETE_TERMS: &str = "DELETE FROM search_terms";

const DELETE_COPIES: &str = "DELETE FROM search_copies";

/// Rows of the postings and build batches holding them.
pub const POSTINGS_SHAPE: &str = "SELECT (SELECT count(*) FROM search_postings), (SELECT count(*) FROM search_batches)";

/// The key lists of `:token` (one per build batch).
pub const POSTINGS_OF: &str = "SELECT keys FROM search_postings WHERE token = :token";

/// Every vocabulary token: scanned once per query for all the words that may be cut at their
/// start (a scan per word cost ~10 ms each on 10,000 sessions).
pub const TERMS_ALL: &str = "SELECT term FROM search_terms";

/// Vocabulary tokens starting with `:part` (at most `:n`): a range of the vocabulary's key.
pub const TERMS_STARTING: &str =
    "SELECT term FROM search_terms WHERE term >= :part AND term < :part || char(1114111) LIMIT :n";

/// Runs of copies of lines of the sessions whose keys lie in `:lo..=:hi`.
pub const COPY_RUNS_IN: &str = "SELECT owner_lo, owner_hi, shift FROM search_copies WHERE owner_lo BETWEEN :lo AND :hi";

/// Every run of copies.
pub const COPY_RUNS_ALL: &str = "SELECT owner_lo, owner_hi, shift FROM search_copies";

/// A searchable entry `:key` with what a hit shows, if it passes the filters (`:cwd`, `:role`,
/// `:since` ms) and holds its own line (`:owner` NULL) or a copy of `:owner`'s; its line only
/// when `:with_line`.
pub const HIT_ROW: &str = "SELECT s.id, s.path, s.cwd, e.id, t.role, t.ts_ms, \
        CASE WHEN :with_line THEN (SELECT sessiondb_line(o.body, o.body_dict) FROM entries o \
            WHERE o.key = coalesce(e.body_key, e.key)) END \
    FROM texts t JOIN sessions s ON s.sid = t.session JOIN entries e ON e.key = t.key \
    WHERE t.key = :key AND e.body_key IS :owner \
        AND (:cwd IS NULL OR s.cwd = :cwd) AND (:role IS NULL OR t.role = :role) AND (:since IS NULL OR t.ts_ms >= :since)";

/// Every searchable entry passing the filters, newest stored first, with its line (whose
/// key is the last column): the scan for queries the index cannot narrow (punctuation only,
/// one or two letters found in too many words).
pub const SCAN: &str = "SELECT s.id, s.path, s.cwd, e.id, t.role, t.ts_ms, \
        CASE WHEN e.body_key IS NULL THEN sessiondb_line(e.body, e.body_dict) \
            ELSE (SELECT sessiondb_line(o.body, o.body_dict) FROM entries o WHERE o.key = e.body_key) END, \
        t.key, coalesce(e.body_key, e.key) \
    FROM texts t JOIN sessions s ON s.sid = t.session JOIN entries e ON e.key = t.key \
    WHERE (:cwd IS NULL OR s.cwd = :cwd) AND (:role IS NULL OR t.role = :role) AND (:since IS NULL OR t.ts_ms >= :since) \
    ORDER BY t.key DESC";

const TEXT_COUNT: &str = "SELECT count(*) FROM texts";

/// The lowest and highest keys of search rows (the benchmark picks its rare word between them).
pub const TEXT_KEY_RANGE: &str = "SELECT min(key), max(key) FROM texts";

/// The first search row at or after key `?1`, with its entry's line.
pub const TEXT_LINE_FROM: &str = "SELECT e.body FROM texts t JOIN entry_lines e ON e.key = t.key \
    WHERE t.key >= ?1 ORDER BY t.key LIMIT 1";

fn meta(conn: &Connection, name: &str) -> Result<i64> {
    Ok(conn.prepare_cached(META_GET)?.query_row(named_params! {":name": name}, |r| r.get(0)).optional()?.unwrap_or(0))
}

/// Writes everything gathered and dequeues the keys read, in one transaction.
fn write_gathered(g: &mut Gathered, conn: &mut Connection) -> Result<()> {
    if let Some(r) = g.open_run.take() {
        g.runs.push(r);
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    {
        let batch = meta(&tx, "batch")? + 1;
        let mut order: Vec<usize> = (0..g.tokens.len()).filter(|&i| !g.postings[i].bytes.is_empty()).collect();
        order.sort_unstable_by(|&a, &b| g.tokens[a].cmp(&g.tokens[b]));
        let mut insert = tx.prepare_cached(POSTINGS_INSERT)?;
        let mut term = tx.prepare_cached(TERM_INSERT)?;
        let mut bytes = 0i64;
        for i in order {
            let token = &*g.tokens[i];
            bytes += g.postings[i].bytes.len() as i64;
            insert.execute(named_params! {":token": token, ":batch": batch, ":keys": g.postings[i].bytes})?;
            term.execute(named_params! {":term": token})?;
        }
        if bytes > 0 {
            tx.prepare_cached(BATCH_SET)?.execute(named_params! {":batch": batch, ":bytes": bytes, ":first": batch})?;
        }
        let mut copies = tx.prepare_cached(COPIES_INSERT)?;
        for r in &g.runs {
            copies.execute(named_params! {":lo": r.lo, ":hi": r.hi, ":shift": r.shift})?;
        }
        // The keys read, unless another writer queued or dropped keys among them meanwhile:
        // then one by one.
        if let (Some(&lo), Some(&hi)) = (g.keys.first(), g.keys.last()) {
            let now: i64 =
                tx.prepare_cached(PENDING_IN_RANGE)?.query_row(named_params! {":lo": lo, ":hi": hi}, |r| r.get(0))?;
            if now == g.keys.len() as i64 {
                tx.prepare_cached(DEQUEUE_RANGE)?.execute(named_params! {":lo": lo, ":hi": hi})?;
            } else {
                let mut one = tx.prepare_cached(DEQUEUE_ONE)?;
                for k in &g.keys {
                    one.execute(named_params! {":key": k})?;
                }
            }
        }
        let mut add = tx.prepare_cached(META_ADD)?;
        add.execute(named_params! {":by": 1, ":name": "batch"})?;
        add.execute(named_params! {":by": g.keys.len() as i64, ":name": "indexed"})?;
    }
    tx.commit()?;
    // The vocabularies too: the caller empties the threads' (memory stays bounded when
    // every text brings new tokens).
    *g = Gathered::default();
    Ok(())
}

fn read_batch(conn: &Connection, after: EntryKey, n: i64) -> Result<Vec<Queued>> {
    let mut st = conn.prepare_cached(PENDING_BATCH)?;
    let mut rows = st.query(named_params! {":after": after, ":n": n})?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let key: EntryKey = r.get(0)?;
        let owner: Option<EntryKey> = r.get(1)?;
        let line: Option<String> = r.get(2)?;
        out.push(match (owner, line) {
            (Some(o), _) => Queued::Copy(key, o),
            (None, Some(l)) => Queued::Line(key, l),
            (None, None) => Queued::Gone(key),
        });
    }
    Ok(out)
}

fn hit_row_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<HitRow> {
    Ok(HitRow {
        session_id: r.get(0)?,
        session_file: r.get(1)?,
        cwd: r.get(2)?,
        entry_id: r.get(3)?,
        role: r.get(4)?,
        ts_ms: r.get(5)?,
        line: r.get(6)?,
    })
}

impl SearchIndex for Sqlite {
    fn pending(&self) -> Result<i64> {
        Ok(self.conn.query_row(PENDING_COUNT, [], |r| r.get(0))?)
    }

    fn text_count(&self) -> Result<i64> {
        Ok(self.conn.query_row(TEXT_COUNT, [], |r| r.get(0))?)
    }

    fn reset_index(&mut self) -> Result<()> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute(DELETE_POSTINGS, [])?;
        tx.execute(DELETE_TERMS, [])?;
        tx.execute(DELETE_COPIES, [])?;
        for sql in search_merge::RESET {
            tx.execute(sql, [])?;
        }
        tx.execute(META_RESET, [])?;
        tx.execute(QUEUE_ALL, [])?;
        tx.commit()?;
        Ok(())
    }

    fn catch_up_in(
        &mut self,
        read_batch_of: i64,
        flush_bytes: usize,
        progress: &mut dyn FnMut(i64, i64),
    ) -> Result<i64> {
        let deleted = meta(&self.conn, "deleted")?;
        if deleted >= REBUILD_MIN_DELETED && deleted * 2 >= meta(&self.conn, "indexed")? {
            self.reset_index()?;
        }
        let total = self.pending()?;
        let conn = &mut self.conn;
        if total == 0 {
            return Ok(0);
        }
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
        let mut vocabs: Vec<Vocab> = (0..threads).map(|_| Vocab::default()).collect();
        let mut g = Gathered::default();
        let mut done = 0;
        let mut after = EntryKey::MIN;
        let mut next = read_batch(conn, after, read_batch_of)?;
        // The batch before, gathered (one thread) while this one is tokenized and the one after
        // is read: the gather alone was a fifth of a build.
        let mut ready: Option<Tokenized> = None;
        while let Some(last) = next.last() {
            after = match last {
                Queued::Copy(k, _) | Queued::Line(k, _) | Queued::Gone(k) => *k,
            };
            let mut lines: Vec<(EntryKey, &str)> = Vec::new();
            for q in &next {
                match q {
                    Queued::Copy(k, o) => {
                        g.add_copy(*k, *o);
                        g.keys.push(*k);
                    }
                    Queued::Line(k, l) => {
                        lines.push((*k, l));
                        g.keys.push(*k);
                    }
                    Queued::Gone(k) => g.keys.push(*k),
                }
            }
            let (parts, following) = std::thread::scope(|s| {
                let mut parts = Vec::new();
                let mut handles = Vec::new();
                if vocabs.len() <= 1 || lines.len() < 64 {
                    if let Some(v) = vocabs.first_mut() {
                        parts.push(tokenize(&lines, v));
                    }
                } else {
                    let chunk = lines.len().div_ceil(vocabs.len()).max(1);
                    for (part, v) in lines.chunks(chunk).zip(vocabs.iter_mut()) {
                        handles.push(s.spawn(move || tokenize(part, v)));
                    }
                }
                if let Some(t) = ready.take() {
                    gather(&mut g, t);
                }
                let following = read_batch(conn, after, read_batch_of);
                parts.extend(handles.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))));
                (parts, following)
            });
            let following = following?;
            for (w, v) in vocabs.iter_mut().enumerate() {
                g.learn(w, v);
            }
            ready = Some((lines.iter().map(|(k, _)| *k).collect(), parts));
            done += next.len() as i64;
            progress(done, total);
            next = following;
            if g.bytes >= flush_bytes {
                if let Some(t) = ready.take() {
                    gather(&mut g, t);
                }
                write_gathered(&mut g, conn)?;
                vocabs.iter_mut().for_each(|v| *v = Vocab::default());
            }
        }
        if let Some(t) = ready.take() {
            gather(&mut g, t);
        }
        if !g.is_empty() {
            write_gathered(&mut g, conn)?;
        }
        search_merge::merge_due(conn)?;
        Ok(done)
    }

    fn posting_shape(&self) -> Result<(i64, i64)> {
        Ok(self.conn.prepare_cached(POSTINGS_SHAPE)?.query_row([], |r| Ok((r.get(0)?, r.get(1)?)))?)
    }

    fn sample_lines(&self, n: i64) -> Result<Vec<String>> {
        let (lo, hi): (Option<EntryKey>, Option<EntryKey>) =
            self.conn.prepare_cached(TEXT_KEY_RANGE)?.query_row([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let (Some(lo), Some(hi)) = (lo, hi) else { return Ok(Vec::new()) };
        let mut st = self.conn.prepare_cached(TEXT_LINE_FROM)?;
        let mut out = Vec::new();
        for i in 0..n.max(0) {
            let from = lo + (hi - lo) / n * i;
            if let Some(body) = st.query_row([from], |r| r.get::<_, String>(0)).optional()? {
                out.push(body);
            }
        }
        Ok(out)
    }

    fn posting_blobs(&self, token: &str) -> Result<Vec<Vec<u8>>> {
        let mut st = self.conn.prepare_cached(POSTINGS_OF)?;
        let mut rows = st.query(named_params! {":token": token})?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            if let rusqlite::types::ValueRef::Blob(b) = r.get_ref(0)? {
                out.push(b.to_vec());
            }
        }
        Ok(out)
    }

    fn posting_blobs_of(&self, tokens: &[&str]) -> Result<Vec<Vec<u8>>> {
        let mut out = Vec::new();
        for t in tokens {
            out.extend(self.posting_blobs(t)?);
        }
        Ok(out)
    }

    fn terms_starting(&self, part: &str, n: usize) -> Result<Vec<String>> {
        let mut st = self.conn.prepare_cached(TERMS_STARTING)?;
        let found = st.query_map(named_params! {":part": part, ":n": n as i64}, |r| r.get(0))?;
        Ok(found.collect::<rusqlite::Result<_>>()?)
    }

    fn terms_containing(&self, parts: &[&str], n: usize) -> Result<Vec<Vec<String>>> {
        let mut out: Vec<Vec<String>> = vec![Vec::new(); parts.len()];
        if parts.is_empty() {
            return Ok(out);
        }
        let mut st = self.conn.prepare_cached(TERMS_ALL)?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            let rusqlite::types::ValueRef::Text(term) = r.get_ref(0)? else { continue };
            let Ok(term) = std::str::from_utf8(term) else { continue };
            let mut open = false;
            for (part, found) in parts.iter().zip(out.iter_mut()) {
                if found.len() < n {
                    open = true;
                    if term.contains(part) {
                        found.push(term.to_owned());
                    }
                }
            }
            if !open {
                break;
            }
        }
        Ok(out)
    }

    fn copy_runs(&self, keys: &[EntryKey]) -> Result<Vec<(EntryKey, EntryKey, i64)>> {
        let mut runs = Vec::new();
        let Some(&last) = keys.last() else { return Ok(runs) };
        // Few sessions: their runs by key; else all of them.
        let mut sids: Vec<SessionKey> = keys.iter().map(|k| k.session()).collect();
        sids.dedup();
        let mut read = |st: &mut rusqlite::CachedStatement<'_>, p: &[(&str, &dyn rusqlite::ToSql)]| -> Result<()> {
            let mut rows = st.query(p)?;
            while let Some(r) = rows.next()? {
                runs.push((r.get(0)?, r.get(1)?, r.get(2)?));
            }
            Ok(())
        };
        if sids.len() <= 32 {
            let mut st = self.conn.prepare_cached(COPY_RUNS_IN)?;
            for sid in sids {
                // A run starts in the session holding its lines, before the last key.
                let (lo, hi) = sid.range();
                read(&mut st, named_params! {":lo": lo, ":hi": last.min(hi)})?;
            }
        } else {
            read(&mut self.conn.prepare_cached(COPY_RUNS_ALL)?, &[])?;
        }
        Ok(runs)
    }

    fn hit_row(
        &self,
        key: EntryKey,
        owner: Option<EntryKey>,
        f: &RowFilter<'_>,
        with_line: bool,
    ) -> Result<Option<HitRow>> {
        let mut st = self.conn.prepare_cached(HIT_ROW)?;
        Ok(st
            .query_row(
                named_params! {":key": key, ":owner": owner, ":cwd": f.cwd, ":role": f.role, ":since": f.since_ms, ":with_line": with_line},
                hit_row_of,
            )
            .optional()?)
    }

    fn hit_rows(
        &self,
        wanted: &[(EntryKey, Option<EntryKey>, bool)],
        f: &RowFilter<'_>,
    ) -> Result<Vec<Option<HitRow>>> {
        wanted.iter().map(|&(key, owner, with_line)| self.hit_row(key, owner, f, with_line)).collect()
    }

    fn hit_batch(&self) -> (usize, usize) {
        (1, 1)
    }

    fn scan_hits(&self, f: &RowFilter<'_>, take: &mut dyn FnMut(EntryKey, EntryKey, HitRow) -> bool) -> Result<()> {
        let mut st = self.conn.prepare_cached(SCAN)?;
        let mut rows = st.query(named_params! {":cwd": f.cwd, ":role": f.role, ":since": f.since_ms})?;
        while let Some(r) = rows.next()? {
            let key: EntryKey = r.get(7)?;
            let line_key: EntryKey = r.get(8)?;
            if !take(key, line_key, hit_row_of(r)?) {
                break;
            }
        }
        Ok(())
    }
}
