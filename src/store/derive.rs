//! What sessiondb stores beside each entry line: the fields queries need as columns, and data
//! derived once from the entry's parent at insert time (depth, nearest compaction, settings in
//! force), so that reading a path or a projection costs what it returns, not the history.

use crate::js::json::{self, RawObject};
use crate::js::jstime;
use crate::store::keys::EntryKey;
use std::collections::{HashMap, HashSet};

/// Top-level fields of an entry line kept as columns.
#[derive(Debug, Clone, Default)]
pub struct EntryFields {
    /// `id` when a string.
    pub id: Option<String>,
    /// `parentId` when a string.
    pub parent_id: Option<String>,
    /// `type` when a string.
    pub kind: Option<String>,
    /// `timestamp` when a string.
    pub ts: Option<String>,
    /// `new Date(timestamp).getTime()`, `None` for NaN.
    pub ts_ms: Option<i64>,
    /// `message.role` of a `message` entry.
    pub role: Option<String>,
}

impl EntryFields {
    /// Reads the fields from a scanned line; also returns the scanned `message` of a message entry.
    pub fn read<'a>(obj: &RawObject<'a>) -> (Self, Option<RawObject<'a>>) {
        let kind = obj.get_str("type");
        let message = if kind.as_deref() == Some("message") {
            obj.raw("message").and_then(|raw| json::scan_object(raw).ok().flatten())
        } else {
            None
        };
        let fields = EntryFields {
            id: obj.get_str("id"),
            parent_id: obj.get_str("parentId"),
            ts: obj.get_str("timestamp"),
            ts_ms: jstime::date_value_ms(obj.get("timestamp").as_ref()),
            role: message.as_ref().and_then(|m| m.get_str("role")),
            kind,
        };
        (fields, message)
    }

    /// True for a header line (`type: "session"`), which is kept but is no entry.
    pub fn is_header(&self) -> bool {
        self.kind.as_deref() == Some("session")
    }
}

/// Derived columns of one entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Derived {
    /// Key of the parent entry.
    pub parent_key: Option<EntryKey>,
    /// Distance from the root.
    pub depth: Option<i64>,
    /// Nearest compaction on the path, itself included.
    pub compaction_key: Option<EntryKey>,
    /// Nearest thinking-level change on the path.
    pub thinking_key: Option<EntryKey>,
    /// Nearest model change or assistant message on the path.
    pub model_key: Option<EntryKey>,
}

/// Computes [`Derived`] for entries written in file order.
///
/// The derived data is exact when every parent precedes its child in the file and ids are
/// unique (always true for files pi writes). Anything else (a repeated id, a parent that comes
/// later, a self parent, an entry without an id) makes the session *irregular*: its
/// `parent_key`s are then recomputed from the whole session and reads walk real paths.
#[derive(Debug, Default)]
pub struct TreeIndexer {
    nodes: HashMap<String, (EntryKey, Derived)>,
    unresolved: HashSet<String>,
    irregular: bool,
}

impl TreeIndexer {
    /// An indexer for a new session.
    pub fn new() -> Self {
        TreeIndexer::default()
    }

    /// An indexer continuing a session whose entries are already stored (appends).
    pub fn resume(irregular: bool) -> Self {
        TreeIndexer { irregular, ..TreeIndexer::default() }
    }

    /// Tells the indexer about an already stored entry (used when appending).
    pub fn remember(&mut self, id: &str, key: EntryKey, derived: Derived) {
        self.nodes.insert(id.to_string(), (key, derived));
    }

    /// True when ids or parent order make derived data unusable.
    pub fn is_irregular(&self) -> bool {
        self.irregular
    }

    /// Derived data for the entry stored under `key`.
    pub fn place(&mut self, key: EntryKey, f: &EntryFields) -> Derived {
        if f.is_header() {
            return Derived::default();
        }
        let parent = match f.parent_id.as_deref() {
            // `""` ends a path like null does.
            None | Some("") => None,
            Some(p) if Some(p) == f.id.as_deref() => {
                self.irregular = true; // a self parent is a cycle of one
                None
            }
            Some(p) => match self.nodes.get(p) {
                Some(&(k, d)) => Some((k, d)),
                None => {
                    self.unresolved.insert(p.to_string());
                    None
                }
            },
        };
        let mut d = match parent {
            Some((pk, pd)) => Derived { parent_key: Some(pk), depth: pd.depth.map(|x| x + 1), ..pd },
            None => Derived { depth: Some(0), ..Derived::default() },
        };
        match f.kind.as_deref() {
            Some("compaction") => d.compaction_key = Some(key),
            Some("thinking_level_change") => d.thinking_key = Some(key),
            Some("model_change") => d.model_key = Some(key),
            Some("message") if f.role.as_deref() == Some("assistant") => d.model_key = Some(key),
            _ => {}
        }
        match f.id.as_deref() {
            Some(id) => {
                if self.nodes.contains_key(id) || self.unresolved.contains(id) {
                    // A repeated id, or an id some earlier entry already named as its parent.
                    self.irregular = true;
                }
                self.nodes.insert(id.to_string(), (key, d));
            }
            None => self.irregular = true,
        }
        d
    }
}
