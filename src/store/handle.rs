//! The handle to an open database that every layer above `store/` holds: [`Db`], and [`Tx`]
//! for a write transaction. Opening one is `store::db`'s work.

use crate::error::{Error, Result};
use crate::store::pg::Server;
use rusqlite::Connection;
use std::cell::{Cell, RefCell, RefMut};
use std::collections::HashMap;

/// An open database: what every layer above `store/` holds and passes to the typed reads and
/// writes of `store/`, which match on the backend. No rusqlite or postgres type appears in
/// what those layers call.
pub enum Db {
    /// A SQLite database file (or one in memory).
    Sqlite(Connection),
    /// A database on a PostgreSQL server (boxed: a client is much larger than a connection).
    Postgres(Box<Pg>),
}

/// A connection to a PostgreSQL server, shared by the typed functions of `store/`, which take
/// `&Db` as SQLite's do (the client itself needs `&mut` for every statement).
pub struct Pg {
    server: RefCell<Server>,
    /// Whether a [`Tx`] is open on this connection.
    in_tx: Cell<bool>,
    /// Statements prepared on this connection, by their text: one round trip per statement
    /// run instead of two.
    prepared: RefCell<HashMap<&'static str, postgres::Statement>>,
}

/// Parameters of a PostgreSQL statement.
pub(in crate::store) type PgParams<'a> = &'a [&'a (dyn postgres::types::ToSql + Sync)];

impl Pg {
    /// The server, for one statement or a few (not held across calls into other functions of
    /// `store/`, which borrow it again).
    pub(in crate::store) fn server(&self) -> Result<RefMut<'_, Server>> {
        self.server.try_borrow_mut().map_err(|_| Error::Server {
            server: "postgres".into(),
            cause: "the connection is already in use by this process".into(),
        })
    }

    fn statement(&self, s: &mut Server, sql: &'static str) -> Result<postgres::Statement> {
        if let Some(st) = self.prepared.borrow().get(sql) {
            return Ok(st.clone());
        }
        let st = s.client.prepare(sql).map_err(|e| s.pg(e))?;
        self.prepared.borrow_mut().insert(sql, st.clone());
        Ok(st)
    }

    /// Runs `sql` (prepared once per connection) and returns its rows.
    pub(in crate::store) fn query(&self, sql: &'static str, params: PgParams<'_>) -> Result<Vec<postgres::Row>> {
        let mut s = self.server()?;
        let st = self.statement(&mut s, sql)?;
        s.client.query(&st, params).map_err(|e| s.pg(e))
    }

    /// Runs `sql` (prepared once per connection) and hands each row to `f` as it arrives: the
    /// rows of a long answer are read while the server still sends the rest.
    pub(in crate::store) fn each(
        &self,
        sql: &'static str,
        params: PgParams<'_>,
        mut f: impl FnMut(&postgres::Row),
    ) -> Result<()> {
        use postgres::fallible_iterator::FallibleIterator;
        let mut s = self.server()?;
        let st = self.statement(&mut s, sql)?;
        let name = s.name.clone();
        let mut rows = s.client.query_raw(&st, params.iter().copied()).map_err(|e| Server::describe(&name, &e))?;
        while let Some(r) = rows.next().map_err(|e| Server::describe(&name, &e))? {
            f(&r);
        }
        Ok(())
    }

    /// [`Pg::query`] for at most one row.
    pub(in crate::store) fn query_opt(&self, sql: &'static str, params: PgParams<'_>) -> Result<Option<postgres::Row>> {
        let mut s = self.server()?;
        let st = self.statement(&mut s, sql)?;
        s.client.query_opt(&st, params).map_err(|e| s.pg(e))
    }

    /// Runs `sql` (prepared once per connection); returns the rows it changed.
    pub(in crate::store) fn execute(&self, sql: &'static str, params: PgParams<'_>) -> Result<u64> {
        let mut s = self.server()?;
        let st = self.statement(&mut s, sql)?;
        s.client.execute(&st, params).map_err(|e| s.pg(e))
    }

    /// Whether a [`Tx`] is open on this connection.
    pub(in crate::store) fn in_transaction(&self) -> bool {
        self.in_tx.get()
    }

    /// `host:port/dbname` of the server, for messages.
    pub fn name(&self) -> String {
        self.server.borrow().name.clone()
    }
}

