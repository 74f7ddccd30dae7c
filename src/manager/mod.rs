//! pi's `SessionManager` over the database : appends written as pi writes them,
//! navigation, branching, forks, lazy persistence.
//!
//! Where the current session lives is one `Persistence`: in memory (sessions made with
//! [`SessionManager::in_memory`] never leave it), staged (a session with no conversation yet
//! lives in a private in-memory database; its first user or assistant message moves header and
//! entries into the real database in one transaction), or saved (appends made durable as the store makes them: on SQLite, through its append
//! journal, read back once settled).

mod append;
mod branch;
mod files;
mod lazy;
mod lease;
mod read;

pub use crate::store::interface::links::{LinkRef, Links};
pub use lazy::TreeLinks;
pub use lease::{hold_leases, holds_leases, LeaseNotice};

use crate::error::{Error, Result};
use crate::js::json::{self, Object, Value};
use crate::js::jstime;
use crate::pi::entries::{self as build, Opt};
use crate::pi::ids;
use crate::pi::layout;
use crate::pi::projection::ParsedEntry;
use crate::pi::system;
use crate::read::tree::{Leaf, Row, SessionTree, TreeNode};
use crate::store::db::{self, Db};
use crate::store::derive::{Derived, EntryFields};
use crate::store::entry_writer::EntryWriter;
use crate::store::interface::write::{self, NewSession};
use crate::store::keys::{EntryKey, SessionKey};
use crate::store::stats::Observation;
use branch::{branch_lines, Line, LineSink};
use indexmap::IndexMap;
use std::cell::RefCell;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Options for a new session (`create`, `forkFrom`, `inMemory`).
#[derive(Debug, Clone, Default)]
pub struct NewSessionOptions {
    /// A caller-chosen session id (must match pi's rule).
    pub id: Option<String>,
    /// `parentSession` for the header.
    pub parent_session: Option<String>,
}

/// What a constructor opened: the fields pi's callers look at first.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Opened {
    /// Header id.
    pub session_id: String,
    /// The session's file path (`None` in memory).
    pub session_file: Option<String>,
    /// The manager's cwd.
    pub cwd: String,
}

/// A session being read and written, as pi's `SessionManager`.
pub struct SessionManager {
    /// The database (an in-memory one for in-memory sessions).
    conn: db::Pooled,
    /// Where the current session lives and how an append reaches it.
    persistence: Persistence,
    sid: SessionKey,
    cwd: String,
    session_dir: String,
    session_id: String,
    leaf: Option<String>,
    labels: IndexMap<String, (Value, Option<Value>)>,
    /// Ids of this manager's appends that are durable but not in the tables yet
    /// ([`write::Appended::Pending`]): reads settle them first.
    unsettled: RefCell<HashSet<String>>,
    /// Entry ids drawn ahead and found free in one read of the session (see `new_id`), with
    /// the session and whether it was staged then.
    spare_ids: RefCell<SpareIds>,
    /// On PostgreSQL, what the last append left of the session's row and its entry, so that
    /// the next append is one round trip.
    appending: write::AppendState,
    /// Whether this manager holds leases on the sessions it writes (see `lease`).
    leasing: bool,
    /// The session whose lease this manager holds.
    leased: Option<SessionKey>,
    /// Why the last open continued in a fork (see `lease`), until the host asks.
    notice: Option<LeaseNotice>,
}

/// Entry ids a manager drew and checked free before it needs them: few, so that the time
/// between the check and the append that takes one stays short.
const SPARE_IDS: usize = 16;

/// [`SessionManager::new_id`]'s ids drawn ahead, for the session (and staging) they were
/// checked against.
#[derive(Default)]
struct SpareIds {
    owner: Option<(SessionKey, bool)>,
    ids: Vec<String>,
}

/// Where a manager's current session lives: pi's three ways of keeping a session.
enum Persistence {
    /// pi's `inMemory`: in the manager's own in-memory database, never in a file.
    InMemory,
    /// A new session without a user or assistant message yet (pi writes no file until then):
    /// in `stage`, a private in-memory database; the first such message moves the session
    /// into the database at `db_path` in one transaction.
    Staged { db_path: PathBuf, file: String, stage: Db },
    /// In the database at `db_path`, appended to as its store makes an append durable.
    Saved { db_path: PathBuf, file: String },
}

