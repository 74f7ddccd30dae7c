//! The handle to an open database that every layer above `store/` holds: [`Db`], and [`Tx`]
//! for a write transaction. Opening one is `store::db`'s work.

use crate::error::{Error, Result};
use rusqlite::Connection;

/// An open database: what every layer above `store/` holds and passes to the typed reads and
/// writes of `store/`. Today it is one SQLite connection; a second backend (PostgreSQL) makes
/// it an enum over connections, with the same methods, so that the layers above do not change.
/// No rusqlite type appears in what those layers call.
#[repr(transparent)]
pub struct Db(pub(in crate::store) Connection);

impl Db {
    /// Views a SQLite connection as a database handle (a transaction, a raw connection opened
    /// by a test). Sound because `Db` is `repr(transparent)` over `Connection`.
    #[doc(hidden)]
    pub fn of(conn: &Connection) -> &Db {
        // SAFETY: `Db` is a `repr(transparent)` wrapper of `Connection`.
        unsafe { &*(conn as *const Connection).cast::<Db>() }
    }

    /// [`Db::of`], mutable.
    #[doc(hidden)]
    pub fn of_mut(conn: &mut Connection) -> &mut Db {
        // SAFETY: `Db` is a `repr(transparent)` wrapper of `Connection`.
        unsafe { &mut *(conn as *mut Connection).cast::<Db>() }
    }

    /// Wraps a SQLite connection opened elsewhere (tests).
    #[doc(hidden)]
    pub fn from_sqlite(conn: Connection) -> Db {
        Db(conn)
    }

    /// The SQLite connection underneath: for tests and the benchmark, which look at the
    /// tables directly. Not part of the API.
    #[doc(hidden)]
    pub fn sqlite(&self) -> &Connection {
        &self.0
    }

    /// [`Db::sqlite`], mutable.
    #[doc(hidden)]
    pub fn sqlite_mut(&mut self) -> &mut Connection {
        &mut self.0
    }

    /// The SQLite connection underneath, owned (tests).
    #[doc(hidden)]
    pub fn into_sqlite(self) -> Connection {
        self.0
    }

    /// The connection, for the typed functions of `store/`.
    pub(in crate::store) fn conn(&self) -> &Connection {
        &self.0
    }

    /// Starts a write transaction at once (writers wait for each other here, not at their
    /// first write).
    pub fn write(&mut self) -> Result<Tx<'_>> {
        Ok(Tx(self.0.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?))
    }

    /// Rows changed through this handle since it was opened (a write that did nothing leaves
    /// it unchanged).
    pub fn total_changes(&self) -> u64 {
        self.0.total_changes()
    }

    /// Whether no transaction is open on this handle (also after SQLite rolled one back by
    /// itself, on a full disk or an I/O error).
    pub fn is_idle(&self) -> bool {
        self.0.is_autocommit()
    }

    /// Runs `f` inside one read transaction (when none is open yet), so that its reads see one
    /// snapshot and take the database's locks once.
    pub fn reading<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        let _snapshot = if self.0.is_autocommit() { Some(self.0.unchecked_transaction()?) } else { None };
        f()
    }
}

/// True for an error of a write that broke a constraint (a unique path already taken, say).
pub fn is_constraint_violation(e: &Error) -> bool {
    matches!(e, Error::Sqlite(rusqlite::Error::SqliteFailure(f, _)) if f.code == rusqlite::ErrorCode::ConstraintViolation)
}

/// The indexes of `names` among a statement's result columns, looked up once per statement:
/// `Row::get` by name scans the column names on every call, which a path walk over 100,000
/// rows would pay for every cell.
pub(in crate::store) fn columns<const N: usize>(
    st: &rusqlite::Statement<'_>,
    names: [&str; N],
) -> rusqlite::Result<[usize; N]> {
    let mut out = [0; N];
    for (i, name) in out.iter_mut().zip(names) {
        *i = st.column_index(name)?;
    }
    Ok(out)
}

/// A write transaction: reads and writes through it (it derefs to [`Db`]) are committed
/// together by [`Tx::commit`], or rolled back when it is dropped.
pub struct Tx<'a>(rusqlite::Transaction<'a>);

impl Tx<'_> {
    /// Commits the transaction.
    pub fn commit(self) -> Result<()> {
        Ok(self.0.commit()?)
    }
}

impl std::ops::Deref for Tx<'_> {
    type Target = Db;
    fn deref(&self) -> &Db {
        Db::of(&self.0)
    }
}
