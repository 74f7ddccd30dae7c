//! Full-text search over every session: case-insensitive substrings in any script.
//!
//! The index (FTS5, contentless, no positions) holds each searchable entry's distinct word
//! tokens (src/store/tokens.rs). A query is split into terms (words, or "quoted phrases"), all of
//! which must occur. Each term names the tokens a matching entry must hold; a word the term
//! cuts is looked up in the vocabulary of indexed tokens (a key range for a prefix, a scan
//! otherwise). The index then streams candidates, newest first, and each candidate's text is
//! checked for every term: hits are exactly the entries whose text contains every term. The
//! hits are ranked by a BM25-like score computed on the text while checking it.

use crate::error::{Error, Result};
use crate::store::extract;
use crate::store::queries;
use crate::store::tokens::{self, Fit};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use serde::Serialize;

/// Entries indexed per transaction while catching up: other writers get turns between
/// batches, and FTS5's in-memory buffer of a transaction stays small.
const INDEX_BATCH: i64 = 4000;

/// Entries indexed in one catch-up after which the index is merged into one segment: a bulk
/// build leaves one segment per batch, and a query word standing for hundreds of tokens
/// looks each up in every segment (440 ms for `session-manager.ts` on 10,000 sessions,
/// 25 ms once merged).
const MERGE_AFTER: i64 = 20_000;

/// Vocabulary tokens remembered while indexing (to skip inserting them again); forgotten
/// when there are more, which bounds the memory an index build takes.
const KNOWN_TERMS: usize = 500_000;

/// Most vocabulary tokens a cut word may stand for in an index query; a word found inside
/// more tokens than this (one or two letters) does not narrow the search.
const MAX_ALTERNATIVES: usize = 2000;

/// One search hit.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hit {
    /// Header id of the session.
    pub session_id: String,
    /// The session's file path.
    pub session_file: String,
    /// Header cwd.
    pub cwd: Option<String>,
    /// The entry's id (use with `context --leaf`).
    pub entry_id: Option<String>,
    /// Message role or entry type.
    pub role: String,
    /// Entry time (ms).
    pub timestamp: Option<i64>,
    /// The matching text around the match, matches in `[` `]`.
    pub snippet: String,
    /// Relevance: a BM25-like score of the terms in the text, negated (lower is better).
    pub rank: f64,
}

/// Hits counted per session by [`search_sessions`]: a 100,000-entry session where a term is
/// everywhere would otherwise have every text read.
pub const MAX_COUNTED: i64 = 100;

/// The hits of one session (`search --sessions`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionHits {
    /// Header id of the session.
    pub session_id: String,
    /// The session's file path.
    pub session_file: String,
    /// Header cwd.
    pub cwd: Option<String>,
    /// Entries of the session that match (counted up to [`MAX_COUNTED`]).
    pub hits: i64,
    /// More entries match than `hits` says (counting stopped at [`MAX_COUNTED`]).
    pub more_hits: bool,
    /// Its best hit.
    pub best: Hit,
}

/// Filters for [`search`].
#[derive(Debug, Clone, Default)]
pub struct SearchFilter {
    /// Only sessions with this header cwd.
    pub cwd: Option<String>,
    /// Only this role or entry type.
    pub role: Option<String>,
    /// Only entries at or after this time (ms).
    pub since_ms: Option<i64>,
    /// Most hits (or sessions) returned.
    pub limit: i64,
}

/// Number of texts waiting to be indexed.
pub fn pending(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row(queries::FTS_PENDING_COUNT, [], |r| r.get(0))?)
}

/// Empties the index and queues every searchable entry again (`sessiondb index --rebuild`).
pub fn reset(conn: &mut Connection) -> Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute(queries::FTS_DELETE_ALL, [])?;
    tx.execute(queries::TERMS_DELETE_ALL, [])?;
    tx.execute(queries::FTS_QUEUE_ALL, [])?;
    tx.commit()?;
    Ok(())
}

