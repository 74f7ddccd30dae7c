//! A connection to a PostgreSQL server as the storage interface holds it: statements
//! prepared once per connection, transactions, and the PostgreSQL implementation of
//! `store::backend::Store`.

use crate::error::{Error, Result};
use crate::store::backend::{EntryRowCounter, Store};
use crate::store::handle::{Backend, Db};
use crate::store::interface::discovery::ListTextCache;
use crate::store::interface::replica::{Receiver, Replica};
use crate::store::interface::sync_state::SyncStates;
use crate::store::postgres::one_trip;
use crate::store::postgres::Server;
use std::any::Any;
use std::cell::{Cell, RefCell, RefMut};
use std::collections::{HashMap, HashSet};

/// A connection to a PostgreSQL server, shared by the typed functions of `store/`, which take
/// `&Db` as SQLite's do (the client itself needs `&mut` for every statement).
pub struct Pg {
    server: RefCell<Server>,
    /// Whether a [`Tx`] is open on this connection.
    in_tx: Cell<bool>,
    /// Statements prepared on this connection, by their text: one round trip per statement
    /// run instead of two.
    prepared: RefCell<HashMap<&'static str, postgres::Statement>>,
    /// Statements run once on this connection, unprepared: the second run prepares them.
    run_once: RefCell<HashSet<&'static str>>,
    /// Whether the connection was opened read-only (`db::open_read_only`): every transaction
    /// on it is, and nothing is extracted before a read.
    read_only: bool,
}

/// How [`Pg`] runs a statement: prepared, or in one round trip with its parameters typed.
enum Run<'p> {
    Prepared(postgres::Statement),
    Typed(one_trip::Typed<'p>),
}

/// Parameters of a PostgreSQL statement.
pub(crate) type PgParams<'a> = &'a [&'a (dyn postgres::types::ToSql + Sync)];

impl Pg {
    /// The server, for one statement or a few (not held across calls into other functions of
    /// `store/`, which borrow it again).
    pub(in crate::store) fn server(&self) -> Result<RefMut<'_, Server>> {
        self.server
            .try_borrow_mut()
            .map_err(|_| Error::database("postgres", "the connection is already in use by this process"))
    }

    /// How to run `sql`: prepared, when it is on this connection (or is run for the second
    /// time, and so is prepared now); the first time, in one round trip with its parameters'
    /// types ([`one_trip`]), which a statement run once (most of a short process's) gains by.
    fn statement<'p>(&self, s: &mut Server, sql: &'static str, params: PgParams<'p>) -> Result<Run<'p>> {
        if let Some(st) = self.prepared.borrow().get(sql) {
            return Ok(Run::Prepared(st.clone()));
        }
        if self.run_once.borrow_mut().insert(sql) {
            if let Some(typed) = one_trip::typed(params) {
                return Ok(Run::Typed(typed));
            }
        }
        let st = s.client.prepare(sql).map_err(|e| s.pg(e))?;
        self.prepared.borrow_mut().insert(sql, st.clone());
        Ok(Run::Prepared(st))
    }

    /// Runs `sql` and returns its rows.
    pub(in crate::store) fn query(&self, sql: &'static str, params: PgParams<'_>) -> Result<Vec<postgres::Row>> {
        let mut s = self.server()?;
        match self.statement(&mut s, sql, params)? {
            Run::Prepared(st) => s.client.query(&st, params),
            Run::Typed(typed) => s.client.query_typed(sql, &typed),
        }
        .map_err(|e| s.pg(e))
    }

    /// Runs `sql` and hands each row to `f` as it arrives: the rows of a long answer are read
    /// while the server still sends the rest.
    pub(in crate::store) fn each(
        &self,
        sql: &'static str,
        params: PgParams<'_>,
        mut f: impl FnMut(&postgres::Row),
    ) -> Result<()> {
        use postgres::fallible_iterator::FallibleIterator;
        let mut s = self.server()?;
        let run = self.statement(&mut s, sql, params)?;
        let name = s.name.clone();
        let rows = match run {
            Run::Prepared(st) => s.client.query_raw(&st, params.iter().copied()),
            Run::Typed(typed) => s.client.query_typed_raw(sql, typed),
        };
        let mut rows = rows.map_err(|e| Server::describe(&name, &e))?;
        while let Some(r) = rows.next().map_err(|e| Server::describe(&name, &e))? {
            f(&r);
        }
        Ok(())
    }

    /// [`Pg::query`] for at most one row.
    pub(in crate::store) fn query_opt(&self, sql: &'static str, params: PgParams<'_>) -> Result<Option<postgres::Row>> {
        let mut s = self.server()?;
        match self.statement(&mut s, sql, params)? {
            Run::Prepared(st) => s.client.query_opt(&st, params),
            Run::Typed(typed) => s.client.query_typed_opt(sql, &typed),
        }
        .map_err(|e| s.pg(e))
    }

    /// Runs `sql`; returns the rows it changed.
    pub(in crate::store) fn execute(&self, sql: &'static str, params: PgParams<'_>) -> Result<u64> {
        let mut s = self.server()?;
        match self.statement(&mut s, sql, params)? {
            Run::Prepared(st) => s.client.execute(&st, params),
            Run::Typed(typed) => s.client.execute_typed(sql, &typed),
        }
        .map_err(|e| s.pg(e))
    }

    /// Whether a [`Tx`] is open on this connection.
    pub(in crate::store) fn in_transaction(&self) -> bool {
        self.in_tx.get()
    }

    /// Whether the connection is read-only (reads then take the search and usage rows as the
    /// last catch-up left them).
    pub(in crate::store) fn read_only(&self) -> bool {
        self.read_only
    }

    /// `host:port/dbname` of the server, for messages.
    pub fn name(&self) -> String {
        self.server.borrow().name.clone()
    }
}

