//! The connections to SQLite files a process keeps open between managers: opening a session
//! then reuses one instead of paying for a fresh connection. Only SQLite has them; the handle
//! they are lent through, [`Pooled`], is the store's (`store::handle`), as a server's
//! connection is handed out the same way without a pool.

use crate::error::Result;
use crate::store::handle::{Db, Pooled};
use crate::store::sqlite::open::{open, settle_journal};
use std::path::{Path, PathBuf};

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

/// Puts `conn` back into the pool under `key`, unless it was left inside a transaction.
fn give_back(key: FileKey, conn: Db) {
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

/// `conn`, going back to the pool under `key` (when the file has one) once dropped.
fn pooled(conn: Db, key: Option<FileKey>) -> Pooled {
    match key {
        Some(key) => Pooled::returning(conn, Box::new(move |conn| give_back(key, conn))),
        None => Pooled::unpooled(conn),
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
            return Ok(pooled(conn, Some(key)));
        }
    }
    let conn = open(path)?;
    Ok(pooled(conn, file_key(path)))
}
