//! `sessiondb move`: a session moved to another project folder. Its header's `cwd` becomes the
//! new folder (the header rewritten as pi writes it, `JSON.stringify` with every other field in
//! place), its file goes to pi's folder for that cwd under the sessions folder, named as pi names
//! it, and its database row follows, so pi's `-c`, `/resume`, `list --cwd`, search and stats
//! find it there.
//!
//! Crash safety: a kill at any point leaves the old state or the new one, and the next `move` or
//! `sync` of the sessions folder finishes or undoes what a killed move left. The order:
//!
//! 1. `<new>.sessiondb-move`, the intent `{"from","to","id"}`, written whole (temporary name,
//!    synced, renamed): from here what a killed move left is recognised.
//! 2. `<new>.sessiondb-move-tmp`: the new file (the new header, then the stored lines), synced.
//!    Not a `.jsonl`: no one reads it as a session.
//! 3. One transaction: the row's path, folder, cwd and header, and the new file's signature and
//!    read position. This commit decides: before it the move is undone (the temporary file,
//!    then the intent removed), after it the move is finished.
//! 4. The old file renamed to the new path (still the old header): pi finds the session in one
//!    place, never two or none. Across file systems, where rename cannot, it is removed.
//! 5. The temporary file renamed over it: the new header.
//! 6. The intent removed.
//!
//! A finisher and a move decide inside a write transaction (on SQLite the database's write
//! lock), and a move checks that its intent and temporary file are still there before it
//! commits, so a `sync` finishing leftovers meanwhile cannot undo a move that then commits.
//! (A PostgreSQL transaction locks nothing here: a full `sync` of the same folder at the very
//! moment of a move's commit could undo its files after the check; the session's row is then
//! at the new path and its file at the old one: `sync --prune` imports the file again and drops
//! the row, and the move can be run again.)
//! Every step after the commit is idempotent: either of the two may finish it.
//!
//! What a killed move leaves is finished or undone by `move_leftovers`.
//!
//! A session kept in the database only (its file is not there) moves in the database alone.

use crate::error::{Error, Result};
use crate::ingest::move_leftovers::{
    crash_point, roll_forward, sync_folder, undo, with_suffix, Intent, INTENT, TEMPORARY,
};
use crate::ingest::route;
use crate::ingest::sync::SyncSummary;
use crate::js::json;
use crate::jsonl::signature::file_signature;
use crate::jsonl::signature::tail_hash;
use crate::pi::layout;
use crate::store::handle::{Db, Tx};
use crate::store::interface::discovery::SessionRef;
use crate::store::interface::sessions::SessionPlace;
use crate::store::keys::SessionKey;
use crate::store::lease;
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What a move did.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Moved {
    /// Header id.
    pub session_id: String,
    /// The session's file before.
    pub from: PathBuf,
    /// The session's file now.
    pub to: PathBuf,
    /// The header's new cwd.
    pub cwd: String,
    /// Whether a file moved (`false`: the session was in the database only, or already in
    /// `cwd`'s folder with `cwd` in its header, `from` then being `to`).
    pub file_moved: bool,
}

