//! One writer per session, for managers of a process that asked for it ([`hold_leases`]: the
//! Node binding, so `sessiondb-pi`): a manager holds the lease (`store::lease`) on the saved
//! session it writes, and gives it back when it moves to another session or is dropped. A
//! session another live process holds is not appended to: opening it (pi's `--session`, `-c`,
//! `/resume`) continues in a new session forked from it as pi's `--fork` makes one (every
//! entry, `parentSession` naming it), and [`SessionManager::lease_notice`] says so once.
//! Plain pi knows nothing of leases.

use super::{Persistence, SessionManager};
use crate::error::Result;
use crate::js::json::Value;
use crate::js::jstime;
use crate::pi::{entries as build, ids, layout};
use crate::store::db::Db;
use crate::store::interface::write::NewSession;
use crate::store::keys::SessionKey;
use crate::store::lease::{self, Acquired, Holder};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

static ON: AtomicBool = AtomicBool::new(false);

/// Managers made from now on in this process hold leases on the sessions they write (off by
/// default: a library user, `sessiondb rpc`, asks for it).
pub fn hold_leases(on: bool) {
    ON.store(on, Ordering::Relaxed);
}

/// Whether managers hold leases (see [`hold_leases`]).
pub fn holds_leases() -> bool {
    ON.load(Ordering::Relaxed)
}

/// The leases this process holds, by database and session, with how many of its managers
/// hold each: the lease is one row per process, released when the last of them lets go.
fn held() -> std::sync::MutexGuard<'static, HashMap<(PathBuf, SessionKey), usize>> {
    static HELD: OnceLock<Mutex<HashMap<(PathBuf, SessionKey), usize>>> = OnceLock::new();
    HELD.get_or_init(Mutex::default).lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Why a manager did not continue the session it was asked to open.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaseNotice {
    /// The process writing the session.
    pub holder: Holder,
    /// The session asked for (its file path).
    pub session_file: String,
    /// The new session the manager continues in instead (its file path).
    pub forked_to: String,
    /// `forked_to`'s session id.
    pub forked_id: String,
    /// The whole message, one line.
    pub message: String,
}

impl SessionManager {
    /// Takes the lease on the current session when it is saved and this manager does not
    /// hold it yet (letting go of the one it held); the live process holding it otherwise.
    fn hold(&mut self) -> Result<Option<Holder>> {
        let saved = matches!(self.persistence, Persistence::Saved { .. });
        if !self.leasing || !saved {
            self.let_go();
            return Ok(None);
        }
        if self.leased == Some(self.sid) {
            return Ok(None);
        }
        self.let_go();
        let Some(db_path) = self.persistence.db_path().map(Path::to_path_buf) else { return Ok(None) };
        let mut held = held();
        let count = held.entry((db_path, self.sid)).or_insert(0);
        if *count == 0 {
            if let Acquired::HeldBy(h) = lease::acquire(&self.conn, self.sid)? {
                held.retain(|_, n| *n > 0);
                return Ok(Some(h));
            }
        }
        *count += 1;
        self.leased = Some(self.sid);
        Ok(None)
    }

    /// Takes the lease on a session just made (no one else can hold it).
    pub(super) fn hold_new(&mut self) -> Result<()> {
        self.hold().map(drop)
    }

    /// Gives back the lease this manager holds, if any (errors leave it to expire).
    pub(super) fn let_go(&mut self) {
        let Some(sid) = self.leased.take() else { return };
        let Some(db_path) = self.persistence.db_path().map(Path::to_path_buf) else { return };
        let mut held = held();
        let key = (db_path, sid);
        let last = match held.get_mut(&key) {
            Some(n) if *n > 1 => {
                *n -= 1;
                false
            }
            _ => true,
        };
        if last {
            held.remove(&key);
            let _ = lease::release(&self.conn, sid);
        }
    }

    /// After a session was loaded for writing: takes its lease, or, when another live process
    /// holds it, continues in a fork of it (see the module's comment).
    pub(super) fn hold_or_fork(&mut self) -> Result<()> {
        let Some(holder) = self.hold()? else { return Ok(()) };
        let source_sid = self.sid;
        let source = self.persistence.file().unwrap_or_default().to_owned();
        let (sid, file, id) = fork_session(&mut self.conn, source_sid, &source, &self.cwd, &self.session_dir, None)?;
        self.load(sid, file.clone())?;
        self.hold_new()?;
        let message = format!(
            "session {source} is being written by {}; continuing in a new session forked from it: {file}",
            holder.describe()
        );
        self.notice = Some(LeaseNotice { holder, session_file: source, forked_to: file, forked_id: id, message });
        Ok(())
    }

    /// Why the last open continued in a fork instead of the session asked for; taken once.
    pub fn lease_notice(&mut self) -> Option<LeaseNotice> {
        self.notice.take()
    }

    /// Renews this manager's lease (a host's timer calls it every
    /// `lease::RENEW_EVERY_MS`); one lost meanwhile (taken over while this process seemed
    /// gone) is taken again when free. False when another process holds the session now.
    pub fn renew_lease(&mut self) -> Result<bool> {
        let Some(sid) = self.leased else { return Ok(true) };
        if lease::renew(&self.conn, sid)? {
            return Ok(true);
        }
        Ok(lease::acquire(&self.conn, sid)? == Acquired::Held)
    }

    /// Gives back this manager's lease now (a host exiting).
    pub fn release_lease(&mut self) {
        self.let_go();
    }
}

/// A new session in `dir` for `cwd` holding every entry of session `source_sid` (at
/// `source`), its header's `parentSession` naming `source`: pi's `forkFrom`. Returns its key,
/// file and id.
pub(super) fn fork_session(
    conn: &mut Db,
    source_sid: SessionKey,
    source: &str,
    cwd: &str,
    dir: &str,
    id: Option<String>,
) -> Result<(SessionKey, String, String)> {
    let id = id.unwrap_or_else(ids::new_session_id);
    let ts = jstime::now_iso();
    let file = Path::new(dir).join(layout::session_file_name(&ts, &id)).to_string_lossy().into_owned();
    let header = build::header(&id, &ts, cwd, Some(source));
    let tx = conn.write()?;
    let header_line = Value::Object(header.clone()).to_json();
    let new_sid = tx.store().insert_session(&NewSession::made_now(Path::new(&file), &header, &header_line))?;
    tx.store().copy_session(source_sid, new_sid)?;
    tx.commit()?;
    Ok((new_sid, file, id))
}
