//! Full-text search over every session: case-insensitive substrings in any script.
//!
//! The word index (src/store/search/, each backend's `search.rs` holding its statements)
//! holds, for each word token (src/store/search/tokens.rs), the keys of the entries holding
//! it; a line shared by copies is indexed once. A query is
//! split into terms (words, or "quoted phrases"), all of which must occur. Each term names
//! the tokens a matching entry must hold; a word the term cuts is looked up in the vocabulary
//! of indexed tokens (a key range for a prefix, a scan otherwise). The keys holding them all,
//! with their copies, are the candidates, newest first; each candidate's text is checked for
//! every term: hits are exactly the entries whose text contains every term. The hits are
//! ranked by a BM25-like score computed on the text while checking it.

use crate::error::{Error, Result};
use crate::hash::FxHashMap;
use crate::read::snippet::snippet;
use crate::store::extract;
use crate::store::handle::Db;
use crate::store::keys::EntryKey;
use crate::store::search_index::{self, HitRow, RowFilter};
use crate::store::tokens::{self, Fit};
use serde::Serialize;

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
pub fn pending(conn: &Db) -> Result<i64> {
    search_index::pending(conn)
}

/// Empties the index and queues every searchable entry again (`sessiondb index --rebuild`).
pub fn reset(conn: &mut Db) -> Result<()> {
    search_index::reset(conn)
}

/// The word index's postings rows, and the build batches holding them (small batches are
/// merged as they accumulate).
pub fn index_shape(conn: &Db) -> Result<(i64, i64)> {
    search_index::posting_shape(conn)
}

/// Indexes every queued text; `progress(done, total)` after each batch.
pub fn catch_up(conn: &mut Db, progress: impl FnMut(i64, i64)) -> Result<i64> {
    search_index::catch_up(conn, progress)
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
    /// Candidates from the index: the keys of the entries holding every whole token named
    /// (or, when there is none, an alternative of the first cut word), and their copies; the
    /// cut words left narrow them as the candidates come.
    Index(Vec<EntryKey>, Narrowing),
    /// No term narrows the search: every entry is checked.
    Scan,
}

/// Keys checked against the cut words first: a term in every session needs only the newest
/// few hundred candidates, and finding every key an alternative holds was most of its search
/// (its 900 alternatives hold 1.8 million keys on 10,000 sessions).
const FIRST_WINDOW: usize = 256;

/// Windows up to this many keys are searched by bisection; larger ones through a hash.
const BISECT_MAX: usize = 4096;

/// The cut words a candidate's line must hold besides the whole tokens, checked from the
/// newest keys down as far as the candidates go (each step twice the last).
struct Narrowing {
    /// Per cut word, its alternatives' key blobs.
    words: Vec<Vec<Vec<u8>>>,
    /// The keys from this index on are checked.
    lo: usize,
    /// Per key: how many words hold it (from `lo` on).
    held: Vec<u32>,
}

impl Narrowing {
    fn new(words: Vec<Vec<Vec<u8>>>, keys: &[EntryKey]) -> Self {
        let held = if words.is_empty() { Vec::new() } else { vec![0; keys.len()] };
        Narrowing { words, lo: keys.len(), held }
    }

    /// Whether the line `owner` (one of `keys`, the keys it was made with) holds every word.
    fn holds(&mut self, keys: &[EntryKey], owner: EntryKey) -> bool {
        if self.words.is_empty() {
            return true;
        }
        let Ok(i) = keys.binary_search(&owner) else { return false };
        if i < self.lo {
            let done = keys.len() - self.lo;
            self.extend(keys, self.lo.saturating_sub(done.max(FIRST_WINDOW)).min(i));
        }
        self.held[i] as usize == self.words.len()
    }

