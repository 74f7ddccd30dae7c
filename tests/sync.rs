//! `sync` against a real directory that changes under it: after every step the database must
//! equal a fresh import of the directory.

mod common;

use sessiondb::sync::{self, SyncOptions};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Every session as (path → (export text, source version)), missing sessions left out.
fn snapshot(db: &Path) -> BTreeMap<String, (String, Option<i64>)> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let rows: Vec<(sessiondb::SessionKey, String, Option<i64>)> = conn
        .prepare("SELECT sid, path, source_version FROM sessions WHERE missing = 0 ORDER BY path")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let conn = sessiondb::db::Db::from_sqlite(conn);
    let mut out = BTreeMap::new();
    for (sid, path, v) in rows {
        let mut buf = Vec::new();
        sessiondb::export::write_session(&conn, sid, &mut buf).unwrap();
        out.insert(path, (String::from_utf8(buf).unwrap(), v));
    }
    out
}

/// Compares with a fresh import; migrated files get fresh random ids, so for them only the
/// number of lines is compared.
fn assert_equals_fresh_import(db: &Path, dir: &Path, step: &str) {
    let fresh_dir = tempfile::tempdir().unwrap();
    let fresh = fresh_dir.path().join("fresh.sqlite");
    let mut conn = sessiondb::db::open(&fresh).unwrap();
    let targets = sessiondb::import::collect_targets(&[dir.to_path_buf()]).unwrap();
    sessiondb::import::import_targets(&mut conn, &targets, Default::default(), |_| {}).unwrap();
    drop(conn);
    let (a, b) = (snapshot(db), snapshot(&fresh));
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>(), "{step}: sessions");
    for (path, (text, v)) in &a {
        let (want, _) = &b[path];
        if v.is_some_and(|v| v < 3) {
            assert_eq!(text.lines().count(), want.lines().count(), "{step}: {path}");
        } else {
            assert!(text == want, "{step}: {path} differs\nsync:\n{text}\nfresh:\n{want}");
        }
    }
    let c = rusqlite::Connection::open(db).unwrap();
    let ok: String = c.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(ok, "ok");
}

fn line(id: &str, parent: Option<&str>, text: &str) -> String {
    let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2025-05-01T00:00:00.000Z","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#
    )
}

