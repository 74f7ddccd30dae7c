//! The storage interface: what the layers above `store/` need from a database, as traits by
//! capability, implemented once for SQLite (`store::sqlite`) and once for PostgreSQL
//! (`store::postgres`). [`Store`] is all of them together, plus transactions; a [`Db`]
//! holds one, chosen when the database is opened.
//!
//! [`Db`]: crate::store::handle::Db

use crate::error::Result;
use crate::store::discovery::Discovery;
use crate::store::entries::Entries;
use crate::store::handle::Backend;
use crate::store::integrity::Integrity;
use crate::store::replica::Replica;
use crate::store::search::SearchIndex;
use crate::store::sessions::Sessions;
use crate::store::signatures::Signatures;
use crate::store::sync_state::SyncStates;
use crate::store::usage::Usage;
use crate::store::write::Writes;
use std::any::Any;

/// A backend: every capability, and its transactions.
pub(crate) trait Store:
    Any
    + Send
    + Discovery
    + Entries
    + Integrity
    + Replica
    + Sessions
    + Signatures
    + SyncStates
    + Usage
    + Writes
    + SearchIndex
{
    /// Which backend this is, for messages.
    fn backend(&self) -> Backend;
    /// Starts a write transaction at once.
    fn begin(&self) -> Result<()>;
    /// Commits the open write transaction.
    fn commit(&self) -> Result<()>;
    /// Rolls back the open transaction, if one is still open.
    fn rollback(&self);
    /// Whether no transaction is open.
    fn is_idle(&self) -> bool;
    /// Rows changed since the store was opened (0 where the backend does not count them).
    fn total_changes(&self) -> u64;
    /// Starts a read snapshot when none is open; returns whether it started one.
    fn begin_read(&self) -> Result<bool>;
    /// Ends the read snapshot [`Store::begin_read`] started.
    fn end_read(&self);
    /// The store, for its own backend's folder to downcast.
    fn as_any(&self) -> &dyn Any;
    /// [`Store::as_any`], mutable.
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// [`Store::as_any`], owned.
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}
