//! One entry of a transcript as HTML: messages by role (thinking, tool calls and results
//! collapsed), bash executions, images, compaction and branch summaries, custom messages,
//! labels, model and thinking-level changes; anything else as its JSON. Every value is escaped
//! by maud; an entry longer than a screen is folded (`fold`). serve's session page and
//! `export --format html` both draw entries here, with the one stylesheet (`style.css`).

use super::fold::{Budget, Mode};
use super::format;
use maud::{html, Markup};
use sessiondb::json::{Object, Value};
use sessiondb::tree::Row;

/// Image types shown inline (as `data:` URLs, which both CSPs allow for images only); SVG,
/// which can hold script, is not among them.
const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// How entries are drawn.
#[derive(Clone, Copy)]
pub struct View<'a> {
    /// What becomes of an entry's text past a screen.
    pub fold: Mode,
    /// Whether thinking blocks are shown.
    pub thinking: bool,
    /// With [`Mode::Out`]: the address of an entry in full, given its id (`{id}` replaced).
    pub full: &'a dyn Fn(&str) -> String,
}

struct Ctx<'a> {
    view: View<'a>,
    budget: Budget,
}

fn s<'v>(o: &'v Object, k: &str) -> Option<&'v str> {
    o.get(k).and_then(Value::as_str)
}

pub fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_str().into_owned(),
        other => other.to_json(),
    }
}

/// `#ID`: the fragment naming an entry (its id, percent-encoded where a URL needs it).
pub fn anchor(id: &str) -> String {
    format!("#{}", encode(id))
}

/// `s` percent-encoded but for RFC 3986's unreserved characters: safe in a path segment, a
/// query value or a fragment.
pub fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A text (`div.text`, or `pre.json` for JSON), folded past the entry's budget.
fn text(cx: &Ctx, t: &str, json: bool) -> Markup {
    let (shown, rest) = cx.budget.split(t);
    let block = |t: &str| {
        if json {
            html! { pre.json { (t) } }
        } else {
            html! { div.text { (t) } }
        }
    };
    html! {
        @if !shown.is_empty() || rest.is_empty() { (block(shown)) }
        @if !rest.is_empty() && cx.view.fold == Mode::Closed {
            details.fold {
                summary { "Show the rest: " (format::int(rest.len() as i64)) " more bytes" }
                (block(rest))
            }
        }
    }
}

fn json(cx: &Ctx, v: &Value) -> Markup {
    text(cx, &v.to_json(), true)
}

/// Content: a string, or blocks (text, thinking, tool calls, images).
fn content(cx: &Ctx, c: Option<&Value>) -> Markup {
    match c {
        None | Some(Value::Null) => html! {},
        Some(Value::String(t)) => text(cx, &t.to_str(), false),
        Some(Value::Array(blocks)) => html! {
            @for b in blocks { (block(cx, b)) }
        },
        Some(other) => json(cx, other),
    }
}

fn block(cx: &Ctx, b: &Value) -> Markup {
    let Some(o) = b.as_object() else { return json(cx, b) };
    match s(o, "type") {
        Some("text") => text(cx, &o.get("text").map(text_of).unwrap_or_default(), false),
        Some("thinking") if !cx.view.thinking => html! {},
        Some("thinking") => html! {
            details.thinking { summary { "Thinking" } (text(cx, &o.get("thinking").map(text_of).unwrap_or_default(), false)) }
        },
        Some("toolCall") => html! {
            details.tool-call {
                summary { "Tool call " code { (s(o, "name").unwrap_or("?")) } }
                (text(cx, &o.get("arguments").map(Value::to_json).unwrap_or_default(), false))
            }
        },
        Some("image") => image(o),
        _ => json(cx, b),
    }
}

fn image(o: &Object) -> Markup {
    let mime = s(o, "mimeType").unwrap_or("");
    let data = s(o, "data").unwrap_or("");
    let base64 = !data.is_empty() && data.bytes().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'='));
    if IMAGE_TYPES.contains(&mime) && base64 {
        html! { img.shot src={ "data:" (mime) ";base64," (data) } alt="image in the session"; }
    } else {
        html! { p.sub { "[image: " (format::short(mime, 40)) ", not shown]" } }
    }
}

pub fn role_title(role: &str) -> &str {
    match role {
        "user" => "User",
        "assistant" => "Assistant",
        "toolResult" => "Tool result",
        "bashExecution" => "Bash",
        "custom" => "Custom message",
        "branchSummary" => "Branch summary",
        "compactionSummary" => "Compaction summary",
        other => other,
    }
}

