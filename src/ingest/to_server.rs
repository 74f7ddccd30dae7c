//! `import` and `sync` into a PostgreSQL server: the server's own sessions (origin `''`, as the
//! SessionManager's there) from session files.
//!
//! One code path reads files: the files to read are imported by the SQLite importer
//! ([`super::import`]) into a private temporary database, with all its tolerance, migration of
//! old versions and derived columns, and that database is sent by `push` ([`super::push`]:
//! binary `COPY`, whole sessions per transaction) under origin `''`, comparing lines, so a
//! session the server holds is replaced when its lines differ and only appended lines are sent
//! when a file grew. The server keeps each file's signature (`store::postgres::files`): a file
//! unchanged since it was read is not read again, and nothing is written for it. The
//! SessionManager's sessions of origin `''` have no file and are never touched, unless a file
//! is imported at their very path (then it replaces them, as on SQLite), or a host writing pi's
//! files recorded the file it wrote (`SessionManager::note_file_written`, sessiondb-pi's files
//! mode): then the file is theirs as an imported one's is.

use crate::error::{Error, Result};
use crate::ingest::import::{self, FileReport, FileStatus, ImportOptions, ImportSummary, ImportTarget};
use crate::ingest::push::receiver;
use crate::ingest::push::{self, PushOptions, PushSummary};
use crate::ingest::sync::{self, SyncOptions, SyncSummary};
use crate::jsonl::signature::file_signature;
use crate::store::handle::Db;
use crate::store::interface::replica::KnownFile;
use crate::store::keys::SessionKey;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The origin of the server's own sessions.
pub const SERVER_ORIGIN: &str = "";

/// A file's path as the server keys its session.
fn key_of(server: &Db, path: &Path) -> String {
    let abs = crate::pi::layout::absolute(path);
    let abs = abs.to_string_lossy();
    server.store().receiver().map_or_else(|| abs.to_string(), |r| r.stored_path(&abs))
}

/// Whether the server holds `path`'s file as it is now (same size and modification time).
fn unchanged(known: Option<&KnownFile>, path: &Path) -> bool {
    let (Some(k), Ok(sig)) = (known, file_signature(path)) else { return false };
    k.signature == Some((sig.size, sig.mtime_ns))
}

/// The files of `targets` read into temporary databases and sent to the server.
#[derive(Default)]
struct Sent {
    reports: Vec<FileReport>,
    push: PushSummary,
}

/// Files read into one temporary database: a database is sent while the next is filled.
const CHUNK_BYTES: u64 = 16 << 20;

/// At most this many files per temporary database.
const CHUNK_FILES: usize = 2_000;

/// A chunk of files this large or larger (one big session) is read into a temporary file
/// rather than memory.
const IN_MEMORY_BYTES: u64 = 256 << 20;

/// Splits `targets` (in order) into the chunks read into one temporary database each.
fn chunks(targets: &[ImportTarget]) -> Vec<(&[ImportTarget], u64)> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0u64);
    for (i, t) in targets.iter().enumerate() {
        bytes += std::fs::metadata(&t.path).map_or(0, |m| m.len());
        if bytes >= CHUNK_BYTES || i + 1 - start >= CHUNK_FILES {
            out.push((&targets[start..=i], bytes));
            (start, bytes) = (i + 1, 0);
        }
    }
    if start < targets.len() {
        out.push((&targets[start..], bytes));
    }
    out
}

