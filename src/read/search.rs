//! Full-text search over every session (FTS5, trigram tokenizer: substrings and CJK).

use crate::error::{Error, Result};
use crate::store::extract;
use crate::store::queries;
use rusqlite::{params, Connection, TransactionBehavior};
use serde::Serialize;

/// Entries indexed per transaction while catching up: other writers get turns, and FTS5's
/// in-memory buffer of the transaction stays small (tool results run to 20 KB each).
const INDEX_BATCH: i64 = 500;

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
    /// bm25 rank (lower is better).
    pub rank: f64,
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
    /// Most hits returned.
    pub limit: i64,
}

/// Number of texts waiting to be indexed.
pub fn pending(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row(queries::FTS_PENDING_COUNT, [], |r| r.get(0))?)
}

/// Indexes every queued text, in batches; `progress(done, total)` after each batch.
pub fn catch_up(conn: &mut Connection, mut progress: impl FnMut(i64, i64)) -> Result<i64> {
    let total = pending(conn)?;
    let mut done = 0;
    loop {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut n = 0;
        {
            let mut batch = tx.prepare_cached(queries::FTS_PENDING_BATCH)?;
            let mut insert = tx.prepare_cached(queries::FTS_INSERT)?;
            let mut rows = batch.query([INDEX_BATCH])?;
            while let Some(r) = rows.next()? {
                n += 1;
                let key: i64 = r.get(0)?;
                let body = r.get_ref(1)?.as_str().unwrap_or_default();
                if let Some(text) = extract::text_of_line(body).filter(|t| !t.trim().is_empty()) {
                    insert.execute(params![key, text])?;
                }
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
    Ok(done)
}

/// Quotes a user query as one FTS5 string (a substring search, never FTS syntax).
fn fts_phrase(query: &str) -> String {
    format!("\"{}\"", query.replace('"', "\"\""))
}

/// How many indexed texts contain `query` (at least three characters; the index only).
pub fn match_count(conn: &Connection, query: &str) -> Result<i64> {
    Ok(conn.prepare_cached(queries::SEARCH_MATCH_COUNT)?.query_row([fts_phrase(query)], |r| r.get(0))?)
}

/// Searches all sessions for `query` (a substring, case-insensitive). Queries shorter than
/// three characters cannot use the trigram index and are matched by scanning the lines of
/// searchable entries.
pub fn search(conn: &Connection, query: &str, f: &SearchFilter) -> Result<Vec<Hit>> {
    if query.trim().is_empty() {
        return Err(Error::InvalidArgument("empty search query".into()));
    }
    let limit = if f.limit > 0 { f.limit } else { 20 };
    let short = query.chars().count() < 3;
    let (sql, pattern) = if short {
        let escaped = query.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_");
        (queries::SEARCH_SHORT, format!("%{escaped}%"))
    } else {
        (queries::SEARCH, fts_phrase(query))
    };
    let mut st = conn.prepare_cached(sql)?;
    let mut rows = st.query(params![pattern, f.cwd, f.role, f.since_ms, limit])?;
    let needle = query.to_lowercase();
    let mut hits = Vec::new();
    while let Some(r) = rows.next()? {
        let body = r.get_ref(6)?.as_str().unwrap_or_default();
        let text = extract::text_of_line(body).unwrap_or_default();
        let Some(snippet) = snippet(&text, &needle) else {
            // A line that matched on its JSON (a key, an escape) but not on its text.
            continue;
        };
        hits.push(Hit {
            session_id: r.get(0)?,
            session_file: r.get(1)?,
            cwd: r.get(2)?,
            entry_id: r.get(3)?,
            role: r.get(4)?,
            timestamp: r.get(5)?,
            snippet,
            rank: r.get::<_, Option<f64>>(7)?.unwrap_or(0.0),
        });
        if hits.len() as i64 >= limit {
            break;
        }
    }
    Ok(hits)
}

/// The text around the first case-insensitive match of `needle` (lowercase), the match in
/// `[` `]`; `None` when the text does not contain it.
fn snippet(text: &str, needle: &str) -> Option<String> {
    const AROUND: usize = 60;
    let chars: Vec<char> = text.chars().collect();
    let lower: Vec<char> = chars.iter().map(|c| c.to_lowercase().next().unwrap_or(*c)).collect();
    let n: Vec<char> = needle.chars().collect();
    let at = (0..=lower.len().checked_sub(n.len())?).find(|&i| lower[i..i + n.len()] == n[..])?;
    let start = at.saturating_sub(AROUND);
    let end = (at + n.len() + AROUND).min(chars.len());
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.extend(&chars[start..at]);
    out.push('[');
    out.extend(&chars[at..at + n.len()]);
    out.push(']');
    out.extend(&chars[at + n.len()..end]);
    if end < chars.len() {
        out.push('…');
    }
    Some(out)
}
