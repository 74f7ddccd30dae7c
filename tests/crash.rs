//! SIGKILL at random points: during `import` of a large directory and during `rpc` appends.
//! After every kill the database passes `integrity_check`, holds only whole sessions and
//! whole entries, and `check` finds nothing; rerunning the import converges to the database
//! an uninterrupted import makes; every acknowledged append is there exactly once.
//!
//! The kill points come from a seeded generator: `SESSIONDB_CRASH_SEED` repeats a run (the
//! seed is printed when a test fails).

mod common;

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const KILLS: usize = 20;

/// xorshift64*: enough randomness for kill points, reproducible from the seed.
struct Rng(u64);

impl Rng {
    fn new() -> (Self, u64) {
        let seed = std::env::var("SESSIONDB_CRASH_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
        });
        (Rng(seed | 1), seed)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Writes `files` clean v3 sessions (branches, compactions keeping an ancestor, labels on
/// existing entries) of varied sizes below `dir`, in two project folders.
fn write_sessions(dir: &Path, files: usize, rng: &mut Rng) -> usize {
    let mut total = 0;
    for f in 0..files {
        let project = dir.join(if f % 2 == 0 { "--home-u-a--" } else { "--home-u-b--" });
        std::fs::create_dir_all(&project).unwrap();
        let n = 50 + rng.below(600) as usize;
        let sid = format!("0190{f:04x}-0000-7000-8000-{:012x}", rng.next() & 0xffff_ffff_ffff);
        let mut text = format!(
            r#"{{"type":"session","version":3,"id":"{sid}","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/home/u/{}"}}"#,
            if f % 2 == 0 { "a" } else { "b" }
        );
        text.push('\n');
        for i in 0..n {
            let id = format!("{f:04x}{i:04x}");
            // Mostly a chain, sometimes a branch from an earlier entry.
            let parent = match i {
                0 => "null".to_string(),
                _ if rng.below(10) == 0 => format!("\"{f:04x}{:04x}\"", rng.below(i as u64)),
                _ => format!("\"{f:04x}{:04x}\"", i - 1),
            };
            let ts = format!("2025-01-01T00:{:02}:{:02}.000Z", (i / 60) % 60, i % 60);
            let line = match i % 17 {
                16 if i > 20 => format!(
                    // Keeps from its own id: "keep nothing", always valid.
                    r#"{{"type":"compaction","id":"{id}","parentId":{parent},"timestamp":"{ts}","summary":"summary {i}","firstKeptEntryId":"{id}","tokensBefore":{i}}}"#
                ),
                9 => format!(
                    r#"{{"type":"label","id":"{id}","parentId":{parent},"timestamp":"{ts}","targetId":"{f:04x}{:04x}","label":"l{i}"}}"#,
                    rng.below(i as u64)
                ),
                k => {
                    let role = if k % 2 == 0 { "user" } else { "assistant" };
                    let body = "word ".repeat(1 + rng.below(40) as usize);
                    format!(
                        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"{ts}","message":{{"role":"{role}","content":"{body}{i}","timestamp":{}}}}}"#,
                        1_735_689_600_000u64 + i as u64
                    )
                }
            };
            text.push_str(&line);
            text.push('\n');
        }
        total += n;
        std::fs::write(project.join(format!("2025-01-01T00-00-00-000Z_{sid}.jsonl")), text).unwrap();
    }
    total
}

fn import_cmd(db: &Path, dir: &Path, force: bool) -> Command {
    let mut c = common::bin();
    c.arg("--db").arg(db).arg("import").arg(dir).stdout(Stdio::null()).stderr(Stdio::null());
    if force {
        c.arg("--force");
    }
    c
}

/// Integrity, then every stored session is whole (as many entries as a fresh import of its
/// file gives, and as many lines as its counters say), then `check` is clean.
fn assert_whole(db: &Path, expected: &HashMap<String, i64>, context: &str) -> usize {
    let conn = rusqlite::Connection::open(db).unwrap();
    let ok: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(ok, "ok", "{context}");
    // Killed while creating the database: the file exists, its schema is not there yet (the
    // next run creates it). Nothing was imported.
    let has_schema: bool = conn
        .query_row("SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'sessions')", [], |r| r.get(0))
        .unwrap();
    if !has_schema {
        return 0;
    }
    let mut st = conn
        .prepare(
            "SELECT s.path, s.entry_count, (SELECT count(*) FROM entries e WHERE e.session = s.sid) FROM sessions s",
        )
        .unwrap();
    let rows: Vec<(String, i64, i64)> =
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect();
    for (path, count, lines) in &rows {
        assert_eq!(Some(count), expected.get(path), "{context}: {path} is not whole");
        assert_eq!(count, lines, "{context}: {path}: counters and lines differ");
    }
    drop(st);
    let report = sessiondb::check::check_all(&sessiondb::db::Db::from_sqlite(conn), |_| {}).unwrap();
    assert!(report.is_clean(), "{context}: {:?}", report.problems);
    rows.len()
}

