//! Opening a SQLite database that will only be read (`sessiondb serve`): SQLite's read-only
//! mode plus `query_only`, so no statement can change the file whatever calls it.

use crate::error::{Error, Result};
use crate::store::handle::Db;
use rusqlite::{Connection, OpenFlags};
use std::path::Path;

/// Opens the existing SQLite database at `path` read-only. The schema is not migrated and the
/// append journal is not settled (both write): open it once with `db::open_existing` first.
/// A PostgreSQL URL is refused (see `db::open_existing`).
pub fn open_read_only(path: &Path) -> Result<Db> {
    if crate::store::pg::is_url(&path.to_string_lossy()) {
        return Err(Error::InvalidArgument(format!(
            "{}: a read-only connection is opened on SQLite files only",
            crate::store::pg::shown(&path.to_string_lossy())
        )));
    }
    if !path.is_file() {
        return Err(Error::NotFound(format!("{}: no database here (run `sessiondb import` first)", path.display())));
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
    let conn =
        Connection::open_with_flags(path, flags).map_err(|e| Error::io(path, std::io::Error::other(e.to_string())))?;
    // A reader waits only while a writer holds the WAL's recovery lock, rarely and briefly.
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    conn.set_prepared_statement_cache_capacity(64);
    conn.pragma_update(None, "query_only", "ON")?;
    conn.pragma_update(None, "cache_size", -16384)?;
    Ok(Db::from_sqlite(conn))
}