/// Imports `targets` into temporary SQLite databases (a chunk of files each, filled on a second
/// thread while the previous one is sent), pushes each under origin `''` and records the
/// signatures of the files sent. `progress` after each file, as its chunk is sent.
fn send(server: &Db, targets: &[ImportTarget], live: bool, mut progress: impl FnMut(&FileReport)) -> Result<Sent> {
    if targets.is_empty() {
        return Ok(Sent::default());
    }
    let temp = tempfile::Builder::new()
        .prefix("sessiondb-import-")
        .tempdir()
        .map_err(|e| Error::io(std::env::temp_dir(), e))?;
    let opts = ImportOptions { force: true, live };
    let chunks = chunks(targets);
    std::thread::scope(|scope| {
        // One chunk read ahead of the one being sent.
        let (tx, rx) = std::sync::mpsc::sync_channel::<Result<(Db, ImportSummary)>>(1);
        let dir = temp.path();
        scope.spawn(move || {
            for (i, (chunk, bytes)) in chunks.into_iter().enumerate() {
                let local = if bytes < IN_MEMORY_BYTES {
                    crate::store::db::open_in_memory()
                } else {
                    crate::store::db::open(dir.join(format!("import-{i}.sqlite")))
                };
                let read = local.map(|mut db| {
                    let summary = import::import_direct(&mut db, chunk, opts, |_| {});
                    (db, summary)
                });
                if tx.send(read).is_err() {
                    return; // the sender stopped on an error
                }
            }
        });
        let mut sent = Sent::default();
        for read in rx {
            let (local, summary) = read?;
            summary.reports.iter().for_each(&mut progress);
            let push_opts = PushOptions { compare_lines: true, ..PushOptions::new(SERVER_ORIGIN) };
            let pushed = push::push(&local, server, &push_opts, |_, _| {})?;
            let states = local.store().sync_states().ok_or_else(|| local.unsupported("staging an import"))?;
            let signed: Vec<(String, i64, i64)> = states
                .known_signatures()?
                .into_iter()
                .map(|(path, sig)| (path.to_string_lossy().into_owned(), sig.size, sig.mtime_ns))
                .collect();
            receiver(server)?.record_files(SERVER_ORIGIN, &signed)?;
            sent.reports.extend(summary.reports);
            add(&mut sent.push, &pushed);
        }
        Ok(sent)
    })
}

/// Adds one push's counts to `total`.
fn add(total: &mut PushSummary, p: &PushSummary) {
    total.sessions += p.sessions;
    total.new += p.new;
    total.appended += p.appended;
    total.resent += p.resent;
    total.unchanged += p.unchanged;
    total.lines += p.lines;
    total.bytes += p.bytes;
    total.batches += p.batches;
}

/// `import` into the server: every target whose file changed since the server read it (all
/// of them with `opts.force`) is read and its session written whole or not at all; the others
/// are reported unchanged. A file imported at a path the server holds replaces its session.
/// Reports and totals are those of an import into SQLite.
pub fn import_targets(
    server: &Db,
    targets: &[ImportTarget],
    opts: ImportOptions,
    mut progress: impl FnMut(&FileReport),
) -> Result<ImportSummary> {
    let known = receiver(server)?.origin_files(SERVER_ORIGIN, None)?;
    let mut todo = Vec::new();
    let mut order = Vec::with_capacity(targets.len());
    for t in targets {
        if !opts.force && unchanged(known.get(&key_of(server, &t.path)), &t.path) {
            let path = crate::pi::layout::absolute(&t.path);
            order.push(Some(FileReport::new(path, FileStatus::Unchanged)));
        } else {
            order.push(None);
            todo.push(t.clone());
        }
    }
    for r in order.iter().flatten() {
        progress(r);
    }
    let sent = send(server, &todo, opts.live, &mut progress)?;
    let mut read = sent.reports.into_iter();
    let mut summary = ImportSummary::default();
    for slot in order {
        let mut r = match slot {
            Some(r) => r,
            None => read.next().ok_or_else(|| Error::InvalidArgument("import: a file has no report".into()))?,
        };
        if r.status == FileStatus::Imported && known.contains_key(&key_of(server, &r.path)) {
            r.status = FileStatus::Replaced;
        }
        summary.add(r);
    }
    Ok(summary)
}

