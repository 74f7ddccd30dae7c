//! The search index on PostgreSQL (migrations 8 and 10 of `migrations/postgres/`): the same
//! postings (merged as on SQLite: `search_merge`), vocabulary and counters as SQLite's, and the
//! text and usage rows SQLite writes at import,
//! extracted here from the stored lines by a catch-up (push's COPY and the manager's appends
//! write lines only).

use crate::error::{Error, Result};
use crate::hash::FxHashMap;
use crate::js::json;
use crate::store::derive::EntryFields;
use crate::store::extract;
use crate::store::keys::{EntryKey, SessionKey};
use crate::store::postgres::one_trip::OneTrip;
use crate::store::postgres::search_merge::{self, PG_BATCH_SET, PG_DROP_TEXTS};
use crate::store::postgres::{pg_text, Pg, Server};
use crate::store::search::build::{gather, Gathered, REBUILD_MIN_DELETED};
use crate::store::search::query::{HitRow, RowFilter};
use crate::store::search::vocab::{Part, Vocab};
use crate::store::search::SearchIndex;
use postgres::binary_copy::BinaryCopyInWriter;
use postgres::types::Type;
use std::collections::HashMap;

// PostgreSQL (migration V5 of migrations/postgres/): the same postings, vocabulary and
// counters, and the text and usage rows SQLite writes at import, extracted here from the
// stored lines by a catch-up (push's COPY and the manager's appends write lines only).

/// Advisory lock held by a catch-up: two processes catching up take turns.
const PG_CATCH_UP_LOCK: i64 = 0x5e55_10db_0005;

/// Sessions whose row changed since their lines were extracted (or never extracted), with
/// what was extracted of them.
pub const PG_CHANGED: &str = "SELECT s.skey, s.last_seq, s.xmin::text::bigint AS row_xmin, p.upto, p.line_xmin \
    FROM sessions s LEFT JOIN search_progress p ON p.session = s.skey \
    WHERE s.written_by >= $1 AND (p.session IS NULL OR p.row_xmin <> s.xmin::text::bigint) ORDER BY s.skey";

/// The horizon the last catch-up kept, and this one's: the oldest transaction running when
/// this transaction's snapshot was taken (everything an older one wrote is seen now).
const PG_HORIZONS: &str = "SELECT value AS horizon, txid_snapshot_xmin(txid_current_snapshot())::bigint AS next \
    FROM search_meta WHERE name = 'horizon'";

/// Lines extracted by one catch-up after which the search tables' statistics are gathered
/// again: after `index --rebuild` (tables emptied, then filled in one transaction) the planner
/// took them for empty until autovacuum came by, and scanned all of `search_texts` for every
/// search's hits (1.1-1.9 s a search on c10k instead of 30-90 ms).
const ANALYZE_AFTER: i64 = 20_000;

/// Gathers the search tables' statistics.
const PG_ANALYZE: &str =
    "ANALYZE search_texts, search_usage, search_usage_days, search_postings, search_terms, search_progress";

/// Keeps the horizon for the next catch-up.
const PG_HORIZON_SET: &str = "UPDATE search_meta SET value = $1 WHERE name = 'horizon'";

/// Sessions deleted since the last catch-up.
pub const PG_GONE: &str = "SELECT session FROM search_gone";

/// Forgets the deleted sessions dealt with.
const PG_GONE_DONE: &str = "DELETE FROM search_gone WHERE session = ANY($1)";

/// The version of line `seq` of each session (NULL when it is gone).
pub const PG_LINE_XMINS: &str = "SELECT v.session, e.xmin::text::bigint AS line_xmin \
    FROM unnest($1::bigint[], $2::bigint[]) AS v(session, seq) \
    LEFT JOIN entries e ON e.session = v.session AND e.seq = v.seq";

const PG_DROP_USAGE: &str = "DELETE FROM search_usage WHERE session = ANY($1)";

const PG_DROP_PROGRESS: &str = "DELETE FROM search_progress WHERE session = ANY($1)";

/// The lines of each session after line `after`, in key order.
pub const PG_LINES_AFTER: &str = "SELECT e.session, e.seq, e.body, e.xmin::text::bigint AS line_xmin \
    FROM unnest($1::bigint[], $2::bigint[]) AS v(session, after) \
    JOIN entries e ON e.session = v.session AND e.seq > v.after ORDER BY e.session, e.seq";

