//! Token and cost totals from the usage rows extracted on write, the same on every backend
//! ([`Usage`], implemented in `store::sqlite::usage` and `store::postgres::usage`).

use crate::error::Result;
use crate::store::keys::{EntryKey, SessionKey};
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

/// One entry's usage row, for a reader answering pi's usage fields without the line: an
/// assistant's `message.usage`, or the `usage` of a `usage`, `compaction` or `branch_summary`
/// entry.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryUsage {
    /// The entry's key.
    pub key: EntryKey,
    /// An assistant's or a `usage` entry's `provider`, when a string.
    pub provider: Option<String>,
    /// Its `model`, when a string.
    pub model: Option<String>,
    /// `input`.
    pub input: i64,
    /// `output`.
    pub output: i64,
    /// `cacheRead`.
    pub cache_read: i64,
    /// `cacheWrite`.
    pub cache_write: i64,
    /// `cost.total`.
    pub cost: f64,
}

/// What pi's usage walks read of a session's entries, without their lines (see
/// [`Usage::entry_usages`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EntryUsages {
    /// The usage rows given exactly by their values (`store::extract::UsageRow::exact`): the
    /// entries of `in_line` are not among them.
    pub rows: Vec<EntryUsage>,
    /// The entries whose `usage` or message `usage` must be read from the line
    /// (`store::extract::usage_in_line`).
    pub in_line: Vec<EntryKey>,
    /// The last key both cover: an entry up to it that is in neither has no `usage` and no
    /// message `usage`. `None`: nothing is known, read the lines.
    pub upto: Option<EntryKey>,
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

    /// The usages of session `sid`'s entries stored after key `after`, in key order: pi's
    /// usage totals (the footer, `/session`) read every entry's.
    fn entry_usages(&self, sid: SessionKey, after: EntryKey) -> Result<EntryUsages>;
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
