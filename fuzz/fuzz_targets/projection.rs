//! Import, then everything read from the tree: the projection at the last leaf and at every
//! entry id (and at a null leaf), branches, children, the whole tree and labels.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sessiondb::import::{import_file, FileStatus, ImportOptions};
use sessiondb::tree::{Leaf, SessionTree};
use std::sync::Mutex;

struct World {
    dir: std::path::PathBuf,
    conn: sessiondb::db::Db,
}

static WORLD: Mutex<Option<World>> = Mutex::new(None);

/// At most this many entries (spread over the file) get their own projection: keeps each
/// run short.
const MAX_LEAVES: usize = 12;

fuzz_target!(|data: &[u8]| {
    let mut guard = WORLD.lock().unwrap_or_else(|p| p.into_inner());
    let w = guard.get_or_insert_with(|| {
        let dir = std::env::temp_dir().join(format!("sessiondb-fuzz-projection-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let conn = sessiondb::db::open_in_memory().expect("database");
        World { dir, conn }
    });
    let file = w.dir.join("input.jsonl");
    std::fs::write(&file, data).expect("write input");
    let report = import_file(&mut w.conn, &file, None, ImportOptions { force: true, live: false });
    if report.status != FileStatus::Failed {
        let sid: sessiondb::SessionKey = w.conn.sqlite().query_row("SELECT sid FROM sessions", [], |r| r.get(0)).expect("one session");
        let t = SessionTree::open(&w.conn, sid).expect("tree");
        let (p, _) = t.projection(&Leaf::Last).expect("projection at the last leaf");
        let _ = p.to_json();
        let _ = t.projection(&Leaf::Null).expect("projection at a null leaf");
        let _ = t.tree().expect("tree");
        let _ = t.labels().expect("labels");
        let _ = t.branch(None).expect("branch");
        let all = t.all_entries().expect("entries");
        let step = all.len().div_ceil(MAX_LEAVES).max(1);
        for row in all.iter().rev().step_by(step) {
            if let Some(id) = &row.id {
                let (p, _) = t.projection(&Leaf::Id(id.clone())).expect("projection at an entry");
                let _ = p.to_json();
                let _ = t.children(id).expect("children");
                // The shortcut-free walk must agree with the one using derived columns.
                let slow = SessionTree::open(&w.conn, sid).expect("tree").without_shortcuts();
                let (q, _) = slow.projection(&Leaf::Id(id.clone())).expect("slow projection");
                assert_eq!(p.to_json(), q.to_json(), "projection at {id} differs without shortcuts");
            }
        }
    }
    w.conn.sqlite().execute("DELETE FROM sessions", []).expect("clear");
});