impl Persistence {
    /// The database file, for a manager that persists.
    fn db_path(&self) -> Option<&Path> {
        match self {
            Persistence::InMemory => None,
            Persistence::Staged { db_path, .. } | Persistence::Saved { db_path, .. } => Some(db_path),
        }
    }

    /// The session's file path (`None` in memory).
    fn file(&self) -> Option<&str> {
        match self {
            Persistence::InMemory => None,
            Persistence::Staged { file, .. } | Persistence::Saved { file, .. } => Some(file),
        }
    }

    /// The same database, for the session at `file`, staged in `stage` or saved. A manager in
    /// memory stays in memory.
    fn next(self, file: Option<String>, stage: Option<Db>) -> Persistence {
        let db_path = match self {
            Persistence::InMemory => return Persistence::InMemory,
            Persistence::Staged { db_path, .. } | Persistence::Saved { db_path, .. } => db_path,
        };
        let file = file.unwrap_or_default();
        match stage {
            Some(stage) => Persistence::Staged { db_path, file, stage },
            None => Persistence::Saved { db_path, file },
        }
    }
}

impl Drop for SessionManager {
    fn drop(&mut self) {
        // Errors leave the appends durable but unsettled; the next open of the database settles them.
        let _ = self.settle();
        self.let_go();
    }
}

fn not_found(id: &str) -> Error {
    Error::NotFound(format!("Entry {id} not found"))
}

fn resolved(p: &str) -> String {
    layout::resolve_path(p).to_string_lossy().into_owned()
}

fn process_cwd() -> String {
    std::env::current_dir().map(|p| p.to_string_lossy().into_owned()).unwrap_or_else(|_| "/".into())
}

use crate::read::discovery::{cwd_filter, session_dir_for};

fn validate_id(id: Option<&str>) -> Result<()> {
    match id {
        Some(id) if !ids::is_valid_session_id(id) => Err(Error::InvalidArgument(ids::INVALID_SESSION_ID.into())),
        _ => Ok(()),
    }
}

/// Inserts a session with its entry lines into `conn` in one transaction; returns its sid.
fn write_session(conn: &mut Db, path: &Path, header: &Object, lines: &[String]) -> Result<SessionKey> {
    write_session_from(conn, path, header, &mut |_, sink| lines.iter().try_for_each(|l| sink(Line::Text(l))))
}

/// Hands each entry line of a new session to the sink; gets the transaction the session is
/// being written in (to read from the same database).
type LineSource<'a> = dyn FnMut(&Db, &mut LineSink<'_>) -> Result<()> + 'a;

/// Writes a new session at `path`: header, then the lines `fill` produces, in one transaction.
fn write_session_from(conn: &mut Db, path: &Path, header: &Object, fill: &mut LineSource<'_>) -> Result<SessionKey> {
    let tx = conn.write()?;
    let header_line = Value::Object(header.clone()).to_json();
    let sid = tx.store().insert_session(&NewSession::made_now(path, header, &header_line)).map_err(|e| match e {
        e if db::is_constraint_violation(&e) => {
            Error::InvalidArgument(format!("EEXIST: file already exists, open '{}'", path.display()))
        }
        other => other,
    })?;
    let not_object = || Error::InvalidArgument("entry is not a JSON object".into());
    let mut w = EntryWriter::new(&tx, sid)?;
    fill(&tx, &mut |line| match line {
        Line::Text(text) => {
            w.write_parsed(text, write::ParsedLine::of_line(text, &write::scan(text).ok_or_else(not_object)?))
        }
        Line::Shared(src, text) => {
            let noted = src.plain.and_then(|p| p.observation(&src.fields));
            let seen = match noted.or_else(|| Observation::of_fields(&src.fields)) {
                Some(seen) => seen,
                None => {
                    let obj = write::scan(text.ok_or_else(not_object)?).ok_or_else(not_object)?;
                    let (fields, message) = EntryFields::read(&obj);
                    Observation::of(&fields, &obj, message.as_ref())
                }
            };
            w.share(src, text, &seen)
        }
    })?;
    w.finish()?;
    tx.commit()?;
    Ok(sid)
}