const PG_COPY_TEXTS: &str = "COPY search_texts (session, seq, role, ts_ms) FROM STDIN (FORMAT binary)";

const PG_COPY_USAGE: &str = "COPY search_usage (session, seq, entry_id, ts, ts_ms, provider, model, input, output, \
    cache_read, cache_write, total, cost, invalid) FROM STDIN (FORMAT binary)";

const PG_COPY_POSTINGS: &str = "COPY search_postings (token, batch, keys) FROM STDIN (FORMAT binary)";

const PG_TERMS_INSERT: &str = "INSERT INTO search_terms (term) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING";

const PG_PROGRESS_SET: &str = "INSERT INTO search_progress (session, upto, row_xmin, line_xmin) \
    SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[]) \
    ON CONFLICT (session) DO UPDATE SET upto = excluded.upto, row_xmin = excluded.row_xmin, line_xmin = excluded.line_xmin";

const PG_META_GET: &str = "SELECT value FROM search_meta WHERE name = $1";

const PG_META_ADD: &str = "UPDATE search_meta SET value = value + $1 WHERE name = $2";

const PG_RESET: &str = "TRUNCATE search_progress, search_texts, search_usage, search_postings, search_terms, \
    search_batches, search_deleted, search_gone; \
    UPDATE search_meta SET value = 0";

const PG_PENDING: &str = "SELECT coalesce(sum(s.last_seq - coalesce(p.upto, 0)), 0)::bigint AS n \
    FROM sessions s LEFT JOIN search_progress p ON p.session = s.skey \
    WHERE p.session IS NULL OR p.row_xmin <> s.xmin::text::bigint";

const PG_TEXT_COUNT: &str = "SELECT count(*) AS n FROM search_texts";

/// Rows of the postings and build batches holding them.
pub const PG_POSTINGS_SHAPE: &str =
    "SELECT (SELECT count(*) FROM search_postings) AS n_rows, (SELECT count(*) FROM search_batches) AS n_batches";

/// The key lists of several tokens.
pub const PG_POSTINGS_OF_ALL: &str = "SELECT keys FROM search_postings WHERE token = ANY($1)";

/// The key lists of a token.
pub const PG_POSTINGS_OF: &str = "SELECT keys FROM search_postings WHERE token = $1";

/// Vocabulary tokens starting with `$1` (at most `$2`).
pub const PG_TERMS_STARTING: &str =
    "SELECT term FROM search_terms WHERE term >= $1 AND term < $1 || chr(1114111) ORDER BY term LIMIT $2";

/// Vocabulary tokens matching a LIKE pattern (`%part%`): pg_trgm's index where it exists.
pub const PG_TERMS_LIKE: &str = "SELECT term FROM search_terms WHERE term LIKE $1 LIMIT $2";

/// A searchable entry with what a hit shows, if it passes the filters; its line only when `$6`.
pub const PG_HIT_ROW: &str = "SELECT s.id, s.path, s.cwd, e.id AS entry_id, t.role, t.ts_ms, \
        CASE WHEN $6 THEN e.body END AS body \
    FROM search_texts t JOIN sessions s ON s.skey = t.session JOIN entries e ON e.session = t.session AND e.seq = t.seq \
    WHERE t.session = $1 AND t.seq = $2 \
        AND ($3::text IS NULL OR s.cwd = $3) AND ($4::text IS NULL OR t.role = $4) AND ($5::bigint IS NULL OR t.ts_ms >= $5)";

/// The keys of the first and the last searchable entry (SQLite's `TEXT_KEY_RANGE`).
pub const PG_TEXT_KEY_RANGE: &str = "SELECT \
    (SELECT (session << 32) | seq FROM search_texts ORDER BY session, seq LIMIT 1), \
    (SELECT (session << 32) | seq FROM search_texts ORDER BY session DESC, seq DESC LIMIT 1)";

/// The line of the first searchable entry at or after line `$2` of session `$1`.
pub const PG_TEXT_LINE_FROM: &str = "SELECT e.body FROM search_texts t \
    JOIN entries e ON e.session = t.session AND e.seq = t.seq \
    WHERE (t.session, t.seq) >= ($1, $2) ORDER BY t.session, t.seq LIMIT 1";

