//! One entry of a transcript: messages by role (thinking, tool calls and results collapsed),
//! bash executions, images, compaction and branch summaries, custom messages, labels, model
//! and thinking-level changes; anything else as its JSON. Every value is escaped by maud; text
//! longer than [`MAX_TEXT`] is cut, with a link to the entry's exact line.

use super::super::http::link;
use super::format;
use maud::{html, Markup};
use sessiondb::json::{Object, Value};
use sessiondb::tree::Row;
use sessiondb::SessionKey;

/// Characters of one text block shown before it is cut.
pub const MAX_TEXT: usize = 20_000;

/// Image types shown inline (as `data:` URLs, which the CSP allows for images only); SVG,
/// which can hold script, is not among them.
const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

fn s<'v>(o: &'v Object, k: &str) -> Option<&'v str> {
    o.get(k).and_then(Value::as_str)
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_str().into_owned(),
        other => other.to_json(),
    }
}

/// A text, cut at [`MAX_TEXT`] characters with a link to the whole line.
fn text(t: &str, raw: &str) -> Markup {
    let cut = t.char_indices().nth(MAX_TEXT).map(|(i, _)| i);
    html! {
        @match cut {
            None => div.text { (t) },
            Some(i) => {
                div.text { (&t[..i]) }
                p.cut { "… " (format::int((t.len() - i) as i64)) " more bytes: " a href=(raw) { "the whole line" } }
            }
        }
    }
}

/// Content: a string, or blocks (text, thinking, tool calls, images).
fn content(c: Option<&Value>, raw: &str) -> Markup {
    match c {
        None | Some(Value::Null) => html! {},
        Some(Value::String(t)) => text(&t.to_str(), raw),
        Some(Value::Array(blocks)) => html! {
            @for b in blocks { (block(b, raw)) }
        },
        Some(other) => html! { pre.json { (format::short(&other.to_json(), MAX_TEXT)) } },
    }
}

fn block(b: &Value, raw: &str) -> Markup {
    let Some(o) = b.as_object() else { return html! { pre.json { (format::short(&b.to_json(), MAX_TEXT)) } } };
    match s(o, "type") {
        Some("text") => text(&o.get("text").map(text_of).unwrap_or_default(), raw),
        Some("thinking") => html! {
            details.thinking { summary { "Thinking" } (text(&o.get("thinking").map(text_of).unwrap_or_default(), raw)) }
        },
        Some("toolCall") => html! {
            details.tool-call {
                summary { "Tool call " code { (s(o, "name").unwrap_or("?")) } }
                (text(&o.get("arguments").map(Value::to_json).unwrap_or_default(), raw))
            }
        },
        Some("image") => image(o),
        _ => html! { pre.json { (format::short(&b.to_json(), MAX_TEXT)) } },
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

fn role_title(role: &str) -> &str {
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

fn message(m: &Object, raw: &str) -> Markup {
    let role = s(m, "role").unwrap_or("");
    match role {
        "toolResult" => html! {
            details.tool-result.error[m.get("isError").is_some_and(Value::is_truthy)] {
                summary { "Result of " code { (s(m, "toolName").unwrap_or("?")) } }
                (content(m.get("content"), raw))
            }
        },
        "bashExecution" => html! {
            div.bash {
                pre.command { "$ " (s(m, "command").unwrap_or("")) }
                details { summary { "Output" @if let Some(Value::Number(code)) = m.get("exitCode") { " (exit " (code) ")" } }
                    (text(&m.get("output").map(text_of).unwrap_or_default(), raw)) }
            }
        },
        "branchSummary" | "compactionSummary" => text(&m.get("summary").map(text_of).unwrap_or_default(), raw),
        _ => html! {
            (content(m.get("content"), raw))
            @if let Some(e) = s(m, "errorMessage") { p.error { (format::short(e, MAX_TEXT)) } }
        },
    }
}

/// The entry as an `<article id="entry-ID">`.
pub fn entry(sid: SessionKey, row: &Row) -> Markup {
    let parsed = row.parse().value;
    let id = row.id.as_deref().unwrap_or("");
    let raw = link(&format!("/s/{sid}/entry"), &[("id", row.id.as_deref())]);
    let kind = row.kind.as_deref().unwrap_or("");
    let role = row.role.as_deref().unwrap_or("");
    let Some(o) = parsed.as_object() else {
        return html! {
            article.entry.unparsed id={ "entry-" (id) } data-entry-id=(id) data-type=(kind) {
                header { span.kind { "Entry" } } p.sub { "A line too deeply nested to show: " a href=(raw) { "the line" } }
            }
        };
    };
    let message = o.get("message").and_then(Value::as_object);
    let (title, body): (String, Markup) = match kind {
        "message" => match message {
            Some(m) => (role_title(role).to_string(), self::message(m, &raw)),
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
                    (text(&o.get("summary").map(text_of).unwrap_or_default(), &raw)) }
            },
        ),
        "branch_summary" => (
            "Branch summary".into(),
            html! {
                details.summary-block open { summary { "Summary of the branch left" } (text(&o.get("summary").map(text_of).unwrap_or_default(), &raw)) }
            },
        ),
        "custom_message" => {
            (format!("Custom message ({})", s(o, "customType").unwrap_or("?")), content(o.get("content"), &raw))
        }
        "custom" => (
            format!("Custom entry ({})", s(o, "customType").unwrap_or("?")),
            html! {
                details { summary { "Data" } pre.json { (format::short(&o.get("data").map(Value::to_json).unwrap_or_default(), MAX_TEXT)) } }
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
                a href={ "#entry-" (target) } { code { (target) } }
            } },
        ),
        "session_info" => (
            "Session name".into(),
            html! { p.change { "Named: " (format::short(&o.get("name").map(text_of).unwrap_or_default(), 500)) } },
        ),
        _ => (
            if kind.is_empty() { "Entry".into() } else { kind.to_string() },
            html! {
                details { summary { "Entry" } pre.json { (format::short(&parsed.to_json(), MAX_TEXT)) } }
            },
        ),
    };
    let model = message.and_then(|m| s(m, "model"));
    html! {
        article class={ "entry kind-" (kind) " role-" (role) } id={ "entry-" (id) } data-entry-id=(id) data-type=(kind) data-role=(role) {
            header {
                span.kind { (title) }
                @if let Some(m) = model { " " span.model { (m) } }
                " " time { (format::time(row.ts_ms)) }
                " " a.anchor href={ "#entry-" (id) } title="Link to this entry" { code { (format::short(id, 12)) } }
            }
            (body)
        }
    }
}