fn message(cx: &Ctx, m: &Object) -> Markup {
    let role = s(m, "role").unwrap_or("");
    match role {
        "toolResult" => html! {
            details.tool-result.error[m.get("isError").is_some_and(Value::is_truthy)] {
                summary { "Result of " code { (s(m, "toolName").unwrap_or("?")) } }
                (content(cx, m.get("content")))
            }
        },
        "bashExecution" => html! {
            div.bash {
                pre.command { "$ " (s(m, "command").unwrap_or("")) }
                details { summary { "Output" @if let Some(Value::Number(code)) = m.get("exitCode") { " (exit " (code) ")" } }
                    (text(cx, &m.get("output").map(text_of).unwrap_or_default(), false)) }
            }
        },
        "branchSummary" | "compactionSummary" => text(cx, &m.get("summary").map(text_of).unwrap_or_default(), false),
        _ => html! {
            (content(cx, m.get("content")))
            @if let Some(e) = s(m, "errorMessage") { p.error { (format::short(e, 2000)) } }
        },
    }
}

/// The entry as an `<article id="ID">` (its entry id: `#ID` links to it).
pub fn entry(row: &Row, view: View) -> Markup {
    let cx = Ctx { view, budget: Budget::new(view.fold) };
    let parsed = row.parse().value;
    let id = row.id.as_deref().unwrap_or("");
    let kind = row.kind.as_deref().unwrap_or("");
    let role = row.role.as_deref().unwrap_or("");
    let Some(o) = parsed.as_object() else {
        return html! {
            article.entry.unparsed id=(id) data-entry-id=(id) data-type=(kind) {
                header { span.kind { "Entry" } } p.sub { "A line too deeply nested to show as a tree; the line:" }
                (text(&cx, &row.body, true))
                (folded(&cx, id))
            }
        };
    };
    let message = o.get("message").and_then(Value::as_object);
    let (title, body): (String, Markup) = match kind {
        "message" => match message {
            Some(m) => (role_title(role).to_string(), self::message(&cx, m)),
            None => ("Message".into(), html! {}),
        },
        "thinking_level_change" => (
            "Thinking level".into(),
            html! { p.change { "Thinking level: " code { (s(o, "thinkingLevel").unwrap_or("?")) } } },
        ),
        "model_change" => (
            "Model".into(),
            html! { p.change { "Model: " code { (s(o, "provider").unwrap_or("?")) "/" (s(o, "modelId").unwrap_or("?")) } } },
        ),
        "compaction" => (
            "Compaction".into(),
            html! {
                details.summary-block open { summary { "Summary of the earlier conversation"
                    @if let Some(Value::Number(t)) = o.get("tokensBefore") { " (" (format::int(*t as i64)) " tokens before)" } }
                    (text(&cx, &o.get("summary").map(text_of).unwrap_or_default(), false)) }
            },
        ),
        "branch_summary" => (
            "Branch summary".into(),
            html! {
                details.summary-block open { summary { "Summary of the branch left" } (text(&cx, &o.get("summary").map(text_of).unwrap_or_default(), false)) }
            },
        ),
        "custom_message" => {
            (format!("Custom message ({})", s(o, "customType").unwrap_or("?")), content(&cx, o.get("content")))
        }
        "custom" => (
            format!("Custom entry ({})", s(o, "customType").unwrap_or("?")),
            html! {
                details { summary { "Data" } (json(&cx, o.get("data").unwrap_or(&Value::Null))) }
            },
        ),
        "label" => (
            "Label".into(),
            html! { p.change {
                @match o.get("label").filter(|l| l.is_truthy()) {
                    Some(l) => { "Label " span.label { (format::short(&text_of(l), 200)) } " on " }
                    None => "Label cleared on ",
                }
                @let target = s(o, "targetId").unwrap_or("");
                a href=(anchor(target)) { code { (target) } }
            } },
        ),
        "session_info" => (
            "Session name".into(),
            html! { p.change { "Named: " (format::short(&o.get("name").map(text_of).unwrap_or_default(), 500)) } },
        ),
        _ => (
            if kind.is_empty() { "Entry".into() } else { kind.to_string() },
            html! {
                details { summary { "Entry" } (json(&cx, &parsed)) }
            },
        ),
    };
    let model = message.and_then(|m| s(m, "model"));
    html! {
        article class={ "entry kind-" (kind) " role-" (role) } id=(id) data-entry-id=(id) data-type=(kind) data-role=(role) {
            header {
                span.kind { (title) }
                @if let Some(m) = model { " " span.model { (m) } }
                " " time { (format::time(row.ts_ms)) }
                " " a.anchor href=(anchor(id)) title="Link to this entry" { code { (format::short(id, 12)) } }
            }
            (body)
            (folded(&cx, id))
        }
    }
}

/// After an entry whose rest was left out: its size and the link to all of it.
fn folded(cx: &Ctx, id: &str) -> Markup {
    let n = cx.budget.folded();
    html! {
        @if n > 0 && cx.view.fold == Mode::Out {
            p.fold { "Folded: " (format::int(n as i64)) " more bytes. " a.unfold href=((cx.view.full)(id)) { "Show all of it" } }
        }
    }
}
