//! Per-session discovery fields kept as columns (what pi's `SessionInfo` shows): name, message count, first user
//! message, newest activity. Computed once while entries are written, never at query time.

use crate::js::json::{self, RawObject, Value};
use crate::store::derive::EntryFields;

/// Running totals over a session's entries in file order.
#[derive(Debug, Default, Clone)]
pub struct SessionStats {
    /// Latest `session_info` name, trimmed; `None` when cleared or never set.
    pub name: Option<String>,
    /// `message` entries of any role.
    pub message_count: i64,
    /// Text of the first user message that has text.
    pub first_message: Option<String>,
    /// Newest user/assistant activity time (ms), as pi computes it.
    pub last_activity_ms: Option<f64>,
    /// Entries seen (header lines excluded).
    pub entry_count: i64,
}

/// What one entry line adds to its session's statistics, read from the line alone (an import
/// reads it on another thread than the one writing).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observation {
    /// Not a header line.
    entry: bool,
    /// The trimmed name of a `session_info` entry (`Some(None)`: the name is cleared).
    name: Option<Option<String>>,
    /// A `message` entry.
    message: bool,
    /// A user/assistant message with content: its activity time, if it has one.
    activity: Option<Option<f64>>,
    /// A user message with content.
    user: bool,
}

impl Observation {
    /// Reads it from a scanned entry.
    pub fn of(fields: &EntryFields, entry: &RawObject<'_>, message: Option<&RawObject<'_>>) -> Self {
        if let Some(seen) = Observation::of_fields(fields) {
            return seen;
        }
        let mut seen = Observation { entry: true, ..Observation::default() };
        match fields.kind.as_deref() {
            Some("session_info") => {
                seen.name = Some(match entry.get("name") {
                    Some(Value::String(s)) => Some(json::js_trim(&s.to_str()).to_string()).filter(|n| !n.is_empty()),
                    _ => None,
                });
            }
            _ => {
                seen.message = true;
                let role = fields.role.as_deref();
                if let Some(m) = message.filter(|m| m.has("content")) {
                    seen.activity = Some(match m.get("timestamp") {
                        Some(Value::Number(n)) => Some(n),
                        _ => fields.ts_ms.map(|t| t as f64),
                    });
                    seen.user = role == Some("user");
                }
            }
        }
        seen
    }

    /// Reads it from the entry's columns alone; `None` when the line itself is needed (a
    /// session name, or a user or assistant message, whose content and time count).
    pub fn of_fields(fields: &EntryFields) -> Option<Self> {
        // A second header line is kept in the file but is no entry (pi's getEntries skips it).
        if fields.is_header() {
            return Some(Observation::default());
        }
        let seen = Observation { entry: true, ..Observation::default() };
        match (fields.kind.as_deref(), fields.role.as_deref()) {
            (Some("session_info"), _) | (Some("message"), Some("user" | "assistant")) => None,
            (Some("message"), _) => Some(Observation { message: true, ..seen }),
            _ => Some(seen),
        }
    }
}

impl SessionStats {
    /// Takes one entry into account; `text` is its part of `allMessagesText` (pi's
    /// `extractTextContent` of a user/assistant message, when not empty).
    pub fn apply(&mut self, seen: &Observation, text: Option<&str>) {
        if !seen.entry {
            return;
        }
        self.entry_count += 1;
        if let Some(name) = &seen.name {
            self.name.clone_from(name);
        }
        if seen.message {
            self.message_count += 1;
        }
        if let Some(activity) = seen.activity {
            if let Some(t) = activity {
                self.last_activity_ms = Some(self.last_activity_ms.unwrap_or(0.0).max(t));
            }
            if self.first_message.is_none() && seen.user {
                self.first_message = text.map(str::to_owned);
            }
        }
    }
}

/// pi's `extractTextContent`: string content as is, else text blocks joined by a space.
pub fn message_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.to_str().into_owned(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(Value::as_object)
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .map(|b| match b.get("text") {
                Some(Value::String(s)) => s.to_str().into_owned(),
                Some(Value::Number(n)) => {
                    let mut out = Vec::new();
                    json::write_number(&mut out, *n);
                    String::from_utf8_lossy(&out).into_owned()
                }
                Some(Value::Bool(b)) => b.to_string(),
                _ => String::new(),
            })
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}
