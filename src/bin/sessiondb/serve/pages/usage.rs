//! `/usage`: tokens and cost grouped by day, week, month, model, provider, project or session
//! over a chosen period (`sessiondb stats`'s numbers, from the same library call), as charts
//! and a table with totals; invalid usage values counted, not summed.

use super::super::cache::Cache;
use super::super::http::{link, Query, Response};
use super::layout::{self, Section};
use super::{chart, format};
use maud::html;
use sessiondb::db::Db;
use sessiondb::usage_stats::{self, GroupBy, StatsFilter};

const GROUPS: [&str; 7] = ["day", "week", "month", "model", "provider", "project", "session"];

/// Groups drawn in a chart at most (the largest by tokens for non-time groupings).
const CHART_ROWS: usize = 60;

pub fn page(db: &Db, cache: &Cache, q: &Query) -> anyhow::Result<Response> {
    let by_name = q.get("by").filter(|b| GROUPS.contains(b)).unwrap_or("day");
    let by = GroupBy::parse(by_name)?;
    let (since, until, project) = (q.get("since"), q.get("until"), q.get("project"));
    let filter = StatsFilter {
        since_ms: since.and_then(format::parse_day),
        until_ms: until.and_then(format::parse_day_end),
        cwd: project.map(str::to_owned),
    };
    let key = format!("{by_name}\u{0}{since:?}\u{0}{until:?}\u{0}{project:?}");
    let rows = cache.totals(key, || Ok(usage_stats::totals(db, Some(by), &filter)?))?;
    let total = usage_stats::sum(&rows);
    let time_like = matches!(by, GroupBy::Day | GroupBy::Week | GroupBy::Month);
    let mut charted: Vec<&usage_stats::Totals> = rows.iter().collect();
    if time_like {
        let skip = charted.len().saturating_sub(CHART_ROWS);
        charted.drain(..skip);
    } else {
        charted.sort_by_key(|r| std::cmp::Reverse(r.total_tokens));
        charted.truncate(CHART_ROWS);
    }
    let tokens: Vec<(String, f64, String)> =
        charted.iter().map(|r| (r.group.clone(), r.total_tokens as f64, format::int(r.total_tokens))).collect();
    let costs: Vec<(String, f64, String)> =
        charted.iter().map(|r| (r.group.clone(), r.cost, format::cost(r.cost))).collect();
    let body = html! {
        h1 { "Usage" }
        form.filters #usage-filters action="/usage" method="get" {
            label { "By "
                select name="by" { @for g in GROUPS { option value=(g) selected[g == by_name] { (g) } } }
            }
            label { "From " input type="date" name="since" value=[since]; }
            label { "To " input type="date" name="until" value=[until]; }
            @if let Some(p) = project { input type="hidden" name="project" value=(p); span.sub { "Project " (p) } }
            button type="submit" { "Show" }
        }
        nav.groups {
            @for g in GROUPS {
                a href=(link("/usage", &[("by", Some(g)), ("since", since), ("until", until), ("project", project)]))
                  class=[(g == by_name).then_some("current")] { (g) }
            }
        }
        @if rows.is_empty() { p { "No usage in this period." } }
        @else {
            div.charts {
                (chart::bars(&format!("Total tokens by {by_name}{}", if rows.len() > charted.len() { if time_like { " (latest)" } else { " (largest)" } } else { "" }), &tokens))
                (chart::bars(&format!("Cost by {by_name}"), &costs))
            }
        }
        table.usage #usage data-by=(by_name) {
            thead { tr {
                th { (by_name) } th.num { "Entries" } th.num { "Input" } th.num { "Output" } th.num { "Cache read" }
                th.num { "Cache write" } th.num { "Total tokens" } th.num { "Cost" } th.num { "Invalid values" }
            } }
            tbody {
                @for r in rows.iter() { (row(r, false)) }
            }
            tfoot { (row(&total, true)) }
        }
        @if total.invalid_usage_values > 0 {
            p.sub #invalid-note { (format::int(total.invalid_usage_values)) " usage value(s) left out: not plausible for one entry (tokens a whole number up to 10^9, a cost up to 10^6)." }
        }
    };
    Ok(Response::html(200, layout::page("Usage", Section::Usage, None, body)))
}

fn row(r: &usage_stats::Totals, total: bool) -> maud::Markup {
    html! {
        tr data-group=(r.group) data-cost=(r.cost) class=[total.then_some("total")] {
            @if total { th { "Total" } } @else { td.group { (r.group) } }
            td.num data-k="entries" { (format::int(r.entries)) }
            td.num data-k="input" { (format::int(r.input)) }
            td.num data-k="output" { (format::int(r.output)) }
            td.num data-k="cacheRead" { (format::int(r.cache_read)) }
            td.num data-k="cacheWrite" { (format::int(r.cache_write)) }
            td.num data-k="totalTokens" { (format::int(r.total_tokens)) }
            td.num data-k="cost" { (format::cost(r.cost)) }
            td.num data-k="invalidUsageValues" { (format::int(r.invalid_usage_values)) }
        }
    }
}