/// Moves `session` to the project folder `cwd` (made absolute as pi resolves it), its file to
/// pi's folder for `cwd` below `sessions_dir`. Refuses when the new file exists or a session is
/// recorded there, and when another live process holds the session's lease.
pub fn move_session(db: &mut Db, session: &SessionRef, cwd: &str, sessions_dir: &Path) -> Result<Moved> {
    if session.origin.as_deref().is_some_and(|o| !o.is_empty()) {
        return Err(Error::InvalidArgument(format!(
            "session {} was pushed from {}: move it there and push again",
            session.id,
            session.place()
        )));
    }
    refuse_if_held(db, session.sid, &session.id)?;
    let from = PathBuf::from(&session.path);
    let has_file = from.is_file();
    // Lines pi appended since the last sync go with the session: bring the row up to date first.
    let sid = if has_file { catch_up(db, &from, session)? } else { session.sid };
    let row = db.store().session_row(sid)?;
    let cwd = layout::resolve_path(cwd).to_string_lossy().into_owned();
    let header = header_with_cwd(&row.header, &cwd, &from)?;
    let name = file_name(row.created.as_deref(), &row.id, &from);
    let folder = layout::encode_cwd_dir(&cwd);
    let dir = layout::absolute(sessions_dir).join(&folder);
    let to = dir.join(&name);
    if to == from {
        // A move done before (or finished by the next command after a kill): nothing to do.
        if header == row.header {
            return Ok(Moved { session_id: row.id, from, to, cwd, file_moved: false });
        }
        // Its file is already where pi keeps DIR's (another cwd with the same folder name,
        // `/a/b` and `/a-b`): a header rewritten in place is not a move.
        return Err(Error::InvalidArgument(format!(
            "session {}: its file {} is already in the folder of {cwd}, with another cwd in its header",
            row.id,
            to.display()
        )));
    }
    if to.symlink_metadata().is_ok() {
        return Err(Error::InvalidArgument(format!("{} exists: refusing to overwrite it", to.display())));
    }
    let to_str = to.to_string_lossy().into_owned();
    if !db.store().refs_by_path(&to_str)?.is_empty() {
        return Err(Error::InvalidArgument(format!("a session is already recorded at {to_str}")));
    }
    let dir_str = dir.to_string_lossy().into_owned();
    let rel_path = format!("{folder}/{name}");
    let place = SessionPlace { path: &to_str, dir: &dir_str, rel_path: &rel_path, cwd: &cwd, header: &header };
    if has_file {
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        move_with_file(db, sid, &row.id, &place, &from, &to)?;
    } else {
        let tx = db.write()?;
        refuse_if_held(&tx, sid, &row.id)?;
        tx.store().relocate_session(sid, &place)?;
        tx.commit()?;
    }
    Ok(Moved { session_id: row.id, from, to, cwd, file_moved: has_file })
}

/// Steps 1 to 6 of the order above, for a session whose file is at `from`. A failure before the
/// commit undoes what was written; a commit that fails may have committed all the same (a
/// server's connection lost), so its leftovers stay for the finisher, which asks the database.
fn move_with_file(
    db: &mut Db,
    sid: SessionKey,
    id: &str,
    place: &SessionPlace<'_>,
    from: &Path,
    to: &Path,
) -> Result<()> {
    let intent = with_suffix(to, INTENT);
    write_intent(&intent, &Intent { from: from.to_path_buf(), to: to.to_path_buf(), id: id.to_string() })?;
    crash_point("intent-written");
    let tx = match stage(db, sid, id, place, &intent, to) {
        Ok(tx) => tx,
        Err(e) => {
            undo(to)?;
            return Err(e);
        }
    };
    tx.commit()?;
    crash_point("committed");
    roll_forward(from, to)
}

/// Step 2 and the writes of step 3, in a transaction left for the caller to commit.
fn stage<'a>(
    db: &'a mut Db,
    sid: SessionKey,
    id: &str,
    place: &SessionPlace<'_>,
    intent: &Path,
    to: &Path,
) -> Result<Tx<'a>> {
    let temporary = with_suffix(to, TEMPORARY);
    write_new_file(db, sid, place.header, &temporary)?;
    crash_point("temp-written");
    let sig = file_signature(&temporary)?;
    let tail = tail_hash(&temporary, sig.size as u64)?;
    let tx = db.write()?;
    if !intent.is_file() || !temporary.is_file() {
        return Err(Error::InvalidArgument(format!(
            "moving {id}: {} was removed meanwhile (a sync undid this move); nothing moved",
            intent.display()
        )));
    }
    refuse_if_held(&tx, sid, id)?;
    tx.store().relocate_session(sid, place)?;
    tx.store().set_signature(sid, sig)?;
    if let Some(states) = tx.store().sync_states() {
        states.set_position(sid, sig.size, tail)?;
    }
    Ok(tx)
}