/// `sync` of a sessions folder into the server: new and changed files are read (a grown file
/// has only its new lines sent), files gone are marked missing or, with `prune`, their
/// sessions removed. `progress(done, total)` after each file read.
pub fn sync_dir(
    server: &Db,
    dir: &Path,
    opts: SyncOptions,
    mut progress: impl FnMut(usize, usize),
) -> Result<SyncSummary> {
    let started = std::time::Instant::now();
    let (dir, targets) = sync::folder_targets(dir)?;
    let mut known = receiver(server)?.origin_files(SERVER_ORIGIN, None)?;
    let mut s = SyncSummary { files_scanned: targets.len() as u64, ..SyncSummary::default() };
    let todo = changed(server, &targets, &mut known, &mut s)?;
    let total = targets.len();
    let mut done = total - todo.len();
    sync_files(server, &todo, &mut s, |_| {
        done += 1;
        progress(done, total);
    })?;
    // Files imported before that are gone now (not sessions without a file).
    let under = |path: &str| Path::new(path).starts_with(&dir);
    let gone: Vec<&KnownFile> = known
        .iter()
        .filter(|(p, k)| k.signature.is_some() && under(p) && !Path::new(p).exists())
        .map(|(_, k)| k)
        .collect();
    let keys: Vec<SessionKey> = gone.iter().map(|k| k.skey).collect();
    if opts.prune {
        s.pruned = receiver(server)?.remove_sessions(&keys)?;
    } else {
        let newly: Vec<SessionKey> = gone.iter().filter(|k| !k.missing).map(|k| k.skey).collect();
        receiver(server)?.set_files_missing(&newly, true)?;
        s.missing = keys.len() as u64;
    }
    s.seconds = started.elapsed().as_secs_f64();
    Ok(s)
}

/// `sync` of only the given files (from file-system notifications, or named) below `dir`.
pub fn sync_paths(server: &Db, dir: &Path, paths: &[PathBuf], s: &mut SyncSummary) -> Result<()> {
    let dir = crate::pi::layout::absolute(dir);
    // Only these files' sessions: a per-turn sync reads one row, not the whole origin's.
    let keys: Vec<String> = paths.iter().map(|p| key_of(server, p)).collect();
    let mut known = receiver(server)?.origin_files(SERVER_ORIGIN, Some(&keys))?;
    let mut targets = Vec::new();
    let mut gone = Vec::new();
    for p in paths {
        if p.extension().is_none_or(|e| e != "jsonl") || !p.starts_with(&dir) {
            continue;
        }
        if !p.exists() {
            if let Some(k) = known.get(&key_of(server, p)).filter(|k| k.signature.is_some()) {
                gone.push(k.skey);
                s.missing += 1;
            }
            continue;
        }
        let rel = p.strip_prefix(&dir).unwrap_or(p).to_string_lossy().into_owned();
        targets.push(ImportTarget { path: p.clone(), rel_path: rel, signature: None });
    }
    receiver(server)?.set_files_missing(&gone, true)?;
    s.files_scanned += targets.len() as u64;
    let todo = changed(server, &targets, &mut known, s)?;
    sync_files(server, &todo, s, |_| {})
}

/// The targets whose file changed since the server read it; the others are counted unchanged
/// (and no longer missing). Takes the targets' entries out of `known`.
fn changed(
    server: &Db,
    targets: &[ImportTarget],
    known: &mut HashMap<String, KnownFile>,
    s: &mut SyncSummary,
) -> Result<Vec<ImportTarget>> {
    let mut todo = Vec::new();
    let mut back = Vec::new();
    for t in targets {
        let k = known.remove(&key_of(server, &t.path));
        match file_signature(&t.path) {
            Ok(sig) if k.is_some_and(|k| k.signature == Some((sig.size, sig.mtime_ns))) => {
                s.unchanged += 1;
                if let Some(k) = k.filter(|k| k.missing) {
                    back.push(k.skey);
                }
            }
            Ok(_) => todo.push(t.clone()),
            // Vanished or unreadable between listing and reading.
            Err(e) => {
                s.failures += 1;
                s.failed.push(FileReport::failed(t.path.clone(), e.to_string()));
            }
        }
    }
    receiver(server)?.set_files_missing(&back, false)?;
    Ok(todo)
}

/// Reads `todo` (live files: a line still being written waits) and sends what changed.
fn sync_files(
    server: &Db,
    todo: &[ImportTarget],
    s: &mut SyncSummary,
    progress: impl FnMut(&FileReport),
) -> Result<()> {
    let sent = send(server, todo, true, progress)?;
    for r in sent.reports {
        match r.status {
            FileStatus::Failed => {
                s.failures += 1;
                s.failed.push(r);
            }
            FileStatus::Waiting => s.waiting += 1,
            _ => s.lines_skipped += r.malformed_lines,
        }
    }
    s.new += sent.push.new;
    s.grown += sent.push.appended;
    s.rewritten += sent.push.resent;
    s.unchanged += sent.push.unchanged;
    s.entries_added += sent.push.lines;
    Ok(())
}
