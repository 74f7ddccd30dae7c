//! Entry rows: a session's tree (the entry by id, by key, the last one, paths up to the root,
//! children, labels) and its lines in file order, the same on every backend ([`Entries`],
//! implemented in `store::sqlite::entries` and `store::postgres::entries`).

use crate::error::Result;
use crate::js::json::{self, Value};
use crate::pi::projection::ParsedEntry;
use crate::store::interface::links::Links;
use crate::store::keys::{EntryKey, SessionKey};

/// One stored entry line with its columns.
#[derive(Debug, Clone)]
pub struct EntryRow {
    /// Storage key (see `store::keys`).
    pub key: EntryKey,
    /// `id` when a string.
    pub id: Option<String>,
    /// `parentId` when a string.
    pub parent_id: Option<String>,
    /// `type` when a string.
    pub kind: Option<String>,
    /// `message.role`.
    pub role: Option<String>,
    /// `new Date(timestamp).getTime()`.
    pub ts_ms: Option<i64>,
    /// The exact line.
    pub body: String,
    /// Key of the parent entry.
    pub parent_key: Option<EntryKey>,
    /// Distance from the root (exact only in regular sessions).
    pub depth: Option<i64>,
    /// Nearest compaction on the path.
    pub compaction_key: Option<EntryKey>,
    /// Nearest thinking-level change on the path.
    pub thinking_key: Option<EntryKey>,
    /// Nearest model change or assistant message on the path.
    pub model_key: Option<EntryKey>,
}

/// One entry of a path, without its line.
#[derive(Debug, Clone)]
pub struct PathStep {
    /// Storage key.
    pub key: EntryKey,
    /// Entry id, when a string.
    pub id: Option<String>,
    /// Entry type.
    pub kind: Option<String>,
    /// Message role.
    pub role: Option<String>,
}

/// An entry's type, role and time, without its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kind {
    /// `type` when a string.
    pub kind: Option<String>,
    /// `message.role`.
    pub role: Option<String>,
    /// Entry time (ms).
    pub ts_ms: Option<i64>,
}

impl EntryRow {
    /// The line parsed (verbatim when too deeply nested to parse as a tree).
    pub fn parse(&self) -> ParsedEntry<EntryKey> {
        ParsedEntry { key: self.key, value: json::parse_or_raw(&self.body).unwrap_or(Value::Null) }
    }
}

/// Reads of entry rows.
pub trait Entries {
    /// Whether session `sid`'s derived entry columns can be trusted, and its entry count (`None`
    /// when there is no such session).
    fn tree_state(&self, sid: SessionKey) -> Result<Option<(bool, i64)>>;
    /// The last entry of session `sid` in file order.
    fn last_entry(&self, sid: SessionKey) -> Result<Option<EntryRow>>;
    /// The entry with `id` in session `sid` (the later line wins for a repeated id).
    fn entry_by_id(&self, sid: SessionKey, id: &str) -> Result<Option<EntryRow>>;
    /// The entry stored under `key`.
    fn entry_by_key(&self, key: EntryKey) -> Result<Option<EntryRow>>;
    /// Every entry of session `sid` (header lines excluded) in file order.
    fn all_entries(&self, sid: SessionKey) -> Result<Vec<EntryRow>>;
    /// The label lines of session `sid` in file order.
    fn label_entries(&self, sid: SessionKey) -> Result<Vec<EntryRow>>;
    /// The entries of session `sid` whose `parentId` is `id`, in file order.
    fn children(&self, sid: SessionKey, id: &str) -> Result<Vec<EntryRow>>;
    /// The entries from `key` up through their parents, leaf first: after `stop` (when given) and
    /// after `limit` rows the walk ends.
    fn walk_up(&self, key: EntryKey, stop: Option<EntryKey>, limit: i64) -> Result<Vec<EntryRow>>;
    /// Keys, ids, types and roles from `key` up through the parents, at most `limit`, leaf first.
    fn walk_up_steps(&self, key: EntryKey, limit: i64) -> Result<Vec<PathStep>>;
    /// The linking columns of every entry of session `sid` (header lines excluded) in file
    /// order: all stored beside the line, so no line is read.
    fn links(&self, sid: SessionKey) -> Result<Links>;
    /// [`Self::links`] of the entries stored after key `after` only, from the index: a host
    /// holding a session's links asks for those appended since (pi's footer reads
    /// `getEntries()` on every change).
    fn links_after(&self, sid: SessionKey, after: EntryKey) -> Result<Links>;
    /// The type, role and time of the entry stored under `key`, without its line.
    fn entry_kind(&self, key: EntryKey) -> Result<Option<Kind>>;
    /// Hands `f` the key and line of each of `keys` that has one, once, in ascending key order,
    /// reading those lines only: a caller asking for every assistant of a session (pi's
    /// `/tree`) must not unpack the lines between them.
    fn lines_at(&self, keys: &[EntryKey], f: &mut dyn FnMut(EntryKey, &[u8])) -> Result<()>;
    /// Hands `f` the key and stored tree row (`pi::tree_row`) of each of `keys` that has one,
    /// once, in ascending key order, without reading lines. A key not handed on has none (not an
    /// assistant, a line the row cannot answer, a row written before rows were stored, or a
    /// backend that stores none): the caller reads its line.
    fn tree_rows_at(&self, keys: &[EntryKey], f: &mut dyn FnMut(EntryKey, &str)) -> Result<()>;
    /// Hands `f` the key and line of at most `limit` entries of session `sid` from key `from` on
    /// (header lines excluded), in file order, without copying the lines.
    fn lines_from(&self, sid: SessionKey, from: EntryKey, limit: i64, f: &mut dyn FnMut(EntryKey, &[u8]))
        -> Result<()>;
    /// Hands `f` every line of session `sid` (header lines included) in file order, each
    /// followed by `\n`, as stored (bytes, unchecked for UTF-8): one stream of bytes, in pieces
    /// of whatever size suits the backend. `f` may keep a piece's buffer, leaving another (its
    /// contents are not read) in its place.
    fn write_lines(&self, sid: SessionKey, f: &mut dyn FnMut(&mut Vec<u8>) -> Result<()>) -> Result<()>;
    /// The key of every session, in order.
    fn all_sessions(&self) -> Result<Vec<SessionKey>>;
}
