//! Writing sessions and entry lines, the same on every backend ([`Writes`], implemented in
//! `store::sqlite::write` and `store::postgres::write`): session rows, appends, forks and
//! branch sources, and the types they take.

use crate::error::Result;
use crate::js::canonical;
use crate::js::json::{self, RawObject};
use crate::jsonl::signature::FileSignature;
use crate::pi::tree_row;
use crate::store::codec::{Packed, Packer};
use crate::store::derive::{Derived, EntryFields, TreeIndexer};
use crate::store::extract::Extras;
use crate::store::keys::{EntryKey, SessionKey};
use crate::store::stats::{Observation, Plain, SessionStats};
use std::path::Path;

/// A backend's writer of a new session's lines (`store::entry_writer::EntryWriter`).
pub trait LineWriter {
    /// Stores one entry line read beforehand.
    fn write_parsed(&mut self, text: &str, line: ParsedLine) -> Result<()>;
    /// Stores one entry line that row `src.key` of the same database holds: `text`, or `None`
    /// when `src.plain` says what the line is (it was not read).
    fn share(&mut self, src: &SharedLine, text: Option<&str>, seen: &Observation) -> Result<()>;
    /// Saves the statistics; returns them.
    fn finish(self: Box<Self>) -> Result<SessionStats>;
}

/// A session row to insert.
pub struct NewSession<'a> {
    /// Absolute path of the session's file.
    pub path: &'a Path,
    /// Path below the directory it was imported from.
    pub rel_path: Option<&'a str>,
    /// The header object.
    pub header: &'a json::Object,
    /// The exact header line.
    pub header_line: &'a str,
    /// Header version before migration.
    pub source_version: f64,
    /// Size and modification time (ns) of the imported file.
    pub file: Option<FileSignature>,
    /// When the session was last written (ns since the epoch).
    pub written_ns: i64,
}

impl<'a> NewSession<'a> {
    /// A string field of the header (`id`, `cwd`, `timestamp`, `parentSession`), when it is one.
    pub fn header_str(&self, field: &str) -> Option<String> {
        self.header.get(field).and_then(json::Value::as_str).map(str::to_owned)
    }

    /// The folder of the session's file.
    pub fn dir(&self) -> String {
        self.path.parent().map(|d| d.to_string_lossy().into_owned()).unwrap_or_default()
    }

    /// A session made now by the SessionManager: written as version 3, from no file.
    pub fn made_now(path: &'a Path, header: &'a json::Object, header_line: &'a str) -> Self {
        let (rel_path, file) = (None, None);
        NewSession { path, rel_path, header, header_line, source_version: 3.0, file, written_ns: now_ns() }
    }

    /// A session imported from the file at `path` (`rel` below the imported folder), as
    /// the file was when its signature `sig` was taken.
    pub fn imported(
        path: &'a Path,
        rel: &'a str,
        header: &'a json::Object,
        header_line: &'a str,
        source_version: f64,
        sig: FileSignature,
    ) -> Self {
        let (rel_path, file, written_ns) = (Some(rel), Some(sig), sig.mtime_ns);
        NewSession { path, rel_path, header, header_line, source_version, file, written_ns }
    }
}

/// Nanoseconds since the Unix epoch, now.
pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// What writing an entry line needs from its text besides the text itself: its fields, search
/// and usage rows and statistics, read once (by an import, on another thread).
#[derive(Debug, Clone, Default)]
pub struct ParsedLine {
    /// Its top-level fields.
    pub fields: EntryFields,
    /// Its search and usage rows.
    pub extras: Extras,
    /// What it adds to its session's statistics.
    pub seen: Observation,
    /// The line packed beforehand (by an import's read-ahead) with a packer of the store
    /// ([`Writes::line_packer`]); `None`: the store packs it as it writes it, if it packs lines.
    pub packed: Option<Packed>,
    /// The line is what `JSON.stringify` writes ([`ParsedLine::of_line`]); `None`: not known.
    pub plain: Option<Plain>,
    /// What pi's tree selector reads of an assistant message ([`tree_row::of_entry`], by
    /// [`ParsedLine::of_line`]); `None` for other entries, or when not read.
    pub tree_row: Option<String>,
}

impl ParsedLine {
    /// Reads it from a scanned line.
    pub fn of(obj: &RawObject<'_>) -> Self {
        let (fields, message) = EntryFields::read(obj);
        let extras = Extras::of(&fields, obj, message.as_ref());
        let seen = Observation::of(&fields, obj, message.as_ref());
        ParsedLine { fields, extras, seen, packed: None, plain: None, tree_row: None }
    }