    /// Checks the keys from index `lo` on.
    fn extend(&mut self, keys: &[EntryKey], lo: usize) {
        if self.words.is_empty() || lo >= self.lo {
            return;
        }
        let window = &keys[lo..self.lo];
        let (first, last) = (window[0], window[window.len() - 1]);
        let at: Option<FxHashMap<EntryKey, usize>> =
            (window.len() > BISECT_MAX).then(|| window.iter().enumerate().map(|(i, &k)| (k, i)).collect());
        let mut marks = vec![false; window.len()];
        for blobs in &self.words {
            marks.fill(false);
            for blob in blobs {
                search_index::keys_upto(blob, last, |k| {
                    if k < first {
                        return;
                    }
                    let found = match &at {
                        Some(at) => at.get(&k).copied(),
                        None => window.binary_search(&k).ok(),
                    };
                    if let Some(j) = found {
                        marks[j] = true;
                    }
                });
            }
            for (h, &m) in self.held[lo..self.lo].iter_mut().zip(&marks) {
                *h += u32::from(m);
            }
        }
        self.lo = lo;
    }
}

/// The keys in both sorted lists.
fn intersect(a: &[EntryKey], b: &[EntryKey]) -> Vec<EntryKey> {
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let mut out = Vec::with_capacity(small.len());
    // Lists of like length: one merge pass; else a binary search per key of the small one.
    if large.len() < small.len().saturating_mul(16) {
        let mut j = 0;
        for &k in small {
            while j < large.len() && large[j] < k {
                j += 1;
            }
            if large.get(j) == Some(&k) {
                out.push(k);
            }
        }
        return out;
    }
    let mut rest = large;
    for &k in small {
        let i = rest.partition_point(|&x| x < k);
        rest = &rest[i..];
        if rest.first() == Some(&k) {
            out.push(k);
        }
    }
    out
}

fn plan(conn: &Db, terms: &[String]) -> Result<Plan> {
    // Whole tokens first, then the alternatives of cut words: each alternative's keys only
    // narrow what the whole tokens left.
    let mut exact = Vec::new();
    let mut cut = Vec::new();
    for term in terms {
        for (token, fit) in tokens::term_tokens(term) {
            match fit {
                Fit::Exact => exact.push(token),
                _ => cut.push((token, fit)),
            }
        }
    }
    let mut lists: Vec<Vec<EntryKey>> = Vec::new();
    for t in &exact {
        let keys = search_index::postings(conn, t)?;
        if keys.is_empty() {
            return Ok(Plan::Nothing);
        }
        lists.push(keys);
    }
    lists.sort_by_key(Vec::len);
    let mut current: Option<Vec<EntryKey>> = None;
    for l in lists {
        current = Some(match current {
            None => l,
            Some(c) => intersect(&c, &l),
        });
    }
    // A prefix is a range of the vocabulary; other cut words scan it, all in one pass.
    let scanned: Vec<&str> = cut.iter().filter(|(_, fit)| *fit != Fit::Prefix).map(|(t, _)| t.as_str()).collect();
    let mut contained = search_index::terms_containing(conn, &scanned, MAX_ALTERNATIVES + 1)?.into_iter();
    let mut words = Vec::new();
    for (token, fit) in &cut {
        let found = if *fit == Fit::Prefix {
            search_index::terms_starting(conn, token, MAX_ALTERNATIVES + 1)?
        } else {
            contained.next().unwrap_or_default()
        };
        if found.len() > MAX_ALTERNATIVES {
            continue;
        }
        let alternatives = found.iter().filter(|t| *fit != Fit::Suffix || t.ends_with(token.as_str()));
        if current.is_some() {
            // Their keys are read now, decoded as far as the candidates go.
            let alternatives: Vec<&str> = alternatives.map(String::as_str).collect();
            let blobs = search_index::posting_blobs_of(conn, &alternatives)?;
            if blobs.is_empty() {
                return Ok(Plan::Nothing);
            }
            words.push(blobs);
        } else {
            // The alternatives' keys together: sorted runs, which a stable sort merges.
            let alternatives: Vec<&str> = alternatives.map(String::as_str).collect();
            let mut union = Vec::new();
            for blob in search_index::posting_blobs_of(conn, &alternatives)? {
                search_index::keys_upto(&blob, EntryKey::MAX, |k| union.push(k));
            }
            union.sort();
            union.dedup();
            current = Some(union);
        }
    }
    Ok(match current {
        None => Plan::Scan,
        Some(keys) if keys.is_empty() => Plan::Nothing,
        Some(keys) => {
            let narrowing = Narrowing::new(words, &keys);
            Plan::Index(keys, narrowing)
        }
    })
}