/// Refuses when a live process other than this one holds the session's lease (pi writing it
/// through `sessiondb-pi`): moving the file from under a writer would split the session. Asked
/// before anything is done, and again inside the transaction that moves the row, so that the
/// check and the move see one state (on SQLite a writer taking a lease waits for it).
fn refuse_if_held(db: &Db, sid: SessionKey, id: &str) -> Result<()> {
    match lease::live_holder(db, sid)? {
        Some(h) => {
            Err(Error::InvalidArgument(format!("session {id} is being written by {}; quit it first", h.describe())))
        }
        None => Ok(()),
    }
}

/// Syncs the session's file so the database holds every line in it; returns the session's key
/// (a file rewritten since is imported again, under a new key).
fn catch_up(db: &mut Db, from: &Path, session: &SessionRef) -> Result<SessionKey> {
    let folder = from.parent().unwrap_or(Path::new("/"));
    let mut s = SyncSummary::default();
    route::sync_paths(db, folder, &[from.to_path_buf()], &mut s)?;
    if let Some(f) = s.failed.first() {
        let reason = f.reason.as_deref().unwrap_or("unknown reason");
        return Err(Error::InvalidArgument(format!("{}: cannot be read before moving it: {reason}", from.display())));
    }
    let found = db.store().refs_by_path(&session.path)?;
    found.into_iter().find(|r| r.id == session.id).map(|r| r.sid).ok_or_else(|| {
        Error::NotFound(format!("{}: no longer holds session {} (it changed while moving)", from.display(), session.id))
    })
}

/// The header line with `cwd` set as pi sets it (`header.cwd = cwd`, then `JSON.stringify`).
fn header_with_cwd(header: &str, cwd: &str, from: &Path) -> Result<String> {
    let mut value = json::parse(header.as_bytes())
        .map_err(|e| Error::NotASession { path: from.to_path_buf(), reason: format!("header: {e}") })?;
    let Some(object) = value.as_object_mut() else {
        return Err(Error::NotASession { path: from.to_path_buf(), reason: "the header is not an object".into() });
    };
    object.set("cwd", json::Value::String(cwd.into()));
    Ok(value.to_json())
}

/// pi's name for the file (`<timestamp>_<id>.jsonl`) when the header's timestamp and id make a
/// plain file name; else the name the file has.
fn file_name(created: Option<&str>, id: &str, from: &Path) -> String {
    let plain = |n: &str| !n.contains(['/', '\\', '\0']) && n != "." && n != "..";
    match created {
        Some(ts) if !ts.is_empty() && !id.is_empty() && plain(ts) && plain(id) => layout::session_file_name(ts, id),
        _ => from.file_name().map_or_else(|| format!("{id}.jsonl"), |n| n.to_string_lossy().into_owned()),
    }
}

/// Writes the new file at `path`: the new header, then the stored lines in file order; synced.
fn write_new_file(db: &Db, sid: SessionKey, header: &str, path: &Path) -> Result<()> {
    let io = |e| Error::io(path, e);
    let file = std::fs::File::create(path).map_err(io)?;
    let mut out = std::io::BufWriter::new(&file);
    db.reading(|| {
        out.write_all(header.as_bytes()).and_then(|()| out.write_all(b"\n")).map_err(io)?;
        db.store().write_lines(sid, &mut |piece| out.write_all(piece).map_err(io))
    })?;
    out.flush().map_err(io)?;
    drop(out);
    file.sync_all().map_err(io)
}

/// Writes the intent whole: a temporary name, synced, renamed into place, the folder synced.
fn write_intent(path: &Path, intent: &Intent) -> Result<()> {
    let partial = with_suffix(path, ".partial");
    let text = serde_json::to_vec(intent).map_err(|e| Error::InvalidArgument(format!("move intent: {e}")))?;
    let io = |e| Error::io(&partial, e);
    let mut file = std::fs::File::create(&partial).map_err(io)?;
    file.write_all(&text).and_then(|()| file.sync_all()).map_err(io)?;
    std::fs::rename(&partial, path).map_err(|e| Error::io(path, e))?;
    sync_folder(path)
}
