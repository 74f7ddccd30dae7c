//! `/`: every project's sessions, newest first, filtered by project, date and name and paged;
//! with `?q=`, search hits with their snippets, each a link to its entry.

use super::super::cache::{Cache, Listed};
use super::super::http::{link, Query, Response};
use super::format;
use super::layout::{self, Section};
use crate::transcript::html::anchor;
use maud::{html, Markup};
use sessiondb::db::Db;
use sessiondb::search::{self, SearchFilter};
use std::collections::BTreeMap;

/// Sessions on one page.
pub const PAGE: usize = 50;

/// Search hits shown.
pub const HITS: i64 = 50;

/// The filters the form sets, as given.
struct Filters<'a> {
    project: Option<&'a str>,
    origin: Option<&'a str>,
    since: Option<&'a str>,
    until: Option<&'a str>,
    name: Option<&'a str>,
}

impl<'a> Filters<'a> {
    fn of(q: &'a Query) -> Filters<'a> {
        Filters {
            project: q.get("project"),
            origin: q.get("origin"),
            since: q.get("since"),
            until: q.get("until"),
            name: q.get("name"),
        }
    }

    fn pairs(&self) -> Vec<(&'static str, Option<&'a str>)> {
        vec![
            ("project", self.project),
            ("origin", self.origin),
            ("since", self.since),
            ("until", self.until),
            ("name", self.name),
        ]
    }

    fn keeps(&self, l: &Listed, since: Option<i64>, until: Option<i64>, name: &Option<String>) -> bool {
        let s = &l.info;
        self.project.is_none_or(|p| s.cwd == p)
            && self.origin.is_none_or(|o| l.origin.as_deref() == Some(o))
            && since.is_none_or(|t| s.modified_ms.is_some_and(|m| m >= t))
            && until.is_none_or(|t| s.modified_ms.is_some_and(|m| m < t))
            && name.as_deref().is_none_or(|n| {
                s.name.as_deref().is_some_and(|x| x.to_lowercase().contains(n))
                    || format::head(&s.first_message, 2000).to_lowercase().contains(n)
                    || s.id.starts_with(n)
            })
    }
}

pub fn page(db: &Db, cache: &Cache, q: &Query) -> anyhow::Result<Response> {
    let f = Filters::of(q);
    let since = f.since.and_then(format::parse_day);
    let until = f.until.and_then(format::parse_day_end);
    if let Some(text) = q.get("q") {
        return search_page(db, text, &f, since);
    }
    // Every origin's sessions on a server (pushed from other machines too); the origin is shown
    // where sessions were pushed.
    let all = cache.list(|| {
        let infos = sessiondb::discovery::list_everything(db)?;
        let pushed = infos.iter().any(|i| !i.origin.is_empty());
        Ok(infos
            .into_iter()
            .map(|info| {
                let origin = pushed.then(|| info.origin.clone());
                Listed { info, origin }
            })
            .collect())
    })?;
    let pushed = all.iter().any(|l| l.origin.is_some());
    let mut projects: BTreeMap<&str, usize> = BTreeMap::new();
    let mut origins: BTreeMap<&str, usize> = BTreeMap::new();
    for s in all.iter() {
        *projects.entry(s.info.cwd.as_str()).or_default() += 1;
        if let Some(o) = &s.origin {
            *origins.entry(o.as_str()).or_default() += 1;
        }
    }
    let name = f.name.map(str::to_lowercase);
    let kept: Vec<&Listed> = all.iter().filter(|s| f.keeps(s, since, until, &name)).collect();
    let pages = kept.len().div_ceil(PAGE).max(1);
    let page_no = q.get("page").and_then(|p| p.parse::<usize>().ok()).unwrap_or(1).clamp(1, pages);
    let shown = &kept[(page_no - 1) * PAGE..(page_no * PAGE).min(kept.len())];
    let page_link = |n: usize| {
        let n = n.to_string();
        let mut pairs = f.pairs();
        pairs.push(("page", Some(n.as_str())));
        link("/", &pairs)
    };
    let body = html! {
        h1 { "Sessions" }
        (filter_form(&f, &projects, &origins))
        p.summary #count {
            @if kept.is_empty() { "No session matches." }
            @else { "Sessions " (format::int(((page_no - 1) * PAGE + 1) as i64)) "–" (format::int(((page_no - 1) * PAGE + shown.len()) as i64)) " of " (format::int(kept.len() as i64)) }
            @if kept.len() != all.len() { " (" (format::int(all.len() as i64)) " in all)" }
        }
        table.sessions #sessions {
            thead { tr { th { "Session" } th { "Project" } @if pushed { th { "Origin" } } th.num { "Messages" } th { "Last activity" } } }
            tbody {
                @for l in shown {
                    @let s = &l.info;
                    tr data-session-id=(s.id) {
                        td.title {
                            a href=(super::session::base(&s.id)) { (format::short(s.name.as_deref().unwrap_or(&s.first_message), 120)) }
                            @if s.name.is_some() { span.sub { (format::short(&s.first_message, 100)) } }
                            span.sub.mono { (s.id) }
                        }
                        td.project { a href=(link("/", &[("project", Some(s.cwd.as_str()))])) { (s.cwd) } }
                        @if let Some(o) = &l.origin {
                            td.origin { a href=(link("/", &[("origin", Some(o.as_str()))])) { (origin_name(o)) } }
                        }
                        td.num { (format::int(s.message_count)) }
                        td { time datetime=(format::iso(s.modified_ms)) { (format::time(s.modified_ms)) } }
                    }
                }
            }
        }
        @if pages > 1 {
            nav.pager {
                @if page_no > 1 { a rel="prev" href=(page_link(page_no - 1)) { "← Newer" } }
                span { "Page " (page_no) " of " (pages) }
                @if page_no < pages { a rel="next" href=(page_link(page_no + 1)) { "Older →" } }
            }
        }
    };
    Ok(Response::html(200, layout::page("Sessions", Section::Sessions, None, body)))
}

