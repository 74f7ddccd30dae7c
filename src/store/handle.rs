//! The handle to an open database that every layer above `store/` holds: [`Db`], and [`Tx`]
//! for a write transaction. Opening one is `store::db`'s work; what a backend does is its
//! implementation of [`Store`] (`store::sqlite`, `store::postgres`).

use crate::error::{Error, Result};
pub use crate::store::backend::Backend;
use crate::store::backend::Store;
use std::any::Any;

/// An open database: what every layer above `store/` holds and passes to the typed reads and
/// writes of `store/`. Which backend answers was decided when it was opened; no function
/// outside the backends' own folders asks.
pub struct Db {
    store: Box<dyn Store>,
}

impl Db {
    /// A handle over one backend's store.
    pub(in crate::store) fn new(store: impl Store) -> Db {
        Db { store: Box::new(store) }
    }

    /// The backend's implementation of the storage interface: every capability, called as
    /// `db.store().entry_by_id(…)`.
    pub fn store(&self) -> &dyn Store {
        &*self.store
    }

    /// [`Db::store`], mutable.
    pub(in crate::store) fn store_mut(&mut self) -> &mut dyn Store {
        &mut *self.store
    }

    /// The store as `T`, when it is one (for a backend's own folder).
    pub(in crate::store) fn downcast<T: Any>(&self) -> Option<&T> {
        self.store.as_any().downcast_ref()
    }

    /// [`Db::downcast`], mutable.
    pub(in crate::store) fn downcast_mut<T: Any>(&mut self) -> Option<&mut T> {
        self.store.as_any_mut().downcast_mut()
    }

    /// The store as `T`, owned, when it is one.
    pub(in crate::store) fn into_downcast<T: Any>(self) -> std::result::Result<T, Db> {
        if self.store.as_any().is::<T>() {
            let any = self.store.into_any();
            Ok(*any.downcast::<T>().unwrap_or_else(|_| unreachable!("checked just above")))
        } else {
            Err(self)
        }
    }

    /// Which backend answers, for messages.
    pub fn backend(&self) -> Backend {
        self.store.backend()
    }

    /// The error for `what`, an operation this database's backend cannot do.
    pub fn unsupported(&self, what: &'static str) -> Error {
        Error::Unsupported { what, backend: self.backend().to_string() }
    }

    /// Starts a write transaction at once (writers wait for each other here, not at their
    /// first write).
    pub fn write(&mut self) -> Result<Tx<'_>> {
        self.store.begin()?;
        Ok(Tx { db: self, open: true })
    }

    /// Rows changed through this handle since it was opened (a write that did nothing leaves
    /// it unchanged). Always 0 on PostgreSQL.
    pub fn total_changes(&self) -> u64 {
        self.store.total_changes()
    }

    /// Whether no transaction is open on this handle (also after SQLite rolled one back by
    /// itself, on a full disk or an I/O error).
    pub fn is_idle(&self) -> bool {
        self.store.is_idle()
    }

    /// Closes the database, reporting an error closing it finds (dropping a `Db` closes it
    /// too, silently).
    pub fn close(self) -> Result<()> {
        self.store.close()
    }

    /// Runs `f` and returns its result with the number of entry rows its statements returned,
    /// where the backend can count them (SQLite, through its row trace). Counting slows
    /// statements down: never time work while counting.
    /// `Unsupported` where it cannot.
    pub fn count_entry_rows<T>(&mut self, f: impl FnOnce(&Db) -> Result<T>) -> Result<(T, u64)> {
        let cannot = Error::Unsupported {
            what: "counting the entry rows statements return",
            backend: self.backend().to_string(),
        };
        match self.store.entry_row_counter() {
            Some(counter) => counter.start_counting_entry_rows()?,
            None => return Err(cannot),
        }
        let result = f(self);
        let rows = match self.store.entry_row_counter() {
            Some(counter) => counter.stop_counting_entry_rows()?,
            None => return Err(cannot),
        };
        Ok((result?, rows))
    }

    /// Runs `f` inside one read transaction (when none is open yet), so that its reads see one
    /// snapshot and take the database's locks once, where the backend has such snapshots.
    pub fn reading<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        struct Snapshot<'a>(&'a dyn Store, bool);
        impl Drop for Snapshot<'_> {
            fn drop(&mut self) {
                if self.1 {
                    self.0.end_read();
                }
            }
        }
        let _snapshot = Snapshot(self.store(), self.store.begin_read()?);
        f()
    }
}

/// An open database lent to its holder: when dropped, it goes back where it came from (a
/// SQLite file's connection to the process's pool, `store::sqlite::pool`), or is closed.
pub struct Pooled {
    db: Option<Db>,
    give_back: Option<Box<dyn FnOnce(Db) + Send>>,
}

impl Pooled {
    /// A database closed when dropped (in memory, on a server).
    pub fn unpooled(db: Db) -> Self {
        Pooled { db: Some(db), give_back: None }
    }

    /// A database handed to `give_back` when dropped.
    pub(in crate::store) fn returning(db: Db, give_back: Box<dyn FnOnce(Db) + Send>) -> Self {
        Pooled { db: Some(db), give_back: Some(give_back) }
    }
}

impl std::ops::Deref for Pooled {
    type Target = Db;
    fn deref(&self) -> &Db {
        self.db.as_ref().expect("a pooled database is present until dropped")
    }
}

impl std::ops::DerefMut for Pooled {
    fn deref_mut(&mut self) -> &mut Db {
        self.db.as_mut().expect("a pooled database is present until dropped")
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        if let (Some(db), Some(give_back)) = (self.db.take(), self.give_back.take()) {
            give_back(db);
        }
    }
}

/// True for an error of a write that broke a constraint (a unique path already taken, say).
pub fn is_constraint_violation(e: &Error) -> bool {
    matches!(e, Error::Database { kind: crate::error::DbFailure::Constraint, .. })
}

/// A write transaction: reads and writes through it (it derefs to [`Db`]) are committed
/// together by [`Tx::commit`], or rolled back when it is dropped.
pub struct Tx<'a> {
    db: &'a mut Db,
    open: bool,
}

impl Tx<'_> {
    /// Commits the transaction.
    pub fn commit(mut self) -> Result<()> {
        self.open = false;
        self.db.store.commit()
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if self.open {
            self.db.store.rollback();
        }
    }
}

impl std::ops::Deref for Tx<'_> {
    type Target = Db;
    fn deref(&self) -> &Db {
        self.db
    }
}
