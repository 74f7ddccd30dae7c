//! Token and cost totals over all sessions, from the usage rows extracted on write.

use crate::error::{Error, Result};
use crate::store::handle::Db;

/// How totals are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupBy {
    /// Calendar day (UTC).
    Day,
    /// Week of the year (UTC, weeks start on Monday).
    Week,
    /// Calendar month (UTC).
    Month,
    /// Model.
    Model,
    /// Provider.
    Provider,
    /// Project (header cwd).
    Project,
    /// Session.
    Session,
}

impl GroupBy {
    /// Parses `day`, `week`, `month`, `model`, `provider`, `project` or `session`.
    pub fn parse(s: &str) -> Result<Self> {
        Ok(match s {
            "day" => GroupBy::Day,
            "week" => GroupBy::Week,
            "month" => GroupBy::Month,
            "model" => GroupBy::Model,
            "provider" => GroupBy::Provider,
            "project" => GroupBy::Project,
            "session" => GroupBy::Session,
            other => {
                return Err(Error::InvalidArgument(format!(
                    "cannot group by {other:?}: use day, week, month, model, provider, project or session"
                )))
            }
        })
    }

    fn key(self) -> &'static str {
        match self {
            GroupBy::Day => "day",
            GroupBy::Week => "week",
            GroupBy::Month => "month",
            GroupBy::Model => "model",
            GroupBy::Provider => "provider",
            GroupBy::Project => "project",
            GroupBy::Session => "session",
        }
    }
}

/// Filters for [`totals`].
#[derive(Debug, Clone, Default)]
pub struct StatsFilter {
    /// Entries at or after this time (ms).
    pub since_ms: Option<i64>,
    /// Entries before this time (ms).
    pub until_ms: Option<i64>,
    /// Sessions with this header cwd.
    pub cwd: Option<String>,
}

pub use crate::store::interface::usage::Totals;

/// Totals per group (all entries in one group when `by` is `None`). Only values plausible for
/// one entry (tokens a whole number up to 10^9, a cost up to 10^6) are summed; the others are counted in `invalid_usage_values`. An entry copied into
/// another session by a fork or a branched session (same id and timestamp) counts once.
pub fn totals(db: &Db, by: Option<GroupBy>, f: &StatsFilter) -> Result<Vec<Totals>> {
    db.store().usage_totals(by.map_or("all", GroupBy::key), f.since_ms, f.until_ms, f.cwd.as_deref())
}

/// The sum of several groups.
pub fn sum(rows: &[Totals]) -> Totals {
    rows.iter().fold(Totals { group: "total".into(), ..Totals::default() }, |mut t, r| {
        t.entries = t.entries.saturating_add(r.entries);
        t.input = t.input.saturating_add(r.input);
        t.output = t.output.saturating_add(r.output);
        t.cache_read = t.cache_read.saturating_add(r.cache_read);
        t.cache_write = t.cache_write.saturating_add(r.cache_write);
        t.total_tokens = t.total_tokens.saturating_add(r.total_tokens);
        t.cost += r.cost;
        t.invalid_usage_values = t.invalid_usage_values.saturating_add(r.invalid_usage_values);
        t
    })
}
