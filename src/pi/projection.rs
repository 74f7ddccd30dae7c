//! From entries to what the model sees: pi's `buildContextEntries`,
//! `sessionEntryToContextMessages`, context edits and the settings replay, on parsed entries.

use crate::js::json::{Object, Value};
use crate::js::jstime;
use std::collections::HashMap;

/// A parsed entry with the key it is stored under.
#[derive(Debug, Clone)]
pub struct ParsedEntry<K> {
    /// Storage key (file order).
    pub key: K,
    /// The entry object (or `Null` when the stored line could not be parsed as a tree).
    pub value: Value,
}

impl<K> ParsedEntry<K> {
    /// A top-level field.
    pub fn get(&self, k: &str) -> Option<&Value> {
        self.value.as_object().and_then(|o| o.get(k))
    }
    /// `type` when a string.
    pub fn kind(&self) -> Option<&str> {
        self.get("type").and_then(Value::as_str)
    }
    /// `message.role` when a string.
    pub fn role(&self) -> Option<&str> {
        self.get("message").and_then(Value::as_object).and_then(|m| m.get("role")).and_then(Value::as_str)
    }
    fn is_system_message(&self) -> bool {
        self.kind() == Some("message") && self.role() == Some("system")
    }
}

/// JavaScript strict equality between two optional JSON values (`None` is `undefined`).
fn strict_eq(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(Value::Null), Some(Value::Null)) => true,
        (Some(Value::Bool(x)), Some(Value::Bool(y))) => x == y,
        (Some(Value::Number(x)), Some(Value::Number(y))) => x == y,
        (Some(Value::String(x)), Some(Value::String(y))) => x == y,
        // Objects and arrays parsed from different places are never the same object.
        _ => false,
    }
}

/// Map key for JavaScript `Map` lookups by id (`SameValueZero` on primitives).
fn map_key(v: Option<&Value>) -> Option<String> {
    match v {
        None => Some("u".into()),
        Some(Value::Object(_) | Value::Array(_)) => None,
        Some(v) => Some(v.to_json()),
    }
}

/// `buildContextEntries` over a root-first path: the latest compaction, the kept entries from
/// its `firstKeptEntryId` (system messages skipped), then everything after it.
pub fn context_entries<K>(path: &[ParsedEntry<K>]) -> Vec<&ParsedEntry<K>> {
    let Some(compaction) = path.iter().rev().find(|e| e.kind() == Some("compaction")) else {
        return path.iter().collect();
    };
    let cid = compaction.get("id");
    let Some(idx) = path.iter().position(|e| strict_eq(e.get("id"), cid)) else {
        return path.iter().collect();
    };
    let first_kept = compaction.get("firstKeptEntryId");
    let mut out = vec![compaction];
    let mut found = false;
    for e in &path[..idx] {
        if strict_eq(e.get("id"), first_kept) {
            found = true;
        }
        if found && !e.is_system_message() {
            out.push(e);
        }
    }
    out.extend(path[idx + 1..].iter());
    out
}

/// The thinking level and model in force: `None` thinking level is `undefined`.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// `thinkingLevel`; starts as `"off"`.
    pub thinking_level: Option<Value>,
    /// `model`: `null` or `{provider, modelId}`.
    pub model: Value,
}

impl Default for Settings {
    fn default() -> Self {
        Settings { thinking_level: Some(Value::String("off".into())), model: Value::Null }
    }
}

impl Settings {
    /// Applies one path entry.
    pub fn apply<K>(&mut self, e: &ParsedEntry<K>) {
        match e.kind() {
            Some("thinking_level_change") => self.thinking_level = e.get("thinkingLevel").cloned(),
            Some("model_change") => self.model = model_object(e.get("provider"), e.get("modelId")),
            Some("message") if e.role() == Some("assistant") => {
                let m = e.get("message").and_then(Value::as_object);
                self.model = model_object(m.and_then(|m| m.get("provider")), m.and_then(|m| m.get("model")));
            }
            _ => {}
        }
    }

    /// The settings after a whole root-first path.
    pub fn from_path<K>(path: &[ParsedEntry<K>]) -> Self {
        let mut s = Settings::default();
        for e in path {
            s.apply(e);
        }
        s
    }
}

fn model_object(provider: Option<&Value>, model_id: Option<&Value>) -> Value {
    let mut o = Object::new();
    if let Some(p) = provider {
        o.set("provider", p.clone());
    }
    if let Some(m) = model_id {
        o.set("modelId", m.clone());
    }
    Value::Object(o)
}

fn ms_value<K>(entry: &ParsedEntry<K>) -> Value {
    match jstime::date_value_ms(entry.get("timestamp")) {
        Some(ms) => Value::Number(ms as f64),
        None => Value::Null, // NaN
    }
}

/// Builds an object from `(key, value)` pairs, leaving out `undefined` values.
fn object(pairs: Vec<(&str, Option<Value>)>) -> Value {
    let mut o = Object::new();
    for (k, v) in pairs {
        if let Some(v) = v {
            o.set(k, v);
        }
    }
    Value::Object(o)
}

