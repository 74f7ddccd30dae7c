//! `/s/ID`: one session, by its header id (`#ENTRY` names an entry). The path to the chosen
//! leaf (default: the last entry) as a transcript, its tail first and earlier entries on
//! demand (`?before=ID`), long messages folded, the tree beside it; the commands that resume
//! it; its exports (`/s/ID/export.jsonl`, the branch as `export.md` and `export.html`), an
//! entry in full (`/s/ID/full?id=ENTRY`) and its exact line (`/s/ID/entry?id=ENTRY`).

use super::super::cache::Cache;
use super::super::http::{link, Body, Query, Response};
use super::layout::{self, Section};
use super::{format, tree};
use crate::transcript::fold::Mode;
use crate::transcript::html::{self as transcript, encode, View};
use maud::html;
use sessiondb::db::Db;
use sessiondb::tree::SessionTree;
use sessiondb::SessionKey;

/// The session a page is about: its key and the header id its address holds.
pub struct Session {
    pub sid: SessionKey,
    pub id: String,
}

/// `/s/ID`, the address of the session with header id `id`.
pub fn base(id: &str) -> String {
    format!("/s/{}", encode(id))
}

/// Entries shown at once: the tail of the path, then this many more per "earlier" step.
pub const WINDOW: i64 = 100;

/// Tree nodes shown at most.
pub const TREE_NODES: usize = 400;

/// Lines above which the tree is not drawn with the first screen (reading every id of a
/// 100,000-entry session takes longer than the transcript's tail): the page's script fetches
/// it from `/s/SID/tree` right after, or a link opens it.
pub const LAZY_TREE: i64 = 20_000;

pub fn page(db: &Db, cache: &Cache, session: &Session, q: &Query) -> anyhow::Result<Response> {
    let sid = session.sid;
    let Ok(t) = SessionTree::open(db, sid) else { return Ok(layout::not_found()) };
    let Some(info) = sessiondb::discovery::info(db, sid)? else {
        return Ok(layout::not_found());
    };
    let leaf = match q.get("leaf") {
        Some(id) => t.entry(id)?.or(t.last_entry()?),
        None => t.last_entry()?,
    };
    let default_leaf = t.last_entry()?.and_then(|r| r.id);
    let leaf_id = leaf.as_ref().and_then(|r| r.id.clone());
    // The window: the tail of the path, or the entries before `before` on it.
    let before = q.get("before").map(|id| t.entry(id)).transpose()?.flatten();
    let start = match (&before, &leaf) {
        (Some(b), _) => b.parent_key,
        (None, Some(l)) => Some(l.key),
        (None, None) => None,
    };
    let path = match start {
        Some(k) => t.walk_up(k, None, WINDOW)?,
        None => sessiondb::tree::Path { entries: Vec::new(), cycle: None },
    };
    let earlier = path.entries.first().and_then(|r| r.parent_key).is_some() && path.cycle.is_none();
    let active = leaf.as_ref().map(|r| r.key);
    let outline = if info.last_seq > LAZY_TREE {
        cache.kept_outline((sid, active))
    } else {
        Some(cache.outline((sid, active), || Ok(sessiondb::outline::outline(db, sid, active, TREE_NODES)?))?)
    };
    let base = base(&session.id);
    let full = |id: &str| link(&format!("{base}/full"), &[("id", Some(id))]);
    let view = View { fold: Mode::Out, thinking: true, full: &full };
    let leaf_param = leaf_id.as_deref().filter(|id| Some(*id) != default_leaf.as_deref());
    let title = format::short(info.name.as_deref().unwrap_or(&info.first_message), 80);
    let body = html! {
        div.session-head {
            h1 { (title) }
            dl.facts {
                dt { "Project" } dd { a href=(link("/", &[("project", Some(info.cwd.as_str()))])) { (info.cwd) } }
                dt { "Session" } dd.mono #session-id { (info.id) }
                dt { "File" } dd.mono { (info.path) }
                dt { "Messages" } dd { (format::int(info.message_count)) }
                dt { "Lines" } dd { (format::int(info.last_seq)) }
                dt { "Last activity" } dd { (format::time(info.modified_ms)) }
            }
            div.actions {
                @for cmd in [format!("pi --session {}", info.id), format!("sessiondb-pi --session {}", info.id)] {
                    span.command { code { (cmd) } button.copy type="button" data-copy=(cmd) { "Copy" } }
                }
                a.button href={ (base) "/export.jsonl" } download { "Download JSONL" }
                a.button #export-md href=(link(&format!("{base}/export.md"), &[("leaf", leaf_param)])) download { "This branch as Markdown" }
                a.button #export-html href=(link(&format!("{base}/export.html"), &[("leaf", leaf_param)])) download { "This branch as HTML" }
            }
        }
        div.session-body {
            section.transcript #transcript data-leaf=[leaf_id.as_deref()] {
                h2 {
                    "Branch to " @if let Some(id) = &leaf_id { code { (id) } } @else { "(empty)" }
                    @if leaf_param.is_some() { " · " a href=(base) { "back to the last entry" } }
                }
                @if let Some(c) = &path.cycle { p.warning { "Parent cycle: entry " code { (c) } " is its own ancestor; the path stops before it." } }
                @if earlier {
                    @let first = path.entries.first().and_then(|r| r.id.as_deref());
                    p.more { a #earlier href=(link(&base, &[("leaf", leaf_param), ("before", first)])) { "↑ Earlier entries" } }
                }
                @if before.is_some() {
                    p.more { a href=(link(&base, &[("leaf", leaf_param)])) { "↓ Back to the latest entries" } }
                }
                @if path.entries.is_empty() { p { "This session has no entries." } }
                @for row in &path.entries { (transcript::entry(row, view)) }
                @if before.is_some() {
                    p.more { a href=(link(&base, &[("leaf", leaf_param)])) { "↓ Later entries" } }
                }
            }
            aside.tree #tree {
                @match &outline {
                    Some(o) => (tree::outline(&base, o)),
                    None => {
                        @let src = link(&format!("{base}/tree"), &[("leaf", leaf_id.as_deref())]);
                        h2 { "Tree" }
                        p #tree-lazy data-src=(src) { a href=(src) { "The tree of " (format::int(info.last_seq)) " lines" } " is loading…" }
                    }
                }
            }
        }
    };
    Ok(Response::html(200, layout::page(&title, Section::Sessions, None, body)))
}

