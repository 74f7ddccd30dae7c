//! Opening the database: file mode, pragmas, schema migrations.

use crate::error::{Error, Result};
pub use crate::store::files::{beside, BUSY_TIMEOUT};
pub use crate::store::handle::{is_constraint_violation, Backend, Db, Tx};
use rusqlite::Connection;
use std::path::{Path, PathBuf};

refinery::embed_migrations!("migrations");

/// The default database: `$SESSIONDB_PATH`, else `~/.pi/agent/sessiondb.sqlite`.
pub fn default_path() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("SESSIONDB_PATH").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .ok_or_else(|| Error::InvalidArgument("HOME is not set; pass --db or set SESSIONDB_PATH".into()))?;
    Ok(Path::new(&home).join(".pi").join("agent").join("sessiondb.sqlite"))
}

/// The PostgreSQL URL `path` is, if it is one.
fn pg_url(path: &Path) -> Option<&str> {
    path.to_str().filter(|t| crate::store::pg::is_url(t))
}

/// Connects to the PostgreSQL database `url` names (server checks, migrations).
fn open_pg(url: &str) -> Result<Db> {
    crate::store::pg::connect(url).map(Db::from_server)
}

/// A database named by a URL of another scheme than PostgreSQL's is not a file: without this
/// check, opening it would quietly create a folder named after the scheme with a new SQLite
/// file in it.
fn refuse_url(path: &Path) -> Result<()> {
    let text = path.to_string_lossy();
    let Some((scheme, _)) = text.split_once("://") else { return Ok(()) };
    let is_scheme = scheme.len() > 1
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !is_scheme {
        return Ok(());
    }
    Err(Error::InvalidArgument(format!(
        "{text}: sessiondb does not serve {scheme}:// databases; give the path of a SQLite database file"
    )))
}

/// Opens (creating if needed) the database at `path` for writing and brings its schema up to
/// date. A database that cannot be written is refused with the reason.
pub fn open(path: &Path) -> Result<Db> {
    if let Some(url) = pg_url(path) {
        return open_pg(url);
    }
    refuse_url(path)?;
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
    migrate(&mut conn, path)?;
    run_maintenance(&mut conn)?;
    let db = Db::Sqlite(conn);
    settle_journal(&db, path)?;
    Ok(db)
}

/// Moves appends left in the journal (by a writer that crashed, or one still running) into
/// the tables, so that whoever opens the database sees them. A read-only database is left
/// as it is.
fn settle_journal(db: &Db, path: &Path) -> Result<()> {
    let Db::Sqlite(conn) = db else { return Ok(()) };
    if crate::store::journal::has_pending(path) && !conn.is_readonly(rusqlite::MAIN_DB)? {
        crate::store::journal::settle(db, path)?;
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
            "reindex" => crate::store::extract::reindex_all(conn)?,
            "list-texts" => crate::store::extract::rebuild_list_texts(conn)?,
            "usage" => crate::store::extract::reindex_usage(conn)?,
            other => return Err(Error::Migration(format!("unknown maintenance task {other}"))),
        }
    }
    Ok(())
}

