//! [`Usage`] on PostgreSQL: the usage rows of lines written since the last catch-up are
//! extracted first.

use crate::error::Result;
use crate::store::interface::usage::{EntryUsages, Totals, Usage};
use crate::store::keys::{EntryKey, SessionKey};
use crate::store::postgres::Pg;
use crate::store::search_index;

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

/// [`PG_USAGE_TOTALS`] from the totals kept per session, day, provider and model
/// (`search_usage_days`, SQLite's `USAGE_TOTALS_BY_DAY`): `$1` and `$2` are day numbers.
pub const PG_USAGE_TOTALS_BY_DAY: &str = "WITH kept AS ( \
        SELECT u.*, s.cwd, s.id AS sid, CASE WHEN u.day BETWEEN -719162 AND 2932896 \
            THEN to_timestamp(u.day * 86400) AT TIME ZONE 'UTC' END AS d \
        FROM search_usage_days u JOIN sessions s ON s.skey = u.session \
        WHERE ($1::bigint IS NULL OR u.day >= $1) AND ($2::bigint IS NULL OR (u.day < $2 AND u.day <> -99999999))) \
    SELECT CASE $3::text \
            WHEN 'day' THEN to_char(d, 'YYYY-MM-DD') \
            WHEN 'week' THEN to_char(d, 'YYYY') || '-W' \
                || lpad(((extract(doy FROM d)::int + 7 - extract(isodow FROM d)::int) / 7)::text, 2, '0') \
            WHEN 'month' THEN to_char(d, 'YYYY-MM') \
            WHEN 'model' THEN model \
            WHEN 'provider' THEN provider \
            WHEN 'project' THEN coalesce(cwd, '') \
            WHEN 'session' THEN sid \
            ELSE 'all' END COLLATE \"C\" AS grp, \
        sum(entries)::bigint AS entries, sum(input)::float8 AS input, sum(output)::float8 AS output, \
        sum(cache_read)::float8 AS cache_read, sum(cache_write)::float8 AS cache_write, \
        sum(total)::float8 AS total_tokens, array_agg(cost ORDER BY session, day, provider, model) \
            || array_agg(cost_err ORDER BY session, day, provider, model) FILTER (WHERE cost_err <> 0) AS costs, \
        sum(invalid)::bigint AS invalid \
    FROM kept GROUP BY grp ORDER BY grp NULLS FIRST";

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

impl Usage for Pg {
    fn usage_totals(
        &self,
        group: &str,
        since_ms: Option<i64>,
        until_ms: Option<i64>,
        cwd: Option<&str>,
    ) -> Result<Vec<Totals>> {
        // The usage rows of lines written since the last catch-up first (a read-only
        // connection reads them as the last catch-up left them).
        if !self.read_only() {
            crate::store::postgres::search::pg_catch_up(
                self,
                search_index::READ_BATCH,
                search_index::FLUSH_BYTES,
                &mut |_, _| {},
            )?;
        }
        let rows = match crate::store::interface::usage::whole_days(since_ms, until_ms, cwd) {
            Some((since_day, until_day)) => self.query(PG_USAGE_TOTALS_BY_DAY, &[&since_day, &until_day, &group])?,
            None => self.query(PG_USAGE_TOTALS, &[&since_ms, &until_ms, &cwd, &group])?,
        };
        Ok(rows
            .iter()
            .map(|r| Totals {
                group: r.get::<_, Option<String>>("grp").unwrap_or_default(),
                entries: r.get("entries"),
                input: r.get::<_, f64>("input") as i64,
                output: r.get::<_, f64>("output") as i64,
                cache_read: r.get::<_, f64>("cache_read") as i64,
                cache_write: r.get::<_, f64>("cache_write") as i64,
                total_tokens: r.get::<_, f64>("total_tokens") as i64,
                cost: total_of(&r.get::<_, Option<Vec<f64>>>("costs").unwrap_or_default()),
                invalid_usage_values: r.get("invalid"),
            })
            .collect())
    }

    fn entry_usages(&self, _sid: SessionKey, _after: EntryKey) -> Result<EntryUsages> {
        // The server's usage rows are extracted by the search catch-up, behind the appends, and
        // a session sent again whole keeps its old rows until the next one: none is known to
        // be the lines' here, so the reader reads the lines (running the catch-up on every
        // read would cost more than that).
        Ok(EntryUsages::default())
    }
}
