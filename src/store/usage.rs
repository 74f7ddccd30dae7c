//! Token and cost totals from the usage rows extracted on write, the same on every backend
//! ([`Usage`], implemented in `store::sqlite::usage` and `store::postgres::usage`).

use crate::error::Result;
use crate::store::handle::Db;

pub use crate::store::interface::usage::*;

/// Totals per group (`group` is one of the names [`USAGE_TOTALS`] takes), ordered by group.
pub fn totals(
    db: &Db,
    group: &str,
    since_ms: Option<i64>,
    until_ms: Option<i64>,
    cwd: Option<&str>,
) -> Result<Vec<Totals>> {
    db.store().usage_totals(group, since_ms, until_ms, cwd)
}

/// Milliseconds in a day.
const DAY_MS: i64 = 86_400_000;

/// The period as day numbers (UTC days since 1970-01-01) when the totals kept per day answer
/// it: no project chosen (copies of an entry then count for the first session of that
/// project, which the kept totals do not know) and `since`/`until` at the start of a day after
/// 1970-01-01 (an entry's day is that of its second, ts_ms / 1000 rounded toward zero, which
/// differs from its millisecond's only before 1970).
pub(crate) fn whole_days(
    since_ms: Option<i64>,
    until_ms: Option<i64>,
    cwd: Option<&str>,
) -> Option<(Option<i64>, Option<i64>)> {
    let day = |ms: Option<i64>| match ms {
        None => Some(None),
        Some(ms) if ms > 0 && ms % DAY_MS == 0 => Some(Some(ms / DAY_MS)),
        Some(_) => None,
    };
    match cwd {
        None => Some((day(since_ms)?, day(until_ms)?)),
        Some(_) => None,
    }
}
