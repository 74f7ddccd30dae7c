//! Journal modes for bulk writes: an import that has the database to itself runs with a
//! rollback journal, and hands it back to WAL mode as soon as another process asks for it.
//!
//! In WAL mode every page is written twice (a WAL frame, then the checkpoint's copy); with a
//! rollback journal, pages new to the file (almost all of an import's) are written once,
//! straight into it: importing the 266 MB session took 3.3-6.3 s in WAL mode, 2.0-2.9 s so.
//! But in rollback mode a writer locks readers out for a whole transaction, and they only poll
//! for the lock: another process could wait for the whole import. So a process that cannot
//! put the database in WAL mode while a rollback journal exists leaves a marker file
//! (`<database>-yield`), and the import puts the database back in WAL mode at its next
//! transaction boundary.

use rusqlite::{Connection, ErrorCode};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The marker a process leaves to ask a bulk import for WAL mode.
fn yield_marker(db: &Path) -> PathBuf {
    crate::store::files::beside(db, "-yield")
}

/// While a bulk import may hold the database in rollback mode (SQLite's rollback journal
/// exists only then, or after a crash in it), asks it to go back to WAL mode (it does so
/// within one transaction, about 0.3 s). Says whether it asked.
fn ask_to_yield(db: &Path) -> bool {
    crate::store::files::beside(db, "-journal").exists()
        && std::fs::OpenOptions::new().write(true).create(true).truncate(false).open(yield_marker(db)).is_ok()
}

/// Puts the database in WAL mode (a database in memory keeps its own). Switching needs a
/// write lock on a file the connection already reads, which SQLite does not wait for: while
/// a bulk import holds the database in rollback mode, this retries (asking it to yield) for
/// up to [`crate::store::files::BUSY_TIMEOUT`].
pub fn enter_wal(conn: &Connection) -> rusqlite::Result<()> {
    let db = conn.path().filter(|p| !p.is_empty()).map(PathBuf::from);
    let (start, mut asked) = (Instant::now(), false);
    // Short waits inside SQLite, so that a rollback journal created meanwhile (the import's
    // first write) is seen and the import asked to yield.
    conn.busy_timeout(Duration::from_millis(100))?;
    let result = loop {
        match conn.pragma_update(None, "journal_mode", "WAL") {
            Err(rusqlite::Error::SqliteFailure(f, _))
                if f.code == ErrorCode::DatabaseBusy && start.elapsed() < crate::store::files::BUSY_TIMEOUT =>
            {
                if let Some(db) = db.as_deref().filter(|_| !asked) {
                    asked = ask_to_yield(db);
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            other => break other,
        }
    };
    conn.busy_timeout(crate::store::files::BUSY_TIMEOUT)?;
    // The database is in WAL mode now: nobody needs the marker any more.
    if let Some(db) = db.as_deref().filter(|_| asked && result.is_ok()) {
        let _ = std::fs::remove_file(yield_marker(db));
    }
    result
}

/// A bulk write's journal mode: rollback while the database is the writer's alone.
pub struct BulkJournal {
    /// The yield marker to watch, while the database is in rollback mode.
    marker: Option<PathBuf>,
}

impl BulkJournal {
    /// Leaves WAL mode for a rollback journal if no other connection has the database open
    /// (it does not wait for one to go). Commits then sync the journal and the file
    /// (`synchronous=FULL`), so a crash or a power loss keeps every committed transaction.
    pub fn enter(conn: &Connection) -> Self {
        let Some(db) = conn.path().filter(|p| !p.is_empty()).map(PathBuf::from) else {
            return BulkJournal { marker: None };
        };
        let marker = yield_marker(&db);
        let _ = std::fs::remove_file(&marker); // left by a process that waited for an earlier import
        let _ = conn.busy_timeout(Duration::ZERO);
        let mode = conn.pragma_update_and_check(None, "journal_mode", "TRUNCATE", |r| r.get::<_, String>(0));
        let _ = conn.busy_timeout(crate::store::files::BUSY_TIMEOUT);
        if !matches!(mode, Ok(m) if m.eq_ignore_ascii_case("truncate")) {
            return BulkJournal { marker: None };
        }
        let mut bulk = BulkJournal { marker: Some(marker) };
        if conn.pragma_update(None, "synchronous", "FULL").is_err() {
            bulk.leave(conn);
        }
        bulk
    }

    /// True while the database is in rollback mode for this write.
    pub fn is_rollback(&self) -> bool {
        self.marker.is_some()
    }

    /// Between two transactions: back to WAL mode if another process asked for it.
    pub fn between_transactions(&mut self, conn: &Connection) {
        if self.marker.as_deref().is_some_and(Path::exists) {
            self.leave(conn);
        }
    }

    /// Back to WAL mode (between transactions). Should that fail, the next open of the
    /// database restores it, as every open sets WAL mode.
    pub fn leave(&mut self, conn: &Connection) {
        let Some(marker) = self.marker.take() else { return };
        let _ = conn.pragma_update(None, "synchronous", "NORMAL");
        let _ = enter_wal(conn);
        let _ = std::fs::remove_file(marker);
    }
}
