//! Keeping the database in step with a directory of session files pi is still writing.
//!
//! Unchanged files (same size and modification time) are not opened. A file that grew and
//! whose already-read bytes are unchanged (same hash of the bytes before the stored
//! position) has only its new complete lines read and appended. A file that shrank or was
//! rewritten (pi migrates old files, and rewrites on some operations) is imported again
//! whole. Every file's changes are one transaction, decided inside it, so an interrupted sync
//! leaves whole files only and two syncs at once do not both act on one file.

use crate::error::{Error, Result};
use crate::hash::FxHashMap;
use crate::ingest::import::{self, FileReport, FileStatus, ImportOptions, Source};
use crate::jsonl::signature::tail_hash;
use crate::jsonl::signature::{file_signature, FileSignature};
use crate::jsonl::{classify, LineKind};
use crate::store::derive::EntryFields;
use crate::store::handle::Db;
use crate::store::interface::sync_state::{Position, SyncState, SyncStates};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What a sync may do besides importing.
#[derive(Debug, Clone, Copy, Default)]
pub struct SyncOptions {
    /// Remove sessions whose file disappeared (otherwise they are kept and marked missing).
    pub prune: bool,
}

/// What a sync did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SyncSummary {
    /// Session files found.
    pub files_scanned: u64,
    /// Files seen for the first time.
    pub new: u64,
    /// Files that grew: only their new lines were read.
    pub grown: u64,
    /// Files that shrank or changed: imported again whole.
    pub rewritten: u64,
    /// Files not opened (same size and time).
    pub unchanged: u64,
    /// Live files whose header line is still being written.
    pub waiting: u64,
    /// Sessions whose file is gone (kept, marked missing).
    pub missing: u64,
    /// Sessions removed because their file is gone (`--prune`).
    pub pruned: u64,
    /// Files that could not be imported.
    pub failures: u64,
    /// Entries written.
    pub entries_added: u64,
    /// Malformed lines skipped.
    pub lines_skipped: u64,
    /// Wall time (s).
    pub seconds: f64,
    /// Reports of the files that failed.
    pub failed: Vec<FileReport>,
}

/// A session file as last synced.
type Known = SyncState;

/// What the local database `conn` keeps per file (a server takes a sync through
/// `ingest::to_server`, which `ingest::route` chooses).
fn states(conn: &Db) -> Result<&dyn SyncStates> {
    conn.store().sync_states().ok_or_else(|| conn.unsupported("following a folder's files"))
}

fn known_under(conn: &Db, dir: &Path) -> Result<FxHashMap<PathBuf, Known>> {
    states(conn)?.states_under(dir)
}

fn known_at(conn: &Db, path: &Path) -> Result<Option<Known>> {
    states(conn)?.state_at(path)
}

/// Outcome of reading only the appended part of a file.
enum Tail {
    /// Appended (entries written, lines skipped).
    Done(u64, u64),
    /// Someone else synced it meanwhile: nothing to do.
    AlreadyDone,
    /// Not a plain append (repeated id, unknown parent, irregular tree): import it whole.
    NeedsFullImport,
}

/// Appends the complete lines written after the stored position, in one transaction.
fn append_tail(conn: &mut Db, path: &Path, seen: &Known, sig: FileSignature) -> Result<Tail> {
    let tx = conn.write()?;
    let Some(Position { size, mtime, offset, tree_ok }) = states(&tx)?.position(seen.sid)? else {
        return Ok(Tail::AlreadyDone);
    };
    if (size, mtime, offset) != (seen.size, seen.mtime, seen.offset) {
        return Ok(Tail::AlreadyDone);
    }
    if !tree_ok {
        return Ok(Tail::NeedsFullImport);
    }
    let from = u64::try_from(offset.unwrap_or(0)).unwrap_or(0);
    let mut source = Source::open(path, from, true, sig.mtime_ns)?;
    let (mut added, mut skipped) = (0, 0);
    while let Some(line) = source.next(path)? {
        match classify(&line.text) {
            LineKind::Blank => {}
            LineKind::Malformed(_) => skipped += 1,
            LineKind::Object(obj) => {
                let (f, _) = EntryFields::read(&obj);
                let taken = match f.id.as_deref() {
                    Some(id) => tx.store().entry_id_exists(seen.sid, id)?,
                    None => true,
                };
                let parent = match f.parent_id.as_deref() {
                    Some(p) if !p.is_empty() => match tx.store().entry_node(seen.sid, p)? {
                        Some(node) => Some(node),
                        None => return Ok(Tail::NeedsFullImport),
                    },
                    _ => None,
                };
                if taken && !f.is_header() {
                    return Ok(Tail::NeedsFullImport);
                }
                tx.store().append_entry(seen.sid, &line.text, parent)?;
                added += u64::from(!f.is_header());
            }
        }
    }
    let consumed = source.consumed;
    let tail = tail_hash(path, consumed)?;
    states(&tx)?.set_position(seen.sid, consumed as i64, tail)?;
    tx.store().set_signature(seen.sid, sig)?;
    tx.commit()?;
    Ok(Tail::Done(added, skipped))
}

/// Whether `sig` is the signature recorded for the file when it was last read: it is unchanged.
fn recorded(k: &Known, sig: FileSignature) -> bool {
    k.size == Some(sig.size) && k.mtime == Some(sig.mtime_ns)
}