fn is_conversation(entry: &Object) -> bool {
    let role = entry.get("message").and_then(Value::as_object).and_then(|m| m.get("role")).and_then(Value::as_str);
    is_conversation_kind(entry.get("type").and_then(Value::as_str), role)
}

/// Whether an entry of this type and message role makes a session worth writing: a user or
/// assistant message.
fn is_conversation_kind(kind: Option<&str>, role: Option<&str>) -> bool {
    kind == Some("message") && matches!(role, Some("user" | "assistant"))
}

impl SessionManager {
    // ----- constructors -------------------------------------------------------------------

    fn blank(conn: db::Pooled, db_path: Option<&Path>, cwd: String, session_dir: String) -> Self {
        // Saved with no file until `start_new` or `load` says which session it holds.
        let persistence = match db_path {
            Some(p) => Persistence::Saved { db_path: p.to_path_buf(), file: String::new() },
            None => Persistence::InMemory,
        };
        SessionManager {
            conn,
            persistence,
            sid: SessionKey(0),
            cwd,
            session_dir,
            session_id: String::new(),
            leaf: None,
            labels: IndexMap::new(),
            unsettled: RefCell::new(HashSet::new()),
            spare_ids: RefCell::default(),
            appending: write::AppendState::default(),
            leasing: lease::holds_leases(),
            leased: None,
            notice: None,
        }
    }

    /// Whether sessions of this manager are kept in the database (pi's `isPersisted`).
    fn persists(&self) -> bool {
        !matches!(self.persistence, Persistence::InMemory)
    }

    /// Makes the session at `file` current: staged in `stage`, or saved.
    fn set_persistence(&mut self, file: Option<String>, stage: Option<Db>) {
        // Ids drawn ahead were checked against the session that was current.
        *self.spare_ids.get_mut() = SpareIds::default();
        let previous = std::mem::replace(&mut self.persistence, Persistence::InMemory);
        self.persistence = previous.next(file, stage);
    }

    /// Starts a new, unsaved session (pi's `newSession`) to be written at `file`.
    fn start_new(&mut self, opts: &NewSessionOptions, file: Option<String>) -> Result<()> {
        validate_id(opts.id.as_deref())?;
        let id = opts.id.clone().unwrap_or_else(ids::new_session_id);
        let ts = jstime::now_iso();
        let header = build::header(&id, &ts, &self.cwd, opts.parent_session.as_deref());
        let file = match file {
            Some(f) => Some(f),
            None if self.persists() => Some(
                Path::new(&self.session_dir).join(layout::session_file_name(&ts, &id)).to_string_lossy().into_owned(),
            ),
            None => None,
        };
        self.install(header, &[], file, false)
    }

    /// Makes `header` + `lines` the current session: written to the database now when
    /// `save_now` (or when it is in memory), staged otherwise.
    fn install(&mut self, header: Object, lines: &[String], file: Option<String>, save_now: bool) -> Result<()> {
        let id = header.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
        let path = file.clone().unwrap_or_else(|| format!("<memory>/{id}"));
        let stage = if !self.persists() || save_now {
            self.sid = write_session(&mut self.conn, Path::new(&path), &header, lines)?;
            None
        } else {
            let mut stage = db::open_in_memory()?;
            self.sid = write_session(&mut stage, Path::new(&path), &header, lines)?;
            Some(stage)
        };
        self.session_id = id;
        self.set_persistence(file, stage);
        self.reload_index()
    }

    /// pi's `_buildIndex`: the leaf is the last entry, labels are replayed.
    fn reload_index(&mut self) -> Result<()> {
        let (leaf, labels) = {
            let t = SessionTree::open(self.db()?, self.sid)?;
            (t.last_entry()?.and_then(|r| r.id), t.labels()?)
        };
        self.leaf = leaf;
        self.labels = labels;
        Ok(())
    }