/// [`PG_HIT_ROW`] of several entries (`$1` sessions, `$2` seqs, `$3` whether with the line).
pub const PG_HIT_ROWS: &str = "SELECT t.session, t.seq, s.id, s.path, s.cwd, e.id AS entry_id, t.role, t.ts_ms, \
        CASE WHEN v.with_line THEN e.body END AS body \
    FROM unnest($1::bigint[], $2::bigint[], $3::bool[]) AS v(session, seq, with_line) \
    JOIN search_texts t ON t.session = v.session AND t.seq = v.seq \
    JOIN sessions s ON s.skey = t.session JOIN entries e ON e.session = t.session AND e.seq = t.seq \
    WHERE ($4::text IS NULL OR s.cwd = $4) AND ($5::text IS NULL OR t.role = $5) AND ($6::bigint IS NULL OR t.ts_ms >= $6)";

/// Every searchable entry passing the filters, newest stored first, with its line.
pub const PG_SCAN: &str = "SELECT s.id, s.path, s.cwd, e.id AS entry_id, t.role, t.ts_ms, e.body, t.session, t.seq \
    FROM search_texts t JOIN sessions s ON s.skey = t.session JOIN entries e ON e.session = t.session AND e.seq = t.seq \
    WHERE ($1::text IS NULL OR s.cwd = $1) AND ($2::text IS NULL OR t.role = $2) AND ($3::bigint IS NULL OR t.ts_ms >= $3) \
    ORDER BY t.session DESC, t.seq DESC";

/// Rows a scan fetches at a time.
const PG_SCAN_FETCH: i32 = 256;

fn pg_err(name: &str) -> impl Fn(postgres::Error) -> crate::error::Error + '_ {
    move |e| Server::describe(name, &e)
}

/// A session to catch up.
struct Todo {
    skey: SessionKey,
    row_xmin: i64,
    /// Lines extracted already, and the version of the last one.
    upto: i64,
    line_xmin: Option<i64>,
    /// Lines it holds (for the progress total).
    last_seq: i64,
}

/// What one thread extracted from some lines.
#[derive(Default)]
struct Extracted {
    texts: Vec<(SessionKey, i64, String, Option<i64>)>,
    usage: Vec<(SessionKey, i64, EntryFields, extract::UsageRow)>,
    /// Keys of the texts tokenized into `part`, in order.
    keys: Vec<EntryKey>,
    part: Part,
}

fn extract_lines(rows: &[(SessionKey, i64, String)], v: &mut Vocab) -> Extracted {
    let mut out = Extracted::default();
    for (session, seq, body) in rows {
        let Some(obj) = json::scan_object(body.as_bytes()).ok().flatten() else { continue };
        let (f, message) = EntryFields::read(&obj);
        let x = extract::Extras::of(&f, &obj, message.as_ref());
        if let Some((role, _)) = &x.search {
            out.texts.push((*session, *seq, pg_text(role).into_owned(), f.ts_ms));
            let key = session.entry(*seq);
            if let Some(t) = extract::text_of(&f, &obj, message.as_ref()) {
                v.add_text(&t.text, &mut out.part.ids);
            }
            out.part.ends.push(out.part.ids.len());
            out.keys.push(key);
        }
        if let Some(u) = x.usage {
            out.usage.push((*session, *seq, f, u));
        }
    }
    out
}

fn copy_rows(tx: &mut postgres::Transaction<'_>, parts: &[Extracted]) -> std::result::Result<(), postgres::Error> {
    if parts.iter().any(|p| !p.texts.is_empty()) {
        let sink = tx.copy_in(PG_COPY_TEXTS)?;
        let mut w = BinaryCopyInWriter::new(sink, &[Type::INT8, Type::INT8, Type::TEXT, Type::INT8]);
        for (session, seq, role, ts_ms) in parts.iter().flat_map(|p| &p.texts) {
            w.write(&[session, seq, role, ts_ms])?;
        }
        w.finish()?;
    }
    if parts.iter().any(|p| !p.usage.is_empty()) {
        let sink = tx.copy_in(PG_COPY_USAGE)?;
        let types = [
            Type::INT8,
            Type::INT8,
            Type::TEXT,
            Type::TEXT,
            Type::INT8,
            Type::TEXT,
            Type::TEXT,
            Type::INT8,
            Type::INT8,
            Type::INT8,
            Type::INT8,
            Type::INT8,
            Type::FLOAT8,
            Type::INT8,
        ];
        let mut w = BinaryCopyInWriter::new(sink, &types);
        let t = |v: &Option<String>| v.as_deref().map(|s| pg_text(s).into_owned());
        for (session, seq, f, u) in parts.iter().flat_map(|p| &p.usage) {
            w.write(&[
                session,
                seq,
                &t(&f.id),
                &t(&f.ts),
                &f.ts_ms,
                &t(&u.provider),
                &t(&u.model),
                &u.input,
                &u.output,
                &u.cache_read,
                &u.cache_write,
                &u.total,
                &u.cost,
                &u.invalid,
            ])?;
        }
        w.finish()?;
    }
    Ok(())
}

