//! Opening a SQLite database file: file mode, pragmas, schema migrations (`migrations/sqlite/`),
//! the maintenance they leave and the append journal's leftovers.

use crate::error::{Error, Result};
use crate::store::files::BUSY_TIMEOUT;
use crate::store::handle::Db;
use crate::store::sqlite::{journal, Sqlite};
use rusqlite::Connection;
use std::path::Path;

refinery::embed_migrations!("migrations/sqlite");

/// Opens (creating if needed) the database at `path` for writing and brings its schema up to
/// date. A database that cannot be written is refused with the reason.
pub fn open(path: &Path) -> Result<Db> {
    create_private(path)?;
    let conn = open_file(path).map_err(|e| explain(path, e))?;
    if conn.sqlite().is_readonly(rusqlite::MAIN_DB)? {
        return Err(explain(path, Error::io(path, std::io::Error::other("the database is read-only"))));
    }
    Ok(conn)
}

fn open_file(path: &Path) -> Result<Db> {
    let mut conn = Connection::open(path).map_err(|e| with_path(path, e))?;
    configure(&conn).map_err(|e| with_path(path, e))?;
    crate::store::sqlite::lines::register(&conn)?;
    migrate(&mut conn, path)?;
    run_maintenance(&mut conn)?;
    let db = Sqlite::db_at(conn, path);
    settle_journal(&db, path)?;
    Ok(db)
}

/// Moves appends left in the journal (by a writer that crashed, or one still running) into
/// the tables, so that whoever opens the database sees them. A read-only database is left
/// as it is.
pub(super) fn settle_journal(db: &Db, path: &Path) -> Result<()> {
    let Some(store) = db.downcast::<Sqlite>() else { return Ok(()) };
    if journal::has_pending(path) && !store.conn.is_readonly(rusqlite::MAIN_DB)? {
        journal::settle_into(store, path)?;
    }
    Ok(())
}

/// Replaces an error opening the database with what is wrong with the file or its folder,
/// when something visibly is (SQLite itself only says "unable to open database file").
fn explain(path: &Path, e: Error) -> Error {
    if matches!(e, Error::NewerDatabase { .. } | Error::NotFound(_)) {
        return e;
    }
    access_problem(path).map_or(e, |cause| Error::io(path, cause))
}

/// Why the database at `path` cannot be opened for reading and writing, if a permission or
/// file-type check shows it.
pub fn access_problem(path: &Path) -> Option<std::io::Error> {
    use std::io::{Error as IoError, ErrorKind};
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match std::fs::metadata(path) {
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => return Some(IoError::new(e.kind(), format!("cannot reach the database file: {e}"))),
        Ok(m) if m.is_dir() => return Some(IoError::other("is a directory, not a database file")),
        Ok(_) => {
            if let Err(e) = std::fs::File::open(path) {
                return Some(IoError::new(e.kind(), format!("cannot read the database file: {e}")));
            }
        }
    }
    // SQLite keeps its -wal and -shm files next to the database, readers included.
    let probe = dir.join(format!(".sessiondb-probe-{}", std::process::id()));
    match std::fs::OpenOptions::new().write(true).create_new(true).open(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
        }
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
        Err(e) => {
            return Some(IoError::new(
                e.kind(),
                format!(
                    "cannot create files in {} (SQLite keeps its -wal and -shm files next to the database): {e}",
                    dir.display()
                ),
            ))
        }
    }
    if path.exists() {
        if let Err(e) = std::fs::OpenOptions::new().read(true).write(true).open(path) {
            return Some(IoError::new(e.kind(), format!("the database file is read-only: {e}")));
        }
    }
    None
}

/// Work left by a migration.
const PENDING_MAINTENANCE: &str = "SELECT task FROM maintenance";