/// The session as pi JSONL, written to a temporary file and streamed (memory stays bounded
/// for a session of any size).
pub fn export(db: &Db, session: &Session) -> anyhow::Result<Response> {
    let sid = session.sid;
    let Some(info) = sessiondb::discovery::info(db, sid)? else {
        return Ok(layout::not_found());
    };
    let mut file = tempfile::tempfile()?;
    let mut out = std::io::BufWriter::new(&mut file);
    let bytes = sessiondb::export::write_session(db, sid, &mut out)?;
    use std::io::Write;
    out.flush()?;
    drop(out);
    use std::io::Seek;
    file.rewind()?;
    Ok(Response {
        status: 200,
        content_type: "application/x-ndjson",
        body: Body::Stream(Box::new(file), usize::try_from(bytes).ok()),
        headers: vec![("Content-Disposition", attachment(&info.id, "jsonl"))],
    })
}

/// `attachment; filename="ID.EXT"`, the id's letters, digits, `-` and `_` only.
fn attachment(id: &str, ext: &str) -> String {
    let name: String = id.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').collect();
    format!("attachment; filename=\"{name}.{ext}\"")
}

/// `/s/ID/export.md` and `/s/ID/export.html?leaf=ENTRY`: the branch as `sessiondb export
/// --format markdown|html --leaf ENTRY` writes it, as a download.
pub fn transcript_export(db: &Db, session: &Session, name: &str, q: &Query) -> anyhow::Result<Response> {
    let Some(info) = sessiondb::discovery::info(db, session.sid)? else {
        return Ok(layout::not_found());
    };
    let Ok(t) = SessionTree::open(db, session.sid) else { return Ok(layout::not_found()) };
    let leaf = match q.get("leaf") {
        Some(id) => t.entry(id)?.or(t.last_entry()?),
        None => t.last_entry()?,
    };
    let rows = match leaf {
        Some(row) => t.path_to(&row)?.entries,
        None => Vec::new(),
    };
    let (body, content_type, ext) = if name == "export.md" {
        (crate::transcript::markdown::document(&info, &rows, false), "text/markdown; charset=utf-8", "md")
    } else {
        (crate::transcript::document::page(&info, &rows, false), "text/html; charset=utf-8", "html")
    };
    Ok(Response {
        status: 200,
        content_type,
        body: Body::Bytes(body.into_bytes()),
        headers: vec![("Content-Disposition", attachment(&info.id, ext))],
    })
}

/// `/s/ID/full?id=ENTRY`: one entry with nothing folded (what a folded entry links to).
pub fn full_entry(db: &Db, session: &Session, q: &Query) -> anyhow::Result<Response> {
    let Ok(t) = SessionTree::open(db, session.sid) else { return Ok(layout::not_found()) };
    let Some(row) = q.get("id").map(|id| t.entry(id)).transpose()?.flatten() else {
        return Ok(layout::not_found());
    };
    let none = |_: &str| String::new();
    let view = View { fold: Mode::None, thinking: true, full: &none };
    let base = base(&session.id);
    let id = row.id.clone().unwrap_or_default();
    let title = format!("Entry {}", format::short(&id, 40));
    let body = html! {
        p.more {
            a href={ (link(&base, &[("leaf", Some(id.as_str()))])) (transcript::anchor(&id)) } { "↩ Back to the session" }
            " · " a href=(link(&format!("{base}/entry"), &[("id", Some(id.as_str()))])) { "the exact line" }
        }
        section.transcript #transcript { (transcript::entry(&row, view)) }
    };
    Ok(Response::html(200, layout::page(&title, Section::Sessions, None, body)))
}

/// One entry's exact line, as plain text (what a cut block leaves out).
pub fn raw_entry(db: &Db, session: &Session, q: &Query) -> anyhow::Result<Response> {
    let Ok(t) = SessionTree::open(db, session.sid) else { return Ok(layout::not_found()) };
    match q.get("id").map(|id| t.entry(id)).transpose()?.flatten() {
        Some(row) => Ok(Response::text(200, row.body)),
        None => Ok(layout::not_found()),
    }
}

/// `/s/SID/tree?leaf=ID`: the tree beside the path to ID, alone (what a huge session's page
/// fetches after its first screen).
pub fn tree_fragment(db: &Db, cache: &Cache, session: &Session, q: &Query) -> anyhow::Result<Response> {
    let sid = session.sid;
    let Ok(t) = SessionTree::open(db, sid) else { return Ok(layout::not_found()) };
    let leaf = match q.get("leaf") {
        Some(id) => t.entry(id)?.or(t.last_entry()?),
        None => t.last_entry()?,
    };
    let active = leaf.as_ref().map(|r| r.key);
    let outline = cache.outline((sid, active), || Ok(sessiondb::outline::outline(db, sid, active, TREE_NODES)?))?;
    Ok(Response::html(200, tree::outline(&base(&session.id), &outline)))
}