/// Indexes every queued text, in batches; `progress(done, total)` after each batch.
pub fn catch_up(conn: &mut Connection, mut progress: impl FnMut(i64, i64)) -> Result<i64> {
    let total = pending(conn)?;
    let mut done = 0;
    let mut known = tokens::TokenSet::default();
    let mut seen = tokens::TokenSet::default();
    let mut doc = String::new();
    loop {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut n = 0;
        {
            let mut batch = tx.prepare_cached(queries::FTS_PENDING_BATCH)?;
            let mut insert = tx.prepare_cached(queries::FTS_INSERT)?;
            let mut term = tx.prepare_cached(queries::TERM_INSERT)?;
            let mut rows = batch.query([INDEX_BATCH])?;
            while let Some(r) = rows.next()? {
                n += 1;
                let key: i64 = r.get(0)?;
                let body = r.get_ref(1)?.as_str().unwrap_or_default();
                let Some(text) = extract::text_of_line(body) else { continue };
                doc.clear();
                tokens::index_text(&text, &mut seen, &mut doc);
                if doc.is_empty() {
                    continue;
                }
                insert.execute(params![key, doc])?;
                for t in doc.split(' ') {
                    if !known.contains(t) {
                        term.execute([t])?;
                        known.insert(t.to_string());
                    }
                }
            }
            if known.len() > KNOWN_TERMS {
                known.clear();
            }
        }
        tx.execute(queries::FTS_DEQUEUE_BATCH, [INDEX_BATCH])?;
        tx.commit()?;
        if n == 0 {
            break;
        }
        done += n;
        progress(done, total);
    }
    if done >= MERGE_AFTER {
        conn.execute(queries::FTS_OPTIMIZE, [])?;
    }
    Ok(done)
}

/// The terms of a query, folded: words, or phrases in double quotes.
fn terms_of(query: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, part) in query.split('"').enumerate() {
        if i % 2 == 1 {
            // Inside quotes: one phrase (kept as typed, spaces included).
            if !part.trim().is_empty() {
                out.push(tokens::fold_str(part));
            }
        } else {
            out.extend(part.split_whitespace().map(tokens::fold_str));
        }
    }
    out
}

/// How a query is answered.
enum Plan {
    /// Some term names a token no entry holds.
    Nothing,
    /// Candidates from the index (an FTS5 expression).
    Index(String),
    /// No term narrows the search: every entry is checked.
    Scan,
}

fn quoted(token: &str) -> String {
    // Tokens hold no ASCII punctuation (src/tokens.rs), so no quote to double.
    format!("\"{token}\"")
}

fn plan(conn: &Connection, terms: &[String]) -> Result<Plan> {
    let mut parts = Vec::new();
    for term in terms {
        for (token, fit) in tokens::term_tokens(term) {
            match fit {
                Fit::Exact => parts.push(quoted(&token)),
                Fit::Prefix | Fit::Suffix | Fit::Inside => {
                    // A prefix query merges every matching token's list before the first row
                    // comes out; the same tokens named one by one stream.
                    let sql = if fit == Fit::Prefix { queries::TERMS_STARTING } else { queries::TERMS_CONTAINING };
                    let mut st = conn.prepare_cached(sql)?;
                    let found: Vec<String> = st
                        .query_map(params![token, MAX_ALTERNATIVES as i64 + 1], |r| r.get(0))?
                        .collect::<rusqlite::Result<_>>()?;
                    if found.len() > MAX_ALTERNATIVES {
                        continue;
                    }
                    let alternatives: Vec<String> = found
                        .iter()
                        .filter(|t| fit != Fit::Suffix || t.ends_with(token.as_str()))
                        .map(|t| quoted(t))
                        .collect();
                    if alternatives.is_empty() {
                        return Ok(Plan::Nothing);
                    }
                    parts.push(format!("({})", alternatives.join(" OR ")));
                }
            }
        }
    }
    Ok(if parts.is_empty() { Plan::Scan } else { Plan::Index(parts.join(" AND ")) })
}