/// Writes the postings gathered as one build batch (inside the catch-up's transaction).
fn write_gathered(g: &mut Gathered, tx: &mut postgres::Transaction<'_>) -> std::result::Result<(), postgres::Error> {
    let batch: i64 = tx.query_one_1(PG_META_GET, &[&"batch"])?.get(0);
    let batch = batch + 1;
    let order: Vec<usize> = (0..g.tokens.len()).filter(|&i| !g.postings[i].bytes.is_empty()).collect();
    {
        let sink = tx.copy_in(PG_COPY_POSTINGS)?;
        let mut w = BinaryCopyInWriter::new(sink, &[Type::TEXT, Type::INT8, Type::BYTEA]);
        for &i in &order {
            w.write(&[&&*g.tokens[i], &batch, &g.postings[i].bytes])?;
        }
        w.finish()?;
    }
    let bytes: i64 = order.iter().map(|&i| g.postings[i].bytes.len() as i64).sum();
    if bytes > 0 {
        tx.execute_1(PG_BATCH_SET, &[&batch, &bytes, &batch])?;
    }
    for chunk in order.chunks(50_000) {
        let terms: Vec<&str> = chunk.iter().map(|&i| &*g.tokens[i]).collect();
        tx.execute_1(PG_TERMS_INSERT, &[&terms])?;
    }
    tx.execute_1(PG_META_ADD, &[&1i64, &"batch"])?;
    tx.execute_1(PG_META_ADD, &[&(g.keys.len() as i64), &"indexed"])?;
    *g = Gathered::default();
    Ok(())
}

/// [`catch_up_in`] on PostgreSQL: extracts the text and usage rows of the lines written
/// since the last catch-up (sessions sent again whole from their first line; those gone
/// dropped), indexes their texts, in one transaction (repeatable read: the lines, the
/// session rows and their versions agree) under an advisory lock.
pub(crate) fn pg_catch_up(
    pg: &Pg,
    read_batch_of: i64,
    flush_bytes: usize,
    progress: &mut dyn FnMut(i64, i64),
) -> Result<i64> {
    if pg.in_transaction() {
        return Err(Error::InvalidArgument("the search index cannot catch up inside a transaction".into()));
    }
    if pg.read_only() {
        return Err(Error::database(pg.name(), "the search index cannot catch up in a read-only transaction"));
    }
    let mut s = pg.server()?;
    let name = s.name.clone();
    let err = pg_err(&name);
    s.client.execute_1("SELECT pg_advisory_lock($1)", &[&PG_CATCH_UP_LOCK]).map_err(&err)?;
    let result = pg_catch_up_locked(&mut s.client, read_batch_of, flush_bytes, progress).map_err(&err);
    let unlocked = s.client.execute_1("SELECT pg_advisory_unlock($1)", &[&PG_CATCH_UP_LOCK]).map_err(&err);
    let n = result?;
    unlocked?;
    if n >= ANALYZE_AFTER {
        s.client.batch_execute(PG_ANALYZE).map_err(&err)?;
    }
    Ok(n)
}