/// How an origin is shown: the machine a session was pushed from, or this server.
fn origin_name(o: &str) -> &str {
    if o.is_empty() {
        "(this server)"
    } else {
        o
    }
}

fn filter_form(f: &Filters<'_>, projects: &BTreeMap<&str, usize>, origins: &BTreeMap<&str, usize>) -> Markup {
    html! {
        form.filters #filters action="/" method="get" {
            label { "Project "
                select name="project" {
                    option value="" { "All projects" }
                    @for (p, n) in projects.iter().take(2000) {
                        option value=(p) selected[f.project == Some(*p)] { (p) " (" (n) ")" }
                    }
                }
            }
            @if !origins.is_empty() {
                label { "Origin "
                    select name="origin" {
                        option value="" { "All origins" }
                        @for (o, n) in origins.iter().take(2000) {
                            option value=(o) selected[f.origin == Some(*o)] { (origin_name(o)) " (" (n) ")" }
                        }
                    }
                }
            }
            label { "From " input type="date" name="since" value=[f.since]; }
            label { "To " input type="date" name="until" value=[f.until]; }
            label { "Name " input type="text" name="name" value=[f.name] placeholder="name or first message"; }
            button type="submit" { "Filter" }
            @if f.project.is_some() || f.origin.is_some() || f.since.is_some() || f.until.is_some() || f.name.is_some() {
                a.clear href="/" { "Clear" }
            }
        }
    }
}

fn search_page(db: &Db, text: &str, f: &Filters<'_>, since: Option<i64>) -> anyhow::Result<Response> {
    let filter = SearchFilter { cwd: f.project.map(str::to_owned), role: None, since_ms: since, limit: HITS };
    let started = std::time::Instant::now();
    let hits = search::search(db, text, &filter);
    let took = started.elapsed();
    let body = match hits {
        Err(e) => html! { h1 { "Search" } p.error { (e.to_string()) } },
        Ok(hits) => {
            html! {
                h1 { "Search" }
                p.summary #count {
                    @if hits.is_empty() { "No entry contains every term." }
                    @else { (hits.len()) " hits" @if hits.len() as i64 == HITS { " (the best " (HITS) ")" } }
                    " · " (format!("{:.0} ms", took.as_secs_f64() * 1000.0))
                }
                ol.hits #hits {
                    @for h in &hits {
                        li.hit {
                            // By ids: the session's page with the branch to the entry, at the entry.
                            @let base = super::session::base(&h.session_id);
                            @let href = match &h.entry_id {
                                Some(e) => format!("{}{}", link(&base, &[("leaf", Some(e.as_str()))]), anchor(e)),
                                None => base,
                            };
                            div.meta {
                                span.role { (h.role) }
                                " · " time { (format::time(h.timestamp)) }
                                " · " span.project { (h.cwd.as_deref().unwrap_or("")) }
                            }
                            a.snippet href=(href) { (snippet(&h.snippet)) }
                            div.sub.mono { (h.session_id) @if let Some(e) = &h.entry_id { " · " (e) } }
                        }
                    }
                }
            }
        }
    };
    Ok(Response::html(200, layout::page("Search", Section::Sessions, Some(text), body)))
}

/// A snippet with its matches (between `[` and `]`, as search marks them) highlighted.
fn snippet(s: &str) -> Markup {
    let mut parts = Vec::new();
    let mut rest = s;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']') else { break };
        parts.push((false, &rest[..open]));
        parts.push((true, &rest[open + 1..open + close]));
        rest = &rest[open + close + 1..];
    }
    parts.push((false, rest));
    html! { @for (hit, p) in parts { @if hit { mark { (p) } } @else { (p) } } }
}
