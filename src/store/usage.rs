//! Token and cost totals from the usage rows extracted on write: the statement beside the
//! function that binds it (named parameters) and reads its columns by name.

use crate::error::Result;
use crate::store::handle::Db;
use crate::store::search_index;
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
    /// Usage values left out of the sums above because they were not plausible for one entry
    /// (tokens a whole number up to 10^9, a cost up to 10^6).
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

/// [`USAGE_TOTALS`] on PostgreSQL (the usage rows the search catch-up extracts): integer sums
/// are exact (numeric), as SQLite's while they fit in 64 bits; costs come as lists, summed as
/// SQLite's `total()` sums them (Kahan-Babuska-Neumaier), in key order. Dates out of
/// 0001..9999 (SQLite's range, years before 1 aside) group as NULL, as SQLite's strftime gives.
pub const PG_USAGE_TOTALS: &str = "WITH firsts AS ( \
        SELECT min((u.session << 32) | u.seq) AS key FROM search_usage u JOIN sessions s ON s.skey = u.session \
        WHERE ($1::bigint IS NULL OR u.ts_ms >= $1) AND ($2::bigint IS NULL OR u.ts_ms < $2) AND ($3::text IS NULL OR s.cwd = $3) \
        GROUP BY u.entry_id, CASE WHEN u.entry_id IS NULL THEN (u.session << 32) | u.seq END, u.ts), \
    rows AS ( \
        SELECT u.*, s.cwd, s.id AS sid, CASE WHEN u.ts_ms / 1000 BETWEEN -62135596800 AND 253402300799 \
            THEN to_timestamp(u.ts_ms / 1000) AT TIME ZONE 'UTC' END AS d \
        FROM firsts f JOIN search_usage u ON u.session = f.key >> 32 AND u.seq = f.key & 4294967295 \
        JOIN sessions s ON s.skey = u.session) \
    SELECT CASE $4::text \
            WHEN 'day' THEN to_char(d, 'YYYY-MM-DD') \
            WHEN 'week' THEN to_char(d, 'YYYY') || '-W' \
                || lpad(((extract(doy FROM d)::int + 7 - extract(isodow FROM d)::int) / 7)::text, 2, '0') \
            WHEN 'month' THEN to_char(d, 'YYYY-MM') \
            WHEN 'model' THEN coalesce(model, '(unknown)') \
            WHEN 'provider' THEN coalesce(provider, '(unknown)') \
            WHEN 'project' THEN coalesce(cwd, '') \
            WHEN 'session' THEN sid \
            ELSE 'all' END COLLATE \"C\" AS grp, \
        count(*) AS entries, sum(input)::float8 AS input, sum(output)::float8 AS output, \
        sum(cache_read)::float8 AS cache_read, sum(cache_write)::float8 AS cache_write, \
        sum(total)::float8 AS total_tokens, array_agg(cost ORDER BY session, seq) AS costs, sum(invalid)::bigint AS invalid \
    FROM rows GROUP BY grp ORDER BY grp NULLS FIRST";

/// SQLite's `total()` of doubles: a Kahan-Babuska-Neumaier sum.
fn total_of(values: &[f64]) -> f64 {
    let (mut sum, mut err) = (0.0f64, 0.0f64);
    for &v in values {
        let t = sum + v;
        if sum.abs() > v.abs() {
            err += (sum - t) + v;
        } else {
            err += (v - t) + sum;
        }
        sum = t;
    }
    if err.is_finite() {
        sum + err
    } else {
        sum
    }
}

/// Totals per group (`group` is one of the names [`USAGE_TOTALS`] takes), ordered by group.
pub fn totals(
    db: &Db,
    group: &str,
    since_ms: Option<i64>,
    until_ms: Option<i64>,
    cwd: Option<&str>,
) -> Result<Vec<Totals>> {
    if let Some(pg) = db.pg() {
        // The usage rows of lines written since the last catch-up first.
        search_index::pg_catch_up(pg, search_index::READ_BATCH, search_index::FLUSH_BYTES, &mut |_, _| {})?;
        let rows = pg.query(PG_USAGE_TOTALS, &[&since_ms, &until_ms, &cwd, &group])?;
        return Ok(rows
            .iter()
            .map(|r| Totals {
                group: r.get::<_, Option<String>>("grp").unwrap_or_default(),
                entries: r.get("entries"),
                input: r.get::<_, f64>("input") as i64,
                output: r.get::<_, f64>("output") as i64,
                cache_read: r.get::<_, f64>("cache_read") as i64,
                cache_write: r.get::<_, f64>("cache_write") as i64,
                total_tokens: r.get::<_, f64>("total_tokens") as i64,
                cost: total_of(&r.get::<_, Vec<f64>>("costs")),
                invalid_usage_values: r.get("invalid"),
            })
            .collect());
    }
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