    /// Loads the stored session `sid`.
    fn load(&mut self, sid: SessionKey, file: String) -> Result<()> {
        let header = self.conn.store().session_row(sid)?.header;
        let h = json::parse(header.as_bytes()).unwrap_or(Value::Null);
        self.session_id =
            h.as_object().and_then(|o| o.get("id")).and_then(Value::as_str).unwrap_or_default().to_string();
        self.sid = sid;
        self.set_persistence(Some(file), None);
        self.reload_index()
    }

    /// pi's `SessionManager.create(cwd, sessionDir?, options?)`: a new session, saved once it
    /// holds a user or assistant message.
    pub fn create(db_path: &Path, cwd: &str, session_dir: Option<&str>, opts: NewSessionOptions) -> Result<Self> {
        let dir = session_dir_for(cwd, session_dir);
        let mut m = SessionManager::blank(db::open_pooled(db_path)?, Some(db_path), resolved(cwd), dir);
        m.start_new(&opts, None)?;
        Ok(m)
    }

    /// pi's `SessionManager.inMemory(cwd?, options?)`: never saved.
    pub fn in_memory(cwd: Option<&str>, opts: NewSessionOptions) -> Result<Self> {
        let cwd = resolved(cwd.map_or_else(process_cwd, str::to_owned).as_str());
        let mut m = SessionManager::blank(db::Pooled::unpooled(db::open_in_memory()?), None, cwd, String::new());
        m.start_new(&opts, None)?;
        Ok(m)
    }

    /// pi's `SessionManager.inMemory(cwd?, options?, entries)`: a session preloaded from
    /// pi's file entries, never saved. With a header among them (pi takes the first `session`
    /// entry) they load as a file's lines do, migrated to the current version; without one, a
    /// new header (honouring `opts`) comes first. The cwd stays the constructor's.
    pub fn in_memory_with_entries(cwd: Option<&str>, opts: NewSessionOptions, entries: &[Value]) -> Result<Self> {
        if entries.is_empty() {
            return SessionManager::in_memory(cwd, opts);
        }
        let cwd = resolved(cwd.map_or_else(process_cwd, str::to_owned).as_str());
        let mut m = SessionManager::blank(db::Pooled::unpooled(db::open_in_memory()?), None, cwd, String::new());
        let is_header =
            |e: &Value| e.as_object().and_then(|o| o.get("type")).and_then(Value::as_str) == Some("session");
        let lines: Vec<String> = entries.iter().map(Value::to_json).collect();
        let Some(h) = entries.iter().position(is_header) else {
            validate_id(opts.id.as_deref())?;
            let id = opts.id.clone().unwrap_or_else(ids::new_session_id);
            let header = build::header(&id, &jstime::now_iso(), &m.cwd, opts.parent_session.as_deref());
            m.install(header, &lines, None, true)?;
            return Ok(m);
        };
        // The importer reads files and wants the header first; pi's index skips the header
        // wherever it is, so moving it to the front changes nothing pi shows.
        let mut text = String::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
        for line in std::iter::once(&lines[h]).chain(lines.iter().enumerate().filter(|(i, _)| *i != h).map(|(_, l)| l))
        {
            text.push_str(line);
            text.push('\n');
        }
        let dir = tempfile::tempdir().map_err(|e| Error::io(Path::new("<temporary directory>"), e))?;
        let file = dir.path().join("preloaded.jsonl");
        std::fs::write(&file, text).map_err(|e| Error::io(&file, e))?;
        let r = crate::ingest::import::import_file(
            &mut m.conn,
            &file,
            None,
            crate::ingest::import::ImportOptions::default(),
        );
        if r.status == crate::ingest::import::FileStatus::Failed {
            let why = r.reason.unwrap_or_default();
            return Err(Error::InvalidArgument(format!("inMemory: the preloaded entries are not a pi session: {why}")));
        }
        let key = r.path.to_string_lossy().into_owned();
        let sid = find_path(&m.conn, &key)?
            .ok_or_else(|| Error::InvalidArgument("inMemory: the preloaded entries were not stored".into()))?;
        m.load(sid, key)?;
        Ok(m)
    }