/// Brings one file into the database; updates the summary.
fn sync_file(
    conn: &mut Db,
    path: &Path,
    rel: &str,
    walked: Option<FileSignature>,
    seen: Option<&Known>,
    s: &mut SyncSummary,
) -> Result<()> {
    // The walk's signature only settles "unchanged": a file that changed is stat'ed again, as
    // late as possible, because its time decides whether an unfinished last line is still
    // being written.
    let sig = match walked {
        Some(sig) if seen.is_some_and(|k| recorded(k, sig)) => sig,
        _ => file_signature(path)?,
    };
    let live = ImportOptions { force: false, live: true };
    let whole = |conn: &mut Db, s: &mut SyncSummary, force: bool| {
        let r = import::import_file(conn, path, Some(rel), ImportOptions { force, ..live });
        match r.status {
            FileStatus::Imported | FileStatus::Replaced => {
                s.entries_added += r.entries;
                s.lines_skipped += r.malformed_lines;
            }
            FileStatus::Waiting => s.waiting += 1,
            FileStatus::Unchanged => {}
            FileStatus::Failed => {
                s.failures += 1;
                s.failed.push(r.clone());
            }
        }
        r.status
    };
    let Some(k) = seen else {
        if whole(conn, s, false) != FileStatus::Waiting {
            s.new += 1;
        }
        return Ok(());
    };
    if recorded(k, sig) {
        s.unchanged += 1;
        if k.missing {
            states(conn)?.set_missing(k.sid, false)?;
        }
        return Ok(());
    }
    let grew = matches!((k.offset, k.tail), (Some(o), Some(t)) if sig.size >= o && tail_hash(path, o as u64)? == t);
    if grew {
        match append_tail(conn, path, k, sig)? {
            Tail::Done(added, skipped) => {
                s.grown += 1;
                s.entries_added += added;
                s.lines_skipped += skipped;
                return Ok(());
            }
            Tail::AlreadyDone => {
                s.unchanged += 1;
                return Ok(());
            }
            Tail::NeedsFullImport => {}
        }
    }
    if whole(conn, s, true) != FileStatus::Failed {
        s.rewritten += 1;
    }
    Ok(())
}

/// The sessions folder `dir` as stored (absolute, normalized) and every `*.jsonl` below it;
/// an error naming it when it is not a directory. Local and server syncs start here.
pub(crate) fn folder_targets(dir: &Path) -> Result<(PathBuf, Vec<import::ImportTarget>)> {
    let dir = crate::pi::layout::absolute(dir);
    if !dir.is_dir() {
        return Err(Error::io(&dir, std::io::Error::new(std::io::ErrorKind::NotFound, "not a directory")));
    }
    let targets = import::collect_targets(std::slice::from_ref(&dir))?;
    Ok((dir, targets))
}

/// Syncs every `*.jsonl` below `dir`; `progress(done, total)` after each file.
pub(crate) fn sync_dir_direct(
    conn: &mut Db,
    dir: &Path,
    opts: SyncOptions,
    mut progress: impl FnMut(usize, usize),
) -> Result<SyncSummary> {
    let started = std::time::Instant::now();
    let (dir, targets) = folder_targets(dir)?;
    let mut known = known_under(conn, &dir)?;
    let mut s = SyncSummary::default();
    for (i, t) in targets.iter().enumerate() {
        s.files_scanned += 1;
        let seen = known.remove(&t.path);
        if let Err(e) = sync_file(conn, &t.path, &t.rel_path, t.signature, seen.as_ref(), &mut s) {
            // A file that vanished or cannot be read between listing and reading.
            s.failures += 1;
            s.failed.push(FileReport::failed(t.path.clone(), e.to_string()));
        }
        progress(i + 1, targets.len());
    }
    for (path, k) in known {
        if path.exists() {
            continue; // not a *.jsonl any more, or outside the walk: leave it alone
        }
        if k.size.is_none() {
            continue; // never read from a file nor written to one (as on a server): no file to miss
        }
        if opts.prune {
            conn.store().delete_session(k.sid)?;
            s.pruned += 1;
        } else {
            if !k.missing {
                states(conn)?.set_missing(k.sid, true)?;
            }
            s.missing += 1;
        }
    }
    s.seconds = started.elapsed().as_secs_f64();
    Ok(s)
}

/// Syncs only the given files (from file-system notifications) below `dir`.
pub(crate) fn sync_paths_direct(conn: &mut Db, dir: &Path, paths: &[PathBuf], s: &mut SyncSummary) -> Result<()> {
    let dir = crate::pi::layout::absolute(dir);
    for p in paths {
        if p.extension().is_none_or(|e| e != "jsonl") || !p.starts_with(&dir) {
            continue;
        }
        let seen = known_at(conn, p)?;
        let seen = seen.as_ref();
        if !p.exists() {
            if let Some(k) = seen {
                states(conn)?.set_missing(k.sid, true)?;
                s.missing += 1;
            }
            continue;
        }
        let rel = p.strip_prefix(&dir).unwrap_or(p).to_string_lossy().into_owned();
        s.files_scanned += 1;
        sync_file(conn, p, &rel, None, seen, s)?;
    }
    Ok(())
}
