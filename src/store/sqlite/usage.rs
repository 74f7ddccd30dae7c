//! [`Usage`] on SQLite: the statement beside the method that binds it (named parameters) and
//! reads its columns by name.

use crate::error::Result;
use crate::store::interface::usage::{EntryUsage, EntryUsages, Totals, Usage};
use crate::store::keys::{EntryKey, SessionKey};
use crate::store::sqlite::{columns, Sqlite};
use rusqlite::named_params;

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

/// [`USAGE_TOTALS`] from the totals kept per session, day, provider and model (`usage_days`,
/// the first copy of each entry only), when no project is chosen and the period is whole UTC
/// days: `:since_day` and `:until_day` are day numbers, NULL when not given. Each group's cost
/// is the sum of its days' costs and their rounding errors.
pub const USAGE_TOTALS_BY_DAY: &str = "WITH kept AS ( \
        SELECT CASE :group \
            WHEN 'day' THEN strftime('%Y-%m-%d', d.day * 86400, 'unixepoch') \
            WHEN 'week' THEN strftime('%Y-W%W', d.day * 86400, 'unixepoch') \
            WHEN 'month' THEN strftime('%Y-%m', d.day * 86400, 'unixepoch') \
            WHEN 'model' THEN d.model \
            WHEN 'provider' THEN d.provider \
            WHEN 'project' THEN coalesce(s.cwd, '') \
            WHEN 'session' THEN s.id \
            ELSE 'all' END AS grp, d.* \
        FROM usage_days d JOIN sessions s ON s.sid = d.session \
        WHERE (:since_day IS NULL OR d.day >= :since_day) \
            AND (:until_day IS NULL OR (d.day < :until_day AND d.day <> -99999999))), \
    addends AS ( \
        SELECT grp, entries, input, output, cache_read, cache_write, total, cost, invalid FROM kept \
        UNION ALL SELECT grp, 0, 0, 0, 0, 0, 0, cost_err, 0 FROM kept WHERE cost_err <> 0) \
    SELECT grp, sum(entries) AS entries, total(input) AS input, total(output) AS output, total(cache_read) AS cache_read, \
        total(cache_write) AS cache_write, total(total) AS total_tokens, total(cost) AS cost, sum(invalid) AS invalid \
    FROM addends GROUP BY grp ORDER BY grp";

/// The usage rows of the keys `:after` (excluded) to `:last` (within a session's range of keys:
/// the primary key's range), but those read from their lines.
pub const ENTRY_USAGES: &str = "SELECT key, provider, model, input, output, cache_read, cache_write, cost \
    FROM usage u WHERE key > :after AND key <= :last \
        AND NOT EXISTS (SELECT 1 FROM usage_lines l WHERE l.key = u.key) ORDER BY key";

/// The entries of the keys `:after` (excluded) to `:last` whose usage is read from their lines.
pub const USAGE_LINES: &str = "SELECT key FROM usage_lines WHERE key > :after AND key <= :last ORDER BY key";

/// The key of the session's last line in `:first..=:last` (its range of keys), else `:after`.
pub const LAST_ENTRY_KEY: &str = "SELECT coalesce((SELECT key FROM entries WHERE key BETWEEN :first AND :last \
    ORDER BY key DESC LIMIT 1), :after)";

impl Usage for Sqlite {
    fn usage_totals(
        &self,
        group: &str,
        since_ms: Option<i64>,
        until_ms: Option<i64>,
        cwd: Option<&str>,
    ) -> Result<Vec<Totals>> {
        let db = &self.conn;
        let rows = match crate::store::interface::usage::whole_days(since_ms, until_ms, cwd) {
            Some((since_day, until_day)) => {
                let st = db.prepare_cached(USAGE_TOTALS_BY_DAY)?;
                totals_of(st, named_params! { ":group": group, ":since_day": since_day, ":until_day": until_day })?
            }
            None => {
                let st = db.prepare_cached(USAGE_TOTALS)?;
                totals_of(st, named_params! { ":group": group, ":since": since_ms, ":until": until_ms, ":cwd": cwd })?
            }
        };
        Ok(rows)
    }

    fn entry_usages(&self, sid: SessionKey, after: EntryKey) -> Result<EntryUsages> {
        // Lines and the rows derived from them are written in one transaction (an append, an
        // import, a migration's maintenance at open): up to the last line read, they are all
        // here.
        let (first, last) = sid.range();
        let after = after.max(first - 1);
        // The last line first: rows written after it (another process appending) are not read,
        // and their lines are then after the key returned, so the caller asks again.
        let upto: EntryKey = self
            .conn
            .prepare_cached(LAST_ENTRY_KEY)?
            .query_row(named_params! { ":after": after, ":first": first, ":last": last }, |r| r.get(0))?;
        let range = named_params! { ":after": after, ":last": upto };
        let mut st = self.conn.prepare_cached(ENTRY_USAGES)?;
        // Columns by index, looked up once: pi's footer reads every row of a session (44,000
        // on a 100,000-entry one), and a lookup by name per value was a fifth of the read.
        let [k, p, m, i, o, cr, cw, c] =
            columns(&st, ["key", "provider", "model", "input", "output", "cache_read", "cache_write", "cost"])?;
        let rows = st
            .query_map(range, |r| {
                Ok(EntryUsage {
                    key: r.get(k)?,
                    provider: r.get(p)?,
                    model: r.get(m)?,
                    input: r.get(i)?,
                    output: r.get(o)?,
                    cache_read: r.get(cr)?,
                    cache_write: r.get(cw)?,
                    cost: r.get(c)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let in_line = self
            .conn
            .prepare_cached(USAGE_LINES)?
            .query_map(range, |r| r.get("key"))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(EntryUsages { rows, in_line, upto: Some(upto) })
    }
}

/// Reads the rows of [`USAGE_TOTALS`] or [`USAGE_TOTALS_BY_DAY`].
fn totals_of(mut st: rusqlite::CachedStatement<'_>, params: &[(&str, &dyn rusqlite::ToSql)]) -> Result<Vec<Totals>> {
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