fn pg_catch_up_locked(
    client: &mut postgres::Client,
    read_batch_of: i64,
    flush_bytes: usize,
    progress: &mut dyn FnMut(i64, i64),
) -> std::result::Result<i64, postgres::Error> {
    let mut tx = client.build_transaction().isolation_level(postgres::IsolationLevel::RepeatableRead).start()?;
    let meta = |tx: &mut postgres::Transaction<'_>, name: &str| -> std::result::Result<i64, postgres::Error> {
        Ok(tx.query_one_1(PG_META_GET, &[&name])?.get(0))
    };
    let deleted = meta(&mut tx, "deleted")?;
    if deleted >= REBUILD_MIN_DELETED && deleted * 2 >= meta(&mut tx, "indexed")? {
        tx.batch_execute(PG_RESET)?;
    }
    let mut dropped = 0u64;
    // Lines dropped, recorded with the last batch written (merges drop their keys).
    let last_batch = meta(&mut tx, "batch")?;
    let gone: Vec<i64> = tx.query_1(PG_GONE, &[])?.iter().map(|r| r.get(0)).collect();
    if !gone.is_empty() {
        dropped += tx.execute_1(PG_DROP_TEXTS, &[&gone, &last_batch])?;
        tx.execute_1(PG_DROP_USAGE, &[&gone])?;
        tx.execute_1(PG_DROP_PROGRESS, &[&gone])?;
        tx.execute_1(PG_GONE_DONE, &[&gone])?;
    }
    let horizons = tx.query_one_1(PG_HORIZONS, &[])?;
    let (horizon, next_horizon): (i64, i64) = (horizons.get("horizon"), horizons.get("next"));
    let mut todo: Vec<Todo> = tx
        .query_1(PG_CHANGED, &[&horizon])?
        .iter()
        .map(|r| Todo {
            skey: r.get("skey"),
            row_xmin: r.get("row_xmin"),
            upto: r.get::<_, Option<i64>>("upto").unwrap_or(0),
            line_xmin: r.get("line_xmin"),
            last_seq: r.get("last_seq"),
        })
        .collect();
    // A session whose last extracted line is gone or was written again was sent again whole.
    let (check_s, check_q): (Vec<SessionKey>, Vec<i64>) =
        todo.iter().filter(|t| t.upto > 0).map(|t| (t.skey, t.upto)).unzip();
    if !check_s.is_empty() {
        let now: HashMap<SessionKey, Option<i64>> =
            tx.query_1(PG_LINE_XMINS, &[&check_s, &check_q])?.iter().map(|r| (r.get(0), r.get(1))).collect();
        let mut rewritten = Vec::new();
        for t in &mut todo {
            if t.upto > 0 && now.get(&t.skey).copied().flatten() != t.line_xmin {
                rewritten.push(t.skey);
                t.upto = 0;
                t.line_xmin = None;
            }
        }
        if !rewritten.is_empty() {
            dropped += tx.execute_1(PG_DROP_TEXTS, &[&rewritten, &last_batch])?;
            tx.execute_1(PG_DROP_USAGE, &[&rewritten])?;
        }
    }
    if dropped > 0 {
        tx.execute_1(PG_META_ADD, &[&(dropped as i64), &"deleted"])?;
    }
    let total: i64 = todo.iter().map(|t| (t.last_seq - t.upto).max(0)).sum();
    let (mut done, mut indexed) = (0i64, 0i64);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    let mut vocabs: Vec<Vocab> = (0..threads).map(|_| Vocab::default()).collect();
    let mut g = Gathered::default();
    let mut last: FxHashMap<SessionKey, (i64, Option<i64>)> = FxHashMap::default();
    if !todo.is_empty() {
        let skeys: Vec<SessionKey> = todo.iter().map(|t| t.skey).collect();
        let afters: Vec<i64> = todo.iter().map(|t| t.upto).collect();
        let portal = tx.bind(PG_LINES_AFTER, &[&skeys, &afters])?;
        loop {
            let rows = tx.query_portal(&portal, read_batch_of.clamp(1, i64::from(i32::MAX)) as i32)?;
            if rows.is_empty() {
                break;
            }
            let mut lines = Vec::with_capacity(rows.len());
            for r in &rows {
                let (session, seq): (SessionKey, i64) = (r.get(0), r.get(1));
                last.insert(session, (seq, r.get(3)));
                let body: &[u8] = r.get(2);
                lines.push((session, seq, String::from_utf8_lossy(body).into_owned()));
            }
            drop(rows);
            let parts: Vec<Extracted> = if vocabs.len() <= 1 || lines.len() < 64 {
                vec![extract_lines(&lines, &mut vocabs[0])]
            } else {
                let chunk = lines.len().div_ceil(vocabs.len()).max(1);
                std::thread::scope(|s| {
                    let handles: Vec<_> = lines
                        .chunks(chunk)
                        .zip(vocabs.iter_mut())
                        .map(|(part, v)| s.spawn(move || extract_lines(part, v)))
                        .collect();
                    handles.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
                })
            };
            copy_rows(&mut tx, &parts)?;
            for (w, v) in vocabs.iter_mut().enumerate() {
                g.learn(w, v);
            }
            let mut keys = Vec::new();
            let mut tokenized = Vec::with_capacity(parts.len());
            for p in parts {
                keys.extend_from_slice(&p.keys);
                g.keys.extend_from_slice(&p.keys);
                tokenized.push(p.part);
            }
            indexed += keys.len() as i64;
            gather(&mut g, (keys, tokenized));
            done += lines.len() as i64;
            progress(done, total);
            if g.bytes >= flush_bytes {
                write_gathered(&mut g, &mut tx)?;
                vocabs.iter_mut().for_each(|v| *v = Vocab::default());
            }
        }
    }
    if !g.is_empty() {
        write_gathered(&mut g, &mut tx)?;
    }
    if indexed > 0 {
        search_merge::merge_due(&mut tx)?;
    }
    let mut upto = Vec::with_capacity(todo.len());
    let mut line_xmin = Vec::with_capacity(todo.len());
    for t in &todo {
        let (u, x) = last.get(&t.skey).copied().unwrap_or((t.upto, t.line_xmin));
        upto.push(u);
        line_xmin.push(x);
    }
    let skeys: Vec<SessionKey> = todo.iter().map(|t| t.skey).collect();
    let row_xmins: Vec<i64> = todo.iter().map(|t| t.row_xmin).collect();
    tx.execute_1(PG_PROGRESS_SET, &[&skeys, &upto, &row_xmins, &line_xmin])?;
    tx.execute_1(PG_HORIZON_SET, &[&next_horizon])?;
    tx.commit()?;
    Ok(indexed)
}

