//! `sessiondb stats`.

use super::output;
use super::search::parse_when;
use sessiondb::usage_stats::{self, GroupBy, StatsFilter};
use std::io::Write;
use std::path::Path;

/// Token and cost totals from assistant messages, usage entries and compaction / branch
/// summaries. Entries copied by forks or branched sessions count once. A value that is not
/// plausible for one entry (tokens a whole number up to 10^9, a cost up to 10^6) is left out of
/// every sum and counted (`invalidUsageValues`).
#[derive(clap::Args)]
pub struct StatsArgs {
    /// Group by day, week, month, model, provider, project or session.
    #[arg(long, value_name = "GROUP")]
    by: Option<String>,
    /// Only entries since DATE (ISO date or time, or 7d, 12h, 30m).
    #[arg(long, value_name = "DATE")]
    since: Option<String>,
    /// Only entries before DATE.
    #[arg(long, value_name = "DATE")]
    until: Option<String>,
    /// Only sessions whose header cwd is DIR.
    #[arg(long, value_name = "DIR")]
    cwd: Option<String>,
    /// Print JSON: `{"groups": [...], "total": {...}}`.
    #[arg(long)]
    json: bool,
}

pub fn run(db: &Path, a: StatsArgs) -> anyhow::Result<i32> {
    let conn = sessiondb::db::open_existing(db)?;
    let by = a.by.as_deref().map(GroupBy::parse).transpose()?;
    let filter = StatsFilter {
        since_ms: a.since.as_deref().map(parse_when).transpose()?,
        until_ms: a.until.as_deref().map(parse_when).transpose()?,
        cwd: a.cwd.map(|c| sessiondb::internals::layout::resolve_path(&c).to_string_lossy().into_owned()),
    };
    let rows = usage_stats::totals(&conn, by, &filter)?;
    let total = usage_stats::sum(&rows);
    if a.json {
        output::print_json(&serde_json::json!({"groups": rows, "total": total}))?;
        return Ok(0);
    }
    let mut out = std::io::stdout().lock();
    let width = rows.iter().map(|r| r.group.chars().count()).max().unwrap_or(5).clamp(5, 60);
    writeln!(
        out,
        "{:<width$}  {:>8}  {:>13}  {:>11}  {:>13}  {:>12}  {:>13}  {:>10}",
        "GROUP", "ENTRIES", "INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "TOTAL", "COST"
    )?;
    for r in rows.iter().chain(std::iter::once(&total)) {
        let group: String = r.group.chars().take(width).collect();
        writeln!(
            out,
            "{group:<width$}  {:>8}  {:>13}  {:>11}  {:>13}  {:>12}  {:>13}  {:>10.4}",
            r.entries, r.input, r.output, r.cache_read, r.cache_write, r.total_tokens, r.cost
        )?;
    }
    if total.invalid_usage_values > 0 {
        writeln!(
            out,
            "\n{} usage value(s) left out: not plausible for one entry (tokens a whole number up to 10^9, a cost up to 10^6; corrupt or hand-edited entries).",
            total.invalid_usage_values
        )?;
    }
    Ok(0)
}
