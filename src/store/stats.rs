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

/// A line exactly as `JSON.stringify` writes it, as stored beside its columns: enough to know
/// what it adds to its session's statistics without reading it (a branched session shares such
/// lines unread).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Plain {
    /// A user or assistant message with content (it counts as activity).
    pub activity: bool,
    /// Its activity time when it differs from the entry's `ts_ms` (`message.timestamp`).
    pub activity_ms: Option<f64>,
}

impl Plain {
    /// How a line in `JSON.stringify` form whose columns are `fields` and that adds `seen` is stored.
    pub fn of(fields: &EntryFields, seen: &Observation) -> Self {
        let entry_ms = fields.ts_ms.map(|t| (t as f64).to_bits());
        let activity_ms = seen.activity.flatten().filter(|t| Some(t.to_bits()) != entry_ms);
        Plain { activity: seen.activity.is_some(), activity_ms }
    }

    /// The stored `plain` column: 2 for activity, else 1 (`NULL` is a line not known to be plain).
    pub fn column(&self) -> i64 {
        if self.activity {
            2
        } else {
            1
        }
    }

    /// From the stored columns `plain` and `activity_ms`.
    pub fn from_columns(plain: Option<i64>, activity_ms: Option<f64>) -> Option<Self> {
        plain.map(|p| Plain { activity: p == 2, activity_ms })
    }

    /// What the line adds to its session's statistics, as [`Observation::of`] reads it from the
    /// line; `None` when the line itself is needed (a session name).
    pub fn observation(&self, fields: &EntryFields) -> Option<Observation> {
        match (fields.kind.as_deref(), fields.role.as_deref()) {
            (Some("message"), Some(role @ ("user" | "assistant"))) => Some(Observation {
                entry: true,
                name: None,
                message: true,
                activity: self.activity.then(|| self.activity_ms.or(fields.ts_ms.map(|t| t as f64))),
                user: self.activity && role == "user",
            }),
            _ => Observation::of_fields(fields),
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

#[cfg(test)]
mod tests {
    use super::{Observation, Plain};
    use crate::js::json;
    use crate::store::derive::EntryFields;

    /// What a plain line adds, stored as [`Plain`] and read back, is what reading the line gives.
    #[test]
    fn a_plain_line_adds_what_its_line_adds() {
        let lines = [
            r#"{"type":"message","id":"a","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1767225600000}}"#,
            r#"{"type":"message","id":"b","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"assistant","content":[],"timestamp":1767225601000}}"#,
            r#"{"type":"message","id":"c","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"no time"}}"#,
            r#"{"type":"message","id":"d","timestamp":"bad","message":{"role":"user","content":"no time at all"}}"#,
            r#"{"type":"message","id":"e","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","timestamp":5}}"#,
            r#"{"type":"message","id":"f","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"assistant","content":"x","timestamp":1.5}}"#,
            r#"{"type":"message","id":"g","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"toolResult","content":"x"}}"#,
            r#"{"type":"model_change","id":"h","timestamp":"2026-01-01T00:00:01.000Z","provider":"p","modelId":"m"}"#,
        ];
        let mut activity = 0;
        for line in lines {
            let obj = json::scan_object(line.as_bytes()).unwrap().unwrap();
            let (fields, message) = EntryFields::read(&obj);
            let seen = Observation::of(&fields, &obj, message.as_ref());
            let plain = Plain::of(&fields, &seen);
            activity += i64::from(plain.activity);
            let stored = Plain::from_columns(Some(plain.column()), plain.activity_ms).unwrap();
            assert_eq!(stored.observation(&fields), Some(seen), "{line}");
        }
        assert_eq!(activity, 5);
        // A session name needs its line.
        let name = EntryFields { kind: Some("session_info".into()), ..EntryFields::default() };
        assert_eq!(Plain::default().observation(&name), None);
    }
}