    /// pi's `SessionManager.open(path, sessionDir?, cwdOverride?)`: the session recorded at
    /// `path`; a session file there that the database does not hold yet is imported first; a
    /// 0-byte file becomes a new session saved at once; no file: a new session for that path.
    pub fn open(db_path: &Path, path: &str, session_dir: Option<&str>, cwd_override: Option<&str>) -> Result<Self> {
        let file = resolved(path);
        let mut conn = db::open_pooled(db_path)?;
        let mut sid = find_path(&conn, &file)?;
        let file_path = Path::new(&file);
        if sid.is_none() && file_path.is_file() {
            let len = std::fs::metadata(file_path).map_err(|e| Error::io(file_path, e))?.len();
            if len > 0 {
                let r = crate::ingest::import::import_file(
                    &mut conn,
                    file_path,
                    None,
                    crate::ingest::import::ImportOptions::default(),
                );
                if r.status == crate::ingest::import::FileStatus::Failed {
                    return Err(Error::InvalidArgument(format!("Session file is not a valid pi session: {file}")));
                }
                sid = find_path(&conn, &file)?;
            }
        }
        let dir = match session_dir {
            Some(d) => resolved(d),
            None => file_path.parent().map(|p| p.to_string_lossy().into_owned()).unwrap_or_default(),
        };
        let header_cwd = match sid {
            Some(s) => conn.store().session_row(s)?.cwd,
            None => None,
        };
        let cwd = resolved(&cwd_override.map(str::to_owned).or(header_cwd).unwrap_or_else(process_cwd));
        let mut m = SessionManager::blank(conn, Some(db_path), cwd, dir);
        match sid {
            Some(s) => {
                m.load(s, file)?;
                m.hold_or_fork()?;
            }
            None if file_path.is_file() => {
                // A 0-byte file: pi writes a fresh header into it right away.
                m.start_new(&NewSessionOptions::default(), Some(file.clone()))?;
                m.flush(None)?;
            }
            None => m.start_new(&NewSessionOptions::default(), Some(file))?,
        }
        Ok(m)
    }

    /// pi's `SessionManager.continueRecent(cwd, sessionDir?)`: the session in that folder
    /// written most recently (for an explicit non-default folder: with that header cwd), or a
    /// new one.
    pub fn continue_recent(db_path: &Path, cwd: &str, session_dir: Option<&str>) -> Result<Self> {
        let dir = session_dir_for(cwd, session_dir);
        let filter = cwd_filter(cwd, session_dir, &dir);
        let conn = db::open_pooled(db_path)?;
        let found = crate::read::discovery::recent_in_dir(&conn, &dir, filter.as_deref())?;
        let mut m = SessionManager::blank(conn, Some(db_path), resolved(cwd), dir);
        match found {
            Some((sid, path)) => {
                m.load(sid, path)?;
                m.hold_or_fork()?;
            }
            None => m.start_new(&NewSessionOptions::default(), None)?,
        }
        Ok(m)
    }

    /// pi's `SessionManager.forkFrom(sourcePath, targetCwd, sessionDir?, options?)`: a new
    /// session for `target_cwd` holding every entry of the source, unchanged, saved at once.
    pub fn fork_from(
        db_path: &Path,
        source_path: &str,
        target_cwd: &str,
        session_dir: Option<&str>,
        opts: NewSessionOptions,
    ) -> Result<Self> {
        let source = resolved(source_path);
        let target = resolved(target_cwd);
        let mut conn = db::open_pooled(db_path)?;
        let mut sid = find_path(&conn, &source)?;
        if sid.is_none() && Path::new(&source).is_file() {
            let r = crate::ingest::import::import_file(
                &mut conn,
                Path::new(&source),
                None,
                crate::ingest::import::ImportOptions::default(),
            );
            if r.status != crate::ingest::import::FileStatus::Failed {
                sid = find_path(&conn, &source)?;
            }
        }
        let Some(source_sid) = sid else {
            return Err(Error::InvalidArgument(format!(
                "Cannot fork: source session file is empty or invalid: {source}"
            )));
        };
        let dir = session_dir_for(&target, session_dir);
        validate_id(opts.id.as_deref())?;
        let (new_sid, file, _) = lease::fork_session(&mut conn, source_sid, &source, &target, &dir, opts.id)?;
        let mut m = SessionManager::blank(conn, Some(db_path), target, dir);
        m.load(new_sid, file)?;
        m.hold_new()?;
        Ok(m)
    }

