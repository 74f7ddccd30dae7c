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

/// A prepared statement that binds its named parameters without searching for them: the
/// names are read once, and a parameter given at the position of its name in the SQL is bound
/// there after one string comparison. rusqlite looks every name up on every execution, which
/// for the insert of an entry row (16 names, 100,000 rows in a long session) cost an import
/// about a tenth of its time. Names in another order still bind, by lookup.
pub(in crate::store) struct Named<'c> {
    st: rusqlite::CachedStatement<'c>,
    names: Vec<Box<str>>,
}

impl<'c> Named<'c> {
    /// `sql` prepared (from the connection's statement cache) with its parameter names read.
    pub(in crate::store) fn prepare(db: &'c Db, sql: &str) -> rusqlite::Result<Self> {
        let st = db.conn().prepare_cached(sql)?;
        let names = (1..=st.parameter_count()).map(|i| st.parameter_name(i).unwrap_or_default().into()).collect();
        Ok(Named { st, names })
    }

    /// Runs the statement with every one of its parameters given by name; returns the rows
    /// changed.
    pub(in crate::store) fn execute(&mut self, params: &[(&str, &dyn rusqlite::ToSql)]) -> rusqlite::Result<usize> {
        if params.len() != self.names.len() {
            // A missing parameter would keep the previous execution's value: refuse.
            return Err(rusqlite::Error::InvalidParameterCount(params.len(), self.names.len()));
        }
        let in_order = params.iter().zip(&self.names).all(|((given, _), name)| **name == **given);
        if !in_order {
            // Bound by lookup, a repeated name could leave a parameter with the value of the
            // previous execution: start from none.
            self.st.clear_bindings();
        }
        for (at, (name, value)) in params.iter().enumerate() {
            let index = if in_order {
                at + 1
            } else {
                self.st.parameter_index(name)?.ok_or_else(|| rusqlite::Error::InvalidParameterName((*name).into()))?
            };
            self.st.raw_bind_parameter(index, value)?;
        }
        self.st.raw_execute()
    }
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

#[cfg(test)]
mod tests {
    use super::{Db, Named};
    use rusqlite::named_params;

    #[test]
    fn named_statements_bind_by_name_in_any_order_and_refuse_a_missing_name() {
        let db = Db::from_sqlite(rusqlite::Connection::open_in_memory().unwrap());
        db.conn().execute_batch("CREATE TABLE t (a, b)").unwrap();
        let mut st = Named::prepare(&db, "INSERT INTO t (a, b) VALUES (:a, :b)").unwrap();
        st.execute(named_params! { ":a": 1, ":b": 2 }).unwrap();
        st.execute(named_params! { ":b": 4, ":a": 3 }).unwrap();
        assert!(matches!(st.execute(named_params! { ":a": 5 }), Err(rusqlite::Error::InvalidParameterCount(1, 2))));
        let unknown = st.execute(named_params! { ":a": 5, ":c": 6 });
        assert!(matches!(unknown, Err(rusqlite::Error::InvalidParameterName(n)) if n == ":c"));
        // A repeated name binds by lookup from no bindings: the other is NULL, not the last value.
        st.execute(named_params! { ":a": 7, ":a": 8 }).unwrap();
        let rows: Vec<(i64, Option<i64>)> = db
            .conn()
            .prepare("SELECT a, b FROM t ORDER BY rowid")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(rows, [(1, Some(2)), (3, Some(4)), (8, None)]);
    }
}
