//! [`Sessions`] on PostgreSQL.

use crate::error::{Error, Result};
use crate::store::interface::sessions::{SessionPlace, SessionRow, Sessions};
use crate::store::keys::SessionKey;
use crate::store::postgres::{pg_text, Pg};

/// Header line and storage fields of a session.
pub const PG_SESSION_HEADER: &str = "SELECT header, rel_path, cwd, id, created, origin FROM sessions WHERE skey = $1";

/// The session made on the server (origin `''`, not pushed) at a path.
pub const PG_SESSION_BY_PATH: &str = "SELECT skey FROM sessions WHERE origin = '' AND path = $1";

/// Moves one of the server's own sessions: the columns that say where it is, and the header
/// naming its new cwd. A session pushed from another machine is that machine's to move (its
/// next push would put it back).
pub const PG_RELOCATE_SESSION: &str = "UPDATE sessions SET path = $2, dir = $3, rel_path = $4, cwd = $5, \
    header = $6 WHERE skey = $1 AND origin = ''";

/// Whether an entry id is taken in a session.
pub const PG_ENTRY_ID_EXISTS: &str = "SELECT 1 AS taken FROM entries WHERE session = $1 AND id = $2 LIMIT 1";

/// Number of distinct entry ids of a session, id-less entries counting as one.
pub const PG_DISTINCT_ENTRY_IDS: &str = "SELECT count(DISTINCT id) + (EXISTS (SELECT 1 FROM entries \
        WHERE session = $1 AND id IS NULL AND type IS DISTINCT FROM 'session'))::int AS n \
    FROM entries WHERE session = $1 AND type IS DISTINCT FROM 'session'";

impl Sessions for Pg {
    fn session_row(&self, sid: SessionKey) -> Result<SessionRow> {
        let r = self
            .query_opt(PG_SESSION_HEADER, &[&sid])?
            .ok_or_else(|| Error::NotFound(format!("no session with internal key {sid}")))?;
        Ok(SessionRow {
            header: String::from_utf8_lossy(r.get::<_, &[u8]>("header")).into_owned(),
            rel_path: r.get("rel_path"),
            cwd: r.get("cwd"),
            id: r.get("id"),
            created: r.get("created"),
            origin: r.get("origin"),
        })
    }

    fn sid_by_path(&self, path: &str) -> Result<Option<SessionKey>> {
        Ok(self.query_opt(PG_SESSION_BY_PATH, &[&path])?.map(|r| r.get("skey")))
    }

    fn entry_id_exists(&self, sid: SessionKey, id: &str) -> Result<bool> {
        Ok(self.query_opt(PG_ENTRY_ID_EXISTS, &[&sid, &id])?.is_some())
    }

    fn distinct_entry_ids(&self, sid: SessionKey) -> Result<i64> {
        Ok(self.query_opt(PG_DISTINCT_ENTRY_IDS, &[&sid])?.map_or(0, |r| r.get("n")))
    }

    /// Its lines go with it (`entries.session` cascades).
    fn delete_session(&self, sid: SessionKey) -> Result<()> {
        self.execute(super::push::DELETE_SESSIONS, &[&vec![sid]])?;
        Ok(())
    }

    fn relocate_session(&self, sid: SessionKey, p: &SessionPlace<'_>) -> Result<()> {
        let (path, dir, rel, cwd, header) =
            (pg_text(p.path), pg_text(p.dir), pg_text(p.rel_path), pg_text(p.cwd), pg_text(p.header));
        let params: super::PgParams<'_> =
            &[&sid, &path.as_ref(), &dir.as_ref(), &rel.as_ref(), &cwd.as_ref(), &header.as_bytes()];
        if self.execute(PG_RELOCATE_SESSION, params)? == 0 {
            return Err(Error::InvalidArgument(format!(
                "session {sid} was pushed from another machine (or is gone): move it there and push again"
            )));
        }
        Ok(())
    }
}
