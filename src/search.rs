//! Full-text search over every session (FTS5, trigram tokenizer: substrings and CJK).

use crate::error::{Error, Result};
use crate::queries;
use rusqlite::{params, Connection, TransactionBehavior};
use serde::Serialize;

/// Texts indexed per transaction while catching up, so other writers get turns.
const INDEX_BATCH: i64 = 5000;

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
        let n = tx.execute(queries::FTS_INDEX_BATCH, [INDEX_BATCH])?;
        tx.execute(queries::FTS_DEQUEUE_BATCH, [INDEX_BATCH])?;
        tx.commit()?;
        if n == 0 {
            break;
        }
        done += n as i64;
        progress(done, total);
    }
    Ok(done)
}

/// Quotes a user query as one FTS5 string (a substring search, never FTS syntax).
fn fts_phrase(query: &str) -> String {
    format!("\"{}\"", query.replace('"', "\"\""))
}

/// Searches all sessions for `query` (a substring, case-insensitive). Queries shorter than
/// three characters cannot use the trigram index and are matched with a scan of the texts.
pub fn search(conn: &Connection, query: &str, f: &SearchFilter) -> Result<Vec<Hit>> {
    if query.trim().is_empty() {
        return Err(Error::InvalidArgument("empty search query".into()));
    }
    let limit = if f.limit > 0 { f.limit } else { 20 };
    let short = query.chars().count() < 3;
    let sql = if short { queries::SEARCH_SHORT } else { queries::SEARCH };
    let pattern = if short {
        format!("%{}%", query.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_"))
    } else {
        fts_phrase(query)
    };
    let mut st = conn.prepare_cached(sql)?;
    let row = |r: &rusqlite::Row<'_>| {
        Ok(Hit {
            session_id: r.get(0)?,
            session_file: r.get(1)?,
            cwd: r.get(2)?,
            entry_id: r.get(3)?,
            role: r.get(4)?,
            timestamp: r.get(5)?,
            snippet: r.get::<_, Option<String>>(6)?.unwrap_or_default(),
            rank: r.get::<_, Option<f64>>(7)?.unwrap_or(0.0),
        })
    };
    let hits = if short {
        st.query_map(params![pattern, f.cwd, f.role, f.since_ms, limit, query], row)?
            .collect::<rusqlite::Result<Vec<_>>>()?
    } else {
        st.query_map(params![pattern, f.cwd, f.role, f.since_ms, limit], row)?.collect::<rusqlite::Result<Vec<_>>>()?
    };
    Ok(hits)
}
