//! Session leases, the same on every backend ([`Leases`], implemented in
//! `store::sqlite::lease` and `store::postgres::lease`): the row saying which process writes a
//! session. Whether that process still lives is `store::lease`'s rule, not the backend's.

use crate::store::keys::SessionKey;

/// A process as a lease names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimant {
    /// Its process id.
    pub pid: i64,
    /// The host it runs on.
    pub host: String,
    /// Its start time as that host tells it (`""` when the host cannot tell): with the pid, it
    /// tells a process from a later one given the same pid.
    pub start: String,
}

/// A session's lease as stored.
#[derive(Debug, Clone)]
pub struct LeaseRow {
    /// The process holding it.
    pub holder: Claimant,
    /// When it took the lease, in ms since 1970 (the database's clock).
    pub since_ms: i64,
    /// How long ago it last renewed the lease, in ms (the database's clock).
    pub age_ms: i64,
}

/// Session leases. Each write is one statement that checks what it replaces, so that two
/// processes racing for a lease never both get it.
pub trait Leases {
    /// The lease on session `sid`, if any.
    fn lease(&self, sid: SessionKey) -> crate::error::Result<Option<LeaseRow>>;
    /// Gives `who` the lease on `sid` when there is none; true when it did.
    fn insert_lease(&self, sid: SessionKey, who: &Claimant) -> crate::error::Result<bool>;
    /// Gives `who` the lease on `sid` when `old` still holds it; true when it did.
    fn replace_lease(&self, sid: SessionKey, old: &Claimant, who: &Claimant) -> crate::error::Result<bool>;
    /// Stamps `who`'s lease on `sid` renewed now; false when `who` does not hold it.
    fn renew_lease(&self, sid: SessionKey, who: &Claimant) -> crate::error::Result<bool>;
    /// Removes `who`'s lease on `sid` (another's stays).
    fn release_lease(&self, sid: SessionKey, who: &Claimant) -> crate::error::Result<()>;
}
