//! One writer per session: the process that opens a session for writing holds a lease on it
//! (its pid, host and start time, in the database), renews it while it runs and releases it
//! when it is done. This file owns the rule of who holds a lease: a holder on this host holds
//! it while a process with its pid and start time runs; a holder elsewhere (or on a host that
//! cannot tell its processes) while it renewed the lease less than [`TTL_MS`] ago. A holder
//! that lost it by that rule loses it to the next process that asks.

use crate::error::Result;
use crate::store::handle::Db;
pub use crate::store::interface::lease::*;
use crate::store::keys::SessionKey;
use crate::store::process;

/// A lease not renewed for this long is gone, unless its holder is known to run (on this host).
pub const TTL_MS: i64 = 90_000;

/// How often a holder renews its lease: well within [`TTL_MS`].
pub const RENEW_EVERY_MS: i64 = 20_000;

/// The process holding a session's lease, as a reader sees it now.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Holder {
    /// Its process id.
    pub pid: i64,
    /// The host it runs on.
    pub host: String,
    /// Its start time as its host tells it (`""` when unknown).
    pub start: String,
    /// When it took the lease, in ms since 1970.
    pub since_ms: i64,
    /// How long ago it last renewed the lease, in ms.
    pub age_ms: i64,
    /// Whether it still holds the lease by the rule above (false: the next process takes it).
    pub live: bool,
    /// Whether it is this process.
    pub mine: bool,
}

impl Holder {
    /// `process 1234 on host (since 2026-12-06 02:40:12 UTC)`, for messages.
    pub fn describe(&self) -> String {
        let since = chrono::DateTime::from_timestamp_millis(self.since_ms)
            .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
            .unwrap_or_else(|| "an unknown time".into());
        let host = if self.host.is_empty() { "an unnamed host" } else { self.host.as_str() };
        format!("process {} on {host} (since {since})", self.pid)
    }
}

/// Whether the holder of `row` still holds it, asked by process `me`.
fn live(row: &LeaseRow, me: &Claimant) -> bool {
    let h = &row.holder;
    if h == me {
        return true;
    }
    if h.host == me.host && !h.start.is_empty() && process::can_probe() {
        // The same host tells exactly: the pid runs, and is the same process (not a later one
        // given the same pid).
        return process::start_of(h.pid).as_deref() == Some(h.start.as_str());
    }
    row.age_ms < TTL_MS
}

fn holder_of(row: LeaseRow, me: &Claimant) -> Holder {
    let live = live(&row, me);
    let mine = &row.holder == me;
    let LeaseRow { holder, since_ms, age_ms } = row;
    Holder { pid: holder.pid, host: holder.host, start: holder.start, since_ms, age_ms, live, mine }
}

/// Who holds the lease on session `sid` (live or not), if anyone.
pub fn holder(db: &Db, sid: SessionKey) -> Result<Option<Holder>> {
    Ok(db.store().lease(sid)?.map(|row| holder_of(row, process::me())))
}

/// The live process other than this one holding session `sid`, if any: a session it holds
/// must not be written (appended to, moved, deleted) by anyone else.
pub fn live_holder(db: &Db, sid: SessionKey) -> Result<Option<Holder>> {
    Ok(holder(db, sid)?.filter(|h| h.live && !h.mine))
}

/// What [`acquire`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acquired {
    /// This process holds the lease now (it may have held it already).
    Held,
    /// Another live process holds it.
    HeldBy(Holder),
}

/// Takes the lease on session `sid` for this process, unless another live process holds it.
/// A lease whose holder is gone is taken over.
pub fn acquire(db: &Db, sid: SessionKey) -> Result<Acquired> {
    acquire_as(db, sid, process::me())
}

/// [`acquire`] for process `me` (tests stand in for other processes with it).
pub fn acquire_as(db: &Db, sid: SessionKey, me: &Claimant) -> Result<Acquired> {
    // Each write checks what it replaces: a race lost is seen again from the start.
    for _ in 0..16 {
        if db.store().insert_lease(sid, me)? {
            return Ok(Acquired::Held);
        }
        let Some(row) = db.store().lease(sid)? else { continue };
        if row.holder == *me {
            db.store().renew_lease(sid, me)?;
            return Ok(Acquired::Held);
        }
        if live(&row, me) {
            return Ok(Acquired::HeldBy(holder_of(row, me)));
        }
        if db.store().replace_lease(sid, &row.holder, me)? {
            return Ok(Acquired::Held);
        }
    }
    Err(crate::error::Error::database("leases", format!("the lease on session {sid} keeps changing hands")))
}

/// Renews this process's lease on `sid`; false when it no longer holds it.
pub fn renew(db: &Db, sid: SessionKey) -> Result<bool> {
    db.store().renew_lease(sid, process::me())
}

/// [`renew`] for process `me`.
pub fn renew_as(db: &Db, sid: SessionKey, me: &Claimant) -> Result<bool> {
    db.store().renew_lease(sid, me)
}

/// Releases this process's lease on `sid` (a lease another process took over stays).
pub fn release(db: &Db, sid: SessionKey) -> Result<()> {
    db.store().release_lease(sid, process::me())
}

/// [`release`] for process `me`.
pub fn release_as(db: &Db, sid: SessionKey, me: &Claimant) -> Result<()> {
    db.store().release_lease(sid, me)
}

/// This process, as a lease names it.
pub fn me() -> Claimant {
    process::me().clone()
}
