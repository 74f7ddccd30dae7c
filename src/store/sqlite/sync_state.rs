//! [`SyncStates`] on SQLite.

use crate::hash::FxHashMap;
use crate::jsonl::signature::FileSignature;
use crate::store::interface::sessions::SessionFile;
use crate::store::interface::sync_state::{Position, SyncState, SyncStates};
use crate::store::keys::SessionKey;
use crate::store::sqlite::Sqlite;
use rusqlite::{named_params, OptionalExtension, Row};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Every imported file's signature.
const KNOWN: &str = "SELECT path, file_size, file_mtime_ns FROM sessions \
    WHERE file_size IS NOT NULL AND file_mtime_ns IS NOT NULL";

/// Sync state of the sessions whose path sorts in `[:lo, :hi)` (one directory tree).
pub const SYNC_STATES_UNDER: &str = "SELECT path, sid, file_size, file_mtime_ns, sync_offset, tail_hash, missing \
    FROM sessions WHERE path >= :lo AND path < :hi";

/// Sync state of the session at a path.
pub const SYNC_STATE_BY_PATH: &str = "SELECT path, sid, file_size, file_mtime_ns, sync_offset, tail_hash, missing \
    FROM sessions WHERE path = :path";

/// File signature, sync position and tree regularity of a session.
const POSITION: &str = "SELECT file_size, file_mtime_ns, sync_offset, tree_ok FROM sessions WHERE sid = :sid";

/// Records how far a session's file was read and the hash of the bytes before that point.
const SET_POSITION: &str = "UPDATE sessions SET sync_offset = :offset, tail_hash = :tail, missing = 0 WHERE sid = :sid";

/// Marks a session's file as gone or back.
const SET_MISSING: &str = "UPDATE sessions SET missing = :missing WHERE sid = :sid";

fn sync_state(r: &Row<'_>) -> rusqlite::Result<SyncState> {
    Ok(SyncState {
        sid: r.get("sid")?,
        size: r.get("file_size")?,
        mtime: r.get("file_mtime_ns")?,
        offset: r.get("sync_offset")?,
        tail: r.get("tail_hash")?,
        missing: r.get::<_, i64>("missing")? != 0,
    })
}

impl SyncStates for Sqlite {
    fn known_signatures(&self) -> crate::error::Result<HashMap<PathBuf, FileSignature>> {
        let db = &self.conn;
        let conn = db;
        let mut st = conn.prepare(KNOWN)?;
        let rows = st.query_map([], |r| {
            let sig = FileSignature { size: r.get("file_size")?, mtime_ns: r.get("file_mtime_ns")? };
            Ok((PathBuf::from(r.get::<_, String>("path")?), sig))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn file_at(&self, path: &str) -> crate::error::Result<Option<SessionFile>> {
        let mut st = self.conn.prepare_cached(crate::store::sqlite::sessions::SESSION_FILE_BY_PATH)?;
        let found = st
            .query_row(named_params! { ":path": path }, |r| {
                Ok((r.get("sid")?, r.get("file_size")?, r.get("file_mtime_ns")?))
            })
            .optional()?;
        Ok(found)
    }

    fn states_under(&self, dir: &Path) -> crate::error::Result<FxHashMap<PathBuf, SyncState>> {
        let db = &self.conn;
        let conn = db;
        let root = dir.to_string_lossy();
        let (lo, hi) = (format!("{root}/"), format!("{root}0"));
        let mut st = conn.prepare_cached(SYNC_STATES_UNDER)?;
        let rows = st.query_map(named_params! { ":lo": lo, ":hi": hi }, |r| {
            Ok((PathBuf::from(r.get::<_, String>("path")?), sync_state(r)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn state_at(&self, path: &Path) -> crate::error::Result<Option<SyncState>> {
        let db = &self.conn;
        let conn = db;
        let mut st = conn.prepare_cached(SYNC_STATE_BY_PATH)?;
        Ok(st.query_row(named_params! { ":path": path.to_string_lossy() }, sync_state).optional()?)
    }

    fn position(&self, sid: SessionKey) -> crate::error::Result<Option<Position>> {
        let db = &self.conn;
        let conn = db;
        Ok(conn
            .prepare_cached(POSITION)?
            .query_row(named_params! { ":sid": sid }, |r| {
                Ok(Position {
                    size: r.get("file_size")?,
                    mtime: r.get("file_mtime_ns")?,
                    offset: r.get("sync_offset")?,
                    tree_ok: r.get::<_, i64>("tree_ok")? != 0,
                })
            })
            .optional()?)
    }

    fn set_position(&self, sid: SessionKey, offset: i64, tail: i64) -> crate::error::Result<()> {
        let db = &self.conn;
        let conn = db;
        conn.prepare_cached(SET_POSITION)?.execute(named_params! { ":sid": sid, ":offset": offset, ":tail": tail })?;
        Ok(())
    }

    fn set_missing(&self, sid: SessionKey, missing: bool) -> crate::error::Result<()> {
        let db = &self.conn;
        let conn = db;
        conn.prepare_cached(SET_MISSING)?.execute(named_params! { ":sid": sid, ":missing": i64::from(missing) })?;
        Ok(())
    }
}
