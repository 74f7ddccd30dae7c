//! [`Leases`] on PostgreSQL: `session_leases`, times by the server's clock (hosts whose clocks
//! differ still agree on how long ago a lease was renewed).

use crate::store::keys::SessionKey;
use crate::store::lease::{Claimant, LeaseRow, Leases};
use crate::store::postgres::Pg;

/// A session's lease, its times in ms (since 1970; since its renewal, by the server's clock).
pub const PG_LEASE: &str = "SELECT pid, host, start, \
        (extract(epoch FROM since) * 1000)::bigint AS since_ms, \
        (extract(epoch FROM clock_timestamp() - renewed) * 1000)::bigint AS age_ms \
    FROM session_leases WHERE skey = $1";

/// Takes a lease nobody holds.
pub const PG_INSERT_LEASE: &str = "INSERT INTO session_leases (skey, pid, host, start, since, renewed) \
    VALUES ($1, $2, $3, $4, clock_timestamp(), clock_timestamp()) ON CONFLICT (skey) DO NOTHING";

/// Takes over a lease from the holder the caller found dead, if it still holds it.
pub const PG_REPLACE_LEASE: &str = "UPDATE session_leases SET pid = $2, host = $3, start = $4, \
        since = clock_timestamp(), renewed = clock_timestamp() \
    WHERE skey = $1 AND pid = $5 AND host = $6 AND start = $7";

/// Renews a holder's lease.
pub const PG_RENEW_LEASE: &str = "UPDATE session_leases SET renewed = clock_timestamp() \
    WHERE skey = $1 AND pid = $2 AND host = $3 AND start = $4";

/// Drops a holder's lease.
pub const PG_RELEASE_LEASE: &str =
    "DELETE FROM session_leases WHERE skey = $1 AND pid = $2 AND host = $3 AND start = $4";

impl Leases for Pg {
    fn lease(&self, sid: SessionKey) -> crate::error::Result<Option<LeaseRow>> {
        Ok(self.query_opt(PG_LEASE, &[&sid])?.map(|r| LeaseRow {
            holder: Claimant { pid: r.get("pid"), host: r.get("host"), start: r.get("start") },
            since_ms: r.get("since_ms"),
            age_ms: r.get("age_ms"),
        }))
    }

    fn insert_lease(&self, sid: SessionKey, who: &Claimant) -> crate::error::Result<bool> {
        Ok(self.execute(PG_INSERT_LEASE, &[&sid, &who.pid, &who.host, &who.start])? == 1)
    }

    fn replace_lease(&self, sid: SessionKey, old: &Claimant, who: &Claimant) -> crate::error::Result<bool> {
        let params: crate::store::postgres::PgParams<'_> =
            &[&sid, &who.pid, &who.host, &who.start, &old.pid, &old.host, &old.start];
        Ok(self.execute(PG_REPLACE_LEASE, params)? == 1)
    }

    fn renew_lease(&self, sid: SessionKey, who: &Claimant) -> crate::error::Result<bool> {
        Ok(self.execute(PG_RENEW_LEASE, &[&sid, &who.pid, &who.host, &who.start])? == 1)
    }

    fn release_lease(&self, sid: SessionKey, who: &Claimant) -> crate::error::Result<()> {
        self.execute(PG_RELEASE_LEASE, &[&sid, &who.pid, &who.host, &who.start])?;
        Ok(())
    }
}
