//! What pi's tree selector (`TreeList`, pi 1.6.0's `modes/interactive/components/tree-selector.js`)
//! reads of every assistant message to build its rows, read from the stored line without handing
//! the line to JavaScript: whether `hasTextContent(content)` holds, `stopReason`, and the tool
//! calls `flattenTree` puts in its `toolCallMap`. A line it cannot answer exactly (pi would
//! throw, or the shape is unusual) is `null`: JavaScript parses that entry instead.

use sessiondb::json::{self, js_trim, Value};

/// Appends the row of one assistant line to `out` as JSON: `[hasText, stopReason, calls]`, where
/// `stopReason` is the value when it is not an object or array (`true` for one: only its
/// truthiness and its equality to "stop" and "toolUse" are looked at; `false` when absent) and
/// each call is `[id, name, index in content, arguments?]`, the arguments given only when they
/// are not an object (an object's are read from the entry when a row shows them); else `null`.
pub fn write_row(out: &mut Vec<u8>, line: &[u8]) {
    match row(line) {
        Some(text) => out.extend_from_slice(text.as_bytes()),
        None => out.extend_from_slice(b"null"),
    }
}

fn row(line: &[u8]) -> Option<String> {
    let entry = json::scan_object(line).ok()??;
    let message = json::scan_object(entry.raw("message")?).ok()??;
    let stop = match message.raw("stopReason") {
        None => "false".to_string(),
        Some(raw) => match json::parse(raw).ok()? {
            Value::Object(_) | Value::Array(_) | Value::Raw(_) => "true".to_string(),
            v => v.to_json(),
        },
    };
    let content = match message.raw("content") {
        Some(raw) => json::parse(raw).ok()?,
        None => Value::Null,
    };
    let mut has_text = false;
    let mut calls = Vec::new();
    match &content {
        Value::String(s) => has_text = !js_trim(&s.to_str()).is_empty(),
        Value::Array(blocks) => {
            for (index, block) in blocks.iter().enumerate() {
                let Value::Object(b) = block else { continue };
                match b.get("type") {
                    Some(t) if t.as_str() == Some("text") => match b.get("text") {
                        Some(Value::String(s)) => has_text |= !js_trim(&s.to_str()).is_empty(),
                        Some(v) if v.is_truthy() => return None, // pi's text.trim() throws
                        _ => {}
                    },
                    Some(t) if t.as_str() == Some("toolCall") => {
                        let (Some(id), Some(name)) = (b.get("id"), b.get("name")) else { return None };
                        let args = match b.get("arguments") {
                            Some(Value::Object(_)) => String::new(),
                            Some(Value::Raw(_)) => return None,
                            Some(v) => format!(",{}", v.to_json()),
                            None => return None,
                        };
                        calls.push(format!("[{},{},{index}{args}]", id.to_json(), name.to_json()));
                    }
                    _ => {}
                }
            }
        }
        Value::Raw(_) => return None,
        _ => {}
    }
    Some(format!("[{has_text},{stop},[{}]]", calls.join(",")))
}
