//! [`Integrity`] on PostgreSQL: the columns `check` compares lines against; the server keeps
//! its own files whole, so SQLite's file checks and shared lines find nothing here.

use crate::error::Result;
use crate::store::interface::integrity::{
    CheckedEntry, CheckedSession, ForeignKeyProblem, Integrity, SharedLineProblem,
};
use crate::store::keys::SessionKey;
use crate::store::postgres::Pg;

fn checked_session(r: &postgres::Row) -> CheckedSession {
    CheckedSession {
        sid: r.get("sid"),
        id: r.get("id"),
        path: r.get("path"),
        cwd: r.get("cwd"),
        entry_count: r.get("entry_count"),
        last_seq: r.get("last_seq"),
        tree_ok: r.get("tree_ok"),
    }
}

/// [`CHECK_SESSIONS`] on PostgreSQL: the sessions of every origin.
pub const PG_CHECK_SESSIONS: &str =
    "SELECT skey AS sid, id, path, cwd, entry_count, last_seq, tree_ok FROM sessions ORDER BY skey";

/// [`CHECK_SESSION`] on PostgreSQL.
pub const PG_CHECK_SESSION: &str =
    "SELECT skey AS sid, id, path, cwd, entry_count, last_seq, tree_ok FROM sessions WHERE skey = $1";

/// [`CHECK_ENTRIES`] on PostgreSQL (the primary key's range; every row holds its line).
pub const PG_CHECK_ENTRIES: &str = "SELECT seq, id, parent_id, type, \
        CASE WHEN type IN ('label', 'context_edit', 'compaction') THEN body END AS body \
    FROM entries WHERE session = $1 ORDER BY seq";

fn pg_entries(pg: &Pg, sid: SessionKey) -> Result<Vec<CheckedEntry>> {
    Ok(pg
        .query(PG_CHECK_ENTRIES, &[&sid])?
        .iter()
        .map(|r| CheckedEntry {
            seq: r.get("seq"),
            id: r.get("id"),
            parent_id: r.get("parent_id"),
            kind: r.get("type"),
            body: r.get::<_, Option<&[u8]>>("body").map(|b| String::from_utf8_lossy(b).into_owned()),
            // The server keeps its lines as text (compressed by itself).
            damaged: None,
        })
        .collect())
}

impl Integrity for Pg {
    fn integrity_check(&self, _f: &mut dyn FnMut(String) -> bool) -> Result<()> {
        Ok(())
    }

    fn foreign_key_check(&self, _f: &mut dyn FnMut(ForeignKeyProblem) -> bool) -> Result<()> {
        Ok(())
    }

    fn shared_line_check(&self, _f: &mut dyn FnMut(SharedLineProblem) -> bool) -> Result<()> {
        Ok(())
    }

    fn checked_sessions(&self) -> Result<Vec<CheckedSession>> {
        Ok(self.query(PG_CHECK_SESSIONS, &[])?.iter().map(checked_session).collect())
    }

    fn checked_session(&self, sid: SessionKey) -> Result<Option<CheckedSession>> {
        Ok(self.query_opt(PG_CHECK_SESSION, &[&sid])?.as_ref().map(checked_session))
    }

    fn checked_entries(&self, sid: SessionKey) -> Result<Vec<CheckedEntry>> {
        pg_entries(self, sid)
    }
}