/// How many entries the index gives as candidates for `query` (the index only; every hit is
/// among them). A query the index cannot narrow counts every indexed entry.
pub fn match_count(conn: &Connection, query: &str) -> Result<i64> {
    Ok(match plan(conn, &terms_of(query))? {
        Plan::Nothing => 0,
        Plan::Index(expr) => conn.prepare_cached(queries::SEARCH_CANDIDATE_COUNT)?.query_row([expr], |r| r.get(0))?,
        Plan::Scan => conn.query_row(queries::TEXT_COUNT, [], |r| r.get(0))?,
    })
}

/// How many entries hold every token of `word` as a whole token (the index only, no
/// vocabulary scan: how the bench picks a rare word).
pub fn whole_word_count(conn: &Connection, word: &str) -> Result<i64> {
    let parts: Vec<String> = tokens::term_tokens(word).iter().map(|(t, _)| quoted(t)).collect();
    if parts.is_empty() {
        return Ok(0);
    }
    Ok(conn.prepare_cached(queries::SEARCH_CANDIDATE_COUNT)?.query_row([parts.join(" AND ")], |r| r.get(0))?)
}

/// An entry that passed the filters, before its text is checked.
struct Row {
    key: i64,
    hit: Hit,
    body: String,
}

fn row_of(r: &rusqlite::Row<'_>, key: i64) -> rusqlite::Result<Row> {
    Ok(Row {
        key,
        hit: Hit {
            session_id: r.get(0)?,
            session_file: r.get(1)?,
            cwd: r.get(2)?,
            entry_id: r.get(3)?,
            role: r.get(4)?,
            timestamp: r.get(5)?,
            snippet: String::new(),
            rank: 0.0,
        },
        body: r.get(6)?,
    })
}

/// Checks an entry's text for every term; the hit with its snippet when it holds them all,
/// its rank a BM25-like score of the terms' occurrences against the text's length (negated:
/// lower is better).
fn check(row: Row, terms: &[String]) -> Option<(i64, Hit)> {
    const K1: f64 = 1.2;
    const B: f64 = 0.75;
    const TYPICAL_LEN: f64 = 400.0;
    let text = extract::text_of_line(&row.body)?;
    let folded = tokens::fold_str(&text);
    let len = folded.len() as f64;
    let mut score = 0.0;
    for t in terms {
        let tf = folded.matches(t.as_str()).count() as f64;
        if tf == 0.0 {
            return None;
        }
        score += tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / TYPICAL_LEN));
    }
    let snippet = snippet(&text, &folded, &terms[0])?;
    Some((row.key, Hit { snippet, rank: -score, ..row.hit }))
}

/// Calls `take` with each hit, newest stored first, until it returns false.
fn each_hit(
    conn: &Connection,
    terms: &[String],
    f: &SearchFilter,
    skip: &dyn Fn(i64) -> bool,
    mut take: impl FnMut(i64, Hit) -> bool,
) -> Result<()> {
    match plan(conn, terms)? {
        Plan::Nothing => {}
        Plan::Index(expr) => {
            let mut candidates = conn.prepare_cached(queries::SEARCH_CANDIDATES)?;
            let mut row = conn.prepare_cached(queries::SEARCH_ROW)?;
            let mut keys = candidates.query([expr])?;
            while let Some(k) = keys.next()? {
                let key: i64 = k.get(0)?;
                if skip(key) {
                    continue;
                }
                let found = row.query_row(params![key, f.cwd, f.role, f.since_ms], |r| row_of(r, key)).optional()?;
                if let Some((key, hit)) = found.and_then(|r| check(r, terms)) {
                    if !take(key, hit) {
                        break;
                    }
                }
            }
        }
        Plan::Scan => {
            let mut st = conn.prepare_cached(queries::SEARCH_SCAN)?;
            let mut rows = st.query(params![f.cwd, f.role, f.since_ms])?;
            while let Some(r) = rows.next()? {
                let key: i64 = r.get(7)?;
                if skip(key) {
                    continue;
                }
                if let Some((key, hit)) = check(row_of(r, key)?, terms) {
                    if !take(key, hit) {
                        break;
                    }
                }
            }
        }
    }
    Ok(())
}

