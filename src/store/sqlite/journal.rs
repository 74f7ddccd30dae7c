//! The append journal: how an append is durable in a few microseconds.
//!
//! A commit to SQLite writes every b-tree page the entry touches (the entry, its two indexes,
//! its search and usage rows, the session's statistics): ~10 pages and ~80 µs. A saved
//! session's appends instead go to `<database>-appends` as one `write` each, like pi's own
//! `appendFileSync`: once `write` returns, the entry survives a crash of the process. The
//! journal is moved into the tables in one transaction ("settled") before the writing manager
//! reads anything, every [`BATCH`] appends, when it is dropped, and by anyone who opens the
//! database, so a crashed writer's entries arrive with the next open.
//!
//! A record is `[u32 path length][u32 line length][u64 FNV-1a of both][session path][entry
//! line]`. Writers append under a shared lock, settling takes an exclusive one, so settling
//! never reads a record half written; a record cut short by a crash was never acknowledged
//! and is dropped. Settling skips entries whose id the session already holds: a crash between
//! the commit and the truncation cannot apply a record twice. The lock order is always journal
//! first, database second.
//!
//! The journal is SQLite's way of making an append durable (`Writes::append_saved` of a
//! database file); it is a file beside the database, applied through the store's own writes.
//! A server's append is one statement, durable when it returns, and needs none.

use crate::error::{Error, Result};
use crate::hash::fnv1a;
use crate::store::backend::Store;
use crate::store::handle::Db;
use crate::store::interface::sessions::Sessions;
use crate::store::interface::write::{self, Writes};
use crate::store::keys::SessionKey;
use crate::store::sqlite::Sqlite;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// Appends a manager journals before it settles them itself.
pub const BATCH: usize = 256;

const RECORD_HEAD: usize = 16;

/// The journal of the database at `db`.
pub fn path_for(db: &Path) -> PathBuf {
    crate::store::files::beside(db, "-appends")
}

fn io(path: &Path, e: std::io::Error) -> Error {
    Error::io(path, e)
}

/// A process's handle for appending to one database's journal.
pub struct Journal {
    file: File,
    path: PathBuf,
    buf: Vec<u8>,
}

impl Journal {
    /// Opens (creating, mode 0600: entries hold secrets) the journal of database `db`.
    pub fn open(db: &Path) -> Result<Self> {
        let path = path_for(db);
        let mut opts = OpenOptions::new();
        opts.append(true).create(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
        let file = opts.open(&path).map_err(|e| io(&path, e))?;
        Ok(Journal { file, path, buf: Vec::new() })
    }

    /// Appends the entry `line` of the session at `session_path` with one `write`.
    pub fn append(&mut self, session_path: &str, line: &str) -> Result<()> {
        let (p, l) = (session_path.as_bytes(), line.as_bytes());
        let too_long = || Error::InvalidArgument("entry too long for the append journal".into());
        self.buf.clear();
        self.buf.extend_from_slice(&u32::try_from(p.len()).map_err(|_| too_long())?.to_le_bytes());
        self.buf.extend_from_slice(&u32::try_from(l.len()).map_err(|_| too_long())?.to_le_bytes());
        self.buf.extend_from_slice(&fnv1a(&[p, l]).to_le_bytes());
        self.buf.extend_from_slice(p);
        self.buf.extend_from_slice(l);
        self.file.lock_shared().map_err(|e| io(&self.path, e))?;
        let written = self.file.write_all(&self.buf);
        let unlocked = self.file.unlock();
        written.map_err(|e| io(&self.path, e))?;
        unlocked.map_err(|e| io(&self.path, e))
    }
}

/// One journaled append.
struct Record {
    path: String,
    line: String,
}

/// Whole records at the start of `bytes`; stops at the first one cut short or damaged.
fn parse(bytes: &[u8]) -> Vec<Record> {
    let mut out = Vec::new();
    let mut at = 0;
    while bytes.len() - at >= RECORD_HEAD {
        let word = |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]) as usize;
        let (pl, ll) = (word(at), word(at + 4));
        let mut sum = [0u8; 8];
        sum.copy_from_slice(&bytes[at + 8..at + 16]);
        let start = at + RECORD_HEAD;
        let Some(end) = start.checked_add(pl).and_then(|x| x.checked_add(ll)).filter(|&e| e <= bytes.len()) else {
            break;
        };
        let (p, l) = (&bytes[start..start + pl], &bytes[start + pl..end]);
        if fnv1a(&[p, l]) != u64::from_le_bytes(sum) {
            break;
        }
        match (std::str::from_utf8(p), std::str::from_utf8(l)) {
            (Ok(p), Ok(l)) => out.push(Record { path: p.to_owned(), line: l.to_owned() }),
            _ => break,
        }
        at = end;
    }
    out
}

