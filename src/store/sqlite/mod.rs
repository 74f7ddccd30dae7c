//! The SQLite store: opening a database file (pragmas, migrations of `migrations/sqlite/`), what only
//! SQLite has (the rollback-journal bulk mode), and the SQLite implementation of the storage
//! interface (`store::backend`).

pub mod bulk;
pub mod discovery;
pub mod entries;
pub mod extract;
pub mod integrity;
pub mod journal;
mod keys;
pub mod lease;
pub mod lines;
pub mod open;
pub mod pool;
pub mod replica;
pub mod search;
pub mod search_merge;
pub mod sessions;
pub mod signatures;
pub mod sync_state;
pub mod unpack_ahead;
pub mod usage;
pub mod write;

use crate::error::{DbFailure, Error, Result, UNNAMED_DATABASE};
use crate::store::backend::{EntryRowCounter, Store};
use crate::store::handle::{Backend, Db};
use crate::store::interface::discovery::ListTextCache;
use crate::store::interface::replica::{Receiver, Replica};
use crate::store::interface::sync_state::SyncStates;
use rusqlite::trace::{TraceEvent, TraceEventCodes};
use rusqlite::Connection;
use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A SQLite database, open.
pub struct Sqlite {
    pub(in crate::store) conn: Connection,
    /// How this connection packs the lines it writes (`lines`).
    pub(in crate::store) packing: std::cell::RefCell<lines::Packing>,
    /// What unpacks the lines read outside SQL (export, check), kept with its dictionaries.
    pub(in crate::store) unpacker: std::cell::RefCell<crate::store::codec::Unpacker>,
    /// The journal mode of a bulk write under way ([`bulk::BulkJournal`]).
    pub(in crate::store) bulk: std::cell::RefCell<Option<bulk::BulkJournal>>,
    /// The entry rows counted since [`Store::start_counting_entry_rows`], while counting.
    rows_counted: Option<Arc<AtomicU64>>,
    /// The database file, when it is one opened for writing: a saved session's appends then go
    /// to its append journal ([`journal`]).
    pub(in crate::store) path: Option<std::path::PathBuf>,
    /// The journal this connection appends to (opened at its first append), and how many
    /// appends it made since it last settled.
    pub(in crate::store) journal: std::cell::RefCell<(Option<journal::Journal>, usize)>,
}

impl Sqlite {
    /// Wraps an open connection, giving it the function that reads stored lines.
    pub(in crate::store) fn db(conn: Connection) -> Db {
        Self::wrap(conn, lines::Packing::default())
    }

    /// [`Sqlite::db`] for the database file at `path`, opened for writing: its saved sessions'
    /// appends go through the append journal.
    pub(in crate::store) fn db_at(conn: Connection, path: &std::path::Path) -> Db {
        let mut db = Self::db(conn);
        if let Some(s) = db.downcast_mut::<Sqlite>() {
            s.path = Some(path.to_path_buf());
        }
        db
    }

    /// [`Sqlite::db`] for a database in memory, which keeps its lines as text.
    pub(in crate::store) fn db_in_memory(conn: Connection) -> Db {
        let mut packing = lines::Packing::default();
        packing.keep_text();
        Self::wrap(conn, packing)
    }

    fn wrap(conn: Connection, packing: lines::Packing) -> Db {
        if let Err(e) = lines::register(&conn) {
            // Only when SQLite is out of memory; every read of a line then says so.
            eprintln!("sessiondb: cannot register {}: {e}", lines::LINE_FUNCTION);
        }
        Db::new(Sqlite {
            conn,
            packing: std::cell::RefCell::new(packing),
            unpacker: Default::default(),
            bulk: Default::default(),
            rows_counted: None,
            path: None,
            journal: Default::default(),
        })
    }
}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        let kind = match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::ConstraintViolation) => DbFailure::Constraint,
            Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase) => DbFailure::Corrupt,
            _ => DbFailure::Other,
        };
        Error::Database { kind, database: UNNAMED_DATABASE.into(), cause: e.to_string(), source: Some(Box::new(e)) }
    }
}

