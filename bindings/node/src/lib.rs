//! The native half of the `sessiondb` npm package: one [`Native`] per JS `SessionManager`,
//! holding an rpc server whose current manager is that instance. The JS half (`index.js`)
//! sends pi's calls as JSON lines and parses the answers with `JSON.parse`, so values are
//! exactly what JavaScript makes of the stored text.
//!
//! Nothing unwinds into Node: every entry point runs under `catch_unwind`, and a panic
//! becomes a JS exception naming what failed.

use napi::bindgen_prelude::Buffer;
use napi::{Error, Result};
use napi_derive::napi;
use sessiondb::manager::SessionManager;
use sessiondb::rpc::RpcServer;
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

    /// `appendMessage(message)` with the message as JSON text: the hot path of an agent
    /// turn, without the rpc envelope.
    #[napi]
    pub fn append_message(&mut self, message: String) -> Result<String> {
        let server = &mut self.server;
        guard("appendMessage", || {
            let value = sessiondb::json::parse(message.as_bytes())
                .map_err(|e| sessiondb::Error::InvalidArgument(format!("message is not JSON: {e}")))?;
            let m =
                server.current_mut().ok_or_else(|| sessiondb::Error::InvalidArgument("no current session".into()))?;
            m.append_message(value)
        })
    }

    /// Where the keys handed out live; a change means cached lines are stale.
    #[napi]
    pub fn epoch(&self) -> Result<String> {
        guard("epoch", || Ok(self.server.current().map(SessionManager::cache_epoch).unwrap_or_default()))
    }

    /// At most `limit` entry lines after storage key `after` (from the first when absent),
    /// in file order, as the UTF-8 JSON text `[[key, ...], [line, ...]]` (a Buffer: Node
    /// decodes it faster than N-API makes a string).
    #[napi]
    pub fn lines_after(&self, after: Option<f64>, limit: u32) -> Result<Buffer> {
        guard("getEntries", || {
            let mut keys = Vec::with_capacity(64 * 1024);
            let mut lines = Vec::with_capacity(1024 * 1024);
            keys.extend_from_slice(b"[[");
            lines.extend_from_slice(b"],[");
            let mut first = true;
            self.manager()?.lines_after(after.map(|k| k as i64), i64::from(limit), &mut |k, line| {
                if !first {
                    keys.push(b',');
                    lines.push(b',');
                }
                first = false;
                keys.extend_from_slice(k.to_string().as_bytes());
                lines.extend_from_slice(line);
            })?;
            keys.extend_from_slice(&lines);
            keys.extend_from_slice(b"]]");
            Ok(Buffer::from(keys))
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
        sessiondb::db::open(&p)
            .map(drop)
            .map_err(|e| sessiondb::Error::InvalidArgument(format!("cannot open the sessiondb database {path}: {e}")))
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
    guard("usesDefaultSessionDir", || Ok(sessiondb::default_session_dir(&cwd).to_string_lossy().into_owned()))
}
