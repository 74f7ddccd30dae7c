//! The files beside a database and how long one writer waits for another: shared by opening,
//! bulk mode and the append journal, which all sit above this module.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a writer waits for another one before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// A file kept beside the database at `db`: its name with `suffix` appended (SQLite's
/// `-journal` and `-wal`, sessiondb's `-appends` and `-yield`).
pub fn beside(db: &Path, suffix: &str) -> PathBuf {
    let mut p = db.as_os_str().to_owned();
    p.push(suffix);
    PathBuf::from(p)
}
