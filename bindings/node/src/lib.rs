//! The native half of the `sessiondb` npm package: one [`Native`] per JS `SessionManager`,
//! holding an rpc server whose current manager is that instance. The JS half (`index.js`)
//! sends pi's calls as JSON lines and parses the answers with `JSON.parse`, so values are
//! exactly what JavaScript makes of the stored text.
//!
//! Nothing unwinds into Node: every entry point runs under `catch_unwind`, and a panic
//! becomes a JS exception naming what failed.

use napi::bindgen_prelude::Float64Array;
use napi::{Error, Result};
use napi_derive::napi;
use sessiondb::rpc::RpcServer;
use sessiondb::manager::SessionManager;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// Runs `f`, turning a library error or a panic into a JS exception.
fn guard<T>(what: &str, f: impl FnOnce() -> sessiondb::Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(Error::from_reason(e.to_string())),
        Err(payload) => {
            let why = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(Error::from_reason(format!("sessiondb: internal error in {what}: {why}")))
        }
    }
}

/// Keys cross as doubles: `(session << 32) | seq` stays below 2^53 for 2^21 sessions.
fn keys_out(keys: Vec<i64>) -> Float64Array {
    Float64Array::new(keys.into_iter().map(|k| k as f64).collect())
}

/// A connection to the database and, once a constructor ran, its current session.
#[napi]
pub struct Native {
    server: RpcServer,
}

impl Native {
    fn manager(&self) -> sessiondb::Result<&SessionManager> {
        self.server.current().ok_or_else(|| sessiondb::Error::InvalidArgument("no current session".into()))
    }
}

#[napi]
impl Native {
    /// A server on the database at `db` (opened, and created if needed, on first use).
    #[napi(constructor)]
    pub fn new(db: String) -> Self {
        Native { server: RpcServer::new(Path::new(&db)) }
    }

    /// One rpc request line in, its response line out.
    #[napi]
    pub fn call(&mut self, line: String) -> Result<String> {
        let server = &mut self.server;
        guard("call", || Ok(server.handle_line(&line)))
    }

    /// Where the keys handed out live; a change means cached lines are stale.
    #[napi]
    pub fn epoch(&self) -> Result<String> {
        guard("epoch", || Ok(self.server.current().map(SessionManager::cache_epoch).unwrap_or_default()))
    }

    /// `getBranch(fromId?)` as line keys, root first.
    #[napi]
    pub fn branch_keys(&self, from_id: Option<String>) -> Result<Float64Array> {
        guard("getBranch", || Ok(keys_out(self.manager()?.branch_keys(from_id.as_deref())?)))
    }

    /// `getEntries()` as line keys, in file order.
    #[napi]
    pub fn entry_keys(&self) -> Result<Float64Array> {
        guard("getEntries", || Ok(keys_out(self.manager()?.entry_keys()?)))
    }

    /// The stored lines under `keys`, as one JSON array text (`null` for an unknown key).
    #[napi]
    pub fn lines(&self, keys: Float64Array) -> Result<String> {
        guard("lines", || {
            let keys: Vec<i64> = keys.iter().map(|&k| k as i64).collect();
            let lines = self.manager()?.lines(&keys)?;
            let mut out = String::with_capacity(lines.iter().map(|l| l.as_ref().map_or(4, String::len) + 1).sum());
            out.push('[');
            for (i, l) in lines.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(l.as_deref().unwrap_or("null"));
            }
            out.push(']');
            Ok(out)
        })
    }
}

/// The CLI's default database: `$SESSIONDB_PATH`, else `~/.pi/agent/sessiondb.sqlite`.
#[napi]
pub fn default_database() -> Result<String> {
    guard("defaultDatabase", || Ok(sessiondb::db::default_path()?.to_string_lossy().into_owned()))
}

/// Opens (creating if needed) the database at `path`: an error names the file and the cause.
#[napi]
pub fn check_database(path: String) -> Result<()> {
    guard("useDatabase", || {
        let p = PathBuf::from(&path);
        sessiondb::db::open(&p).map(drop).map_err(|e| {
            sessiondb::Error::InvalidArgument(format!("cannot open the sessiondb database {path}: {e}"))
        })
    })
}

/// Panics inside the addon, to prove a panic reaches JS as an exception (tests only).
#[napi]
pub fn panic_for_test() -> Result<()> {
    guard("panicForTest", || -> sessiondb::Result<()> { panic!("deliberate test panic") })
}

/// pi's `getDefaultSessionDirPath(cwd)`: `<agent dir>/sessions/--<cwd encoded>--`.
#[napi]
pub fn default_session_dir(cwd: String) -> Result<String> {
    guard("usesDefaultSessionDir", || {
        Ok(sessiondb::layout::default_session_dir(&cwd).to_string_lossy().into_owned())
    })
}