/// `{...message, content}`; `None` content is `undefined` (the key disappears from JSON).
fn with_content(message: &Object, content: Option<Value>) -> Value {
    let mut m = message.clone();
    match content {
        Some(c) => m.set("content", c),
        None => {
            m.remove("content");
        }
    }
    Value::Object(m)
}

/// `sessionEntryToContextMessages`.
pub fn entry_messages<K>(entry: &ParsedEntry<K>) -> Vec<Value> {
    match entry.kind() {
        Some("message") => match entry.get("message") {
            Some(Value::Object(m)) => {
                let role = m.get("role").and_then(Value::as_str);
                let missing = matches!(m.get("content"), None | Some(Value::Null));
                match role {
                    Some("system") if missing => vec![with_content(m, Some(Value::String("".into())))],
                    Some("user" | "assistant" | "toolResult") if missing => {
                        vec![with_content(m, Some(Value::Array(Vec::new())))]
                    }
                    _ => vec![Value::Object(m.clone())],
                }
            }
            // pi throws on a missing message; sessiondb yields nothing for it.
            None | Some(Value::Null) => Vec::new(),
            Some(other) => vec![other.clone()],
        },
        Some("custom_message") => {
            let content = match entry.get("content") {
                None | Some(Value::Null) => Value::Array(Vec::new()),
                Some(c) => c.clone(),
            };
            vec![object(vec![
                ("role", Some(Value::String("custom".into()))),
                ("customType", entry.get("customType").cloned()),
                ("content", Some(content)),
                ("display", entry.get("display").cloned()),
                ("details", entry.get("details").cloned()),
                ("timestamp", Some(ms_value(entry))),
            ])]
        }
        Some("branch_summary") if entry.get("summary").is_some_and(Value::is_truthy) => vec![object(vec![
            ("role", Some(Value::String("branchSummary".into()))),
            ("summary", entry.get("summary").cloned()),
            ("fromId", entry.get("fromId").cloned()),
            ("timestamp", Some(ms_value(entry))),
        ])],
        Some("compaction") => {
            let summary = object(vec![
                ("role", Some(Value::String("compactionSummary".into()))),
                ("summary", entry.get("summary").cloned()),
                ("tokensBefore", entry.get("tokensBefore").cloned()),
                ("timestamp", Some(ms_value(entry))),
            ]);
            match entry.get("systemMessage") {
                Some(sys) if sys.is_truthy() => vec![sys.clone(), summary],
                _ => vec![summary],
            }
        }
        _ => Vec::new(),
    }
}

/// `projectContextEntry`: the entry's messages with its latest context edit applied.
pub fn project_entry<K>(entry: &ParsedEntry<K>, edit: Option<&ParsedEntry<K>>) -> Vec<Value> {
    let messages = entry_messages(entry);
    let Some(edit) = edit else { return messages };
    let replacement = edit.get("replacement");
    if matches!(replacement, Some(Value::Null)) {
        return Vec::new();
    }
    let content = replacement.and_then(Value::as_object).and_then(|r| r.get("content"));
    messages
        .into_iter()
        .map(|m| {
            let Value::Object(o) = &m else { return m };
            let role = o.get("role").and_then(Value::as_str);
            if !matches!(role, Some("user" | "assistant" | "toolResult" | "custom")) {
                return m;
            }
            let new_content = match (role, content) {
                (Some("assistant" | "toolResult"), Some(Value::String(s))) => {
                    let mut block = Object::new();
                    block.set("type", Value::String("text".into()));
                    block.set("text", Value::String(s.clone()));
                    Some(Value::Array(vec![Value::Object(block)]))
                }
                (_, c) => c.cloned(),
            };
            with_content(o, new_content)
        })
        .collect()
}

/// `buildSessionProjection` from context entries and the settings of the path.
pub fn projection<K>(context: &[&ParsedEntry<K>], settings: &Settings) -> Value {
    let mut edits: HashMap<String, &ParsedEntry<K>> = HashMap::new();
    for e in context {
        if e.kind() == Some("context_edit") {
            if let Some(k) = map_key(e.get("targetId")) {
                edits.insert(k, e);
            }
        }
    }
    let mut entries = Vec::with_capacity(context.len());
    let mut all = Vec::new();
    for (i, e) in context.iter().enumerate() {
        let messages = if e.kind() == Some("compaction") && i > 0 {
            Vec::new()
        } else {
            let edit = map_key(e.get("id")).and_then(|k| edits.get(&k).copied());
            project_entry(e, edit)
        };
        all.extend(messages.iter().cloned());
        entries.push(object(vec![("sourceEntry", Some(e.value.clone())), ("messages", Some(Value::Array(messages)))]));
    }
    object(vec![
        ("entries", Some(Value::Array(entries))),
        ("messages", Some(Value::Array(all))),
        ("thinkingLevel", settings.thinking_level.clone()),
        ("model", Some(settings.model.clone())),
    ])
}