/// `text` with LIKE's wildcards and escape character escaped.
fn like_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn pg_hit_row(r: &postgres::Row) -> HitRow {
    HitRow {
        session_id: r.get("id"),
        session_file: r.get("path"),
        cwd: r.get("cwd"),
        entry_id: r.get("entry_id"),
        role: r.get("role"),
        ts_ms: r.get("ts_ms"),
        line: r.get::<_, Option<&[u8]>>("body").map(|b| String::from_utf8_lossy(b).into_owned()),
    }
}

/// [`scan`] on PostgreSQL: rows fetched a few at a time (a portal), so that a scan stopped
/// early reads no more.
fn pg_scan(pg: &Pg, f: &RowFilter<'_>, take: &mut dyn FnMut(EntryKey, EntryKey, HitRow) -> bool) -> Result<()> {
    if pg.in_transaction() {
        return Err(Error::InvalidArgument("search cannot scan inside a transaction".into()));
    }
    let mut s = pg.server()?;
    let name = s.name.clone();
    let mut tx = s.client.transaction().map_err(pg_err(&name))?;
    let portal = tx.bind(PG_SCAN, &[&f.cwd, &f.role, &f.since_ms]).map_err(pg_err(&name))?;
    'rows: loop {
        let rows = tx.query_portal(&portal, PG_SCAN_FETCH).map_err(pg_err(&name))?;
        if rows.is_empty() {
            break;
        }
        for r in &rows {
            let key = SessionKey(r.get("session")).entry(r.get("seq"));
            if !take(key, key, pg_hit_row(r)) {
                break 'rows;
            }
        }
    }
    tx.commit().map_err(pg_err(&name))
}

impl SearchIndex for Pg {
    fn pending(&self) -> Result<i64> {
        Ok(self.query(PG_PENDING, &[])?.first().map_or(0, |r| r.get("n")))
    }

    fn text_count(&self) -> Result<i64> {
        Ok(self.query(PG_TEXT_COUNT, &[])?.first().map_or(0, |r| r.get("n")))
    }

    fn reset_index(&mut self) -> Result<()> {
        // Everything is extracted again by the next catch-up.
        let mut s = self.server()?;
        s.client.batch_execute(PG_RESET).map_err(|e| s.pg(e))
    }

    fn catch_up_in(
        &mut self,
        read_batch_of: i64,
        flush_bytes: usize,
        progress: &mut dyn FnMut(i64, i64),
    ) -> Result<i64> {
        pg_catch_up(self, read_batch_of, flush_bytes, progress)
    }

    fn posting_shape(&self) -> Result<(i64, i64)> {
        Ok(self.query(PG_POSTINGS_SHAPE, &[])?.first().map_or((0, 0), |r| (r.get("n_rows"), r.get("n_batches"))))
    }