/// How many entries the index gives as candidates for `query` (the index only; every hit is
/// among them). A query the index cannot narrow counts every indexed entry.
pub fn match_count(conn: &Db, query: &str) -> Result<i64> {
    Ok(match plan(conn, &terms_of(query))? {
        Plan::Nothing => 0,
        Plan::Index(keys, mut narrowing) => {
            let mut candidates = search_index::Candidates::new(conn, keys)?;
            narrowing.extend(candidates.keys(), 0);
            let mut n = 0;
            while let Some((key, owner)) = candidates.next() {
                if narrowing.holds(candidates.keys(), owner.unwrap_or(key)) {
                    n += 1;
                }
            }
            n
        }
        Plan::Scan => search_index::text_count(conn)?,
    })
}

/// How many entries hold every token of `word` as a whole token (the index only, no
/// vocabulary scan: how the bench picks a rare word).
pub fn whole_word_count(conn: &Db, word: &str) -> Result<i64> {
    let mut current: Option<Vec<EntryKey>> = None;
    for (t, _) in tokens::term_tokens(word) {
        let keys = search_index::postings(conn, &t)?;
        current = Some(match current {
            None => keys,
            Some(c) => intersect(&c, &keys),
        });
    }
    match current {
        Some(keys) if !keys.is_empty() => Ok(search_index::Candidates::new(conn, keys)?.count() as i64),
        _ => Ok(0),
    }
}

/// A checked text: its snippet and rank when it holds every term.
type Verdict = Option<(String, f64)>;

fn hit_of(row: HitRow, (snippet, rank): (String, f64)) -> Hit {
    Hit {
        session_id: row.session_id,
        session_file: row.session_file,
        cwd: row.cwd,
        entry_id: row.entry_id,
        role: row.role,
        timestamp: row.ts_ms,
        snippet,
        rank,
    }
}

/// Checks an entry's line for every term: its snippet and rank when it holds them all, the
/// rank a BM25-like score of the terms' occurrences against the text's length (negated:
/// lower is better).
fn check(line: Option<&str>, terms: &[String]) -> Verdict {
    const K1: f64 = 1.2;
    const B: f64 = 0.75;
    const TYPICAL_LEN: f64 = 400.0;
    let text = extract::text_of_line(line?)?;
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
    let snippet = snippet(&text, &folded, terms)?;
    Some((snippet, -score))
}

/// What the caller of [`each_hit`] wants next.
#[derive(PartialEq)]
enum Next {
    More,
    /// No more hits of this hit's session.
    SkipSession,
    Stop,
}

