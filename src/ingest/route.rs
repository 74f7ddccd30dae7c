//! Which way session files go into a database: straight in ([`super::import`], [`super::sync`]),
//! or, for a database that receives pushes (a PostgreSQL server), read into staging SQLite
//! databases and pushed ([`super::to_server`]). The public `import_targets`, `sync_dir` and
//! `sync_paths` are these: callers hand any `Db` and never ask which backend it is.

use crate::error::Result;
use crate::ingest::import::{self, FileReport, ImportOptions, ImportSummary, ImportTarget};
use crate::ingest::move_leftovers;
use crate::ingest::sync::{self, SyncOptions, SyncSummary};
use crate::ingest::to_server;
use crate::store::handle::Db;
use std::path::{Path, PathBuf};

/// Imports `targets` (see [`import::collect_targets`]); `progress` after each file. A file
/// that cannot be read is a failed report; an error is the database's (a lost connection).
pub fn import_targets(
    db: &mut Db,
    targets: &[ImportTarget],
    opts: ImportOptions,
    progress: impl FnMut(&FileReport),
) -> Result<ImportSummary> {
    if db.store().receiver().is_some() {
        return to_server::import_targets(db, targets, opts, progress);
    }
    Ok(import::import_direct(db, targets, opts, progress))
}

/// Syncs every `*.jsonl` below `dir`; `progress(done, total)` after each file. What a killed
/// `sessiondb move` left there is finished or undone first, so no session is read twice.
pub fn sync_dir(db: &mut Db, dir: &Path, opts: SyncOptions, progress: impl FnMut(usize, usize)) -> Result<SyncSummary> {
    move_leftovers::finish_interrupted_moves(db, dir)?;
    if db.store().receiver().is_some() {
        return to_server::sync_dir(db, dir, opts, progress);
    }
    sync::sync_dir_direct(db, dir, opts, progress)
}

/// Syncs only `paths` (below `dir`; from file-system notifications, or named), adding to `s`.
pub fn sync_paths(db: &mut Db, dir: &Path, paths: &[PathBuf], s: &mut SyncSummary) -> Result<()> {
    if db.store().receiver().is_some() {
        return to_server::sync_paths(db, dir, paths, s);
    }
    sync::sync_paths_direct(db, dir, paths, s)
}