/// Whether the database at `db` has journaled appends waiting.
pub fn has_pending(db: &Path) -> bool {
    std::fs::metadata(path_for(db)).is_ok_and(|m| m.len() > 0)
}

/// Moves every journaled append of database `db` into its tables (through `handle`, which
/// must not be inside a transaction) and empties the journal. Returns the entries written (0
/// when `handle` is no SQLite database).
pub fn settle(handle: &Db, db: &Path) -> Result<usize> {
    match handle.downcast::<Sqlite>() {
        Some(store) => settle_into(store, db),
        None => Ok(0),
    }
}

/// [`settle`] through the SQLite store itself.
pub(in crate::store::sqlite) fn settle_into(handle: &Sqlite, db: &Path) -> Result<usize> {
    let path = path_for(db);
    let mut file = match OpenOptions::new().read(true).write(true).open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(io(&path, e)),
    };
    file.lock().map_err(|e| io(&path, e))?;
    let result = settle_locked(handle, &mut file, &path);
    let _ = file.unlock();
    result
}

fn settle_locked(store: &Sqlite, file: &mut File, path: &Path) -> Result<usize> {
    let mut bytes = Vec::new();
    file.rewind().map_err(|e| io(path, e))?;
    file.read_to_end(&mut bytes).map_err(|e| io(path, e))?;
    if bytes.is_empty() {
        return Ok(0);
    }
    let records = parse(&bytes);
    // A write transaction taken at once, on the shared handle (its `Tx` would need `&mut`).
    store.begin()?;
    let written = match apply(store, &records) {
        Ok(n) => n,
        Err(e) => {
            store.rollback();
            return Err(e);
        }
    };
    store.commit()?;
    file.set_len(0).map_err(|e| io(path, e))?;
    Ok(written)
}

/// Writes `records` inside the open transaction; returns how many were new.
fn apply(tx: &Sqlite, records: &[Record]) -> Result<usize> {
    let mut written = 0;
    {
        let mut sessions: std::collections::HashMap<String, Option<SessionKey>> = std::collections::HashMap::new();
        for r in records {
            let sid = match sessions.get(&r.path) {
                Some(s) => *s,
                None => {
                    let s = tx.sid_by_path(&r.path)?;
                    sessions.insert(r.path.clone(), s);
                    s
                }
            };
            // The session was deleted since: like a write to a removed file, the entry goes.
            let Some(sid) = sid else { continue };
            let Some(obj) = write::scan(&r.line) else { continue };
            let id = obj.get_str("id");
            if let Some(id) = id.as_deref() {
                if tx.entry_id_exists(sid, id)? {
                    continue; // settled before a crash cut the truncation short
                }
            }
            let parent = match obj.get_str("parentId") {
                Some(p) => tx.entry_node(sid, &p)?,
                None => None,
            };
            tx.append_entry(sid, &r.line, parent)?;
            written += 1;
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_cut_short_or_damaged_end_the_journal() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db.sqlite");
        let mut j = Journal::open(&db).unwrap();
        j.append("/a.jsonl", r#"{"id":"1"}"#).unwrap();
        j.append("/b.jsonl", r#"{"id":"2"}"#).unwrap();
        let bytes = std::fs::read(path_for(&db)).unwrap();
        let all = parse(&bytes);
        assert_eq!(
            all.iter().map(|r| (r.path.as_str(), r.line.as_str())).collect::<Vec<_>>(),
            [("/a.jsonl", r#"{"id":"1"}"#), ("/b.jsonl", r#"{"id":"2"}"#)]
        );
        for cut in 0..bytes.len() {
            let n = parse(&bytes[..cut]).len();
            assert!(n <= 1 || cut == bytes.len(), "cut at {cut}: {n}");
        }
        let mut damaged = bytes.clone();
        let last = damaged.len() - 2;
        damaged[last] ^= 1;
        assert_eq!(parse(&damaged).len(), 1);
    }
}

#[cfg(test)]
mod pinned {
    use super::*;

    /// A record's bytes as sessiondb has always written them: lengths, FNV-1a 64 of the path
    /// and the line, then both. Journals left by an older version must still be read.
    #[test]
    fn a_record_is_written_as_before() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db.sqlite");
        Journal::open(&db).unwrap().append("/s/a.jsonl", r#"{"type":"message","id":"é1"}"#).unwrap();
        let bytes = std::fs::read(path_for(&db)).unwrap();
        let hex: String = bytes[..RECORD_HEAD].iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, "0a0000001d0000002401bd88e4f29030");
        assert_eq!(parse(&bytes).len(), 1);
    }
}