    /// pi's `SessionManager.findById(cwd, id, sessionDir?)`: the path of the session with
    /// exactly that header id in that folder.
    pub fn find_by_id(db_path: &Path, cwd: &str, id: &str, session_dir: Option<&str>) -> Result<Option<String>> {
        let dir = session_dir_for(cwd, session_dir);
        let filter = cwd_filter(cwd, session_dir, &dir);
        let conn = db::open_pooled(db_path)?;
        crate::read::discovery::find_in_dir(&conn, id, &dir, filter.as_deref())
    }

    // ----- persistence --------------------------------------------------------------------

    /// The database holding the session, as it is (unsettled appends not yet in it).
    fn raw_db(&self) -> &Db {
        match &self.persistence {
            Persistence::Staged { stage, .. } => stage,
            _ => &self.conn,
        }
    }

    /// The database holding the session, with this manager's appends settled.
    fn db(&self) -> Result<&Db> {
        self.settle()?;
        Ok(self.raw_db())
    }

    /// Moves this manager's unsettled appends (and any other process's) into the tables now
    /// (reads through the manager do it themselves).
    pub fn settle(&self) -> Result<()> {
        if self.unsettled.borrow().is_empty() {
            return Ok(());
        }
        self.conn.store().settle_appends()?;
        self.unsettled.borrow_mut().clear();
        Ok(())
    }

    /// Moves a staged session into the database, with `extra` appended, in one transaction.
    fn flush(&mut self, extra: Option<&str>) -> Result<()> {
        let Persistence::Staged { stage, file, .. } = &self.persistence else { return Ok(()) };
        let t = SessionTree::open(stage, self.sid)?;
        let mut lines: Vec<String> = t.all_entries()?.into_iter().map(|r| r.body).collect();
        lines.extend(extra.map(str::to_owned));
        let header_text = stage.store().session_row(self.sid)?.header;
        let header = match json::parse(header_text.as_bytes()) {
            Ok(Value::Object(h)) => h,
            _ => return Err(Error::InvalidArgument("staged session has no header".into())),
        };
        let file = file.clone();
        let sid = write_session(&mut self.conn, Path::new(&file), &header, &lines)?;
        self.sid = sid;
        self.set_persistence(Some(file), None);
        // The session is written: a lease not taken (a database error) only leaves it unguarded.
        let _ = self.hold_new();
        Ok(())
    }

    /// Writes one entry under `parent_id` (pi's `_appendEntry` + `_persist`). On failure
    /// nothing changes.
    fn write_entry(&mut self, entry: Object) -> Result<String> {
        let mut id = entry.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
        let parent_id = entry.get("parentId").and_then(Value::as_str).map(str::to_owned);
        let text = entry.to_json();
        if matches!(self.persistence, Persistence::Staged { .. }) && is_conversation(&entry) {
            self.flush(Some(&text))?;
        } else {
            let (db, file) = match &self.persistence {
                Persistence::Staged { stage, file, .. } => (stage, file.as_str()),
                Persistence::Saved { file, .. } => (&*self.conn, file.as_str()),
                Persistence::InMemory => (&*self.conn, ""),
            };
            // Durable when it returns; where the store checks that the id drawn is free (see
            // `new_id`), another is drawn until one is.
            let (mut entry, mut text) = (entry, text);
            loop {
                match db.store().append_saved(self.sid, file, &text, parent_id.as_deref(), &mut self.appending)? {
                    write::Appended::Key(_) => break,
                    write::Appended::Pending => {
                        self.unsettled.borrow_mut().insert(id.clone());
                        break;
                    }
                    write::Appended::IdTaken => {}
                }
                let fresh = ids::new_entry_id(|_| false);
                // A compaction that keeps from itself names its own id: it moves with it.
                if entry.get("firstKeptEntryId").and_then(Value::as_str) == Some(id.as_str()) {
                    entry.set("firstKeptEntryId", Value::String(fresh.as_str().into()));
                }
                entry.set("id", Value::String(fresh.as_str().into()));
                text = entry.to_json();
                id = fresh;
            }
        }
        self.leaf = Some(id.clone());
        Ok(id)
    }

