//! `export --format markdown`: the branch as a readable transcript. A session's text is
//! written so that it reads exactly as it was written and nothing in it becomes markup:
//! messages' text with every character Markdown or HTML would act on escaped (so a planted
//! link, tag or heading shows as text), tool calls, results and JSON in fenced blocks whose
//! fence is longer than any run of backticks in them (so no content can close them).

use super::format;
use super::html::{role_title, text_of};
use sessiondb::discovery::SessionInfo;
use sessiondb::json::{Object, Value};
use sessiondb::tree::Row;
use std::fmt::Write;

/// The Markdown of the branch `rows` (root first) of session `info`.
pub fn document(info: &SessionInfo, rows: &[Row], thinking: bool) -> String {
    let mut out = String::new();
    let title = info.name.as_deref().unwrap_or(&info.first_message);
    let _ = writeln!(out, "# {}\n", inline(&format::short(title, 80)));
    let _ = writeln!(out, "- Project: {}", inline(&info.cwd));
    let _ = writeln!(out, "- Session: {}", inline(&info.id));
    let _ = writeln!(out, "- Created: {} UTC", format::time(info.created_ms));
    let _ = writeln!(out, "- Last activity: {} UTC", format::time(info.modified_ms));
    let leaf = rows.last().and_then(|r| r.id.as_deref()).unwrap_or("(empty)");
    let _ = writeln!(out, "- Branch: {} entries, to {}", rows.len(), inline(leaf));
    for row in rows {
        // A blank line before the rule: right under a line of text it would make a heading.
        out.truncate(out.trim_end_matches('\n').len());
        out.push_str("\n\n---\n\n");
        entry(&mut out, row, thinking);
    }
    out.truncate(out.trim_end_matches('\n').len());
    out.push('\n');
    out
}

fn s<'v>(o: &'v Object, k: &str) -> Option<&'v str> {
    o.get(k).and_then(Value::as_str)
}

fn entry(out: &mut String, row: &Row, thinking: bool) {
    let parsed = row.parse().value;
    let kind = row.kind.as_deref().unwrap_or("");
    let when = format::time(row.ts_ms);
    let id = inline(row.id.as_deref().unwrap_or(""));
    let Some(o) = parsed.as_object() else {
        let _ = writeln!(out, "## Entry · {when} · {id}\n\nA line too deeply nested to show as a tree; the line:\n");
        fence(out, &row.body, "json");
        return;
    };
    let heading = |out: &mut String, title: &str| {
        let _ = writeln!(out, "## {} · {when} · {id}\n", inline(title));
    };
    match kind {
        "message" => {
            let Some(m) = o.get("message").and_then(Value::as_object) else {
                heading(out, "Message");
                return;
            };
            let role = s(m, "role").unwrap_or("");
            let title = match (role, s(m, "model")) {
                ("assistant", Some(model)) => format!("Assistant ({model})"),
                ("toolResult", _) => format!("Tool result ({})", s(m, "toolName").unwrap_or("?")),
                _ => role_title(role).to_string(),
            };
            heading(out, &title);
            message(out, m, thinking);
        }
        "compaction" => {
            let before = match o.get("tokensBefore") {
                Some(Value::Number(t)) => format!(", {} tokens before", format::int(*t as i64)),
                _ => String::new(),
            };
            heading(out, &format!("Compaction: summary of the earlier conversation{before}"));
            quote(out, &o.get("summary").map(text_of).unwrap_or_default());
        }
        "branch_summary" => {
            heading(out, "Branch summary: the branch left");
            quote(out, &o.get("summary").map(text_of).unwrap_or_default());
        }
        "model_change" => {
            let _ = writeln!(
                out,
                "*Model: {}/{}* · {when}",
                inline(s(o, "provider").unwrap_or("?")),
                inline(s(o, "modelId").unwrap_or("?"))
            );
        }
        "thinking_level_change" => {
            let _ = writeln!(out, "*Thinking level: {}* · {when}", inline(s(o, "thinkingLevel").unwrap_or("?")));
        }
        "label" => {
            let label = o.get("label").filter(|l| l.is_truthy()).map(text_of);
            let target = inline(s(o, "targetId").unwrap_or(""));
            match label {
                Some(l) => writeln!(out, "*Label {} on {target}* · {when}", inline(&l)),
                None => writeln!(out, "*Label cleared on {target}* · {when}"),
            }
            .unwrap_or(());
        }
        "session_info" => {
            let _ = writeln!(out, "*Named: {}* · {when}", inline(&o.get("name").map(text_of).unwrap_or_default()));
        }
        "custom_message" => {
            heading(out, &format!("Custom message ({})", s(o, "customType").unwrap_or("?")));
            content(out, o.get("content"), thinking);
        }
        "custom" => {
            heading(out, &format!("Custom entry ({})", s(o, "customType").unwrap_or("?")));
            fence(out, &o.get("data").map(Value::to_json).unwrap_or_default(), "json");
        }
        _ => {
            heading(out, if kind.is_empty() { "Entry" } else { kind });
            fence(out, &parsed.to_json(), "json");
        }
    }
}