    /// Reads it from the line `text` and its scan `obj`, noting whether the line is in
    /// `JSON.stringify` form (a branched session then shares it without reading it), and an
    /// assistant message's tree row.
    pub fn of_line(text: &str, obj: &RawObject<'_>) -> Self {
        let mut line = ParsedLine::of(obj);
        if canonical::is_stringify_form(text) {
            line.plain = Some(Plain::of(&line.fields, &line.seen));
        }
        if line.fields.kind.as_deref() == Some("message") && line.fields.role.as_deref() == Some("assistant") {
            line.tree_row = tree_row::of_entry(obj);
        }
        line
    }
}

/// A line of a session in the same database that a new session shares, with what the source
/// row holds besides the line.
#[derive(Debug, Clone)]
pub struct SharedLine {
    /// Key of the source row.
    pub key: EntryKey,
    /// Its columns.
    pub fields: EntryFields,
    /// Its derived columns.
    pub derived: Derived,
    /// Its part of `allMessagesText` (its search row's list text).
    pub list_text: Option<String>,
    /// The line is what `JSON.stringify` writes, as the store noted when it was written
    /// (`None`: not known; the line is then read).
    pub plain: Option<Plain>,
}

/// Most rows one copy statement moves: a copy within one table goes through a temporary
/// table of the rows it reads, which must stay small whatever the session's length.
pub const COPY_SLICE: i64 = 1024;

/// Largest `allMessagesText` kept joined per session: bounds the writer's memory; longer
/// sessions are joined from their message rows when listed.
pub const LIST_TEXT_MAX: usize = 8 << 20;

/// Key of the entry stored as line `seq` of session `sid`.
pub fn entry_key(sid: SessionKey, seq: i64) -> EntryKey {
    sid.entry(seq)
}

/// The key range holding session `sid`'s lines.
pub fn key_range(sid: SessionKey) -> (EntryKey, EntryKey) {
    sid.range()
}

/// A session's row as an append sees it, kept between a manager's appends.
#[derive(Debug, Clone)]
pub(in crate::store) struct AppendRow {
    pub(in crate::store) stored: StoredStats,
    /// The write time the next append checks is still there (nobody else wrote since).
    pub(in crate::store) written_ns: i64,
    /// `all_text` joins the message texts of lines up to this one; later lines keep theirs
    /// apart until they are folded.
    pub(in crate::store) text_seq: i64,
}

/// What a SessionManager knows of the session it appends to, between its appends: the
/// session's row as its last append left it, and that append's entry (the next one's parent,
/// usually). Where the backend can use it, an append is then one round trip.
#[derive(Debug, Default)]
pub struct AppendState {
    pub(in crate::store) known: Option<(SessionKey, AppendRow)>,
    /// The last appended entry: session, id, key and derived columns.
    pub(in crate::store) last: Option<(SessionKey, String, EntryKey, Derived)>,
}

impl AppendState {
    /// Key and derived columns of entry `id` of session `sid`, when it is the one appended last.
    pub fn node(&self, sid: SessionKey, id: &str) -> Option<(EntryKey, Derived)> {
        match &self.last {
            Some((s, last, key, d)) if *s == sid && last == id => Some((*key, *d)),
            _ => None,
        }
    }
}

/// [`Writes::append_new_entry`] of a new entry under its entry `parent_id` (found from
/// `state` when it is the entry appended last): an append that reaches the tables at once.
pub(in crate::store) fn append_now<W: Writes + ?Sized>(
    w: &W,
    sid: SessionKey,
    text: &str,
    parent_id: Option<&str>,
    state: &mut AppendState,
) -> Result<Appended> {
    let parent = match parent_id {
        Some(p) => match state.node(sid, p) {
            Some(node) => Some(node),
            None => w.entry_node(sid, p)?,
        },
        None => None,
    };
    w.append_new_entry(sid, text, parent, state)
}

/// What an append of a SessionManager did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Appended {
    /// The line was stored under this key.
    Key(EntryKey),
    /// The line is durable, and reaches the tables at [`Writes::settle_appends`]: reads before
    /// then do not see it.
    Pending,
    /// The session has an entry with the line's id already; nothing was written.
    IdTaken,
}

/// What [`load_stats`] reads of a session.
#[derive(Debug, Clone)]
pub struct StoredStats {
    /// The discovery fields.
    pub stats: SessionStats,
    /// The line number of the session's last stored line.
    pub last_seq: i64,
    /// Every parent precedes its child and ids are unique, so the derived columns are exact.
    pub tree_ok: bool,
}

