//! Human-readable renderings of entries and messages for the CLI's text output.

use sessiondb::internals::projection::ParsedEntry;
use sessiondb::json::Value;

/// Shortens `s` to at most `max` characters on one line (newlines and tabs become spaces).
pub fn one_line(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(max.min(s.len()));
    let mut count = 0;
    let mut last_space = false;
    for c in s.chars() {
        let c = if c.is_whitespace() { ' ' } else { c };
        if c == ' ' && last_space {
            continue;
        }
        last_space = c == ' ';
        if count + 1 > max {
            out.push('…');
            return out;
        }
        out.push(c);
        count += 1;
    }
    out.trim().to_string()
}

fn str_of(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.to_str().into_owned(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_json(),
    }
}

/// The text of a message's content: a string, or its text/thinking blocks joined, with tool
/// calls as `name(args)` and images as `[image]`.
pub fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.to_str().into_owned(),
        Some(Value::Array(blocks)) => {
            let parts: Vec<String> = blocks
                .iter()
                .filter_map(Value::as_object)
                .map(|b| match b.get("type").and_then(Value::as_str) {
                    Some("text") => str_of(b.get("text")),
                    Some("thinking") => format!("(thinking) {}", str_of(b.get("thinking"))),
                    Some("toolCall") => {
                        format!(
                            "→ {}({})",
                            str_of(b.get("name")),
                            b.get("arguments").map(Value::to_json).unwrap_or_default()
                        )
                    }
                    Some("image") => "[image]".to_string(),
                    Some(other) => format!("[{other}]"),
                    None => String::new(),
                })
                .filter(|p| !p.is_empty())
                .collect();
            parts.join(" ")
        }
        Some(other) => other.to_json(),
        None => String::new(),
    }
}

/// `type` or `type/role` of an entry, e.g. `message/user`, `compaction`.
pub fn entry_kind<K>(e: &ParsedEntry<K>) -> String {
    match (e.kind(), e.role()) {
        (Some("message"), Some(role)) => role.to_string(),
        (Some(kind), _) => kind.to_string(),
        (None, _) => "(no type)".to_string(),
    }
}

/// A short text for an entry (what a tree line shows after its kind).
pub fn entry_preview<K>(e: &ParsedEntry<K>, max: usize) -> String {
    let text = match e.kind() {
        Some("message") => {
            let m = e.get("message").and_then(Value::as_object);
            let mut t = content_text(m.and_then(|m| m.get("content")));
            if let Some(name) = m.and_then(|m| m.get("toolName")) {
                t = format!("{}: {t}", str_of(Some(name)));
            }
            t
        }
        Some("compaction" | "branch_summary") => str_of(e.get("summary")),
        Some("custom_message") => content_text(e.get("content")),
        Some("model_change") => format!("{}/{}", str_of(e.get("provider")), str_of(e.get("modelId"))),
        Some("thinking_level_change") => str_of(e.get("thinkingLevel")),
        Some("label") => format!("{} → {}", str_of(e.get("targetId")), str_of(e.get("label"))),
        Some("session_info") => str_of(e.get("name")),
        Some("context_edit") => format!(
            "{} → {}",
            str_of(e.get("targetId")),
            e.get("replacement").map_or("(none)".to_string(), |r| match r {
                Value::Null => "removed".to_string(),
                other => content_text(other.as_object().and_then(|o| o.get("content"))),
            })
        ),
        Some("usage") => {
            format!("{} {}", str_of(e.get("model")), e.get("usage").map(Value::to_json).unwrap_or_default())
        }
        Some("custom") => str_of(e.get("customType")),
        _ => String::new(),
    };
    one_line(&text, max)
}

/// A user's `!command` (a `bashExecution` message): `$ command`, its exit code (or that it
/// was cancelled) in the header, and its output without trailing blank lines.
fn bash_block(o: &sessiondb::json::Object) -> String {
    let mut status = match o.get("exitCode") {
        Some(Value::Number(n)) => format!(" (exit {})", str_of(Some(&Value::Number(*n)))),
        _ => String::new(),
    };
    if matches!(o.get("cancelled"), Some(Value::Bool(true))) {
        status.push_str(" (cancelled)");
    }
    let output = str_of(o.get("output"));
    let mut text = format!("[bashExecution{status}]\n$ {}", str_of(o.get("command")));
    let output = output.trim_end();
    if !output.is_empty() {
        text.push('\n');
        text.push_str(output);
    }
    if matches!(o.get("truncated"), Some(Value::Bool(true))) {
        text.push_str(&format!("\n(output truncated; full output: {})", str_of(o.get("fullOutputPath"))));
    }
    text
}

/// A model-context message as a text block: a header line and the content.
pub fn message_block(m: &Value) -> String {
    let Some(o) = m.as_object() else { return m.to_json() };
    let role = str_of(o.get("role"));
    match role.as_str() {
        "compactionSummary" => {
            format!(
                "── compaction summary ({} tokens before) ──\n{}",
                str_of(o.get("tokensBefore")),
                str_of(o.get("summary"))
            )
        }
        "branchSummary" => {
            format!("── branch summary (from {}) ──\n{}", str_of(o.get("fromId")), str_of(o.get("summary")))
        }
        "toolResult" => {
            let err = if matches!(o.get("isError"), Some(Value::Bool(true))) { " (error)" } else { "" };
            format!("[toolResult {}{err}]\n{}", str_of(o.get("toolName")), content_text(o.get("content")))
        }
        "bashExecution" => bash_block(o),
        "custom" => format!("[custom {}]\n{}", str_of(o.get("customType")), content_text(o.get("content"))),
        "system" => {
            let mut text = format!("[system]\n{}", content_text(o.get("content")));
            if let Some(Value::Object(sections)) = o.get("sections") {
                let names: Vec<String> = sections.iter().map(|(k, _)| k.to_str().into_owned()).collect();
                text.push_str(&format!("\n(sections: {})", names.join(", ")));
            }
            text
        }
        _ => {
            let model = match (o.get("provider"), o.get("model")) {
                (Some(p), Some(md)) => format!(" ({}/{})", str_of(Some(p)), str_of(Some(md))),
                _ => String::new(),
            };
            format!("[{role}{model}]\n{}", content_text(o.get("content")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_execution_shows_command_exit_code_and_output() {
        let m = sessiondb::json::parse(
            br#"{"role":"bashExecution","command":"ls -1 src","output":"a.rs\nb.rs\n\n","exitCode":2,"cancelled":false,"truncated":false,"timestamp":1}"#,
        )
        .unwrap();
        assert_eq!(message_block(&m), "[bashExecution (exit 2)]\n$ ls -1 src\na.rs\nb.rs");
        let m = sessiondb::json::parse(
            br#"{"role":"bashExecution","command":"yes","output":"y\n","cancelled":true,"truncated":true,"fullOutputPath":"/tmp/o"}"#,
        )
        .unwrap();
        assert_eq!(message_block(&m), "[bashExecution (cancelled)]\n$ yes\ny\n(output truncated; full output: /tmp/o)");
    }
}