fn message(out: &mut String, m: &Object, thinking: bool) {
    match s(m, "role").unwrap_or("") {
        "toolResult" => {
            if m.get("isError").is_some_and(Value::is_truthy) {
                out.push_str("**Error**\n\n");
            }
            match m.get("content") {
                Some(Value::String(t)) => fence(out, &t.to_str(), ""),
                Some(Value::Array(blocks)) => {
                    for b in blocks {
                        match b.as_object().filter(|o| s(o, "type") == Some("text")) {
                            Some(o) => fence(out, &o.get("text").map(text_of).unwrap_or_default(), ""),
                            None => block(out, b, thinking),
                        }
                    }
                }
                other => content(out, other, thinking),
            }
        }
        "bashExecution" => {
            fence(out, &format!("$ {}", s(m, "command").unwrap_or("")), "sh");
            if let Some(Value::Number(code)) = m.get("exitCode") {
                let _ = writeln!(out, "Output (exit {code}):\n");
            }
            fence(out, &m.get("output").map(text_of).unwrap_or_default(), "");
        }
        "branchSummary" | "compactionSummary" => quote(out, &m.get("summary").map(text_of).unwrap_or_default()),
        _ => {
            content(out, m.get("content"), thinking);
            if let Some(e) = s(m, "errorMessage") {
                let _ = writeln!(out, "**Error:** {}\n", inline(e));
            }
        }
    }
}

fn content(out: &mut String, c: Option<&Value>, thinking: bool) {
    match c {
        None | Some(Value::Null) => {}
        Some(Value::String(t)) => prose(out, &t.to_str()),
        Some(Value::Array(blocks)) => {
            for b in blocks {
                block(out, b, thinking);
            }
        }
        Some(other) => fence(out, &other.to_json(), "json"),
    }
}

fn block(out: &mut String, b: &Value, thinking: bool) {
    let Some(o) = b.as_object() else { return fence(out, &b.to_json(), "json") };
    match s(o, "type") {
        Some("text") => prose(out, &o.get("text").map(text_of).unwrap_or_default()),
        Some("thinking") if !thinking => {}
        Some("thinking") => {
            out.push_str("*Thinking:*\n\n");
            quote(out, &o.get("thinking").map(text_of).unwrap_or_default());
        }
        Some("toolCall") => {
            let _ = writeln!(out, "**Tool call** {}:\n", inline(s(o, "name").unwrap_or("?")));
            fence(out, &o.get("arguments").map(Value::to_json).unwrap_or_default(), "json");
        }
        Some("image") => {
            let data = s(o, "data").unwrap_or("");
            let _ = writeln!(
                out,
                "*(image: {}, {} bytes of base64, not included)*\n",
                inline(s(o, "mimeType").unwrap_or("?")),
                format::int(data.len() as i64)
            );
        }
        _ => fence(out, &b.to_json(), "json"),
    }
}

/// `t` between fences longer than any run of backticks in it (at least three).
pub fn fence(out: &mut String, t: &str, info: &str) {
    let mut longest = 0;
    let mut run = 0;
    for b in t.bytes() {
        run = if b == b'`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let f = "`".repeat((longest + 1).max(3));
    let _ = writeln!(out, "{f}{info}");
    out.push_str(t);
    if !t.ends_with('\n') && !t.ends_with('\r') {
        out.push('\n');
    }
    let _ = writeln!(out, "{f}\n");
}

/// A message's text as paragraphs that read as written: line breaks kept (a backslash at the
/// end of a line is Markdown's hard break), each line escaped.
pub fn prose(out: &mut String, t: &str) {
    let t = t.replace("\r\n", "\n").replace('\r', "\n");
    let lines: Vec<&str> = t.split('\n').collect();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            out.push('\n');
            continue;
        }
        out.push_str(&escape(line));
        let next_blank = lines.get(i + 1).is_none_or(|l| l.trim().is_empty());
        if !next_blank {
            out.push('\\');
        }
        out.push('\n');
    }
    out.push('\n');
}

/// `t` as a block quote (summaries, thinking).
fn quote(out: &mut String, t: &str) {
    let mut inner = String::new();
    prose(&mut inner, t);
    for line in inner.trim_end().split('\n') {
        out.push_str(if line.is_empty() { ">" } else { "> " });
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
}

/// `t` on one line, escaped (headings, list items).
pub fn inline(t: &str) -> String {
    escape(&t.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// One line of text with every character that Markdown or HTML would act on made literal:
/// `<`, `>` and `&` as character references (no tag, autolink or entity), and as backslash
/// escapes the punctuation that makes links, images, emphasis, code spans, tables and
/// strikethrough anywhere, or headings and lists at the start of a line; leading blanks as
/// references (no indented code block).
pub fn escape(line: &str) -> String {
    let mut out = String::with_capacity(line.len() + 8);
    let body = line.trim_start_matches([' ', '\t']);
    for c in line[..line.len() - body.len()].chars() {
        out.push_str(if c == '\t' { "&#9;" } else { "&#32;" });
    }
    // A list item's number ("12." or "12)") at the start.
    let digits = body.len() - body.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    for (i, c) in body.char_indices() {
        let at_start = i == 0;
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '#' | '-' | '+' | '=' if at_start => {
                out.push('\\');
                out.push(c);
            }
            '.' | ')' if digits > 0 && i == digits => {
                out.push('\\');
                out.push(c);
            }
            '\0' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}