fn header(id: &str) -> String {
    format!(r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2025-05-01T00:00:00.000Z","cwd":"/w"}}"#)
}

fn append(path: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new().append(true).create(true).open(path).unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

/// Sets a file's modification time into the past (a settled file).
fn settle(path: &Path) {
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(10)).unwrap();
}

fn run_sync(conn: &mut sessiondb::db::Db, dir: &Path) -> sync::SyncSummary {
    sync::sync_dir(conn, dir, SyncOptions::default(), |_, _| {}).unwrap()
}

#[test]
fn sync_follows_a_growing_directory() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("sessions/--w--");
    std::fs::create_dir_all(&dir).unwrap();
    let root = work.path().join("sessions");
    let db = work.path().join("db.sqlite");
    let mut conn = sessiondb::db::open(&db).unwrap();

    // A session written line by line.
    let a = dir.join("a.jsonl");
    append(&a, &format!("{}\n{}\n", header("sess-a"), line("a0000001", None, "one")));
    let s = run_sync(&mut conn, &root);
    assert_eq!((s.new, s.entries_added), (1, 1));
    assert_equals_fresh_import(&db, &root, "first file");
    for i in 2..6 {
        append(&a, &format!("{}\n", line(&format!("a000000{i}"), Some(&format!("a000000{}", i - 1)), "more")));
        let s = run_sync(&mut conn, &root);
        assert_eq!((s.grown, s.entries_added, s.rewritten), (1, 1, 0), "line {i}");
        assert_equals_fresh_import(&db, &root, &format!("append {i}"));
    }
    // Nothing changed: nothing is read.
    let s = run_sync(&mut conn, &root);
    assert_eq!((s.unchanged, s.entries_added), (1, 0));

    // Half a line, then the rest.
    let full = line("a0000006", Some("a0000005"), "split in two");
    let (first, rest) = full.split_at(full.len() / 2);
    append(&a, first);
    let s = run_sync(&mut conn, &root);
    assert_eq!(s.entries_added, 0, "a half-written line waits");
    assert_eq!(s.lines_skipped, 0);
    append(&a, &format!("{rest}\n"));
    let s = run_sync(&mut conn, &root);
    assert_eq!((s.grown, s.entries_added), (1, 1));
    assert_equals_fresh_import(&db, &root, "completed line");
    // A complete final line without newline is taken once the file has settled.
    append(&a, &line("a0000007", Some("a0000006"), "no newline"));
    assert_eq!(run_sync(&mut conn, &root).entries_added, 0);
    settle(&a);
    assert_eq!(run_sync(&mut conn, &root).entries_added, 1);
    append(&a, &format!("\n{}\n", line("a0000008", Some("a0000007"), "after")));
    assert_eq!(run_sync(&mut conn, &root).entries_added, 1);
    assert_equals_fresh_import(&db, &root, "final line without newline");

    // A v1 file, then pi rewriting it on migration.
    let (v1_src, g) = common::golden("x-no-version-tree.jsonl");
    let v1 = dir.join("old.jsonl");
    std::fs::copy(v1_src, &v1).unwrap();
    let s = run_sync(&mut conn, &root);
    assert_eq!(s.new, 1);
    assert_equals_fresh_import(&db, &root, "v1 file");
    std::fs::write(&v1, g["rewritten"].as_str().unwrap()).unwrap();
    let s = run_sync(&mut conn, &root);
    assert_eq!(s.rewritten, 1, "{s:?}");
    assert_equals_fresh_import(&db, &root, "v1 file rewritten by pi");

    // Truncated and rewritten.
    std::fs::write(&a, format!("{}\n{}\n", header("sess-a"), line("b0000001", None, "new start"))).unwrap();
    let s = run_sync(&mut conn, &root);
    assert_eq!(s.rewritten, 1);
    assert_equals_fresh_import(&db, &root, "truncated");
    // Same size, different bytes (an in-place edit): the tail hash tells.
    let text = std::fs::read_to_string(&a).unwrap().replace("new start", "NEW START");
    std::fs::write(&a, &text).unwrap();
    append(&a, &format!("{}\n", line("b0000002", Some("b0000001"), "x")));
    let s = run_sync(&mut conn, &root);
    assert_eq!((s.rewritten, s.grown), (1, 0));
    assert_equals_fresh_import(&db, &root, "edited in place");

    // Deleted: kept and marked missing, removed with --prune.
    let b = dir.join("b.jsonl");
    std::fs::write(&b, format!("{}\n{}\n", header("sess-b"), line("c0000001", None, "b"))).unwrap();
    run_sync(&mut conn, &root);
    std::fs::remove_file(&b).unwrap();
    let s = run_sync(&mut conn, &root);
    assert_eq!(s.missing, 1);
    assert_equals_fresh_import(&db, &root, "deleted");
    let count = |conn: &sessiondb::db::Db| {
        conn.sqlite().query_row("SELECT count(*) FROM sessions", [], |r| r.get::<_, i64>(0)).unwrap()
    };
    assert_eq!(count(&conn), 3, "the deleted file's session is kept");
    let s = sync::sync_dir(&mut conn, &root, SyncOptions { prune: true }, |_, _| {}).unwrap();
    assert_eq!(s.pruned, 1);
    assert_eq!(count(&conn), 2);

    // Export back: the synced tree comes out as it is on disk (valid v3 files).
    let out = work.path().join("out");
    sessiondb::export::export_all(&conn, &out, |_| {}).unwrap();
    assert_eq!(std::fs::read(out.join("--w--/a.jsonl")).unwrap(), std::fs::read(&a).unwrap());
}