    fn sample_lines(&self, n: i64) -> Result<Vec<String>> {
        let Some(r) = self.query_opt(PG_TEXT_KEY_RANGE, &[])? else { return Ok(Vec::new()) };
        let (Some(lo), Some(hi)): (Option<EntryKey>, Option<EntryKey>) = (r.get(0), r.get(1)) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for i in 0..n.max(0) {
            let (session, seq) = (lo + (hi - lo) / n * i).parts();
            if let Some(r) = self.query_opt(PG_TEXT_LINE_FROM, &[&session, &seq])? {
                out.push(String::from_utf8_lossy(r.get::<_, &[u8]>(0)).into_owned());
            }
        }
        Ok(out)
    }

    fn posting_blobs(&self, token: &str) -> Result<Vec<Vec<u8>>> {
        Ok(self.query(PG_POSTINGS_OF, &[&token])?.iter().map(|r| r.get::<_, Vec<u8>>(0)).collect())
    }

    fn posting_blobs_of(&self, tokens: &[&str]) -> Result<Vec<Vec<u8>>> {
        if tokens.is_empty() {
            return Ok(Vec::new());
        }
        Ok(self.query(PG_POSTINGS_OF_ALL, &[&tokens])?.iter().map(|r| r.get::<_, Vec<u8>>(0)).collect())
    }

    fn terms_starting(&self, part: &str, n: usize) -> Result<Vec<String>> {
        Ok(self.query(PG_TERMS_STARTING, &[&part, &(n as i64)])?.iter().map(|r| r.get(0)).collect())
    }

    fn terms_containing(&self, parts: &[&str], n: usize) -> Result<Vec<Vec<String>>> {
        // One indexed lookup per part (a scan of the vocabulary over the wire is not one pass).
        let mut out: Vec<Vec<String>> = vec![Vec::new(); parts.len()];
        for (part, found) in parts.iter().zip(out.iter_mut()) {
            let pattern = format!("%{}%", like_escaped(part));
            *found = self.query(PG_TERMS_LIKE, &[&pattern, &(n as i64)])?.iter().map(|r| r.get(0)).collect();
        }
        Ok(out)
    }

    /// A server holds every line in its own row: no copies.
    fn copy_runs(&self, _keys: &[EntryKey]) -> Result<Vec<(EntryKey, EntryKey, i64)>> {
        Ok(Vec::new())
    }

    fn hit_row(
        &self,
        key: EntryKey,
        owner: Option<EntryKey>,
        f: &RowFilter<'_>,
        with_line: bool,
    ) -> Result<Option<HitRow>> {
        if owner.is_some() {
            return Ok(None);
        }
        let (session, seq) = key.parts();
        let row = self.query_opt(PG_HIT_ROW, &[&session, &seq, &f.cwd, &f.role, &f.since_ms, &with_line])?;
        Ok(row.map(|r| pg_hit_row(&r)))
    }

    fn hit_rows(
        &self,
        wanted: &[(EntryKey, Option<EntryKey>, bool)],
        f: &RowFilter<'_>,
    ) -> Result<Vec<Option<HitRow>>> {
        let own: Vec<&(EntryKey, Option<EntryKey>, bool)> = wanted.iter().filter(|w| w.1.is_none()).collect();
        let sessions: Vec<SessionKey> = own.iter().map(|w| w.0.session()).collect();
        let seqs: Vec<i64> = own.iter().map(|w| w.0.seq()).collect();
        let lines: Vec<bool> = own.iter().map(|w| w.2).collect();
        let mut found: FxHashMap<EntryKey, HitRow> = FxHashMap::default();
        for r in self.query(PG_HIT_ROWS, &[&sessions, &seqs, &lines, &f.cwd, &f.role, &f.since_ms])? {
            found.insert(SessionKey(r.get("session")).entry(r.get("seq")), pg_hit_row(&r));
        }
        Ok(wanted.iter().map(|w| if w.1.is_some() { None } else { found.remove(&w.0) }).collect())
    }

    /// A server answers the rows of several candidates in one round trip: batches of the next
    /// candidates, growing (a search stops after its window of hits).
    fn hit_batch(&self) -> (usize, usize) {
        (8, 1024)
    }

    fn scan_hits(&self, f: &RowFilter<'_>, take: &mut dyn FnMut(EntryKey, EntryKey, HitRow) -> bool) -> Result<()> {
        pg_scan(self, f, take)
    }
}