fn terms_checked(query: &str) -> Result<Vec<String>> {
    let terms = terms_of(query);
    if terms.is_empty() {
        return Err(Error::InvalidArgument("empty search query".into()));
    }
    Ok(terms)
}

/// Hits ranked together: all of them when there are fewer, else the newest this many (a
/// term in every session has hits everywhere; ranking them all would read every text).
fn window(limit: usize) -> usize {
    limit.saturating_mul(4).max(50)
}

fn by_rank(a: &Hit, b: &Hit) -> std::cmp::Ordering {
    a.rank.total_cmp(&b.rank)
}

/// Searches all sessions for `query`: entries whose text contains every term (a word, or a
/// phrase in double quotes) as a case-insensitive substring. Best matches first: the hits
/// are ranked by how often the terms occur against the text's length, all of them, or the
/// newest [`window`] when there are more.
pub fn search(conn: &Connection, query: &str, f: &SearchFilter) -> Result<Vec<Hit>> {
    let limit = if f.limit > 0 { usize::try_from(f.limit).unwrap_or(usize::MAX) } else { 20 };
    let terms = terms_checked(query)?;
    let mut hits = Vec::new();
    let most = window(limit).max(limit);
    each_hit(conn, &terms, f, &|_| false, |_, h| {
        hits.push(h);
        hits.len() < most
    })?;
    hits.sort_by(by_rank);
    hits.truncate(limit);
    Ok(hits)
}

/// Searches as [`search`], one result per session: its best hit and how many of its entries
/// match, sessions in the order of their best hits (of the newest `limit` sessions with
/// hits).
pub fn search_sessions(conn: &Connection, query: &str, f: &SearchFilter) -> Result<Vec<SessionHits>> {
    let limit = if f.limit > 0 { usize::try_from(f.limit).unwrap_or(usize::MAX) } else { 20 };
    let terms = terms_checked(query)?;
    // Each listed session is checked whole: the newest `limit` sessions with hits (checking
    // twice as many cost 1 s on 10,000 sessions for a term in every one).
    let most = limit;
    let mut out: Vec<SessionHits> = Vec::new();
    // Hits come newest stored first, so a session's hits come together (a key's high half
    // is its session): the window closes at a session's end, with every session counted whole.
    let mut last_sid = None;
    // A session whose hits reached MAX_COUNTED: its other candidates are not checked.
    let full = std::cell::Cell::new(None);
    each_hit(conn, &terms, f, &|key| full.get() == Some(key >> 32), |key, hit| {
        let sid = key >> 32;
        if last_sid == Some(sid) {
            if let Some(s) = out.last_mut() {
                s.hits += 1;
                if hit.rank < s.best.rank {
                    s.best = hit;
                }
                if s.hits >= MAX_COUNTED {
                    s.more_hits = true;
                    full.set(Some(sid));
                }
            }
            return true;
        }
        if out.len() >= most {
            return false;
        }
        last_sid = Some(sid);
        out.push(SessionHits {
            session_id: hit.session_id.clone(),
            session_file: hit.session_file.clone(),
            cwd: hit.cwd.clone(),
            hits: 1,
            more_hits: false,
            best: hit,
        });
        true
    })?;
    out.sort_by(|a, b| by_rank(&a.best, &b.best));
    out.truncate(limit);
    Ok(out)
}

/// The text around the first match of `needle` (folded) in `text` (`folded` is `text`
/// folded), the match in `[` `]`.
fn snippet(text: &str, folded: &str, needle: &str) -> Option<String> {
    const AROUND: usize = 60;
    let at_byte = folded.find(needle)?;
    // Folding maps each character to one character: positions in characters carry over.
    let at = folded[..at_byte].chars().count();
    let n = needle.chars().count();
    let chars: Vec<char> = text.chars().collect();
    let start = at.saturating_sub(AROUND);
    let end = (at + n + AROUND).min(chars.len());
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.extend(&chars[start..at]);
    out.push('[');
    out.extend(&chars[at..at + n]);
    out.push(']');
    out.extend(&chars[at + n..end]);
    if end < chars.len() {
        out.push('…');
    }
    Some(out)
}
