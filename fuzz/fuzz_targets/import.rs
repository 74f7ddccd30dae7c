//! The importer: the input is written to a file and imported into a database.
//!
//! Properties: no panic; a file is imported whole or reported failed; the export of an
//! imported session re-imports to the same export; `check` runs on it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sessiondb::import::{import_file, FileStatus, ImportOptions};
use std::sync::Mutex;

struct World {
    dir: std::path::PathBuf,
    conn: sessiondb::db::Db,
}

static WORLD: Mutex<Option<World>> = Mutex::new(None);

fuzz_target!(|data: &[u8]| {
    let mut guard = WORLD.lock().unwrap_or_else(|p| p.into_inner());
    let w = guard.get_or_insert_with(|| {
        let dir = std::env::temp_dir().join(format!("sessiondb-fuzz-import-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let conn = sessiondb::db::open_in_memory().expect("database");
        World { dir, conn }
    });
    let file = w.dir.join("input.jsonl");
    std::fs::write(&file, data).expect("write input");
    let report = import_file(&mut w.conn, &file, None, ImportOptions { force: true, live: false });
    if report.status != FileStatus::Failed {
        let sid: sessiondb::SessionKey = w.conn.sqlite().query_row("SELECT sid FROM sessions", [], |r| r.get(0)).expect("one session");
        let entries: i64 =
            w.conn.sqlite().query_row("SELECT entry_count FROM sessions WHERE sid = ?1", [sid], |r| r.get(0)).expect("count");
        assert_eq!(entries as u64, report.entries);
        let _ = sessiondb::check::check_session(&w.conn, sid).expect("check");
        let mut first = Vec::new();
        sessiondb::export::write_session(&w.conn, sid, &mut first).expect("export");
        // The export is a v3 file of object lines: importing it again gives the same export.
        let again = w.dir.join("again.jsonl");
        std::fs::write(&again, &first).expect("write export");
        let r2 = import_file(&mut w.conn, &again, None, ImportOptions { force: true, live: false });
        assert_ne!(r2.status, FileStatus::Failed, "{:?}", r2.reason);
        assert_eq!(r2.malformed_lines, 0);
        let sid2: sessiondb::SessionKey = w
            .conn
            .sqlite()
            .query_row("SELECT sid FROM sessions WHERE path = ?1", [again.to_string_lossy()], |r| r.get(0))
            .expect("second session");
        let mut second = Vec::new();
        sessiondb::export::write_session(&w.conn, sid2, &mut second).expect("export again");
        assert!(first == second, "export → import → export changed the text");
    }
    w.conn.sqlite().execute("DELETE FROM sessions", []).expect("clear");
});
