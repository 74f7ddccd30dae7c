//! The storage interface: what the layers above `store/` need from a database, as traits by
//! capability, implemented once for SQLite (`store::sqlite`) and once for PostgreSQL
//! (`store::postgres`). [`Store`] is all of them together, plus transactions; a [`Db`]
//! holds one, chosen when the database is opened.
//!
//! [`Db`]: crate::store::handle::Db

use crate::error::Result;
use crate::store::interface::discovery::{Discovery, ListTextCache};
use crate::store::interface::entries::Entries;
use crate::store::interface::integrity::Integrity;
use crate::store::interface::lease::Leases;
use crate::store::interface::replica::{Receiver, Replica};
use crate::store::interface::search::SearchIndex;
use crate::store::interface::sessions::Sessions;
use crate::store::interface::signatures::Signatures;
use crate::store::interface::sync_state::SyncStates;
use crate::store::interface::usage::Usage;
use crate::store::interface::write::Writes;
use std::any::Any;

/// Which backend a database is, for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// SQLite.
    Sqlite,
    /// PostgreSQL.
    Postgres,
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Backend::Sqlite => "SQLite",
            Backend::Postgres => "PostgreSQL",
        })
    }
}

/// A backend: every capability, and its transactions.
pub trait Store:
    Any + Send + Discovery + Entries + Integrity + Leases + Sessions + Signatures + Usage + Writes + SearchIndex
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
    /// Closes the database, reporting what closing it found (SQLite finishes its write-ahead
    /// log here).
    fn close(self: Box<Self>) -> Result<()>;
    /// What `push` reads of a local database; `None` where the database is not pushed from
    /// (a server).
    fn replica(&self) -> Option<&dyn Replica>;
    /// What a database receiving pushes keeps; `None` where it receives none (a SQLite file:
    /// `push --to` takes a server). A receiver also takes `import` and `sync` through a
    /// staging database and a push (`ingest::route`).
    fn receiver(&self) -> Option<&dyn Receiver>;
    /// What a local database keeps per imported file; `None` on a server (it keeps its own
    /// sessions' file signatures through [`Receiver`]).
    fn sync_states(&self) -> Option<&dyn SyncStates>;
    /// The joined texts kept as a cache behind the appends; `None` where each append folds its
    /// text in (a server).
    fn list_text_cache(&self) -> Option<&dyn ListTextCache>;
    /// Counting the entry rows statements return; `None` where the backend cannot.
    fn entry_row_counter(&mut self) -> Option<&mut dyn EntryRowCounter>;
    /// The store, for its own backend's folder to downcast.
    fn as_any(&self) -> &dyn Any;
    /// [`Store::as_any`], mutable.
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// [`Store::as_any`], owned.
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

/// Counting the entry rows statements return (what a benchmark reports of a read's work).
pub trait EntryRowCounter {
    /// Starts counting, until [`EntryRowCounter::stop_counting_entry_rows`].
    fn start_counting_entry_rows(&mut self) -> Result<()>;
    /// Stops the count; returns it.
    fn stop_counting_entry_rows(&mut self) -> Result<u64>;
}
