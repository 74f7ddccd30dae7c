//! Entries as pi's append methods build them: same fields, same key order, undefined
//! fields left out, ISO timestamps with milliseconds.

use crate::js::json::{Object, Value};

/// `undefined` is `None`: the key is left out, as `JSON.stringify` does.
pub type Opt = Option<Value>;

/// Builds an object from pairs, leaving out `undefined` values.
pub fn object(pairs: Vec<(&str, Opt)>) -> Object {
    let mut o = Object::new();
    for (k, v) in pairs {
        if let Some(v) = v {
            o.set(k, v);
        }
    }
    o
}

/// A string value.
pub fn s(text: &str) -> Value {
    Value::String(text.into())
}

fn parent(p: Option<&str>) -> Opt {
    Some(p.map_or(Value::Null, s))
}

/// The common head `type, id, parentId, timestamp`.
fn head<'a>(kind: &str, id: &str, parent_id: Option<&str>, ts: &str) -> Vec<(&'a str, Opt)> {
    vec![("type", Some(s(kind))), ("id", Some(s(id))), ("parentId", parent(parent_id)), ("timestamp", Some(s(ts)))]
}

/// `message`: type, id, parentId, timestamp, message.
pub fn message(id: &str, parent_id: Option<&str>, ts: &str, message: Opt) -> Object {
    let mut p = head("message", id, parent_id, ts);
    p.push(("message", message));
    object(p)
}

/// `thinking_level_change`: …, thinkingLevel.
pub fn thinking_level_change(id: &str, parent_id: Option<&str>, ts: &str, level: Opt) -> Object {
    let mut p = head("thinking_level_change", id, parent_id, ts);
    p.push(("thinkingLevel", level));
    object(p)
}

/// `model_change`: …, provider, modelId.
pub fn model_change(id: &str, parent_id: Option<&str>, ts: &str, provider: Opt, model_id: Opt) -> Object {
    let mut p = head("model_change", id, parent_id, ts);
    p.push(("provider", provider));
    p.push(("modelId", model_id));
    object(p)
}

/// `usage`: …, kind, provider, model, usage, note (only when truthy).
#[allow(clippy::too_many_arguments)]
pub fn usage(
    id: &str,
    parent_id: Option<&str>,
    ts: &str,
    kind: Opt,
    provider: Opt,
    model: Opt,
    usage: Opt,
    note: Opt,
) -> Object {
    let mut p = head("usage", id, parent_id, ts);
    p.extend([("kind", kind), ("provider", provider), ("model", model), ("usage", usage)]);
    p.push(("note", note.filter(Value::is_truthy)));
    object(p)
}

/// Fields of a compaction after its head.
pub struct CompactionFields {
    /// summary
    pub summary: Opt,
    /// firstKeptEntryId (already defaulted to the entry's own id)
    pub first_kept_entry_id: Value,
    /// tokensBefore
    pub tokens_before: Opt,
    /// details
    pub details: Opt,
    /// usage
    pub usage: Opt,
    /// fromHook
    pub from_hook: Opt,
    /// the system message snapshot
    pub system_message: Opt,
}

/// `compaction`: …, summary, firstKeptEntryId, tokensBefore, details?, usage?, fromHook?, systemMessage?.
pub fn compaction(id: &str, parent_id: Option<&str>, ts: &str, f: CompactionFields) -> Object {
    let mut p = head("compaction", id, parent_id, ts);
    p.extend([
        ("summary", f.summary),
        ("firstKeptEntryId", Some(f.first_kept_entry_id)),
        ("tokensBefore", f.tokens_before),
        ("details", f.details),
        ("usage", f.usage),
        ("fromHook", f.from_hook),
        ("systemMessage", f.system_message),
    ]);
    object(p)
}

/// `custom`: type, customType, data?, id, parentId, timestamp.
pub fn custom(id: &str, parent_id: Option<&str>, ts: &str, custom_type: Opt, data: Opt) -> Object {
    object(vec![
        ("type", Some(s("custom"))),
        ("customType", custom_type),
        ("data", data),
        ("id", Some(s(id))),
        ("parentId", parent(parent_id)),
        ("timestamp", Some(s(ts))),
    ])
}

/// `custom_message`: type, customType, content, display, details?, id, parentId, timestamp.
pub fn custom_message(
    id: &str,
    parent_id: Option<&str>,
    ts: &str,
    custom_type: Opt,
    content: Opt,
    display: Opt,
    details: Opt,
) -> Object {
    object(vec![
        ("type", Some(s("custom_message"))),
        ("customType", custom_type),
        ("content", content),
        ("display", display),
        ("details", details),
        ("id", Some(s(id))),
        ("parentId", parent(parent_id)),
        ("timestamp", Some(s(ts))),
    ])
}

/// `context_edit`: …, targetId, replacement.
pub fn context_edit(id: &str, parent_id: Option<&str>, ts: &str, target_id: &str, replacement: Value) -> Object {
    let mut p = head("context_edit", id, parent_id, ts);
    p.push(("targetId", Some(s(target_id))));
    p.push(("replacement", Some(replacement)));
    object(p)
}

/// `label`: …, targetId, label?.
pub fn label(id: &str, parent_id: Option<&str>, ts: &Value, target_id: &str, label: Opt) -> Object {
    object(vec![
        ("type", Some(s("label"))),
        ("id", Some(s(id))),
        ("parentId", parent(parent_id)),
        ("timestamp", Some(ts.clone())),
        ("targetId", Some(s(target_id))),
        ("label", label),
    ])
}

/// `session_info`: …, name.
pub fn session_info(id: &str, parent_id: Option<&str>, ts: &str, name: &str) -> Object {
    let mut p = head("session_info", id, parent_id, ts);
    p.push(("name", Some(s(name))));
    object(p)
}

/// `branch_summary`: type, id, parentId, timestamp, fromId, summary, details?, usage?, fromHook?.
#[allow(clippy::too_many_arguments)]
pub fn branch_summary(
    id: &str,
    parent_id: Option<&str>,
    ts: &str,
    from_id: &str,
    summary: Opt,
    details: Opt,
    usage: Opt,
    from_hook: Opt,
) -> Object {
    let mut p = head("branch_summary", id, parent_id, ts);
    p.extend([
        ("fromId", Some(s(from_id))),
        ("summary", summary),
        ("details", details),
        ("usage", usage),
        ("fromHook", from_hook),
    ]);
    object(p)
}

/// A session header as pi writes it: type, version, id, timestamp, cwd, parentSession?.
pub fn header(id: &str, ts: &str, cwd: &str, parent_session: Option<&str>) -> Object {
    object(vec![
        ("type", Some(s("session"))),
        ("version", Some(Value::Number(3.0))),
        ("id", Some(s(id))),
        ("timestamp", Some(s(ts))),
        ("cwd", Some(s(cwd))),
        ("parentSession", parent_session.map(s)),
    ])
}

/// `appendSessionInfo`'s name cleaning: runs of `\r`/`\n` become one space, then trim.
pub fn clean_session_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut in_break = false;
    for c in name.chars() {
        if c == '\r' || c == '\n' {
            if !in_break {
                out.push(' ');
            }
            in_break = true;
        } else {
            out.push(c);
            in_break = false;
        }
    }
    crate::js::json::js_trim(&out).to_string()
}