/// Every file `export --all` writes, by path below the output folder.
fn export_tree(db: &Path, out: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let (code, _, err) = common::run(db, &["export", "--all", "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    common::read_tree(out)
}

#[test]
fn sigkill_during_import_leaves_whole_sessions_and_a_rerun_converges() {
    let (mut rng, seed) = Rng::new();
    eprintln!("SESSIONDB_CRASH_SEED={seed}");
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("sessions");
    let entries = write_sessions(&input, 60, &mut rng);

    // The reference: an uninterrupted import, and what each file holds.
    let reference = dir.path().join("reference.sqlite");
    let start = Instant::now();
    let status = import_cmd(&reference, &input, false).status().unwrap();
    let full = start.elapsed();
    assert!(status.success());
    let expected: HashMap<String, i64> = {
        let conn = rusqlite::Connection::open(&reference).unwrap();
        let mut st = conn.prepare("SELECT path, entry_count FROM sessions").unwrap();
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect();
        rows
    };
    assert_eq!(expected.values().sum::<i64>() as usize, entries);
    assert_eq!(assert_whole(&reference, &expected, "reference"), 60);
    let start = Instant::now();
    assert!(import_cmd(&reference, &input, true).status().unwrap().success());
    let forced = start.elapsed();

    let db = dir.path().join("crashed.sqlite");
    let files: Vec<PathBuf> = expected.keys().map(PathBuf::from).collect();
    let mut interrupted = 0;
    for kill in 0..KILLS {
        // After the first run, the work is re-importing: everything (--force), or the files
        // whose modification time changed (a random half), so kills land in replacements.
        let force = kill > 0 && rng.below(2) == 0;
        if kill > 0 && !force {
            let now = std::time::SystemTime::now() + Duration::from_secs(kill as u64);
            for f in files.iter().filter(|_| rng.below(2) == 0) {
                std::fs::File::options().write(true).open(f).unwrap().set_modified(now).unwrap();
            }
        }
        let mut child = import_cmd(&db, &input, force).spawn().unwrap();
        // Within the time this run's work takes: all files, or about half of them.
        let work = match (kill, force) {
            (0, _) => full,
            (_, true) => forced,
            (_, false) => forced / 2,
        };
        let at = Duration::from_millis(rng.below(work.as_millis() as u64 * 9 / 10));
        std::thread::sleep(at);
        let finished = child.try_wait().unwrap().is_some();
        child.kill().ok();
        child.wait().unwrap();
        interrupted += usize::from(!finished);
        if !db.exists() {
            continue; // killed before the database was created
        }
        let context = format!("seed {seed}, kill {kill} at {at:?} (force {force}, finished {finished})");
        assert_whole(&db, &expected, &context);
    }
    eprintln!("{interrupted} of {KILLS} imports were killed before they finished (a full import takes {full:?}, a forced one {forced:?})");
    assert!(interrupted >= KILLS / 4, "seed {seed}: kills should land during imports");

    // Rerunning completes the work: the same sessions, exported byte for byte the same.
    assert!(import_cmd(&db, &input, false).status().unwrap().success());
    assert_eq!(assert_whole(&db, &expected, "after the rerun"), 60);
    let a = export_tree(&reference, &dir.path().join("export-reference"));
    let b = export_tree(&db, &dir.path().join("export-crashed"));
    assert_eq!(a.len(), 60);
    assert!(a == b, "seed {seed}: the exports differ");
}

/// A running `sessiondb rpc` with a thread collecting its responses.
struct Rpc {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    responses: std::sync::mpsc::Receiver<String>,
}

impl Rpc {
    fn start(db: &Path) -> Rpc {
        let mut child = common::bin()
            .arg("--db")
            .arg(db)
            .arg("rpc")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, responses) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Rpc { child, stdin, responses }
    }

    fn call(&mut self, request: &str) -> serde_json::Value {
        writeln!(self.stdin, "{request}").unwrap();
        let line = self.responses.recv_timeout(Duration::from_secs(30)).expect("a response");
        serde_json::from_str(&line).unwrap()
    }
}

#[test]
fn sigkill_during_rpc_appends_keeps_every_acknowledged_entry_once() {
    let (mut rng, seed) = Rng::new();
    eprintln!("SESSIONDB_CRASH_SEED={seed}");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    let sessions = dir.path().join("sessions");

    // The session: created and persisted by a first append.
    let mut rpc = Rpc::start(&db);
    let created = rpc
        .call(&format!(r#"{{"id":0,"method":"create","params":["/home/u/crash",{:?}]}}"#, sessions.to_str().unwrap()));
    let file = created["result"]["sessionFile"].as_str().unwrap().to_string();
    let first =
        rpc.call(r#"{"id":1,"method":"appendMessage","params":[{"role":"user","content":"start","timestamp":1}]}"#);
    let mut acknowledged: Vec<String> = vec![first["result"].as_str().unwrap().to_string()];
    drop(rpc.stdin);
    rpc.child.wait().unwrap();

    let mut in_flight_committed = 0;
    for kill in 0..KILLS {
        let mut rpc = Rpc::start(&db);
        let opened = rpc.call(&format!(r#"{{"id":"open","method":"open","params":[{file:?}]}}"#));
        assert!(opened.get("result").is_some(), "{opened}");
        // Requests are written ahead of the responses (a writer thread), so the kill lands
        // with appends queued, in progress and answered.
        let mut stdin = rpc.stdin;
        let writer = std::thread::spawn(move || {
            for i in 0..100_000u32 {
                let role = if i % 2 == 0 { "user" } else { "assistant" };
                let req = format!(
                    r#"{{"id":{i},"method":"appendMessage","params":[{{"role":"{role}","content":"round {kill} message {i}","timestamp":{i}}}]}}"#
                );
                if writeln!(stdin, "{req}").is_err() {
                    break;
                }
            }
        });
        let at = Duration::from_millis(20 + rng.below(300));
        std::thread::sleep(at);
        rpc.child.kill().ok();
        rpc.child.wait().unwrap();
        writer.join().unwrap();
        // Responses that reached us before the kill are acknowledged appends.
        let mut acked_now = 0;
        while let Ok(line) = rpc.responses.recv_timeout(Duration::from_millis(200)) {
            // A line cut by the kill was never received whole: not acknowledged.
            let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else { continue };
            let id = v["result"].as_str().unwrap_or_else(|| panic!("append failed: {v}"));
            acknowledged.push(id.to_string());
            acked_now += 1;
        }

        let context = format!("seed {seed}, kill {kill} at {at:?} after {acked_now} acknowledged appends");
        // Opening the database settles the appends the killed process left in its journal.
        let conn = sessiondb::db::open(&db).unwrap();
        assert!(!sessiondb::internals::journal::has_pending(&db), "{context}: the journal is settled");
        let ok: String = conn.sqlite().query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
        assert_eq!(ok, "ok", "{context}");
        let (sid, count): (i64, i64) = conn
            .sqlite()
            .query_row("SELECT sid, entry_count FROM sessions WHERE path = ?1", [&file], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap();
        let mut st = conn
            .sqlite()
            .prepare("SELECT id, sessiondb_line(body, body_dict) FROM entries WHERE session = ?1 ORDER BY key")
            .unwrap();
        let stored: Vec<(String, String)> =
            st.query_map([sid], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect();
        assert_eq!(stored.len() as i64, count, "{context}: counters and rows differ");
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (id, body) in &stored {
            *seen.entry(id.as_str()).or_default() += 1;
            assert!(matches!(sessiondb::json::scan_object(body.as_bytes()), Ok(Some(_))), "{context}: partial row");
        }
        for id in &acknowledged {
            assert_eq!(seen.get(id.as_str()), Some(&1), "{context}: acknowledged entry {id}");
        }
        assert!(stored.len() >= acknowledged.len(), "{context}");
        in_flight_committed += stored.len() - acknowledged.len();
        // What was committed but not yet answered counts as acknowledged from now on.
        let known: std::collections::HashSet<&String> = acknowledged.iter().collect();
        let extra: Vec<String> = stored.iter().map(|(id, _)| id).filter(|id| !known.contains(id)).cloned().collect();
        acknowledged.extend(extra);
        let report = sessiondb::check::check_all(&conn, |_| {}).unwrap();
        assert!(report.is_clean(), "{context}: {:?}", report.problems);
    }
    eprintln!(
        "{} entries after {KILLS} kills; {in_flight_committed} were committed but killed before their answer",
        acknowledged.len()
    );
    assert!(acknowledged.len() > KILLS, "appends happened");
}
