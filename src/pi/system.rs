//! pi-ai's `getCurrentSystemMessage`: the system messages of a context replayed into one
//! (what `appendCompaction` snapshots).

use crate::js::json::{Object, Value};
use indexmap::IndexMap;

/// pi-ai's `contentText`: a string, or the text blocks' text joined by `\n`.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.to_str().into_owned(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| b.as_object().and_then(|o| o.get("type")).and_then(Value::as_str) == Some("text"))
            .map(|b| match b.as_object().and_then(|o| o.get("text")) {
                Some(Value::String(s)) => s.to_str().into_owned(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_json(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn name_key(tool: &Value) -> String {
    tool.as_object().and_then(|o| o.get("name")).map_or_else(|| "u".into(), Value::to_json)
}

/// The replayed system message of `messages`, or `None` when there is no system message and
/// no tool.
pub fn current_system_message(messages: &[Value]) -> Option<Object> {
    let mut content = Vec::new();
    let mut sections: IndexMap<Vec<u8>, (crate::js::json::JsString, Value)> = IndexMap::new();
    let mut tools: IndexMap<String, Value> = IndexMap::new();
    let mut timestamp: Option<Value> = None;
    for m in messages {
        let Some(o) = m.as_object() else { continue };
        if o.get("role").and_then(Value::as_str) != Some("system") {
            continue;
        }
        // `timestamp ??= message.timestamp`
        if matches!(timestamp, None | Some(Value::Null)) {
            timestamp = o.get("timestamp").cloned();
        }
        let text = content_text(o.get("content"));
        if !text.is_empty() {
            content.push(text);
        }
        if let Some(Value::Object(secs)) = o.get("sections") {
            for (name, value) in secs.iter() {
                if matches!(value, Value::Null) {
                    sections.shift_remove(name.as_bytes());
                } else if let Some(slot) = sections.get_mut(name.as_bytes()) {
                    slot.1 = value.clone();
                } else {
                    sections.insert(name.as_bytes().to_vec(), (name.clone(), value.clone()));
                }
            }
        }
        if let Some(Value::Array(removed)) = o.get("toolsRemoved") {
            for t in removed {
                tools.shift_remove(&name_key(t));
            }
        }
        if let Some(Value::Array(added)) = o.get("toolsAdded") {
            for t in added {
                let k = name_key(t);
                match tools.get_mut(&k) {
                    Some(slot) => *slot = t.clone(),
                    None => {
                        tools.insert(k, t.clone());
                    }
                }
            }
        }
    }
    if timestamp.is_none() && tools.is_empty() {
        return None;
    }
    let mut out = Object::new();
    out.set("role", Value::String("system".into()));
    out.set("content", Value::String(content.join("\n\n").into()));
    if !sections.is_empty() {
        let mut secs = Object::new();
        for (_, (name, value)) in sections {
            secs.set(name, value);
        }
        out.set("sections", Value::Object(secs));
    }
    if !tools.is_empty() {
        out.set("toolsAdded", Value::Array(tools.into_values().collect()));
    }
    out.set("timestamp", timestamp.filter(|t| !matches!(t, Value::Null)).unwrap_or(Value::Number(0.0)));
    Some(out)
}
