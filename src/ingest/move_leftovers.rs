//! What a killed `sessiondb move` leaves, and finishing it: the intent a move writes beside the
//! new file before it commits, the steps after its commit (which the move and a finisher
//! share), and the finisher the next `move` or `sync` runs. `move_session` gives the order.

use crate::error::{Error, Result};
use crate::pi::layout;
use crate::store::handle::Db;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Suffix of a move's intent, beside the new file.
pub(crate) const INTENT: &str = ".sessiondb-move";
/// Suffix of the new file while it is written, beside the new file.
pub(crate) const TEMPORARY: &str = ".sessiondb-move-tmp";

/// A move's intent, as written beside the new file.
#[derive(Serialize, Deserialize)]
pub(crate) struct Intent {
    pub from: PathBuf,
    pub to: PathBuf,
    pub id: String,
}

/// `path` with `suffix` added to its file name.
pub(crate) fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// Steps 4 to 6, each done only if it is not done yet: after the commit, by the move or by
/// whoever finishes it.
pub(crate) fn roll_forward(from: &Path, to: &Path) -> Result<()> {
    let temporary = with_suffix(to, TEMPORARY);
    if temporary.is_file() {
        match std::fs::rename(from, to) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            // Another file system: the new file is complete beside the old; the old goes first.
            Err(e) if e.kind() == std::io::ErrorKind::CrossesDevices => {
                std::fs::remove_file(from).map_err(|e| Error::io(from, e))?;
            }
            Err(e) => return Err(Error::io(from, e)),
        }
        sync_folder(from)?;
        sync_folder(to)?;
        crash_point("old-renamed");
        match std::fs::rename(&temporary, to) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&temporary, e)),
        }
        sync_folder(to)?;
        crash_point("new-renamed");
    }
    remove_if_there(&with_suffix(to, INTENT))?;
    sync_folder(to)
}

/// Finishes or undoes what killed moves left in `sessions_dir`'s project folders (and in the
/// folder itself); returns the intents dealt with.
pub fn finish_interrupted_moves(db: &mut Db, sessions_dir: &Path) -> Result<usize> {
    let dir = layout::absolute(sessions_dir);
    let mut intents = Vec::new();
    let mut folders = vec![dir.clone()];
    for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            folders.push(e.path());
        }
    }
    for folder in folders {
        for e in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
            let path = e.path();
            if path.as_os_str().to_string_lossy().ends_with(INTENT) {
                intents.push(path);
            }
        }
    }
    let mut dealt = 0;
    for path in intents {
        let Ok(text) = std::fs::read(&path) else { continue };
        // Written whole (renamed into place): one that does not parse is no move's.
        let Ok(intent) = serde_json::from_slice::<Intent>(&text) else { continue };
        if with_suffix(&intent.to, INTENT) != path {
            continue;
        }
        finish_one(db, &intent)?;
        dealt += 1;
    }
    Ok(dealt)
}

/// Finishes the move of `intent` if its transaction committed, else undoes it; decided while
/// holding the write transaction, which a move commits under.
fn finish_one(db: &mut Db, intent: &Intent) -> Result<()> {
    let tx = db.write()?;
    let to = intent.to.to_string_lossy();
    let committed = tx.store().refs_by_path(&to)?.iter().any(|r| r.id == intent.id);
    if committed {
        roll_forward(&intent.from, &intent.to)?;
    } else {
        undo(&intent.to)?;
    }
    drop(tx);
    Ok(())
}

/// Undoes a move to `to` that did not commit: its temporary file, then its intent.
pub(crate) fn undo(to: &Path) -> Result<()> {
    remove_if_there(&with_suffix(to, TEMPORARY))?;
    remove_if_there(&with_suffix(to, INTENT))?;
    sync_folder(to)
}

fn remove_if_there(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(path, e)),
        _ => Ok(()),
    }
}

/// Syncs the folder holding `path`, so a rename or removal in it is on the disk.
pub(crate) fn sync_folder(path: &Path) -> Result<()> {
    let Some(dir) = path.parent() else { return Ok(()) };
    match std::fs::File::open(dir) {
        Ok(d) => d.sync_all().map_err(|e| Error::io(dir, e)),
        // The old file's folder may be gone or unreadable: nothing of ours to sync there.
        Err(_) => Ok(()),
    }
}

/// In debug builds (the tests'), `SESSIONDB_TEST_CRASH_AT=<step>` kills the process at that
/// step of a move, as a crash would (no destructors, no flushing).
pub(crate) fn crash_point(step: &str) {
    #[cfg(debug_assertions)]
    if std::env::var("SESSIONDB_TEST_CRASH_AT").is_ok_and(|s| s == step) {
        std::process::abort();
    }
    #[cfg(not(debug_assertions))]
    let _ = step;
}

/// The steps a test may stop a move at, in order.
pub const CRASH_STEPS: &[&str] = &["intent-written", "temp-written", "committed", "old-renamed", "new-renamed"];
