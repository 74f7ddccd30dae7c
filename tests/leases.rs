//! One writer per session in the SessionManager (`manager::hold_leases`), on SQLite and on
//! PostgreSQL: a manager holds the lease on the session it writes; opening a session another
//! live process holds continues in a fork of it (pi's `forkFrom`: every entry, `parentSession`
//! naming it) with a notice naming that process; a holder gone loses the session to the next
//! manager; managers of one process share the lease, released when the last lets go.
//!
//! Another live process is stood in for by this host's pid 1 (it runs, with its start time).

mod common;

use sessiondb::internals::lease::{self, Acquired, Claimant};
use sessiondb::json::{parse, Value};
use sessiondb::manager::{hold_leases, NewSessionOptions, SessionManager};
use std::path::Path;

fn user(text: &str) -> Value {
    parse(format!(r#"{{"role":"user","content":{},"timestamp":1}}"#, sessiondb::json::quote(text)).as_bytes()).unwrap()
}

fn holder(db: &Path, file: &str) -> Option<(i64, bool)> {
    let conn = sessiondb::db::open(db).unwrap();
    let sid = sessiondb::resolve::resolve(&conn, file).unwrap().sid;
    lease::holder(&conn, sid).unwrap().map(|h| (h.pid, h.mine))
}

#[test]
fn managers_hold_leases_and_fork_a_session_another_process_writes() {
    hold_leases(true);
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    let sessions = sessions.to_str().unwrap();
    for backend in common::backends(dir.path(), "leases") {
        let db = backend.db.as_path();
        let name = backend.name;
        let mut m = SessionManager::create(db, "/work/p", Some(sessions), NewSessionOptions::default()).unwrap();
        m.append_message(user("first words")).unwrap();
        let file = m.session_file().unwrap().to_owned();
        let me = lease::me();
        assert_eq!(holder(db, &file), Some((me.pid, true)), "{name}: saved, held by this process");
        let entries = m.entries().unwrap();
        drop(m);
        assert_eq!(holder(db, &file), None, "{name}: dropped, released");

        // Another live process holds it: opening it continues in a fork.
        let init = Claimant { pid: 1, host: me.host.clone(), start: lease::start_of(1).unwrap() };
        let conn = sessiondb::db::open(db).unwrap();
        let sid = sessiondb::resolve::resolve(&conn, &file).unwrap().sid;
        assert_eq!(lease::acquire_as(&conn, sid, &init).unwrap(), Acquired::Held);
        let mut other = SessionManager::open(db, &file, None, None).unwrap();
        let forked = other.session_file().unwrap().to_owned();
        assert_ne!(forked, file, "{name}");
        let notice = other.lease_notice().expect("a notice");
        assert_eq!(
            (notice.holder.pid, notice.session_file.as_str(), notice.forked_to.as_str()),
            (1, file.as_str(), forked.as_str())
        );
        assert!(
            notice.message.starts_with(&format!("session {file} is being written by process 1 on ")),
            "{}",
            notice.message
        );
        assert!(other.lease_notice().is_none(), "taken once");
        let header = other.header().unwrap();
        let header = header.as_object().unwrap();
        assert_eq!(header.get("parentSession").and_then(Value::as_str), Some(file.as_str()), "{name}");
        assert_eq!(other.entries().unwrap(), entries, "{name}: every entry, unchanged");
        other.append_message(user("in the fork")).unwrap();
        assert_eq!(holder(db, &forked), Some((me.pid, true)), "{name}: the fork is this process's");
        assert_eq!(holder(db, &file), Some((1, false)), "{name}: the session stays the other's");

        // The other process is gone (a recycled pid: another start time): the next one takes it.
        let gone = Claimant { start: "another start".into(), ..init.clone() };
        let refused = lease::acquire_as(&conn, sid, &gone).unwrap();
        assert!(matches!(&refused, Acquired::HeldBy(h) if h.pid == 1 && h.live), "{name}: {refused:?}");
        lease::release_as(&conn, sid, &init).unwrap();
        assert_eq!(lease::acquire_as(&conn, sid, &gone).unwrap(), Acquired::Held);
        let mut a = SessionManager::open(db, &file, None, None).unwrap();
        assert_eq!(a.session_file(), Some(file.as_str()), "{name}: the session itself");
        assert!(a.lease_notice().is_none());
        a.append_message(user("appended")).unwrap();
        // Two managers of this process share it; it is released when the last lets go.
        let b = SessionManager::open(db, &file, None, None).unwrap();
        assert_eq!(b.session_file(), Some(file.as_str()));
        drop(a);
        assert_eq!(holder(db, &file), Some((me.pid, true)), "{name}: still held by the other manager");
        drop(b);
        assert_eq!(holder(db, &file), None, "{name}");
        drop(other);
        assert_eq!(holder(db, &forked), None, "{name}");
    }
}
