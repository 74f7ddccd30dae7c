//! Token and cost totals from the usage rows extracted on write: the statement beside the
//! function that binds it (named parameters) and reads its columns by name.

use crate::error::Result;
use crate::store::handle::Db;
use rusqlite::named_params;
use serde::Serialize;

/// Totals of one group.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    /// The group (a date, model, provider, cwd or session id; `all` when not grouped).
    pub group: String,
    /// Entries that carried usage.
    pub entries: i64,
    /// Input tokens.
    pub input: i64,
    /// Output tokens.
    pub output: i64,
    /// Cache-read tokens.
    pub cache_read: i64,
    /// Cache-write tokens.
    pub cache_write: i64,
    /// Total tokens.
    pub total_tokens: i64,
    /// Cost.
    pub cost: f64,
    /// Usage values left out of the sums above because they were not finite numbers in
    /// `[0, 2^53]` (tokens and cost alike).
    pub invalid_usage_values: i64,
}

/// Usage totals grouped by `:group` (`day`, `week`, `month`, `model`, `provider`, `project`,
/// `session` or `all`), filtered by `:since` (ms), `:until` (ms), `:cwd`. Copies of an
/// entry (same id and timestamp, made by forks) count once, for the first session holding it.
pub const USAGE_TOTALS: &str = "WITH firsts AS ( \
        SELECT min(u.key) AS key FROM usage u JOIN sessions s ON s.sid = u.session \
        WHERE (:since IS NULL OR u.ts_ms >= :since) AND (:until IS NULL OR u.ts_ms < :until) AND (:cwd IS NULL OR s.cwd = :cwd) \
        GROUP BY coalesce(u.entry_id, u.key), u.ts) \
    SELECT CASE :group \
            WHEN 'day' THEN strftime('%Y-%m-%d', u.ts_ms / 1000, 'unixepoch') \
            WHEN 'week' THEN strftime('%Y-W%W', u.ts_ms / 1000, 'unixepoch') \
            WHEN 'month' THEN strftime('%Y-%m', u.ts_ms / 1000, 'unixepoch') \
            WHEN 'model' THEN coalesce(u.model, '(unknown)') \
            WHEN 'provider' THEN coalesce(u.provider, '(unknown)') \
            WHEN 'project' THEN coalesce(s.cwd, '') \
            WHEN 'session' THEN s.id \
            ELSE 'all' END AS grp, \
        count(*) AS entries, total(u.input) AS input, total(u.output) AS output, total(u.cache_read) AS cache_read, \
        total(u.cache_write) AS cache_write, total(u.total) AS total_tokens, total(u.cost) AS cost, \
        sum(u.invalid) AS invalid \
    FROM firsts f JOIN usage u ON u.key = f.key JOIN sessions s ON s.sid = u.session \
    GROUP BY grp ORDER BY grp";

/// Totals per group (`group` is one of the names [`USAGE_TOTALS`] takes), ordered by group.
pub fn totals(
    db: &Db,
    group: &str,
    since_ms: Option<i64>,
    until_ms: Option<i64>,
    cwd: Option<&str>,
) -> Result<Vec<Totals>> {
    let mut st = db.conn()?.prepare_cached(USAGE_TOTALS)?;
    let params = named_params! { ":group": group, ":since": since_ms, ":until": until_ms, ":cwd": cwd };
    let rows = st
        .query_map(params, |r| {
            Ok(Totals {
                group: r.get::<_, Option<String>>("grp")?.unwrap_or_default(),
                entries: r.get("entries")?,
                // total() sums as doubles: no overflow error on absurd token counts.
                input: r.get::<_, f64>("input")? as i64,
                output: r.get::<_, f64>("output")? as i64,
                cache_read: r.get::<_, f64>("cache_read")? as i64,
                cache_write: r.get::<_, f64>("cache_write")? as i64,
                total_tokens: r.get::<_, f64>("total_tokens")? as i64,
                cost: r.get("cost")?,
                invalid_usage_values: r.get("invalid")?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}