fn make_tree(root: &Path, n: usize) -> Vec<PathBuf> {
    let dir = root.join("--w--");
    std::fs::create_dir_all(&dir).unwrap();
    (0..n)
        .map(|i| {
            let p = dir.join(format!("s{i:04}.jsonl"));
            let mut text = format!("{}\n", header(&format!("s{i:04}")));
            let mut parent: Option<String> = None;
            for j in 0..40 {
                let id = format!("{i:04}{j:04}");
                text.push_str(&line(&id, parent.as_deref(), "some text to make the file a few kilobytes long"));
                text.push('\n');
                parent = Some(id);
            }
            std::fs::write(&p, text).unwrap();
            p
        })
        .collect()
}

#[test]
fn killing_sync_anywhere_converges() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("sessions");
    let files = make_tree(&root, 150);
    let db = work.path().join("db.sqlite");
    sessiondb::db::open(&db).unwrap();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..20 {
        // Files keep growing between kills.
        let f = &files[(rand() % files.len() as u64) as usize];
        append(f, &format!("{}\n", line(&format!("r{round:07}"), None, "appended between kills")));
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_sessiondb"))
            .args(["--db", db.to_str().unwrap(), "sync", "--sessions-dir", root.to_str().unwrap()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(rand() % 400));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        let c = rusqlite::Connection::open(&db).unwrap();
        let ok: String = c.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
        assert_eq!(ok, "ok", "round {round}");
    }
    let (code, _, err) = common::run(&db, &["sync", "--sessions-dir", root.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_equals_fresh_import(&db, &root, "after 20 kills");
    // And a second sync has nothing to do.
    let (_, out, _) = common::run(&db, &["sync", "--json", "--sessions-dir", root.to_str().unwrap()]);
    let s: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!((s["unchanged"].as_u64(), s["entries_added"].as_u64()), (Some(150), Some(0)));
}

#[test]
fn files_added_while_syncing_are_picked_up() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("sessions");
    make_tree(&root, 100);
    let db = work.path().join("db.sqlite");
    sessiondb::db::open(&db).unwrap();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_sessiondb"))
        .args(["--db", db.to_str().unwrap(), "sync", "--sessions-dir", root.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let dir = root.join("--w--");
    for i in 0..20 {
        std::fs::write(
            dir.join(format!("late{i}.jsonl")),
            format!("{}\n{}\n", header(&format!("late{i}")), line("l0000001", None, "late")),
        )
        .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    // Two syncs at once must not corrupt anything either.
    let a = std::process::Command::new(env!("CARGO_BIN_EXE_sessiondb"))
        .args(["--db", db.to_str().unwrap(), "sync", "--sessions-dir", root.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let (code, _, err) = common::run(&db, &["sync", "--sessions-dir", root.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(a.wait_with_output().unwrap().status.success());
    assert_equals_fresh_import(&db, &root, "added while syncing");
}

#[test]
fn watch_picks_up_an_append_within_a_second_and_stops_on_ctrl_c() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("sessions");
    let dir = root.join("--w--");
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("live.jsonl");
    append(&f, &format!("{}\n{}\n", header("live"), line("w0000001", None, "first")));
    let db = work.path().join("db.sqlite");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_sessiondb"))
        .args(["--db", db.to_str().unwrap(), "sync", "--watch", "--sessions-dir", root.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let entries = |db: &Path| -> i64 {
        rusqlite::Connection::open(db)
            .and_then(|c| c.query_row("SELECT count(*) FROM entries", [], |r| r.get(0)))
            .unwrap_or(0)
    };
    let wait_for = |n: i64, what: &str| {
        let start = std::time::Instant::now();
        while entries(&db) < n {
            assert!(start.elapsed() < std::time::Duration::from_secs(10), "{what}: not synced");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        start.elapsed()
    };
    wait_for(1, "first sync");
    std::thread::sleep(std::time::Duration::from_millis(300)); // the watcher is set up after the first sync
    append(&f, &format!("{}\n", line("w0000002", Some("w0000001"), "second")));
    let took = wait_for(2, "appended line");
    assert!(took < std::time::Duration::from_secs(2), "picked up after {took:?}");
    // Ctrl-C ends it cleanly.
    let pid = child.id().to_string();
    assert!(std::process::Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("stopped"));
}

/// A sessions folder of two one-line sessions, `a` and `b`: (the folder's parent, the folder, a, b).
fn two_sessions() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("sessions");
    let dir = root.join("--w--");
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    append(&a, &format!("{}\n{}\n", header("a"), line("a0000001", None, "first")));
    append(&b, &format!("{}\n{}\n", header("b"), line("b0000001", None, "other")));
    (work, root, a, b)
}

#[test]
fn sync_of_named_files_reads_only_them_and_matches_a_full_sync() {
    let (work, root, a, _) = two_sessions();
    let db = work.path().join("db.sqlite");
    let root_s = root.to_str().unwrap();
    let (code, out, err) = common::run(&db, &["sync", "--json", "--sessions-dir", root_s, a.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let s: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!((s["files_scanned"].as_u64(), s["new"].as_u64()), (Some(1), Some(1)), "{out}");
    // b was not touched; a's growth is appended by the next named sync.
    append(&a, &format!("{}\n", line("a0000002", Some("a0000001"), "second")));
    let (code, out, err) = common::run(&db, &["sync", "--json", "--sessions-dir", root_s, a.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let s: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!((s["grown"].as_u64(), s["entries_added"].as_u64()), (Some(1), Some(1)), "{out}");
    let sessions: i64 =
        rusqlite::Connection::open(&db).unwrap().query_row("SELECT count(*) FROM sessions", [], |r| r.get(0)).unwrap();
    assert_eq!(sessions, 1);
    // A full sync then adds b and leaves a as it is: the same database as a fresh import.
    let (code, _, err) = common::run(&db, &["sync", "--sessions-dir", root_s]);
    assert_eq!(code, 0, "{err}");
    assert_equals_fresh_import(&db, &root, "after named syncs");
    // A file outside the sessions directory is refused, naming both.
    let stray = work.path().join("stray.jsonl");
    append(&stray, &format!("{}\n", header("s")));
    let (code, _, err) = common::run(&db, &["sync", "--sessions-dir", root_s, stray.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("stray.jsonl: not a .jsonl file below the sessions directory"), "{err}");
}

#[test]
fn progress_json_reports_files_then_index_on_stderr() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("sessions");
    make_tree(&root, 30);
    let db = work.path().join("db.sqlite");
    let dir = root.to_str().unwrap();
    let (code, out, err) = common::run(&db, &["sync", "--json", "--progress-json", "--sessions-dir", dir]);
    assert_eq!(code, 0, "{err}");
    // stdout stays the summary alone.
    let s: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(s["new"].as_u64(), Some(30));
    let lines: Vec<serde_json::Value> = err.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let phase = |p: &str| lines.iter().filter(|l| l["progress"] == p).collect::<Vec<_>>();
    let (files, index) = (phase("sync"), phase("index"));
    assert_eq!(files.len() + index.len(), lines.len(), "{err}");
    // The first file, then at most ten a second, and always the last: 30 of 30.
    assert_eq!((files[0]["done"].as_u64(), files[0]["total"].as_u64()), (Some(1), Some(30)), "{err}");
    let last = files.last().unwrap();
    assert_eq!((last["done"].as_u64(), last["total"].as_u64()), (Some(30), Some(30)), "{err}");
    assert!(files.windows(2).all(|w| w[0]["done"].as_u64() < w[1]["done"].as_u64()), "{err}");
    let last = index.last().expect("the index catch-up reports too");
    assert_eq!(last["done"], last["total"], "{err}");
    assert!(last["total"].as_u64().unwrap() >= 30 * 40, "{err}");
    // Without the flag, stderr stays quiet (not a terminal: no bar either).
    std::fs::remove_file(&db).unwrap();
    let (code, _, err) = common::run(&db, &["sync", "--json", "--sessions-dir", dir]);
    assert_eq!((code, err.as_str()), (0, ""));
    // import reports its files the same way.
    let db2 = work.path().join("db2.sqlite");
    let (code, _, err) = common::run(&db2, &["import", "--json", "--progress-json", dir]);
    assert_eq!(code, 0, "{err}");
    let last =
        err.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()).rfind(|l| l["progress"] == "import");
    assert_eq!(last.map(|l| (l["done"].as_u64(), l["total"].as_u64())), Some((Some(30), Some(30))), "{err}");
}

#[test]
fn sync_stdin_answers_each_request_and_keeps_going_after_a_bad_one() {
    let (work, root, a, b) = two_sessions();
    let db = work.path().join("db.sqlite");
    let mut r = common::sync_requests::Requests::start(db.to_str().unwrap(), &root);
    let s = r.files(&[&a]);
    assert_eq!(
        common::sync_requests::count_of(&s, &["files_scanned", "new", "entries_added"]),
        [Some(1), Some(1), Some(1)],
        "{s}"
    );
    // Bad requests are answered with an error naming the line and the reason; the process goes on.
    let s = r.ask("a.jsonl");
    assert!(s["error"].as_str().unwrap().starts_with("standard input line 2: expected a JSON array"), "{s}");
    let stray = work.path().join("stray.jsonl");
    let s = r.files(&[&stray]);
    let e = s["error"].as_str().unwrap();
    assert!(e.starts_with("standard input line 3: ") && e.contains("stray.jsonl: not a .jsonl file below"), "{s}");
    // Each turn's growth is read on the connection kept open.
    append(&a, &format!("{}\n", line("a0000002", Some("a0000001"), "second")));
    let s = r.files(&[&a]);
    assert_eq!(common::sync_requests::count_of(&s, &["grown", "entries_added"]), [Some(1), Some(1)], "{s}");
    let s = r.files(&[&a, &b]);
    assert_eq!(
        common::sync_requests::count_of(&s, &["unchanged", "new", "entries_added"]),
        [Some(1), Some(1), Some(1)],
        "{s}"
    );
    r.finish();
    assert_equals_fresh_import(&db, &root, "after requests");
    // What was synced is searchable: the index caught up after each request.
    let (code, out, err) = common::run(&db, &["search", "second", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(serde_json::from_str::<Vec<serde_json::Value>>(&out).unwrap().len(), 1, "{out}");
}

/// The walk reads a regular file's size and time through its folder; a session file that is
/// a symbolic link is stat'ed through the link when it is read. Both are followed as they grow.
#[test]
fn a_linked_session_file_is_followed_as_a_regular_one() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("sessions");
    let dir = root.join("--w--");
    std::fs::create_dir_all(&dir).unwrap();
    let elsewhere = work.path().join("elsewhere.jsonl");
    append(&elsewhere, &format!("{}\n{}\n", header("sess-l"), line("l0000001", None, "linked")));
    std::os::unix::fs::symlink(&elsewhere, dir.join("linked.jsonl")).unwrap();
    let plain = dir.join("plain.jsonl");
    append(&plain, &format!("{}\n{}\n", header("sess-p"), line("p0000001", None, "plain")));
    let db = work.path().join("db.sqlite");
    let mut conn = sessiondb::db::open(&db).unwrap();
    let s = run_sync(&mut conn, &root);
    assert_eq!((s.new, s.entries_added), (2, 2));
    let s = run_sync(&mut conn, &root);
    assert_eq!((s.unchanged, s.entries_added), (2, 0));
    append(&elsewhere, &format!("{}\n", line("l0000002", Some("l0000001"), "through the link")));
    let s = run_sync(&mut conn, &root);
    assert_eq!((s.grown, s.unchanged, s.entries_added), (1, 1, 1));
    append(&plain, &format!("{}\n", line("p0000002", Some("p0000001"), "in place")));
    let s = run_sync(&mut conn, &root);
    assert_eq!((s.grown, s.unchanged, s.entries_added), (1, 1, 1));
    assert_equals_fresh_import(&db, &root, "linked and plain");
}
