//! [`Sessions`] on SQLite: each statement beside the method that binds it and reads its
//! columns by name.

use crate::error::Result;
use crate::store::interface::sessions::{SessionPlace, SessionRow, Sessions};
use crate::store::keys::SessionKey;
use crate::store::sqlite::Sqlite;
use rusqlite::{named_params, OptionalExtension};

/// Header line and storage fields of a session.
pub const SESSION_HEADER: &str = "SELECT header, path, rel_path, cwd, id, created FROM sessions WHERE sid = :sid";

/// The session recorded at a path.
pub const SESSION_REF_BY_PATH: &str = "SELECT sid, id, path FROM sessions WHERE path = :path";

/// Whether an entry id is taken in a session (id collision check).
pub const ENTRY_ID_EXISTS: &str = "SELECT EXISTS (SELECT 1 FROM entries WHERE session = :sid AND id = :id) AS taken";

/// Number of distinct entry ids of a session (keys `:lo..=:hi`), id-less entries counting as one.
pub const DISTINCT_ENTRY_IDS: &str = "SELECT count(DISTINCT id) + EXISTS (SELECT 1 FROM entries \
        WHERE key BETWEEN :lo AND :hi AND id IS NULL AND type IS NOT 'session') AS n \
    FROM entries WHERE key BETWEEN :lo AND :hi AND type IS NOT 'session'";

/// Removes a session (its entries go by cascade; copies sharing its lines keep them, see the
/// `sessions_keep_shared_lines` trigger).
pub const DELETE_SESSION: &str = "DELETE FROM sessions WHERE sid = :sid";

/// Moves a session: the columns that say where it is, and the header naming its new cwd.
pub const RELOCATE_SESSION: &str = "UPDATE sessions SET path = :path, dir = :dir, rel_path = :rel_path, \
    cwd = :cwd, header = :header WHERE sid = :sid";

/// A session's key and its file's signature, by path.
pub const SESSION_FILE_BY_PATH: &str = "SELECT sid, file_size, file_mtime_ns FROM sessions WHERE path = :path";

impl Sessions for Sqlite {
    fn session_row(&self, sid: SessionKey) -> Result<SessionRow> {
        Ok(self.conn.prepare_cached(SESSION_HEADER)?.query_row(named_params! { ":sid": sid }, |r| {
            Ok(SessionRow {
                header: r.get("header")?,
                rel_path: r.get("rel_path")?,
                cwd: r.get("cwd")?,
                id: r.get("id")?,
                created: r.get("created")?,
                origin: String::new(),
            })
        })?)
    }

    fn sid_by_path(&self, path: &str) -> Result<Option<SessionKey>> {
        Ok(self
            .conn
            .prepare_cached(SESSION_REF_BY_PATH)?
            .query_row(named_params! { ":path": path }, |r| r.get("sid"))
            .optional()?)
    }

    fn entry_id_exists(&self, sid: SessionKey, id: &str) -> Result<bool> {
        Ok(self
            .conn
            .prepare_cached(ENTRY_ID_EXISTS)?
            .query_row(named_params! { ":sid": sid, ":id": id }, |r| r.get("taken"))?)
    }

    fn distinct_entry_ids(&self, sid: SessionKey) -> Result<i64> {
        let (lo, hi) = sid.range();
        Ok(self
            .conn
            .prepare_cached(DISTINCT_ENTRY_IDS)?
            .query_row(named_params! { ":lo": lo, ":hi": hi }, |r| r.get("n"))?)
    }

    fn delete_session(&self, sid: SessionKey) -> Result<()> {
        self.conn.prepare_cached(DELETE_SESSION)?.execute(named_params! { ":sid": sid })?;
        Ok(())
    }

    fn relocate_session(&self, sid: SessionKey, p: &SessionPlace<'_>) -> Result<()> {
        let params = named_params! {
            ":sid": sid, ":path": p.path, ":dir": p.dir, ":rel_path": p.rel_path, ":cwd": p.cwd, ":header": p.header,
        };
        self.conn.prepare_cached(RELOCATE_SESSION)?.execute(params)?;
        Ok(())
    }
}