/// Which backend a [`Db`] is, for messages.
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

/// What the functions of a `store/` file serve, for the error a PostgreSQL database gets from
/// one that has no PostgreSQL version yet.
fn feature_of(file: &str) -> &'static str {
    let name = file.rsplit(['/', '\\']).next().unwrap_or(file).trim_end_matches(".rs");
    match name {
        "search_index" => "search",
        "discovery" => "listing sessions",
        "entries" => "reading entries",
        "write" => "writing sessions",
        "sessions" => "reading sessions",
        "integrity" => "check",
        "stats" | "usage" => "stats",
        "sync_state" | "signatures" => "sync",
        "journal" => "the append journal",
        "replica" => "push from a PostgreSQL database",
        "bulk" => "import",
        "extract" => "reindexing",
        _ => "this operation",
    }
}

impl Db {
    /// Wraps a PostgreSQL connection (made by `store::pg::connect`).
    pub(in crate::store) fn from_server(server: Server) -> Db {
        Db::Postgres(Box::new(Pg {
            server: RefCell::new(server),
            in_tx: Cell::new(false),
            prepared: RefCell::default(),
        }))
    }

    /// Which backend answers.
    pub fn backend(&self) -> Backend {
        match self {
            Db::Sqlite(_) => Backend::Sqlite,
            Db::Postgres(_) => Backend::Postgres,
        }
    }

    /// Wraps a SQLite connection opened elsewhere (tests).
    #[doc(hidden)]
    pub fn from_sqlite(conn: Connection) -> Db {
        Db::Sqlite(conn)
    }

    /// The SQLite connection underneath: for tests and the benchmark, which look at the
    /// tables directly. Not part of the API; panics on a PostgreSQL database.
    #[doc(hidden)]
    pub fn sqlite(&self) -> &Connection {
        match self {
            Db::Sqlite(c) => c,
            Db::Postgres(_) => panic!("Db::sqlite on a PostgreSQL database"),
        }
    }

    /// [`Db::sqlite`], mutable.
    #[doc(hidden)]
    pub fn sqlite_mut(&mut self) -> &mut Connection {
        match self {
            Db::Sqlite(c) => c,
            Db::Postgres(_) => panic!("Db::sqlite_mut on a PostgreSQL database"),
        }
    }

    /// The SQLite connection underneath, owned (tests).
    #[doc(hidden)]
    pub fn into_sqlite(self) -> Connection {
        match self {
            Db::Sqlite(c) => c,
            Db::Postgres(_) => panic!("Db::into_sqlite on a PostgreSQL database"),
        }
    }

    /// The SQLite connection, for the typed functions of `store/` that have no PostgreSQL
    /// version yet: on PostgreSQL, an [`Error::Unsupported`] naming what the caller's file
    /// serves.
    #[track_caller]
    pub(in crate::store) fn conn(&self) -> Result<&Connection> {
        match self {
            Db::Sqlite(c) => Ok(c),
            Db::Postgres(_) => Err(self.unsupported(feature_of(std::panic::Location::caller().file()))),
        }
    }

    /// [`Db::conn`], mutable.
    #[track_caller]
    pub(in crate::store) fn conn_mut(&mut self) -> Result<&mut Connection> {
        let what = feature_of(std::panic::Location::caller().file());
        match self {
            Db::Sqlite(c) => Ok(c),
            Db::Postgres(_) => Err(Error::Unsupported { what, backend: Backend::Postgres.to_string() }),
        }
    }

    /// The error for `what`, which this database's backend does not serve yet.
    pub fn unsupported(&self, what: &'static str) -> Error {
        Error::Unsupported { what, backend: self.backend().to_string() }
    }

    /// The PostgreSQL connection, or `None` on SQLite.
    pub(in crate::store) fn pg(&self) -> Option<&Pg> {
        match self {
            Db::Postgres(p) => Some(p),
            Db::Sqlite(_) => None,
        }
    }

