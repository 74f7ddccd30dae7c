//! SessionManager behaviour over the database: lazy persistence, failed writes, branched
//! sessions, forks, several processes at once.

mod common;

use sessiondb::json::{parse, Value};
use sessiondb::manager::{NewSessionOptions, SessionManager};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

/// Tests that set PI_CODING_AGENT_DIR run one at a time.
static ENV: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn v(s: &str) -> Value {
    parse(s.as_bytes()).unwrap()
}

fn user(text: &str) -> Value {
    v(&format!(r#"{{"role":"user","content":{},"timestamp":1}}"#, sessiondb::json::quote(text)))
}

fn count(db: &std::path::Path, sql: &str) -> i64 {
    let c = rusqlite::Connection::open(db).unwrap();
    c.query_row(sql, [], |r| r.get(0)).unwrap()
}

fn export_lines(db: &std::path::Path, path: &str) -> Vec<serde_json::Value> {
    let (code, out, err) = common::run(db, &["export", path]);
    assert_eq!(code, 0, "{err}");
    out.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// A temporary pi agent directory (`PI_CODING_AGENT_DIR`, held for the test) and a database
/// path inside it.
fn agent_home() -> (tempfile::TempDir, std::path::PathBuf, std::sync::MutexGuard<'static, ()>) {
    let env = ENV.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    std::env::set_var("PI_CODING_AGENT_DIR", dir.path().join("agent"));
    (dir, db, env)
}

#[test]
fn a_session_without_conversation_leaves_no_rows() {
    let (_dir, db, _env) = agent_home();
    let mut m = SessionManager::create(&db, "/home/u/p", None, NewSessionOptions::default()).unwrap();
    m.append_model_change(Some(v("\"anthropic\"")), Some(v("\"claude\""))).unwrap();
    m.append_thinking_level_change(Some(v("\"high\""))).unwrap();
    m.append_message(v(r#"{"role":"system","content":"sys","timestamp":0}"#)).unwrap();
    assert!(!m.is_saved());
    assert_eq!(m.entries().unwrap().len(), 3, "the entries are there in memory");
    assert_eq!(count(&db, "SELECT count(*) FROM sessions"), 0);
    assert_eq!(count(&db, "SELECT count(*) FROM entries"), 0);
    drop(m);
    assert_eq!(count(&db, "SELECT count(*) FROM sessions"), 0, "closing without chatting leaves nothing");

    let mut m = SessionManager::create(&db, "/home/u/p", None, NewSessionOptions::default()).unwrap();
    m.append_model_change(Some(v("\"anthropic\"")), Some(v("\"claude\""))).unwrap();
    let first = m.append_message(user("hello")).unwrap();
    assert!(m.is_saved());
    assert_eq!(count(&db, "SELECT count(*) FROM entries"), 2, "header and all entries are written at once");
    m.append_message(user("again")).unwrap();
    assert_eq!(m.entries().unwrap().len(), 3, "then every append is written (through the journal)");
    assert_eq!(count(&db, "SELECT count(*) FROM entries"), 3);
    let lines = export_lines(&db, m.session_file().unwrap());
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[2]["id"], first.as_str());
    assert_eq!(lines[3]["parentId"], first.as_str());
    // Key order as pi writes it.
    let text = common::run(&db, &["export", m.session_file().unwrap()]).1;
    assert!(text.lines().nth(2).unwrap().starts_with(r#"{"type":"message","id":""#), "{text}");
    assert!(text.lines().next().unwrap().starts_with(r#"{"type":"session","version":3,"id":""#));
}

#[test]
fn a_failed_write_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    let mut m =
        SessionManager::create(&db, "/p", Some(dir.path().to_str().unwrap()), NewSessionOptions::default()).unwrap();
    // Make the database refuse one particular line, as a full disk would.
    drop(sessiondb::db::open(&db).unwrap());
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER refuse BEFORE INSERT ON entries WHEN sessiondb_line(NEW.body, NEW.body_dict) LIKE '%boom%' \
             BEGIN SELECT RAISE(ABORT, 'simulated write failure'); END;",
        )
        .unwrap();
    // The first message saves the session: header and entry in one transaction.
    let err = m.append_message(user("boom")).unwrap_err();
    assert!(err.to_string().contains("simulated write failure"), "{err}");
    assert_eq!(m.leaf_id(), None, "the leaf did not move");
    assert!(!m.is_saved());
    assert_eq!(count(&db, "SELECT count(*) FROM sessions"), 0);
    let a = m.append_message(user("one")).unwrap();
    assert_eq!(count(&db, "SELECT message_count FROM sessions"), 1);

    // Later appends go to the journal: when it cannot be written, nothing changes either.
    let journal = sessiondb::internals::journal::path_for(&db);
    std::fs::create_dir(&journal).unwrap();
    let err = m.append_message(user("two")).unwrap_err();
    assert!(err.to_string().contains("-appends"), "the error names the journal: {err}");
    assert_eq!(m.leaf_id(), Some(a.as_str()), "the leaf did not move");
    assert_eq!(m.entries().unwrap().len(), 1);
    std::fs::remove_dir(&journal).unwrap();
    let b = m.append_message(user("three")).unwrap();
    assert_eq!(m.entry(&b).unwrap().unwrap().as_object().unwrap().get("parentId").unwrap().as_str(), Some(a.as_str()));
    assert_eq!(count(&db, "SELECT message_count FROM sessions"), 2, "statistics follow");
}

#[test]
fn branched_sessions_drop_label_entries_and_rethread_labels() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    let sd = dir.path().to_str().unwrap();
    let mut m = SessionManager::create(&db, "/p", Some(sd), NewSessionOptions::default()).unwrap();
    let u1 = m.append_message(user("u1")).unwrap();
    let l1 = m.append_label_change(&u1, Some(v("\"first\""))).unwrap();
    let u2 = m.append_message(user("u2")).unwrap();
    m.append_label_change(&u2, Some(v("\"second\""))).unwrap();
    m.append_label_change(&u1, Some(v("\"first, renamed\""))).unwrap(); // keeps its place
    let lbl_on_label = m.append_label_change(&l1, Some(v("\"on a label\""))).unwrap();
    let _ = lbl_on_label;
    let c = m
        .append_compaction(Some(v("\"sum\"")), Some(Value::String(l1.as_str().into())), Some(v("5")), None, None, None)
        .unwrap();
    let u3 = m.append_message(user("u3")).unwrap();
    let old_file = m.session_file().unwrap().to_string();
    let label_ts: Vec<String> = m
        .entries()
        .unwrap()
        .iter()
        .filter_map(|e| e.as_object())
        .filter(|e| e.get("type").and_then(Value::as_str) == Some("label"))
        .map(|e| e.get("timestamp").unwrap().as_str().unwrap().to_string())
        .collect();

    let new_file = m.create_branched_session(Some(&u3)).unwrap().unwrap();
    assert_ne!(new_file, old_file);
    let lines = export_lines(&db, &new_file);
    assert_eq!(lines[0]["parentSession"], old_file.as_str());
    let entries = &lines[1..];
    let kinds: Vec<&str> = entries.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["message", "message", "compaction", "message", "label", "label"]);
    // Re-chained without the label entries.
    assert_eq!(entries[0]["parentId"], serde_json::Value::Null);
    assert_eq!(entries[1]["parentId"], u1.as_str());
    assert_eq!(entries[2]["parentId"], u2.as_str());
    assert_eq!(entries[2]["id"], c.as_str());
    assert_eq!(entries[2]["firstKeptEntryId"], u2.as_str(), "pointed at a dropped label: now the next kept entry");
    assert_eq!(entries[3]["id"], u3.as_str());
    // Labels re-emitted in the order first set, with their latest text and timestamp.
    assert_eq!(
        (&entries[4]["targetId"], &entries[4]["label"]),
        (&serde_json::json!(u1), &serde_json::json!("first, renamed"))
    );
    assert_eq!(entries[4]["timestamp"], label_ts[2].as_str());
    assert_eq!(entries[4]["parentId"], u3.as_str());
    assert_eq!((&entries[5]["targetId"], &entries[5]["label"]), (&serde_json::json!(u2), &serde_json::json!("second")));
    assert_eq!(entries[5]["parentId"], entries[4]["id"]);
    // The manager switched to the new session.
    assert_eq!(m.session_file(), Some(new_file.as_str()));
    assert_eq!(m.label(&u1).and_then(Value::as_str), Some("first, renamed"));
    assert_eq!(m.leaf_id(), entries[5]["id"].as_str());
}

#[test]
fn fork_from_copies_every_entry_into_another_cwd() {
    let (dir, db, _env) = agent_home();
    let (file, g) = common::golden("x-labels.jsonl");
    let mut src = SessionManager::open(&db, file.to_str().unwrap(), None, None).unwrap();
    let src_entries = src.entries().unwrap();
    let mut f =
        SessionManager::fork_from(&db, file.to_str().unwrap(), "/srv/other:proj", None, NewSessionOptions::default())
            .unwrap();
    assert!(f.is_saved(), "a fork is written at once");
    assert_eq!(f.cwd(), "/srv/other:proj");
    let fork_file = f.session_file().unwrap().to_string();
    assert!(fork_file.contains("/agent/sessions/--srv-other-proj--/"), "{fork_file}");
    let header = f.header().unwrap();
    assert_eq!(header.as_object().unwrap().get("parentSession").and_then(Value::as_str), file.to_str());
    assert_eq!(f.entries().unwrap(), src_entries);
    assert_eq!(f.leaf_id(), g["leafId"].as_str());
    // Both go on independently.
    let a = f.append_message(user("in the fork")).unwrap();
    assert!(src.entry(&a).unwrap().is_none());
    src.append_message(user("in the source")).unwrap();
    assert_eq!(f.entries().unwrap().len(), src_entries.len() + 1);
    let lines = export_lines(&db, &fork_file);
    let source_text = std::fs::read_to_string(file).unwrap();
    for (ours, theirs) in lines[1..].iter().zip(source_text.lines().skip(1)) {
        assert_eq!(ours, &serde_json::from_str::<serde_json::Value>(theirs).unwrap());
    }
    // An invalid source is pi's error.
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "nope\n").unwrap();
    let err =
        SessionManager::fork_from(&db, bad.to_str().unwrap(), "/x", None, NewSessionOptions::default()).err().unwrap();
    assert!(err.to_string().starts_with("Cannot fork: source session file is empty or invalid: "), "{err}");
}

#[test]
fn forks_share_lines_and_keep_them_when_the_source_goes() {
    let (_dir, db, _env) = agent_home();
    let (file, _) = common::golden("x-labels.jsonl");
    let source = file.to_str().unwrap();
    let a = SessionManager::fork_from(&db, source, "/srv/a", None, NewSessionOptions::default()).unwrap();
    let a_file = a.session_file().unwrap().to_string();
    let b = SessionManager::fork_from(&db, &a_file, "/srv/b", None, NewSessionOptions::default()).unwrap();
    let b_file = b.session_file().unwrap().to_string();
    // A branched session of the source shares the lines it does not change.
    let mut m = SessionManager::open(&db, source, None, None).unwrap();
    let leaf = m.leaf_id().unwrap().to_string();
    let c_file = m.create_branched_session(Some(&leaf)).unwrap().unwrap();
    drop((a, b, m));
    let conn = sessiondb::db::open(&db).unwrap();
    let sid = |path: &str| -> sessiondb::SessionKey {
        conn.sqlite().query_row("SELECT sid FROM sessions WHERE path = ?1", [path], |r| r.get(0)).unwrap()
    };
    let (src, fa, fb, fc) = (sid(source), sid(&a_file), sid(&b_file), sid(&c_file));
    // (rows, rows holding their own line, rows sharing a line of the source itself)
    let sharing = |s: sessiondb::SessionKey| -> (i64, i64, i64) {
        conn.sqlite()
            .query_row(
                "SELECT count(*), count(*) FILTER (WHERE body_key IS NULL AND body <> ''), \
             count(*) FILTER (WHERE body_key >> 32 = ?2) FROM entries WHERE session = ?1",
                [s, src],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap()
    };
    // Lines typed "session" (a second header) are not copied.
    let n: i64 = conn
        .sqlite()
        .query_row("SELECT count(*) FROM entries WHERE session = ?1 AND type IS NOT 'session'", [src], |r| r.get(0))
        .unwrap();
    assert!(n > 5);
    // Both forks point at the lines of the source (a fork of a fork too: no chains).
    assert_eq!(sharing(fa), (n, 0, n));
    assert_eq!(sharing(fb), (n, 0, n));
    let export = |s: sessiondb::SessionKey| {
        let mut out = Vec::new();
        sessiondb::export::write_session(&conn, s, &mut out).unwrap();
        out
    };
    let (before_a, before_b, before_c) = (export(fa), export(fb), export(fc));
    // Each row's list text, and how many copies store their own (V24: none; the holder's is
    // read through `text_parts`).
    let list_texts = |s: sessiondb::SessionKey| -> (Vec<Option<String>>, i64) {
        let texts = conn
            .sqlite()
            .prepare("SELECT list_text FROM text_parts WHERE session = ?1 ORDER BY key")
            .unwrap()
            .query_map([s], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let stored = conn
            .sqlite()
            .query_row(
                "SELECT count(*) FROM texts t JOIN entries e ON e.key = t.key \
                 WHERE t.session = ?1 AND e.body_key IS NOT NULL AND t.list_text <> ''",
                [s],
                |r| r.get(0),
            )
            .unwrap();
        (texts, stored)
    };
    let (source_texts, _) = list_texts(src);
    assert!(source_texts.iter().flatten().count() > 2, "{source_texts:?}");
    assert_eq!(list_texts(fa), (source_texts.clone(), 0));
    assert_eq!(list_texts(fb), (source_texts.clone(), 0));
    let texts_c = list_texts(fc).0;
    let (rows_c, own_c, shared_c) = sharing(fc);
    assert!(shared_c > 0 && own_c > 0 && shared_c + own_c == rows_c, "{:?}", sharing(fc));
    let source_text = std::fs::read(&file).unwrap();
    let body = |bytes: &[u8]| bytes.splitn(2, |&c| c == b'\n').nth(1).unwrap().to_vec();
    assert_eq!(body(&before_a), body(&source_text), "a fork's lines are the source's, byte for byte");
    // What `check` finds in the forks (the fixture has a label aimed at no entry) stays the same.
    let fork_problems = || {
        let (_, out, _) = common::run(&db, &["check", "--json"]);
        let report: serde_json::Value = serde_json::from_str(&out).unwrap();
        let mut kinds: Vec<String> = report["problems"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["sessionPath"] != source)
            .map(|p| format!("{} {}", p["sessionPath"], p["kind"]))
            .collect();
        kinds.sort();
        kinds
    };
    let problems = fork_problems();
    // Removing the source (as `sync --prune` or a re-import does) gives the forks their lines.
    conn.sqlite().execute(sessiondb::internals::sessions::DELETE_SESSION, [src]).unwrap();
    assert_eq!(sharing(fa), (n, n, 0));
    assert_eq!(sharing(fb), (n, n, 0));
    assert_eq!((export(fa), export(fb), export(fc)), (before_a, before_b, before_c));
    assert_eq!(sharing(fc), (rows_c, rows_c, 0));
    // ... and their list texts, stored now.
    assert_eq!(list_texts(fa), (source_texts.clone(), 0));
    assert_eq!(list_texts(fb), (source_texts, 0));
    assert_eq!(list_texts(fc).0, texts_c);
    let stored = |s: sessiondb::SessionKey| -> Vec<Option<String>> {
        conn.sqlite()
            .prepare("SELECT list_text FROM texts WHERE session = ?1 ORDER BY key")
            .unwrap()
            .query_map([s], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    assert_eq!(stored(fa), list_texts(fa).0);
    assert_eq!(stored(fc), texts_c);
    assert_eq!(fork_problems(), problems);
    // A copy pointing at a line that is not there is a finding.
    let (lo, hi) = sessiondb::internals::write::key_range(fb);
    conn.sqlite().execute("UPDATE entries SET body = '', body_key = ?1 WHERE key = ?2", [hi, lo + 1]).unwrap();
    let (code, out, _) = common::run(&db, &["check", "--json"]);
    assert_eq!(code, 1);
    assert!(out.contains("\"shared-line\""), "{out}");
}

fn rpc_process(db: &std::path::Path, agent: &std::path::Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_sessiondb"))
        .args(["--db", db.to_str().unwrap(), "rpc"])
        .env("PI_CODING_AGENT_DIR", agent)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn four_processes_append_while_others_import_and_sync() {
    const N: usize = 500;
    const W: usize = 4;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    let agent = dir.path().join("agent");
    sessiondb::db::open(&db).unwrap();
    // An import and a sync write to the same database meanwhile.
    let corpus = common::oracle().join("sessions");
    let importer = common::bin()
        .arg("--db")
        .arg(&db)
        .arg("import")
        .arg(&corpus)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let workers: Vec<_> = (0..W)
        .map(|w| {
            let (db, agent) = (db.clone(), agent.clone());
            std::thread::spawn(move || {
                let mut child = rpc_process(&db, &agent);
                let mut stdin = child.stdin.take().unwrap();
                let mut stdout = BufReader::new(child.stdout.take().unwrap());
                let mut line = String::new();
                writeln!(stdin, r#"{{"id":0,"method":"create","params":["/proc/{w}"]}}"#).unwrap();
                stdout.read_line(&mut line).unwrap();
                assert!(line.contains("\"result\""), "{line}");
                for i in 0..N {
                    writeln!(stdin, r#"{{"id":{i},"method":"appendMessage","params":[{{"role":"user","content":"w{w} m{i}","timestamp":1}}]}}"#)
                        .unwrap();
                    line.clear();
                    stdout.read_line(&mut line).unwrap();
                    assert!(line.contains("\"result\""), "worker {w} append {i}: {line}");
                }
                drop(stdin);
                assert!(child.wait().unwrap().success());
            })
        })
        .collect();
    let syncer = common::bin().arg("--db").arg(&db).args(["sync", "--sessions-dir"]).arg(&corpus).output().unwrap();
    for w in workers {
        w.join().unwrap();
    }
    let importer = importer.wait_with_output().unwrap();
    for out in [&importer, &syncer] {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("locked") && !err.contains("busy"), "{err}");
    }
    let appended = "SELECT count(*) FROM entries e JOIN sessions s ON s.sid = e.session WHERE s.cwd LIKE '/proc/%'";
    assert_eq!(count(&db, "SELECT count(*) FROM sessions WHERE cwd LIKE '/proc/%'"), W as i64);
    assert_eq!(count(&db, appended), (W * N) as i64, "every append present");
    let distinct =
        "SELECT count(DISTINCT e.body) FROM entries e JOIN sessions s ON s.sid = e.session WHERE s.cwd LIKE '/proc/%'";
    assert_eq!(count(&db, distinct), (W * N) as i64, "none twice");
    let ok: String =
        rusqlite::Connection::open(&db).unwrap().query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(ok, "ok");
}

#[test]
fn rpc_survives_bad_requests() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    let mut child = rpc_process(&db, &dir.path().join("agent"));
    let mut stdin = child.stdin.take().unwrap();
    let input = concat!(
        "not json\n",
        "[1,2]\n",
        r#"{"id":"a","method":"getLeafId"}"#,
        "\n",
        r#"{"id":"b","method":"nope","params":[]}"#,
        "\n",
        r#"{"id":"c","method":"inMemory","params":["/tmp/x"]}"#,
        "\n",
        r#"{"id":"d","method":"appendContextEdit","params":["x",{"content":5}]}"#,
        "\n",
        r#"{"id":"e","method":"branch","params":["missing"]}"#,
        "\n",
        r#"{"id":"f","method":"create","params":["/p",null,{"id":"../../etc/passwd"}]}"#,
        "\n",
        r#"{"id":"g","method":"getEntryCount","params":[]}"#,
        "\n",
    );
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let lines: Vec<serde_json::Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 9);
    assert!(lines[0]["error"]["message"].as_str().unwrap().starts_with("invalid JSON"));
    assert!(lines[2]["error"]["message"].as_str().unwrap().contains("no current session"));
    assert_eq!(lines[3]["error"]["message"], "unknown method: nope");
    assert_eq!(lines[4]["result"]["cwd"], "/tmp/x");
    assert_eq!(lines[4]["result"]["sessionFile"], serde_json::Value::Null);
    assert_eq!(lines[5]["error"]["message"], "Context edit replacement must be null or contain string/array content");
    assert_eq!(lines[6]["error"]["message"], "Entry missing not found");
    assert!(lines[7]["error"]["message"].as_str().unwrap().starts_with("Session id must be non-empty"));
    assert_eq!(lines[8]["result"], 0);
}

/// Managers reuse the process's idle connections to a database, but never one to a file that
/// has since been deleted or replaced at the same path.
#[test]
fn reused_connections_follow_the_file_not_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    let sessions = dir.path().join("sessions").to_string_lossy().into_owned();
    for round in 0..3 {
        let mut m = SessionManager::create(&db, "/home/u/p", Some(&sessions), NewSessionOptions::default()).unwrap();
        m.append_message(user(&format!("round {round}"))).unwrap();
        drop(m); // its connection goes back to the pool
        assert_eq!(count(&db, "SELECT count(*) FROM sessions"), 1, "round {round}: the write is in the file at {db:?}");
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
        }
        // A new database appears at the same path before the next manager opens it.
        drop(sessiondb::db::open(&db).unwrap());
    }
    // Without replacing the file, appends from successive managers all land in it.
    for round in 0..3 {
        let mut m = SessionManager::create(&db, "/home/u/p", Some(&sessions), NewSessionOptions::default()).unwrap();
        m.append_message(user(&format!("kept {round}"))).unwrap();
    }
    assert_eq!(count(&db, "SELECT count(*) FROM sessions"), 3);
}

/// Appends of a saved session go to the append journal and reach the tables when the manager
/// reads, every `journal::BATCH` appends, when it is dropped, or when anyone opens the
/// database. Settling twice (a crash between the commit and the journal's truncation) writes
/// nothing twice.
#[test]
fn journaled_appends_settle_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    let sessions = dir.path().join("sessions").to_string_lossy().into_owned();
    let journal = sessiondb::internals::journal::path_for(&db);
    let mut m = SessionManager::create(&db, "/home/u/p", Some(&sessions), NewSessionOptions::default()).unwrap();
    m.append_message(user("first")).unwrap(); // saves the session: header and entry
    assert_eq!(count(&db, "SELECT count(*) FROM entries"), 1);
    let mut ids = Vec::new();
    for i in 0..10 {
        ids.push(m.append_message(user(&format!("journaled {i}"))).unwrap());
    }
    assert_eq!(count(&db, "SELECT count(*) FROM entries"), 1, "the appends wait in the journal");
    assert!(std::fs::metadata(&journal).unwrap().len() > 0);
    let saved = std::fs::read(&journal).unwrap();
    // A read through the manager settles them first.
    assert_eq!(m.get_branch(None).unwrap().len(), 11);
    assert_eq!(count(&db, "SELECT count(*) FROM entries"), 11);
    assert_eq!(std::fs::metadata(&journal).unwrap().len(), 0);

    // The same records again, as if a crash had cut the truncation short: skipped.
    std::fs::write(&journal, &saved).unwrap();
    assert_eq!(sessiondb::internals::journal::settle(&sessiondb::db::open(&db).unwrap(), &db).unwrap(), 0);
    assert_eq!(count(&db, "SELECT count(*) FROM entries"), 11);

    // A batch settles on its own; the rest when the manager is dropped.
    for i in 0..sessiondb::internals::journal::BATCH + 5 {
        m.append_message(user(&format!("batch {i}"))).unwrap();
    }
    assert_eq!(count(&db, "SELECT count(*) FROM entries"), 11 + sessiondb::internals::journal::BATCH as i64);
    let file = m.session_file().unwrap().to_string();
    drop(m);
    let total = 11 + sessiondb::internals::journal::BATCH as i64 + 5;
    assert_eq!(count(&db, "SELECT count(*) FROM entries"), total);

    // A writer that never settles (killed): the next open of the database does it, with the
    // session's counters and the parent chain as if each append had been written directly.
    let mut m = SessionManager::open(&db, &file, None, None).unwrap();
    let last = m.append_message(user("left in the journal")).unwrap();
    std::mem::forget(m);
    assert_eq!(count(&db, "SELECT count(*) FROM entries"), total, "still journaled");
    let conn = sessiondb::db::open(&db).unwrap();
    let (entries, messages): (i64, i64) = conn
        .sqlite()
        .query_row("SELECT entry_count, message_count FROM sessions WHERE path = ?1", [&file], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!((entries, messages), (total + 1, total + 1));
    let m = SessionManager::open(&db, &file, None, None).unwrap();
    assert_eq!(m.leaf_id(), Some(last.as_str()));
    assert_eq!(m.get_branch(None).unwrap().len() as i64, total + 1, "every append chained to the one before");
    let text = common::run(&db, &["check"]);
    assert_eq!(text.0, 0, "{text:?}");
}

/// A source session's lines after its header (`n` is appended to every entry id; the first
/// entry's parent is `first_parent`): lines in JSON.stringify form and lines that are not
/// (spaced out, escapes pi would not write, integer-like keys, numbers written otherwise),
/// labels, a session name, a compaction and setting changes. Its leaf is `u6{n}`.
fn branch_source_lines(n: &str, first_parent: Option<&str>) -> Vec<String> {
    let asst = |id: &str, parent: &str, text: &str, extra: &str| {
        format!(
            r#"{{"type":"message","id":"{id}{n}","parentId":"{parent}{n}","timestamp":"2026-01-01T00:00:0{}.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}],"provider":"p","model":"m","usage":{{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{{"input":0.001,"output":0.5,"cacheRead":0,"cacheWrite":0,"total":0.501}}}},"stopReason":"stop","timestamp":1767225601000{extra}}}}}"#,
            id.len()
        )
    };
    let user = |id: &str, parent: &str, text: &str| {
        format!(
            r#"{{"type":"message","id":"{id}{n}","parentId":"{parent}{n}","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"user","content":"{text} {n}","timestamp":1767225602000}}}}"#
        )
    };
    let first = first_parent.map_or("null".to_string(), |p| format!("\"{p}\""));
    let other = |line: &str| line.replace("{n}", n);
    vec![
        format!(
            r#"{{"type":"message","id":"u1{n}","parentId":{first},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"look in \/tmp","timestamp":1767225600000}}}}"#
        ),
        asst("a1", "u1", "plain and shared", ""),
        other(
            r#"{"type":"label","id":"l1{n}","parentId":"a1{n}","timestamp":"2026-01-01T00:00:03.000Z","targetId":"u1{n}","label":"start"}"#,
        ),
        user("u2", "l1", "after the label"),
        asst("a2", "u2", "spaced", "").replace(r#""stopReason":"stop""#, r#""stopReason": "stop""#),
        asst("a3", "a2", "integer keys", r#","details":{"b":1,"2":"x"}"#),
        asst("a4", "a3", "escaped \\u0041 and 1.50", r#","n":1.50"#),
        user("u3", "a4", "stringify form again"),
        asst("a5", "u3", "last", ""),
        other(
            r#"{"type":"session_info","id":"n1{n}","parentId":"a5{n}","timestamp":"2026-01-01T00:00:04.000Z","name":"  named {n} "}"#,
        ),
        // A run of shared lines holding a compaction and setting changes, then a run that
        // starts after a dropped label and refers to them.
        other(
            r#"{"type":"compaction","id":"c1{n}","parentId":"n1{n}","timestamp":"2026-01-01T00:00:05.000Z","summary":"so far","firstKeptEntryId":"u3{n}","tokensBefore":100}"#,
        ),
        other(
            r#"{"type":"thinking_level_change","id":"t1{n}","parentId":"c1{n}","timestamp":"2026-01-01T00:00:05.000Z","thinkingLevel":"high"}"#,
        ),
        user("u4", "t1", "after the compaction"),
        asst("a6", "u4", "kept", ""),
        other(
            r#"{"type":"label","id":"l2{n}","parentId":"a6{n}","timestamp":"2026-01-01T00:00:06.000Z","targetId":"a6{n}","label":"here"}"#,
        ),
        user("u5", "l2", "re-chained"),
        asst("a7", "u5", "in a new run", ""),
        other(
            r#"{"type":"model_change","id":"mc{n}","parentId":"a7{n}","timestamp":"2026-01-01T00:00:07.000Z","provider":"p","modelId":"m2"}"#,
        ),
        user("u6", "mc", "the leaf"),
    ]
}

/// The ids of the source lines of [`branch_source_lines`] that a branched session shares.
const BRANCH_SHARED: [&str; 11] = ["a1", "u3", "a5", "n1", "c1", "t1", "u4", "a6", "a7", "mc", "u6"];

/// Checks the branched session at `branched` made of the source lines `lines` (after the
/// header) in the database `db`: its entries are pi's lines (each path entry re-chained to
/// the one before, labels left out, written by JSON.stringify, then the labels re-attached to
/// their targets), it shares exactly the lines `shared` (ids, in order) and its rows are
/// those of an import of its own file (with what the import notes of each line's form when
/// `noted`: the source's rows were written with it).
fn assert_branched_as_pi_and_import(
    dir: &std::path::Path,
    db: &std::path::Path,
    lines: &[String],
    branched: &str,
    shared: &[String],
    noted: bool,
) {
    let mut got = export_lines(db, branched);
    let mut parent = serde_json::Value::Null;
    let mut want = Vec::new();
    let mut label_targets = Vec::new();
    for line in lines {
        let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["type"] == "label" {
            label_targets.push(v["targetId"].as_str().unwrap().to_string());
            continue;
        }
        v["parentId"] = parent.clone();
        parent = v["id"].clone();
        want.push(v);
    }
    let labels: Vec<_> = got.split_off(got.len() - label_targets.len());
    let targets: Vec<_> =
        labels.iter().map(|l| (l["type"].as_str().unwrap(), l["targetId"].as_str().unwrap())).collect();
    // pi re-emits the labels in the order they were set.
    let want_targets: Vec<_> = label_targets.iter().map(|t| ("label", t.as_str())).collect();
    assert_eq!(targets, want_targets);
    assert_eq!(got[1..], want[..]);
    // Shared lines are exactly the stored ones; the others were rewritten.
    let conn = sessiondb::db::open(db).unwrap();
    let sid = |p: &str| -> sessiondb::SessionKey {
        conn.sqlite().query_row("SELECT sid FROM sessions WHERE path = ?1", [p], |r| r.get(0)).unwrap()
    };
    let got_shared: Vec<String> = conn
        .sqlite()
        .prepare("SELECT id FROM entries WHERE session = ?1 AND body_key IS NOT NULL ORDER BY key")
        .unwrap()
        .query_map([sid(branched)], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(got_shared, shared);
    // The same rows as importing the branched session's own file.
    let text = sessiondb::db::open(db).map(|c| {
        let mut out = Vec::new();
        sessiondb::export::write_session(&c, sid(branched), &mut out).unwrap();
        out
    });
    let copy = dir.join("copy.jsonl");
    std::fs::write(&copy, text.unwrap()).unwrap();
    let fresh_db = dir.join("fresh.sqlite");
    drop(SessionManager::open(&fresh_db, copy.to_str().unwrap(), None, None).unwrap());
    let fresh = sessiondb::db::open(&fresh_db).unwrap();
    let derived = |c: &sessiondb::db::Db, s: sessiondb::SessionKey| -> Vec<String> {
        let mut out = Vec::new();
        let form = ["SELECT plain, activity_ms FROM entries WHERE session = ?1 ORDER BY key"];
        for sql in form.into_iter().filter(|_| noted).chain([
            "SELECT t.role, t.ts_ms, p.list_text FROM texts t JOIN text_parts p ON p.key = t.key \
             WHERE t.session = ?1 ORDER BY t.key",
            "SELECT entry_id, ts, ts_ms, provider, model, input, output, cache_read, cache_write, total, cost \
             FROM usage WHERE session = ?1 ORDER BY key",
            "SELECT name, message_count, first_message, last_activity_ms, entry_count, last_seq, tree_ok \
             FROM sessions WHERE sid = ?1",
            "SELECT upto_seq, text FROM list_texts WHERE sid = ?1",
            "SELECT seq, id, parent_id, type, ts, ts_ms, role, depth, parent_key & 4294967295, \
             compaction_key & 4294967295, thinking_key & 4294967295, model_key & 4294967295 \
             FROM entries WHERE session = ?1 ORDER BY key",
        ]) {
            let mut st = c.sqlite().prepare(sql).unwrap();
            let n = st.column_count();
            let rows = st
                .query_map([s], |r| {
                    Ok((0..n).map(|i| format!("{:?}", r.get_ref(i).unwrap())).collect::<Vec<_>>().join("|"))
                })
                .unwrap();
            out.extend(rows.map(Result::unwrap));
        }
        out
    };
    let fresh_sid: sessiondb::SessionKey =
        fresh.sqlite().query_row("SELECT sid FROM sessions", [], |r| r.get(0)).unwrap();
    let ours = derived(&conn, sid(branched));
    assert!(ours.len() > 20, "{ours:?}");
    assert_eq!(ours, derived(&fresh, fresh_sid));
    let check = common::run(db, &["check"]);
    assert_eq!(check.0, 0, "{check:?}");
}

const BRANCH_HEADER: &str = r#"{"type":"session","version":3,"id":"0193c1de-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;

#[test]
fn branched_sessions_hold_what_an_import_of_their_lines_holds() {
    // Lines in JSON.stringify form are shared with their search, usage and statistics rows
    // copied; the others (spaced out, escapes pi would not write, integer-like keys, numbers
    // written otherwise, re-chained past a label) are written again as pi writes them.
    let (dir, db, _env) = agent_home();
    let lines = branch_source_lines("", None);
    let file = dir.path().join("source.jsonl");
    std::fs::write(&file, format!("{BRANCH_HEADER}\n{}\n", lines.join("\n"))).unwrap();
    let mut m = SessionManager::open(&db, file.to_str().unwrap(), None, None).unwrap();
    let branched = m.create_branched_session(Some("u6")).unwrap().unwrap();
    drop(m);
    let shared: Vec<String> = BRANCH_SHARED.iter().map(|s| s.to_string()).collect();
    assert_branched_as_pi_and_import(dir.path(), &db, &lines, &branched, &shared, true);
}

#[test]
fn a_long_path_branches_as_a_short_one() {
    // A path of several thousand entries (several slices of rows, each read by one query and
    // copied in runs) gives what a short one gives, block by block.
    let (dir, db, _env) = agent_home();
    let blocks = 150;
    let mut lines = Vec::new();
    let mut shared = Vec::new();
    for b in 0..blocks {
        let n = format!("-{b}");
        let prev = (b > 0).then(|| format!("u6-{}", b - 1));
        lines.extend(branch_source_lines(&n, prev.as_deref()));
        shared.extend(BRANCH_SHARED.iter().map(|s| format!("{s}{n}")));
    }
    assert!(lines.len() > 2500, "several slices of rows");
    let file = dir.path().join("source.jsonl");
    std::fs::write(&file, format!("{BRANCH_HEADER}\n{}\n", lines.join("\n"))).unwrap();
    let mut m = SessionManager::open(&db, file.to_str().unwrap(), None, None).unwrap();
    let branched = m.create_branched_session(Some(&format!("u6-{}", blocks - 1))).unwrap().unwrap();
    drop(m);
    assert_branched_as_pi_and_import(dir.path(), &db, &lines, &branched, &shared, true);
}

/// Imports [`branch_source_lines`] into a new database; returns the temporary home, the
/// database, the file and the test lock.
fn branch_source() -> (tempfile::TempDir, std::path::PathBuf, String, Vec<String>, std::sync::MutexGuard<'static, ()>) {
    let (dir, db, env) = agent_home();
    let lines = branch_source_lines("", None);
    let file = dir.path().join("source.jsonl");
    std::fs::write(&file, format!("{BRANCH_HEADER}\n{}\n", lines.join("\n"))).unwrap();
    let (code, _, err) = common::run(&db, &["import", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    (dir, db, file.to_str().unwrap().to_string(), lines, env)
}

#[test]
fn lines_are_noted_plain_when_written() {
    // What the branch trusts: every line in JSON.stringify form is noted (with activity for
    // the user and assistant messages with content), and no other.
    let (_dir, db, _file, _lines, _env) = branch_source();
    let conn = sessiondb::db::open(&db).unwrap();
    let noted: Vec<(String, Option<i64>, Option<f64>)> = conn
        .sqlite()
        .prepare("SELECT id, plain, activity_ms FROM entries ORDER BY key")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let want: Vec<(String, Option<i64>, Option<f64>)> = [
        ("u1", None, None), // `\/` is not how JSON.stringify writes `/`
        ("a1", Some(2), Some(1767225601000.0)),
        ("l1", Some(1), None),
        ("u2", Some(2), None), // message.timestamp is the entry's time
        ("a2", None, None),
        ("a3", None, None),
        ("a4", None, None),
        ("u3", Some(2), None),
        ("a5", Some(2), Some(1767225601000.0)),
        ("n1", Some(1), None),
        ("c1", Some(1), None),
        ("t1", Some(1), None),
        ("u4", Some(2), None),
        ("a6", Some(2), Some(1767225601000.0)),
        ("l2", Some(1), None),
        ("u5", Some(2), None),
        ("a7", Some(2), Some(1767225601000.0)),
        ("mc", Some(1), None),
        ("u6", Some(2), None),
    ]
    .into_iter()
    .map(|(id, p, a)| (id.to_string(), p, a))
    .collect();
    assert_eq!(noted, want);
}

#[test]
fn rows_noted_plain_are_shared_unread() {
    // A row noted plain is taken at its word: a spaced-out line noted plain (which sessiondb
    // never writes) is shared as it is instead of being written again as pi writes it.
    let (_dir, db, file, _lines, _env) = branch_source();
    {
        let conn = sessiondb::db::open(&db).unwrap();
        conn.sqlite().execute("UPDATE entries SET plain = 2, activity_ms = 1767225601000 WHERE id = 'a2'", []).unwrap();
    }
    let mut m = SessionManager::open(&db, &file, None, None).unwrap();
    let branched = m.create_branched_session(Some("u6")).unwrap().unwrap();
    drop(m);
    let text = std::fs::read_to_string(&file).unwrap();
    let spaced = text.lines().find(|l| l.contains(r#""id":"a2""#)).unwrap();
    let conn = sessiondb::db::open(&db).unwrap();
    let sid: sessiondb::SessionKey =
        conn.sqlite().query_row("SELECT sid FROM sessions WHERE path = ?1", [&branched], |r| r.get(0)).unwrap();
    let mut out = Vec::new();
    sessiondb::export::write_session(&conn, sid, &mut out).unwrap();
    let out = String::from_utf8(out).unwrap();
    assert!(out.lines().any(|l| l == spaced), "{out}");
}

#[test]
fn rows_written_before_lines_were_noted_branch_as_pi() {
    // Rows of a database from before migration 21 carry no note: their lines are read and
    // checked, and the branched session is the same.
    let (dir, db, file, lines, _env) = branch_source();
    {
        let conn = sessiondb::db::open(&db).unwrap();
        conn.sqlite().execute("UPDATE entries SET plain = NULL, activity_ms = NULL", []).unwrap();
    }
    let mut m = SessionManager::open(&db, &file, None, None).unwrap();
    let branched = m.create_branched_session(Some("u6")).unwrap().unwrap();
    drop(m);
    let shared: Vec<String> = BRANCH_SHARED.iter().map(|s| s.to_string()).collect();
    assert_branched_as_pi_and_import(dir.path(), &db, &lines, &branched, &shared, false);
}

mod schema_v6 {
    refinery::embed_migrations!("migrations/sqlite");
}

#[test]
fn a_database_from_before_the_shares_table_keeps_copies_lines() {
    // A database at schema 6 (shared lines found through an index of copies) holding a
    // session and a copy of two of its lines, written as that schema's sessiondb wrote them.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("v6.sqlite");
    let lines = [r#"{"type":"custom","id":"x1","parentId":null}"#, r#"{"type":"custom","id":"x2","parentId":"x1"}"#];
    {
        let mut conn = rusqlite::Connection::open(&db).unwrap();
        schema_v6::migrations::runner().set_target(refinery::Target::Version(6)).run(&mut conn).unwrap();
        for (sid, path) in [(1, "/s/a.jsonl"), (2, "/s/b.jsonl")] {
            conn.execute(
                "INSERT INTO sessions (sid, id, path, dir, header, written_ns) VALUES (?1, ?2, ?3, '/s', '{}', 0)",
                rusqlite::params![sid, format!("s{sid}"), path],
            )
            .unwrap();
        }
        for (seq, line) in (1i64..).zip(lines) {
            conn.execute(
                "INSERT INTO entries (key, session, seq, body) VALUES (?1, 1, ?2, ?3)",
                rusqlite::params![(1i64 << 32) | seq, seq, line],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO entries (key, session, seq, body, body_key) VALUES (?1, 2, ?2, '', ?3)",
                rusqlite::params![(2i64 << 32) | seq, seq, (1i64 << 32) | seq],
            )
            .unwrap();
        }
    }
    // Opening migrates it: the copy's session is recorded as sharing the first one's lines.
    let conn = sessiondb::db::open(&db).unwrap();
    let shares: Vec<(i64, i64)> = conn
        .sqlite()
        .prepare("SELECT copy, owner FROM shares")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(shares, [(2, 1)]);
    let (code, out, _) = common::run(&db, &["check", "--json"]);
    assert!(!out.contains("shared-line"), "{code} {out}");
    // Deleting the first session gives the copies their lines and forgets the share.
    conn.sqlite().execute(sessiondb::internals::sessions::DELETE_SESSION, [1]).unwrap();
    let copies: Vec<(String, Option<i64>)> = conn
        .sqlite()
        .prepare("SELECT body, body_key FROM entries WHERE session = 2 ORDER BY key")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(copies, [(lines[0].to_string(), None), (lines[1].to_string(), None)]);
    let left: i64 = conn.sqlite().query_row("SELECT count(*) FROM shares", [], |r| r.get(0)).unwrap();
    assert_eq!(left, 0);
}

#[test]
fn in_memory_with_entries_loads_migrates_and_keeps_its_cwd() {
    // A v2 header after an entry (pi finds the header anywhere) with a v2 hook message:
    // migrated to v3 (hookMessage becomes custom), the leaf is the last entry.
    let entries = [
        v(
            r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2025-02-01T00:00:02.000Z","message":{"role":"hookMessage","customType":"x","content":"c","display":true,"timestamp":2}}"#,
        ),
        v(
            r#"{"type":"session","version":2,"id":"preloaded","timestamp":"2025-02-01T00:00:00.000Z","cwd":"/header/cwd"}"#,
        ),
        v(
            r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2025-02-01T00:00:01.000Z","message":{"role":"user","content":"q","timestamp":1}}"#,
        ),
    ];
    let m = SessionManager::in_memory_with_entries(Some("/ctor/cwd"), NewSessionOptions::default(), &entries).unwrap();
    assert_eq!(m.session_id(), "preloaded");
    assert_eq!(m.cwd(), "/ctor/cwd");
    assert_eq!(m.session_file(), None);
    assert!(!m.is_persisted());
    assert_eq!(
        m.header().unwrap().to_json(),
        r#"{"type":"session","version":3,"id":"preloaded","timestamp":"2025-02-01T00:00:00.000Z","cwd":"/header/cwd"}"#
    );
    assert_eq!(m.leaf_id(), Some("a1"));
    let first = m.entries().unwrap()[0].to_json();
    assert!(first.contains(r#""role":"custom""#), "{first}");

    // Without a header: a new one from the options, then the entries as given.
    let opts = NewSessionOptions { id: Some("my-id".into()), parent_session: Some("/p.jsonl".into()) };
    let m = SessionManager::in_memory_with_entries(Some("/ctor"), opts, &entries[2..]).unwrap();
    let h = m.header().unwrap().to_json();
    assert!(h.starts_with(r#"{"type":"session","version":3,"id":"my-id","timestamp":""#), "{h}");
    assert!(h.ends_with(r#"","cwd":"/ctor","parentSession":"/p.jsonl"}"#), "{h}");
    assert_eq!(m.entries().unwrap().iter().map(Value::to_json).collect::<Vec<_>>(), vec![entries[2].to_json()]);
    assert_eq!(m.leaf_id(), Some("a1"));
}