/// Calls `take` with each hit, newest stored first, until it says stop.
fn each_hit(conn: &Db, terms: &[String], f: &SearchFilter, mut take: impl FnMut(EntryKey, Hit) -> Next) -> Result<()> {
    let rf = RowFilter { cwd: f.cwd.as_deref(), role: f.role.as_deref(), since_ms: f.since_ms };
    // Verdicts by the key of the line checked: the copies of a line share it.
    let mut checked: FxHashMap<EntryKey, Verdict> = FxHashMap::default();
    match plan(conn, terms)? {
        Plan::Nothing => {}
        Plan::Index(keys, mut narrowing) => {
            let mut candidates = search_index::Candidates::new(conn, keys)?;
            // Batches of the next candidates where the store answers several rows at once,
            // growing (a search stops after its window of hits).
            let (mut size, most) = search_index::hit_batch(conn);
            'batches: loop {
                let mut batch = Vec::with_capacity(size);
                while batch.len() < size {
                    let Some((key, owner)) = candidates.next() else { break };
                    let line_key = owner.unwrap_or(key);
                    if narrowing.holds(candidates.keys(), line_key) {
                        batch.push((key, owner, !checked.contains_key(&line_key)));
                    }
                }
                if batch.is_empty() {
                    break;
                }
                size = (size * 2).min(most);
                let rows = search_index::hit_rows(conn, &batch, &rf)?;
                let mut skipped = None;
                for ((key, owner, _), row) in batch.into_iter().zip(rows) {
                    if skipped == Some(key.session()) {
                        continue;
                    }
                    let Some(row) = row else { continue };
                    let line_key = owner.unwrap_or(key);
                    let verdict = match checked.get(&line_key) {
                        Some(v) => v.clone(),
                        None => {
                            let v = check(row.line.as_deref(), terms);
                            checked.insert(line_key, v.clone());
                            v
                        }
                    };
                    let Some(v) = verdict else { continue };
                    match take(key, hit_of(row, v)) {
                        Next::More => {}
                        Next::SkipSession => {
                            skipped = Some(key.session());
                            candidates.skip_session(key.session());
                        }
                        Next::Stop => break 'batches,
                    }
                }
            }
        }
        Plan::Scan => {
            let mut skipped = None;
            search_index::scan(conn, &rf, |key, line_key, row| {
                if skipped == Some(key.session()) {
                    return true;
                }
                let verdict = match checked.get(&line_key) {
                    Some(v) => v.clone(),
                    None => {
                        let v = check(row.line.as_deref(), terms);
                        if line_key != key {
                            checked.insert(line_key, v.clone());
                        }
                        v
                    }
                };
                let Some(v) = verdict else { return true };
                match take(key, hit_of(row, v)) {
                    Next::More => true,
                    Next::SkipSession => {
                        skipped = Some(key.session());
                        true
                    }
                    Next::Stop => false,
                }
            })?;
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
pub fn search(conn: &Db, query: &str, f: &SearchFilter) -> Result<Vec<Hit>> {
    let limit = if f.limit > 0 { usize::try_from(f.limit).unwrap_or(usize::MAX) } else { 20 };
    let terms = terms_checked(query)?;
    let mut hits = Vec::new();
    let most = window(limit).max(limit);
    each_hit(conn, &terms, f, |_, h| {
        hits.push(h);
        if hits.len() < most {
            Next::More
        } else {
            Next::Stop
        }
    })?;
    hits.sort_by(by_rank);
    hits.truncate(limit);
    Ok(hits)
}

/// Searches as [`search`], one result per session: its best hit and how many of its entries
/// match, sessions in the order of their best hits (of the newest `limit` sessions with
/// hits).
pub fn search_sessions(conn: &Db, query: &str, f: &SearchFilter) -> Result<Vec<SessionHits>> {
    let limit = if f.limit > 0 { usize::try_from(f.limit).unwrap_or(usize::MAX) } else { 20 };
    let terms = terms_checked(query)?;
    // Each listed session is checked whole: the newest `limit` sessions with hits (checking
    // twice as many cost 1 s on 10,000 sessions for a term in every one).
    let most = limit;
    let mut out: Vec<SessionHits> = Vec::new();
    // Hits come newest stored first, so a session's hits come together (a key's high half
    // is its session): the window closes at a session's end, with every session counted whole.
    let mut last_sid = None;
    each_hit(conn, &terms, f, |key, hit| {
        let sid = key.session();
        if last_sid == Some(sid) {
            if let Some(s) = out.last_mut() {
                s.hits += 1;
                if hit.rank < s.best.rank {
                    s.best = hit;
                }
                if s.hits >= MAX_COUNTED {
                    // Its other candidates are not checked.
                    s.more_hits = true;
                    return Next::SkipSession;
                }
            }
            return Next::More;
        }
        if out.len() >= most {
            return Next::Stop;
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
        Next::More
    })?;
    out.sort_by(|a, b| by_rank(&a.best, &b.best));
    out.truncate(limit);
    Ok(out)
}