    /// Starts a write transaction at once (writers wait for each other here, not at their
    /// first write).
    pub fn write(&mut self) -> Result<Tx<'_>> {
        match self {
            Db::Sqlite(c) => c.execute_batch("BEGIN IMMEDIATE")?,
            Db::Postgres(p) => {
                let mut s = p.server()?;
                s.client.batch_execute("BEGIN").map_err(|e| s.pg(e))?;
                p.in_tx.set(true);
            }
        }
        Ok(Tx { db: self, open: true })
    }

    /// Rows changed through this handle since it was opened (a write that did nothing leaves
    /// it unchanged). Always 0 on PostgreSQL.
    pub fn total_changes(&self) -> u64 {
        match self {
            Db::Sqlite(c) => c.total_changes(),
            Db::Postgres(_) => 0,
        }
    }

    /// Whether no transaction is open on this handle (also after SQLite rolled one back by
    /// itself, on a full disk or an I/O error).
    pub fn is_idle(&self) -> bool {
        match self {
            Db::Sqlite(c) => c.is_autocommit(),
            Db::Postgres(p) => !p.in_tx.get(),
        }
    }

    /// Runs `f` inside one read transaction (when none is open yet), so that its reads see one
    /// snapshot and take the database's locks once. On PostgreSQL each statement sees its own
    /// snapshot.
    pub fn reading<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        let _snapshot = match self {
            Db::Sqlite(c) if c.is_autocommit() => Some(c.unchecked_transaction()?),
            _ => None,
        };
        f()
    }
}

/// True for an error of a write that broke a constraint (a unique path already taken, say).
pub fn is_constraint_violation(e: &Error) -> bool {
    match e {
        Error::Sqlite(rusqlite::Error::SqliteFailure(f, _)) => f.code == rusqlite::ErrorCode::ConstraintViolation,
        Error::Server { cause, .. } => cause.starts_with(crate::store::pg::UNIQUE_VIOLATION),
        _ => false,
    }
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
    pub(in crate::store) fn prepare(conn: &'c Connection, sql: &str) -> rusqlite::Result<Self> {
        let st = conn.prepare_cached(sql)?;
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
pub struct Tx<'a> {
    db: &'a mut Db,
    open: bool,
}

impl Tx<'_> {
    /// Commits the transaction.
    pub fn commit(mut self) -> Result<()> {
        self.open = false;
        match &*self.db {
            Db::Sqlite(c) => Ok(c.execute_batch("COMMIT")?),
            Db::Postgres(p) => {
                p.in_tx.set(false);
                let mut s = p.server()?;
                s.client.batch_execute("COMMIT").map_err(|e| s.pg(e))
            }
        }
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if !self.open {
            return;
        }
        match &*self.db {
            // SQLite may have rolled back by itself (a full disk): nothing is open then.
            Db::Sqlite(c) if !c.is_autocommit() => {
                let _ = c.execute_batch("ROLLBACK");
            }
            Db::Sqlite(_) => {}
            Db::Postgres(p) => {
                p.in_tx.set(false);
                if let Ok(mut s) = p.server() {
                    let _ = s.client.batch_execute("ROLLBACK");
                }
            }
        }
    }
}

impl std::ops::Deref for Tx<'_> {
    type Target = Db;
    fn deref(&self) -> &Db {
        self.db
    }
}

#[cfg(test)]
mod tests {
    use super::{Db, Named};
    use rusqlite::named_params;

    #[test]
    fn named_statements_bind_by_name_in_any_order_and_refuse_a_missing_name() {
        let db = Db::from_sqlite(rusqlite::Connection::open_in_memory().unwrap());
        db.sqlite().execute_batch("CREATE TABLE t (a, b)").unwrap();
        let mut st = Named::prepare(db.sqlite(), "INSERT INTO t (a, b) VALUES (:a, :b)").unwrap();
        st.execute(named_params! { ":a": 1, ":b": 2 }).unwrap();
        st.execute(named_params! { ":b": 4, ":a": 3 }).unwrap();
        assert!(matches!(st.execute(named_params! { ":a": 5 }), Err(rusqlite::Error::InvalidParameterCount(1, 2))));
        let unknown = st.execute(named_params! { ":a": 5, ":c": 6 });
        assert!(matches!(unknown, Err(rusqlite::Error::InvalidParameterName(n)) if n == ":c"));
        // A repeated name binds by lookup from no bindings: the other is NULL, not the last value.
        st.execute(named_params! { ":a": 7, ":a": 8 }).unwrap();
        let rows: Vec<(i64, Option<i64>)> = db
            .sqlite()
            .prepare("SELECT a, b FROM t ORDER BY rowid")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(rows, [(1, Some(2)), (3, Some(4)), (8, None)]);
    }
}
