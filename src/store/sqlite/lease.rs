//! [`Leases`] on SQLite: `session_leases`, times by this machine's clock.

use crate::store::keys::SessionKey;
use crate::store::lease::{Claimant, LeaseRow, Leases};
use crate::store::sqlite::Sqlite;
use rusqlite::{named_params, OptionalExtension};

/// A session's lease, with its age by the database's clock.
pub const LEASE: &str = "SELECT pid, host, start, since_ms, \
    CAST(unixepoch('subsec') * 1000 AS INTEGER) - renewed_ms AS age_ms FROM session_leases WHERE sid = :sid";

/// Takes a lease nobody holds.
pub const INSERT_LEASE: &str = "INSERT INTO session_leases (sid, pid, host, start, since_ms, renewed_ms) \
    VALUES (:sid, :pid, :host, :start, CAST(unixepoch('subsec') * 1000 AS INTEGER), \
        CAST(unixepoch('subsec') * 1000 AS INTEGER)) \
    ON CONFLICT (sid) DO NOTHING";

/// Takes over a lease from the holder the caller found dead, if it still holds it.
pub const REPLACE_LEASE: &str = "UPDATE session_leases SET pid = :pid, host = :host, start = :start, \
        since_ms = CAST(unixepoch('subsec') * 1000 AS INTEGER), renewed_ms = CAST(unixepoch('subsec') * 1000 AS INTEGER) \
    WHERE sid = :sid AND pid = :old_pid AND host = :old_host AND start = :old_start";

/// Renews a holder's lease.
pub const RENEW_LEASE: &str = "UPDATE session_leases SET renewed_ms = CAST(unixepoch('subsec') * 1000 AS INTEGER) \
    WHERE sid = :sid AND pid = :pid AND host = :host AND start = :start";

/// Drops a holder's lease.
pub const RELEASE_LEASE: &str =
    "DELETE FROM session_leases WHERE sid = :sid AND pid = :pid AND host = :host AND start = :start";

impl Leases for Sqlite {
    fn lease(&self, sid: SessionKey) -> crate::error::Result<Option<LeaseRow>> {
        let mut st = self.conn.prepare_cached(LEASE)?;
        Ok(st
            .query_row(named_params! { ":sid": sid }, |r| {
                Ok(LeaseRow {
                    holder: Claimant { pid: r.get("pid")?, host: r.get("host")?, start: r.get("start")? },
                    since_ms: r.get("since_ms")?,
                    age_ms: r.get("age_ms")?,
                })
            })
            .optional()?)
    }

    fn insert_lease(&self, sid: SessionKey, who: &Claimant) -> crate::error::Result<bool> {
        let mut st = self.conn.prepare_cached(INSERT_LEASE)?;
        let n = st.execute(named_params! { ":sid": sid, ":pid": who.pid, ":host": who.host, ":start": who.start })?;
        Ok(n == 1)
    }

    fn replace_lease(&self, sid: SessionKey, old: &Claimant, who: &Claimant) -> crate::error::Result<bool> {
        let mut st = self.conn.prepare_cached(REPLACE_LEASE)?;
        let n = st.execute(named_params! {
            ":sid": sid, ":pid": who.pid, ":host": who.host, ":start": who.start,
            ":old_pid": old.pid, ":old_host": old.host, ":old_start": old.start,
        })?;
        Ok(n == 1)
    }

    fn renew_lease(&self, sid: SessionKey, who: &Claimant) -> crate::error::Result<bool> {
        let mut st = self.conn.prepare_cached(RENEW_LEASE)?;
        let n = st.execute(named_params! { ":sid": sid, ":pid": who.pid, ":host": who.host, ":start": who.start })?;
        Ok(n == 1)
    }

    fn release_lease(&self, sid: SessionKey, who: &Claimant) -> crate::error::Result<()> {
        let mut st = self.conn.prepare_cached(RELEASE_LEASE)?;
        st.execute(named_params! { ":sid": sid, ":pid": who.pid, ":host": who.host, ":start": who.start })?;
        Ok(())
    }
}