/// Runs work a migration left for sessiondb's code (rebuilding derived tables).
fn run_maintenance(conn: &mut Connection) -> Result<()> {
    let tasks: Vec<String> =
        conn.prepare(PENDING_MAINTENANCE)?.query_map([], |r| r.get("task"))?.collect::<rusqlite::Result<_>>()?;
    for task in tasks {
        match task.as_str() {
            "reindex" => crate::store::sqlite::extract::reindex_all(conn)?,
            "list-texts" => crate::store::sqlite::extract::rebuild_list_texts(conn)?,
            "usage" => crate::store::sqlite::extract::reindex_usage(conn)?,
            "usage-lines" => crate::store::sqlite::extract::reindex_usage_lines(conn)?,
            "compress-lines" => crate::store::sqlite::lines::compress_stored_lines(conn)?,
            "unpack-list-texts" => crate::store::sqlite::lines::unpack_list_texts(conn)?,
            other => return Err(Error::Migration(format!("unknown maintenance task {other}"))),
        }
    }
    Ok(())
}

/// Opens an existing database without creating it (read commands). A database file that
/// cannot be written is fine as long as SQLite can read it.
pub fn open_existing(path: &Path) -> Result<Db> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::NotFound(format!("{}: no database here (run `sessiondb import` first)", path.display())))
        }
        Err(e) => {
            return Err(Error::io(path, std::io::Error::new(e.kind(), format!("cannot reach the database file: {e}"))))
        }
        Ok(m) if m.is_dir() => {
            return Err(Error::io(path, std::io::Error::other("is a directory, not a database file")))
        }
        Ok(_) => {}
    }
    open_file(path).map_err(|e| explain(path, e))
}

/// Opens the existing database file at `path` read-only (`sessiondb serve`): SQLite's read-only
/// mode plus `query_only`, so no statement can change the file whatever calls it. The schema
/// is not migrated and the append journal is not settled (both write): open it once with
/// [`open_existing`] first.
pub fn open_read_only(path: &Path) -> Result<Db> {
    use rusqlite::OpenFlags;
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
    Ok(Sqlite::db(conn))
}

/// A database in memory, for sessions that are never persisted, staging and tests: made from
/// [`CURRENT_SCHEMA`] at once, and its lines are kept as text (packing them would only cost
/// the time to unpack them again).
pub fn open_in_memory() -> Result<Db> {
    let mut conn = Connection::open_in_memory()?;
    configure(&conn)?;
    let tx = conn.transaction()?;
    tx.execute_batch(CURRENT_SCHEMA)?;
    tx.commit()?;
    Ok(Sqlite::db_in_memory(conn))
}

/// The schema (and seeded rows) every migration of `migrations/sqlite/` leaves, as one script:
/// generated, and checked against the migrations by `tests/current_schema.rs`. Replaying the
/// migrations takes 5-7 ms (tables rebuilt, the schema parsed again after each), this about
/// 1 ms; a sync to a server makes an in-memory staging database on every run.
const CURRENT_SCHEMA: &str = include_str!("../../../migrations/sqlite/current_schema.sql");

fn with_path(path: &Path, e: rusqlite::Error) -> Error {
    Error::Io { path: path.to_path_buf(), source: std::io::Error::other(e.to_string()) }
}

/// Creates the file with mode 0600 before SQLite does: sessions hold secrets. SQLite gives its
/// -wal and -shm files the database file's permissions.
fn create_private(path: &Path) -> Result<()> {
    if path.exists() {
        return Ok(());
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| {
            Error::io(parent, std::io::Error::new(e.kind(), format!("cannot create the database's folder: {e}")))
        })?;
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    match opts.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(Error::io(path, std::io::Error::new(e.kind(), format!("cannot create the database file: {e}")))),
    }
}

/// Page size of new databases.
const PAGE_SIZE: i64 = 8192;

/// WAL size at which a commit checkpoints.
const WAL_CHECKPOINT_BYTES: i64 = 32 << 20;

/// Prepared statements kept per connection: more than the distinct statements one operation
/// runs (a branched session runs about 20), so that none is parsed again the next time.
const STATEMENT_CACHE: usize = 64;

fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    // One plan per statement, whatever its parameters: otherwise a statement whose bound
    // parameter the planner compared with a partial index's condition (`ENTRY_NODE` against
    // `entries_labels`) is parsed and planned again each time the value changes (15% of
    // the CPU of 10,000 appends, in settling them). No statement relies on a plan chosen from its values.
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    // WAL: readers never block the writer. synchronous=NORMAL: a commit survives a process
    // crash (the WAL is written before commit returns); only power loss may drop the last ones.
    // A new database gets 8 KiB pages (an existing one keeps its own): each page written costs
    // system calls (a WAL frame, then a checkpoint copy), and entry lines average a few KiB.
    // Measured: importing the 266 MB session 7-9 s with 4 KiB pages, 5 s with 8 KiB; larger
    // pages slow small sessions' index inserts down.
    conn.pragma_update(None, "page_size", PAGE_SIZE)?;
    crate::store::sqlite::bulk::enter_wal(conn)?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    // 16 MiB of page cache per connection: larger caches gained nothing measurable, and the
    // pool keeps connections (and their caches) alive between calls.
    conn.pragma_update(None, "cache_size", -16384)?;
    // Statement journals (kept to undo one multi-row statement: copies, triggers) in memory:
    // on disk they cost a write per changed page.
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    // Checkpoint every 32 MiB of WAL instead of 4 MiB: a checkpoint stalls the commit that runs
    // it, and fewer of them keep the append latency's tail low.
    let page_size: i64 = conn.pragma_query_value(None, "page_size", |r| r.get(0))?;
    conn.pragma_update(None, "wal_autocheckpoint", WAL_CHECKPOINT_BYTES / page_size.max(512))?;
    Ok(())
}

/// Newest migration version this build knows: `migrations/sqlite/`'s highest `V<n>__`. A constant
/// because asking refinery compiles a regular expression to parse the file names, about 1 ms
/// of every command's start (the test below keeps the two equal).
const KNOWN_VERSION: i64 = 25;

fn migrate(conn: &mut Connection, path: &Path) -> Result<()> {
    let known = KNOWN_VERSION;
    let applied = applied_version(conn);
    if let Some(found) = applied.filter(|&v| v > known) {
        return Err(Error::NewerDatabase { path: path.to_path_buf(), found, known });
    }
    if applied == Some(known) {
        return Ok(());
    }
    match migrations::runner().run(conn) {
        Ok(_) => Ok(()),
        // Another process may have migrated the same new database at the same moment.
        Err(_) if applied_version(conn) == Some(known) => Ok(()),
        Err(e) => Err(Error::Migration(format!("{}: {e}", path.display()))),
    }
}

/// Creates a database file at `path` with the schema migrations up to `version` only, as an
/// older sessiondb left it (tests of the migrations that follow).
#[doc(hidden)]
pub fn create_at_version(path: &Path, version: i32) -> Result<()> {
    let mut conn = Connection::open(path).map_err(|e| with_path(path, e))?;
    configure(&conn).map_err(|e| with_path(path, e))?;
    migrations::runner()
        .set_target(refinery::Target::Version(version))
        .run(&mut conn)
        .map_err(|e| Error::Migration(format!("{}: {e}", path.display())))?;
    Ok(())
}

/// Newest applied schema migration.
const SCHEMA_VERSION: &str = "SELECT max(version) AS version FROM refinery_schema_history";

/// Newest migration applied to the database (`None` for a new one).
fn applied_version(conn: &Connection) -> Option<i64> {
    conn.query_row(SCHEMA_VERSION, [], |r| r.get("version")).ok().flatten()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_known_version_is_the_newest_migration() {
        let newest = super::migrations::runner().get_migrations().iter().map(|m| i64::from(m.version())).max();
        assert_eq!(newest, Some(super::KNOWN_VERSION));
    }

    /// Settling appends looks each parent up by id: planning that lookup again for each id
    /// took 15% of the CPU of 10,000 appends.
    #[test]
    fn a_lookup_by_id_is_planned_once_whatever_the_id() {
        let dir = tempfile::tempdir().unwrap();
        let db = super::open(&dir.path().join("db.sqlite")).unwrap();
        let conn = db.sqlite();
        for id in ["a", "b", "c", "d"] {
            let mut st = conn.prepare_cached(crate::store::sqlite::write::ENTRY_NODE).unwrap();
            let rows = st.query(rusqlite::named_params! { ":sid": 1, ":id": id }).unwrap().mapped(|_| Ok(())).count();
            assert_eq!(rows, 0);
        }
        let st = conn.prepare_cached(crate::store::sqlite::write::ENTRY_NODE).unwrap();
        assert_eq!(st.get_status(rusqlite::StatementStatus::RePrepare), 0);
    }
}