impl Store for Sqlite {
    fn backend(&self) -> Backend {
        Backend::Sqlite
    }

    fn begin(&self) -> Result<()> {
        self.forget_saved_dictionaries();
        Ok(self.conn.execute_batch("BEGIN IMMEDIATE")?)
    }

    fn commit(&self) -> Result<()> {
        Ok(self.conn.execute_batch("COMMIT")?)
    }

    fn rollback(&self) {
        // SQLite may have rolled back by itself (a full disk): nothing is open then.
        if !self.conn.is_autocommit() {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }

    fn is_idle(&self) -> bool {
        self.conn.is_autocommit()
    }

    fn total_changes(&self) -> u64 {
        self.conn.total_changes()
    }

    fn begin_read(&self) -> Result<bool> {
        if !self.conn.is_autocommit() {
            return Ok(false);
        }
        self.conn.execute_batch("BEGIN DEFERRED")?;
        Ok(true)
    }

    fn end_read(&self) {
        if !self.conn.is_autocommit() {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }

    fn close(self: Box<Self>) -> Result<()> {
        self.conn.close().map_err(|(_, e)| Error::from(e))
    }

    /// Through SQLite's row trace: every row a statement over `entries` (or its view
    /// `entry_lines`) returns is one row read.
    fn replica(&self) -> Option<&dyn Replica> {
        Some(self)
    }

    fn receiver(&self) -> Option<&dyn Receiver> {
        None
    }

    fn sync_states(&self) -> Option<&dyn SyncStates> {
        Some(self)
    }

    fn list_text_cache(&self) -> Option<&dyn ListTextCache> {
        Some(self)
    }

    fn entry_row_counter(&mut self) -> Option<&mut dyn EntryRowCounter> {
        Some(self)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// Counted through SQLite's row trace.
impl EntryRowCounter for Sqlite {
    fn start_counting_entry_rows(&mut self) -> Result<()> {
        let count = Arc::new(AtomicU64::new(0));
        let seen = Arc::clone(&count);
        self.conn.trace_v2(
            TraceEventCodes::SQLITE_TRACE_ROW,
            Some(move |event: TraceEvent<'_>| {
                if let TraceEvent::Row(stmt) = event {
                    if stmt.sql().contains("entries") || stmt.sql().contains("entry_lines") {
                        seen.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }),
        )?;
        self.rows_counted = Some(count);
        Ok(())
    }

    fn stop_counting_entry_rows(&mut self) -> Result<u64> {
        self.conn.trace_v2(TraceEventCodes::empty(), None::<fn(TraceEvent<'_>)>)?;
        Ok(self.rows_counted.take().map_or(0, |c| c.load(Ordering::Relaxed)))
    }
}

/// What only a SQLite database has: its connection, for tests and the benchmark, which look at
/// the tables directly. Not part of the API; they panic on another backend.
impl Db {
    /// Wraps a SQLite connection opened elsewhere (tests).
    #[doc(hidden)]
    pub fn from_sqlite(conn: Connection) -> Db {
        Sqlite::db(conn)
    }

    /// The SQLite connection underneath.
    #[doc(hidden)]
    pub fn sqlite(&self) -> &Connection {
        &self.downcast::<Sqlite>().expect("Db::sqlite on a database that is not SQLite").conn
    }

    /// [`Db::sqlite`], mutable.
    #[doc(hidden)]
    pub fn sqlite_mut(&mut self) -> &mut Connection {
        &mut self.downcast_mut::<Sqlite>().expect("Db::sqlite_mut on a database that is not SQLite").conn
    }

    /// The SQLite connection underneath, owned (tests).
    #[doc(hidden)]
    pub fn into_sqlite(self) -> Connection {
        match self.into_downcast::<Sqlite>() {
            Ok(s) => s.conn,
            Err(_) => panic!("Db::into_sqlite on a database that is not SQLite"),
        }
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

#[cfg(test)]
mod tests {
    use super::Named;
    use crate::store::handle::Db;
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