/// Opens an existing database without creating it (read commands). A database file that
/// cannot be written is fine as long as SQLite can read it.
pub fn open_existing(path: &Path) -> Result<Db> {
    if let Some(url) = pg_url(path) {
        return open_pg(url);
    }
    refuse_url(path)?;
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

/// A database in memory, for sessions that are never persisted and for tests.
pub fn open_in_memory() -> Result<Db> {
    let mut conn = Connection::open_in_memory()?;
    configure(&conn)?;
    migrate(&mut conn, Path::new(":memory:"))?;
    Ok(Db::Sqlite(conn))
}

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
    // WAL: readers never block the writer. synchronous=NORMAL: a commit survives a process
    // crash (the WAL is written before commit returns); only power loss may drop the last ones.
    // A new database gets 8 KiB pages (an existing one keeps its own): each page written costs
    // system calls (a WAL frame, then a checkpoint copy), and entry lines average a few KiB.
    // Measured: importing the 266 MB session 7-9 s with 4 KiB pages, 5 s with 8 KiB; larger
    // pages slow small sessions' index inserts down.
    conn.pragma_update(None, "page_size", PAGE_SIZE)?;
    crate::store::bulk::enter_wal(conn)?;
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

/// Newest migration version this build knows: `migrations/`'s highest `V<n>__`. A constant
/// because asking refinery compiles a regular expression to parse the file names, about 1 ms
/// of every command's start (the test below keeps the two equal).
const KNOWN_VERSION: i64 = 11;

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

/// Newest applied schema migration.
const SCHEMA_VERSION: &str = "SELECT max(version) AS version FROM refinery_schema_history";

/// Newest migration applied to the database (`None` for a new one).
fn applied_version(conn: &Connection) -> Option<i64> {
    conn.query_row(SCHEMA_VERSION, [], |r| r.get("version")).ok().flatten()
}

/// Connections to one database kept open between managers, so that opening a session does not
/// pay for a fresh connection (schema parse, pragmas, migration check: ~0.1 ms) every time.
/// Keyed by path, device, inode and creation time: a database replaced on disk gets new
/// connections, even when the new file reuses the old one's inode.
static POOL: std::sync::Mutex<Vec<(FileKey, Db)>> = std::sync::Mutex::new(Vec::new());

/// Idle connections kept per process.
const POOL_SIZE: usize = 4;

#[derive(Clone, PartialEq)]
struct FileKey {
    path: PathBuf,
    dev: u64,
    ino: u64,
    created: Option<std::time::SystemTime>,
}

#[cfg(unix)]
fn file_key(path: &Path) -> Option<FileKey> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some(FileKey { path: path.to_path_buf(), dev: m.dev(), ino: m.ino(), created: m.created().ok() })
}

#[cfg(not(unix))]
fn file_key(_: &Path) -> Option<FileKey> {
    None
}

/// A connection that goes back to the process's pool when dropped (unless it is in memory or
/// was left inside a transaction).
pub struct Pooled {
    conn: Option<Db>,
    key: Option<FileKey>,
}

impl Pooled {
    /// A connection that is not pooled (in-memory databases).
    pub fn unpooled(conn: Db) -> Self {
        Pooled { conn: Some(conn), key: None }
    }
}

impl std::ops::Deref for Pooled {
    type Target = Db;
    fn deref(&self) -> &Db {
        self.conn.as_ref().expect("a pooled connection is present until dropped")
    }
}

impl std::ops::DerefMut for Pooled {
    fn deref_mut(&mut self) -> &mut Db {
        self.conn.as_mut().expect("a pooled connection is present until dropped")
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        let (Some(conn), Some(key)) = (self.conn.take(), self.key.take()) else { return };
        if !conn.is_idle() {
            return;
        }
        if let Ok(mut pool) = POOL.lock() {
            if pool.len() >= POOL_SIZE {
                pool.remove(0);
            }
            pool.push((key, conn));
        }
    }
}

/// [`open`], reusing an idle connection to the same file when the process has one.
pub fn open_pooled(path: &Path) -> Result<Pooled> {
    if let Some(key) = file_key(path) {
        let reused = POOL.lock().ok().and_then(|mut pool| {
            let i = pool.iter().rposition(|(k, _)| *k == key)?;
            Some(pool.remove(i).1)
        });
        if let Some(conn) = reused {
            settle_journal(&conn, path)?;
            return Ok(Pooled { conn: Some(conn), key: Some(key) });
        }
    }
    let conn = open(path)?;
    Ok(Pooled { conn: Some(conn), key: file_key(path) })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_known_version_is_the_newest_migration() {
        let newest = super::migrations::runner().get_migrations().iter().map(|m| i64::from(m.version())).max();
        assert_eq!(newest, Some(super::KNOWN_VERSION));
    }
}