impl Pg {
    /// Wraps a connection (made by [`crate::store::postgres::connect`]).
    pub(in crate::store) fn db(server: Server) -> Db {
        Db::new(Pg {
            server: RefCell::new(server),
            in_tx: Cell::new(false),
            prepared: RefCell::default(),
            run_once: RefCell::default(),
            read_only: false,
        })
    }

    /// Wraps a connection made by [`crate::store::postgres::connect_read_only`].
    pub(in crate::store) fn db_read_only(server: Server) -> Db {
        Db::new(Pg {
            server: RefCell::new(server),
            in_tx: Cell::new(false),
            prepared: RefCell::default(),
            run_once: RefCell::default(),
            read_only: true,
        })
    }

    fn batch(&self, sql: &str) -> Result<()> {
        let mut s = self.server()?;
        s.client.batch_execute(sql).map_err(|e| s.pg(e))
    }
}

impl Store for Pg {
    fn backend(&self) -> Backend {
        Backend::Postgres
    }

    fn begin(&self) -> Result<()> {
        self.batch("BEGIN")?;
        self.in_tx.set(true);
        Ok(())
    }

    fn commit(&self) -> Result<()> {
        self.in_tx.set(false);
        self.batch("COMMIT")
    }

    fn rollback(&self) {
        self.in_tx.set(false);
        let _ = self.batch("ROLLBACK");
    }

    fn is_idle(&self) -> bool {
        !self.in_tx.get()
    }

    fn total_changes(&self) -> u64 {
        0
    }

    /// A read-only transaction at REPEATABLE READ: its statements see one snapshot (an export's
    /// header and lines, say, with a push landing meanwhile seen whole or not at all).
    fn begin_read(&self) -> Result<bool> {
        if self.in_tx.get() {
            return Ok(false);
        }
        self.batch("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")?;
        self.in_tx.set(true);
        Ok(true)
    }

    fn end_read(&self) {
        if self.in_tx.replace(false) {
            let _ = self.batch("ROLLBACK");
        }
    }

    fn close(self: Box<Self>) -> Result<()> {
        Ok(())
    }

    fn replica(&self) -> Option<&dyn Replica> {
        None
    }

    fn receiver(&self) -> Option<&dyn Receiver> {
        Some(self)
    }

    fn sync_states(&self) -> Option<&dyn SyncStates> {
        None
    }

    fn list_text_cache(&self) -> Option<&dyn ListTextCache> {
        None
    }

    fn entry_row_counter(&mut self) -> Option<&mut dyn EntryRowCounter> {
        None
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