    /// Key and derived columns of the entry with `id`.
    fn node(&self, id: &str) -> Result<Option<(EntryKey, Derived)>> {
        self.db()?.store().entry_node(self.sid, id)
    }

    fn new_id(&self) -> Result<String> {
        let store = self.raw_db().store();
        if store.append_checks_id() {
            // The append checks the id is free and draws another if not (`write_entry`).
            return Ok(ids::new_entry_id(|_| false));
        }
        // Not settled: unsettled ids are checked in memory, so appends stay cheap.
        let unsettled = self.unsettled.borrow();
        let mut spare = self.spare_ids.borrow_mut();
        let owner = (self.sid, matches!(self.persistence, Persistence::Staged { .. }));
        if spare.owner != Some(owner) {
            *spare = SpareIds { owner: Some(owner), ids: Vec::new() };
        }
        while let Some(id) = spare.ids.pop() {
            if !unsettled.contains(&id) {
                return Ok(id);
            }
        }
        // Checking one id at a time costs a read transaction each (SQLite's file and WAL
        // locks: a third of an append); a batch checked in one read costs that once.
        let started = store.begin_read()?;
        let mut failed = None;
        let mut drawn: Vec<String> = Vec::with_capacity(SPARE_IDS);
        while drawn.len() < SPARE_IDS && failed.is_none() {
            let id = ids::new_entry_id(|c| match store.entry_id_exists(self.sid, c) {
                Ok(taken) => taken || unsettled.contains(c) || drawn.iter().any(|d| d == c),
                Err(e) => {
                    failed = Some(e);
                    true
                }
            });
            drawn.push(id);
        }
        if started {
            store.end_read();
        }
        if let Some(e) = failed {
            return Err(e);
        }
        let id = drawn.pop().unwrap_or_else(|| ids::new_entry_id(|_| false));
        spare.ids = drawn;
        Ok(id)
    }

    fn tree(&self) -> Result<SessionTree<'_>> {
        SessionTree::open(self.db()?, self.sid)
    }

    fn exists(&self, id: &str) -> Result<bool> {
        Ok(self.node(id)?.is_some())
    }

    // ----- navigation ---------------------------------------------------------------------

    /// pi's `branch(id)`: moves the leaf.
    pub fn branch(&mut self, id: &str) -> Result<()> {
        if !self.exists(id)? {
            return Err(not_found(id));
        }
        self.leaf = Some(id.to_string());
        Ok(())
    }

    /// pi's `resetLeaf()`: the next append starts a new root.
    pub fn reset_leaf(&mut self) {
        self.leaf = None;
    }

    /// pi's `branchWithSummary(fromId, summary, details?, fromHook?, usage?)`.
    pub fn branch_with_summary(
        &mut self,
        from: Option<&str>,
        summary: Opt,
        details: Opt,
        from_hook: Opt,
        usage: Opt,
    ) -> Result<String> {
        if let Some(f) = from {
            if !self.exists(f)? {
                return Err(not_found(f));
            }
        }
        let from_id = self.leaf.clone().unwrap_or_else(|| "root".into());
        // pi moves the leaf before writing; a failed write leaves it moved.
        self.leaf = from.map(str::to_owned);
        let id = self.new_id()?;
        let e = build::branch_summary(&id, from, &jstime::now_iso(), &from_id, summary, details, usage, from_hook);
        self.write_entry(e)
    }

    /// pi's `createBranchedSession(leafId)`: a new session holding the root→leaf path without
    /// label entries (re-chained), then the labels of kept entries re-emitted. The manager
    /// switches to it. Returns its file path (`None` in memory).
    pub fn create_branched_session(&mut self, leaf_id: Option<&str>) -> Result<Option<String>> {
        self.settle()?;
        let start = leaf_id.map(str::to_owned).or_else(|| self.leaf.clone());
        // The path as keys and the columns that decide where the session goes; the lines are
        // read, edited and written one at a time, so a long path is never held in memory.
        let (path, conversation) = {
            let t = SessionTree::open(self.raw_db(), self.sid)?;
            let rows = match &start {
                Some(s) => t.branch_keys(s)?,
                None => Vec::new(),
            };
            let conversation = rows.iter().any(|r| is_conversation_kind(r.kind.as_deref(), r.role.as_deref()));
            (rows.into_iter().map(|r| r.key).collect::<Vec<EntryKey>>(), conversation)
        };
        if path.is_empty() {
            return Err(not_found(leaf_id.unwrap_or("undefined")));
        }
        let id = ids::new_session_id();
        let ts = jstime::now_iso();
        let parent_session = self.persistence.file().map(str::to_owned);
        let header = build::header(&id, &ts, &self.cwd, parent_session.as_deref());
        let file = self.persists().then(|| {
            Path::new(&self.session_dir).join(layout::session_file_name(&ts, &id)).to_string_lossy().into_owned()
        });
        let target = file.clone().unwrap_or_else(|| format!("<memory>/{id}"));
        let target = Path::new(&target);
        let labels = &self.labels;
        // Written now when it holds a conversation (or lives in memory), staged otherwise, as
        // `install` does; read from wherever the current session is.
        let (sid, stage) = if self.persists() && !conversation {
            let mut stage = db::open_in_memory()?;
            let source = self.raw_db();
            let sid = write_session_from(&mut stage, target, &header, &mut |_, sink| {
                branch_lines(source, &path, labels, false, sink)
            })?;
            (sid, Some(stage))
        } else if let Persistence::Staged { stage, .. } = &self.persistence {
            let sid = write_session_from(&mut self.conn, target, &header, &mut |_, sink| {
                branch_lines(stage, &path, labels, false, sink)
            })?;
            (sid, None)
        } else {
            // Source and copy in one database: unchanged lines are shared, not copied.
            let sid = write_session_from(&mut self.conn, target, &header, &mut |tx, sink| {
                branch_lines(tx, &path, labels, true, sink)
            })?;
            (sid, None)
        };
        self.sid = sid;
        self.session_id = id;
        self.set_persistence(file.clone(), stage);
        self.reload_index()?;
        // Written (or staged): a lease not taken (a database error) only leaves it unguarded.
        let _ = self.hold_new();
        Ok(file)
    }
}

