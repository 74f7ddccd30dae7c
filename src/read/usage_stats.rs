//! Token and cost totals over all sessions, from the usage rows extracted on write.

use crate::error::{Error, Result};
use crate::store::queries;
use rusqlite::{params, Connection};
use serde::Serialize;

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

/// Totals per group (all entries in one group when `by` is `None`). Only finite values in
/// `[0, 2^53]` are summed; the others are counted in `invalid_usage_values`. An entry copied into
/// another session by a fork or a branched session (same id and timestamp) counts once.
pub fn totals(conn: &Connection, by: Option<GroupBy>, f: &StatsFilter) -> Result<Vec<Totals>> {
    let mut st = conn.prepare_cached(queries::USAGE_TOTALS)?;
    let rows = st
        .query_map(params![by.map_or("all", GroupBy::key), f.since_ms, f.until_ms, f.cwd], |r| {
            Ok(Totals {
                group: r.get::<_, Option<String>>(0)?.unwrap_or_default(),
                entries: r.get(1)?,
                // total() sums as doubles: no overflow error on absurd token counts.
                input: r.get::<_, f64>(2)? as i64,
                output: r.get::<_, f64>(3)? as i64,
                cache_read: r.get::<_, f64>(4)? as i64,
                cache_write: r.get::<_, f64>(5)? as i64,
                total_tokens: r.get::<_, f64>(6)? as i64,
                cost: r.get(7)?,
                invalid_usage_values: r.get(8)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
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