/// The derived columns of a line appended as `key` under `parent` (its key and columns), in a
/// session whose tree is `regular` or not; with the indexer, which knows whether the line made
/// the tree irregular.
pub(in crate::store) fn place_appended(
    key: EntryKey,
    f: &EntryFields,
    parent: Option<(EntryKey, Derived)>,
    regular: bool,
) -> (Derived, TreeIndexer) {
    let mut tree = TreeIndexer::resume(!regular);
    if let (Some((pkey, pd)), Some(pid)) = (parent, f.parent_id.as_deref()) {
        tree.remember(pid, pkey, pd);
    }
    let d = tree.place(key, f);
    (d, tree)
}

/// Reads the object of an entry line written by sessiondb itself.
pub fn scan(text: &str) -> Option<RawObject<'_>> {
    json::scan_object(text.as_bytes()).ok().flatten()
}

/// Writing sessions and their lines.
pub trait Writes {
    /// A packer of lines for an import's read-ahead thread, when the store keeps its lines
    /// packed (its lines then carry [`ParsedLine::packed`]).
    fn line_packer(&self) -> Result<Option<Packer>>;
    /// A writer of the lines of the new, empty session `sid`.
    fn line_writer<'a>(&'a self, sid: SessionKey) -> Result<Box<dyn LineWriter + 'a>>;
    /// Appends a new entry of a SessionManager's session (whose file is `file`) under its
    /// entry `parent_id`, durable when this returns, as the backend makes an append durable:
    /// SQLite's database file through its append journal (`store::sqlite::journal`; the entry
    /// reaches the tables at [`Writes::settle_appends`], [`Appended::Pending`]), else by
    /// [`Writes::append_new_entry`].
    fn append_saved(
        &self,
        sid: SessionKey,
        file: &str,
        text: &str,
        parent_id: Option<&str>,
        state: &mut AppendState,
    ) -> Result<Appended> {
        let _ = file;
        append_now(self, sid, text, parent_id, state)
    }
    /// Moves every append that is durable but not in the tables yet ([`Appended::Pending`], of
    /// any process) into them. Nothing where appends reach the tables at once.
    fn settle_appends(&self) -> Result<()> {
        Ok(())
    }
    /// Starts a bulk write by this process (an import), until [`Writes::leave_bulk`]: on
    /// SQLite a rollback journal while no other connection has the file open
    /// (`store::sqlite::bulk`). Nothing where the backend has no such mode.
    fn enter_bulk(&self) {}
    /// Between two transactions of a bulk write: gives the database back to other processes
    /// that asked for it.
    fn between_bulk_transactions(&self) {}
    /// Ends [`Writes::enter_bulk`]'s mode.
    fn leave_bulk(&self) {}
    /// Whether [`Writes::append_new_entry`] checks itself that the new entry's id is free (the
    /// caller then draws ids without asking).
    fn append_checks_id(&self) -> bool;
    /// Adds the session row; returns its sid.
    fn insert_session(&self, n: &NewSession<'_>) -> Result<SessionKey>;
    /// Makes the new, empty session `copy` a copy of every entry of session `source` (pi's
    /// `forkFrom`): entry rows sharing the source's lines, search and usage rows, statistics and
    /// the joined message text. Runs in the caller's transaction.
    fn copy_session(&self, source: SessionKey, copy: SessionKey) -> Result<()>;
    /// [`Writes::append_entry`] for a new entry of a SessionManager, whose id was drawn
    /// without asking the database; `state` is what the manager's previous append left.
    fn append_new_entry(
        &self,
        sid: SessionKey,
        text: &str,
        parent: Option<(EntryKey, Derived)>,
        state: &mut AppendState,
    ) -> Result<Appended>;
    /// A session's statistics as stored, and its last line number and tree regularity.
    fn load_stats(&self, sid: SessionKey) -> Result<StoredStats>;
    /// Appends one entry line to session `sid` under its parent (the leaf), with derived columns
    /// from the parent and the session's statistics and write time updated. Returns the new key.
    fn append_entry(&self, sid: SessionKey, text: &str, parent: Option<(EntryKey, Derived)>) -> Result<EntryKey>;
    /// Key and derived columns of entry `id` in session `sid` (the later line for a repeated id).
    fn entry_node(&self, sid: SessionKey, id: &str) -> Result<Option<(EntryKey, Derived)>>;
    /// The rows stored under `keys` (absent keys skipped), in that order, each as a line a new
    /// session may share and the line itself, which may be left unread (`None`) where
    /// [`SharedLine::plain`] says what it is, unless `every_line`: consecutive keys are read by
    /// one range query.
    fn branch_source_rows(&self, keys: &[EntryKey], every_line: bool) -> Result<Vec<(SharedLine, Option<String>)>>;
}
