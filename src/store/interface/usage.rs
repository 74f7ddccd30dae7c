//! Token and cost totals from the usage rows extracted on write, the same on every backend
//! ([`Usage`], implemented in `store::sqlite::usage` and `store::postgres::usage`).

use crate::error::Result;
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

/// Usage totals.
pub trait Usage {
    /// Totals per group (`group` is one of the names [`USAGE_TOTALS`] takes), ordered by group.
    fn usage_totals(
        &self,
        group: &str,
        since_ms: Option<i64>,
        until_ms: Option<i64>,
        cwd: Option<&str>,
    ) -> Result<Vec<Totals>>;
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