/// Reads for hosts that keep every parsed line (lines never change once written) and ask
/// only for lines written since. Keys are valid while [`SessionManager::cache_epoch`] stays
/// the same (a staged session gets new keys when it is saved).
impl SessionManager {
    /// Names the store keys live in: changes when the session moves or another one is current.
    pub fn cache_epoch(&self) -> String {
        format!("{}:{}:{}", self.session_id, self.sid, self.is_saved())
    }

    /// Hands `f` the key and line of at most `limit` of pi's `getEntries()` entries after
    /// storage key `after` (from the first for `None`), in file order.
    pub fn lines_after(&self, after: Option<EntryKey>, limit: i64, f: &mut dyn FnMut(EntryKey, &[u8])) -> Result<()> {
        self.tree()?.lines_after(after, limit, f)
    }
}

/// The session recorded at an absolute path.
fn find_path(conn: &Db, path: &str) -> Result<Option<SessionKey>> {
    conn.store().sid_by_path(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(text: &str) -> Value {
        json::parse(format!(r#"{{"role":"user","content":"{text}","timestamp":1}}"#).as_bytes()).unwrap()
    }

    /// Ids drawn ahead were found free in one session: another session made current (a
    /// branched session here) must draw its own.
    #[test]
    fn ids_drawn_ahead_serve_only_the_session_they_were_checked_in() {
        let mut m = SessionManager::in_memory(Some("/w"), NewSessionOptions::default()).unwrap();
        let first = m.append_message(message("one")).unwrap();
        let second = m.append_message(message("two")).unwrap();
        assert_ne!(first, second);
        assert_eq!(m.spare_ids.borrow().ids.len(), SPARE_IDS - 2);
        m.create_branched_session(Some(&first)).unwrap();
        assert!(m.spare_ids.borrow().ids.is_empty());
        m.append_message(message("three")).unwrap();
        assert_eq!(m.spare_ids.borrow().owner, Some((m.sid, false)));
        assert_eq!(m.spare_ids.borrow().ids.len(), SPARE_IDS - 1);
    }
}
