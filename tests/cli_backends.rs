//! The read commands on both backends, byte for byte: the oracle corpus (pi's files and the
//! parent cycles) imported into SQLite and pushed into a PostgreSQL database as the server's
//! own sessions (origin ''); then every command that reads a session (`tree`, `context`,
//! `show`, `branch`, `children`, `check`, by path, id and id prefix), `find`, `list --json`
//! and `recent` prints on the server exactly what it prints on SQLite (whose output the oracle
//! suites hold to pi's), with the same exit status and messages. `check` is also clean on a
//! healthy server and finds a problem planted in one. Skipped without
//! `SESSIONDB_TEST_PG_URL` (failing instead when `SESSIONDB_REQUIRE_PG` is set).

mod common;

use serde_json::Value as J;
use std::path::{Path, PathBuf};

/// One run of the binary: exit status, stdout, stderr.
type Run = (i32, String, String);

fn run(db: &str, args: &[&str]) -> Run {
    let out =
        common::bin().env("PI_CODING_AGENT_DIR", common::oracle()).arg("--db").arg(db).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A SQLite database and a PostgreSQL database holding the same sessions.
struct Both {
    _dir: tempfile::TempDir,
    sqlite: String,
    pg: String,
}

impl Both {
    /// Runs `args` on both; asserts the same status, stdout and stderr; returns SQLite's run.
    fn same(&self, args: &[&str]) -> Run {
        let a = run(&self.sqlite, args);
        let b = run(&self.pg, args);
        assert_eq!(a.0, b.0, "{args:?}: exit status\nSQLite: {}\nPostgreSQL: {}", a.2, b.2);
        assert!(a.1 == b.1, "{args:?}: stdout differs\nSQLite:\n{}\nPostgreSQL:\n{}", a.1, b.1);
        assert_eq!(a.2, b.2, "{args:?}: stderr");
        a
    }
}

/// The files of `folders` imported into SQLite with the CLI, then pushed with the CLI into a
/// fresh database of the server under origin ''. `None` without a server.
fn both(folders: &[PathBuf]) -> Option<Both> {
    let url = common::pg::server()?;
    let dir = tempfile::tempdir().unwrap();
    let sqlite = dir.path().join("local.sqlite").to_string_lossy().into_owned();
    let mut args = vec!["import"];
    args.extend(folders.iter().map(|p| p.to_str().unwrap()));
    let (code, _, err) = run(&sqlite, &args);
    assert!(code == 0 || code == 1, "{err}");
    let pg = common::pg::fresh_db(&url);
    let (code, _, err) = run(&sqlite, &["push", "--to", &pg, "--origin", ""]);
    assert_eq!(code, 0, "{err}");
    Some(Both { _dir: dir, sqlite, pg })
}

fn corpus_folders() -> Vec<PathBuf> {
    vec![common::oracle().join("sessions"), common::oracle().join("cycles")]
}

/// Path, header id and entry ids (file order) of every session of a SQLite database.
fn sessions(sqlite: &str) -> Vec<(String, String, Vec<String>)> {
    let db = sessiondb::db::open(Path::new(sqlite)).unwrap();
    let mut out = Vec::new();
    for info in sessiondb::discovery::list_everything(&db).unwrap() {
        let t = sessiondb::tree::SessionTree::open(&db, info.sid).unwrap();
        let ids = t.all_entries().unwrap().into_iter().filter_map(|r| r.id).collect();
        out.push((info.path, info.id, ids));
    }
    out.sort();
    out
}

#[test]
fn every_read_command_prints_on_postgresql_what_it_prints_on_sqlite() {
    let Some(b) = both(&corpus_folders()) else { return };
    let all = sessions(&b.sqlite);
    assert!(all.len() > 40, "{}", all.len());
    let runs = std::sync::atomic::AtomicUsize::new(0);
    // Four sessions at a time: each command is two processes, most of the time spent starting.
    std::thread::scope(|s| {
        for chunk in all.chunks(all.len().div_ceil(4)) {
            let (b, runs) = (&b, &runs);
            s.spawn(move || {
                for (path, id, ids) in chunk {
                    let p = path.as_str();
                    let prefix: String = id.chars().take(8).collect();
                    let short: String = id.chars().take(4).collect();
                    let dir = Path::new(p).parent().unwrap().to_str().unwrap();
                    let mut cases: Vec<Vec<&str>> = vec![
                        vec!["tree", "--json", p],
                        vec!["tree", p],
                        vec!["context", "--json", p],
                        vec!["context", p],
                        vec!["context", "--json", "--no-leaf", p],
                        vec!["show", p],
                        vec!["branch", "--json", p],
                        vec!["branch", p],
                        vec!["check", "--json", p],
                        vec!["children", "--json", p, "no-such-entry"],
                        // References: id, id prefixes (perhaps ambiguous: the same error), path.
                        vec!["show", id],
                        vec!["context", "--json", &prefix],
                        vec!["branch", "--json", &short],
                        vec!["find", id],
                        vec!["find", "--json", &prefix],
                        vec!["find", "--json", id, "--session-dir", dir],
                    ];
                    for e in [ids.first(), ids.get(ids.len() / 2), ids.last()].into_iter().flatten() {
                        cases.push(vec!["children", "--json", p, e]);
                        cases.push(vec!["children", p, e]);
                        cases.push(vec!["context", "--json", "--leaf", e, p]);
                        cases.push(vec!["branch", "--json", "--from", e, p]);
                    }
                    for args in &cases {
                        b.same(args);
                    }
                    runs.fetch_add(cases.len(), std::sync::atomic::Ordering::Relaxed);
                }
            });
        }
    });
    // Whole-database commands.
    let mut dirs: Vec<&str> = all.iter().map(|(p, _, _)| Path::new(p).parent().unwrap().to_str().unwrap()).collect();
    dirs.dedup();
    for dir in &dirs {
        b.same(&["list", "--json", "--session-dir", dir]);
        b.same(&["recent", "--json", "--session-dir", dir]);
        b.same(&["recent", "--session-dir", dir]);
    }
    for args in [
        &["list", "--json"][..],
        &["list", "--json", "--sort", "name", "--limit", "7"],
        &["recent"],
        &["recent", "--json"],
        &["recent", "--json", "--cwd", "/home/u/proj-a"],
        &["recent", "--json", "--session-dir", "/no/such/folder"],
        &["show", "no-such-session-id"],
        &["show", "ab"],
        &["tree", "/no/such/file.jsonl"],
        &["find", "no-such-session-id"],
    ] {
        b.same(args);
    }
    // The corpus carries problems on purpose: both report the same ones.
    let (code, out, _) = b.same(&["check", "--json"]);
    assert_eq!(code, 1);
    let report: J = serde_json::from_str(&out).unwrap();
    assert!(report["problems"].as_array().unwrap().len() > 10, "{report}");
    assert_eq!(report["sessions"].as_u64().unwrap() as usize, all.len());
    b.same(&["check"]);
    let runs = runs.into_inner();
    assert!(runs > 40 * 25, "{runs} commands compared");
}

/// Sessions written on the server by the SessionManager (messages, a branch, a label, model
/// and thinking-level changes, a fork, a branched session) and a pushed corpus without
/// problems: `check` finds nothing.
#[test]
fn check_is_clean_on_a_healthy_server() {
    use sessiondb::json::parse;
    use sessiondb::manager::{NewSessionOptions, SessionManager};
    let Some(url) = common::pg::server() else { return };
    // The corpus files SQLite's check finds nothing in.
    let (_d, local_path, mut local) = common::temp_db();
    let targets = sessiondb::import::collect_targets(&[common::oracle().join("sessions")]).unwrap();
    sessiondb::import::import_targets(&mut local, &targets, Default::default(), |_| {}).unwrap();
    let report = sessiondb::check::check_all(&local, |_| {}).unwrap();
    let damaged: std::collections::BTreeSet<String> =
        report.problems.iter().filter_map(|f| f.session_path.clone()).collect();
    let healthy: Vec<PathBuf> = sessiondb::discovery::list_everything(&local)
        .unwrap()
        .into_iter()
        .filter(|i| !damaged.contains(&i.path))
        .map(|i| PathBuf::from(i.path))
        .collect();
    assert!(healthy.len() > 10 && !damaged.is_empty(), "{} healthy, {} damaged", healthy.len(), damaged.len());
    drop(local);
    std::fs::remove_file(&local_path).unwrap();
    let (_d2, _p2, mut clean) = common::temp_db();
    let targets = sessiondb::import::collect_targets(&healthy).unwrap();
    sessiondb::import::import_targets(&mut clean, &targets, Default::default(), |_| {}).unwrap();
    let pg = common::pg::pushed(&clean, &url);

    let home = tempfile::tempdir().unwrap();
    let folder = home.path().join("sessions").to_string_lossy().into_owned();
    let db = Path::new(&pg);
    let mut m = SessionManager::create(db, "/work/app", Some(&folder), NewSessionOptions::default()).unwrap();
    let first =
        m.append_message(parse(br#"{"role":"user","content":"first question","timestamp":1}"#).unwrap()).unwrap();
    m.append_message(
        parse(br#"{"role":"assistant","content":[{"type":"text","text":"an answer"}],"timestamp":2}"#).unwrap(),
    )
    .unwrap();
    m.append_model_change(Some(parse(br#""anthropic""#).unwrap()), Some(parse(br#""claude""#).unwrap())).unwrap();
    m.append_thinking_level_change(Some(parse(br#""high""#).unwrap())).unwrap();
    m.append_label_change(&first, Some(parse(br#""start""#).unwrap())).unwrap();
    m.branch(&first).unwrap();
    m.append_message(parse(br#"{"role":"user","content":"another way","timestamp":3}"#).unwrap()).unwrap();
    let source = m.session_file().unwrap().to_string();
    m.create_branched_session(Some(&first)).unwrap();
    drop(m);
    let fork = SessionManager::fork_from(db, &source, "/work/other", Some(&folder), NewSessionOptions::default());
    drop(fork.unwrap());

    let (code, out, err) = run(&pg, &["check", "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let report: J = serde_json::from_str(&out).unwrap();
    assert_eq!(report["problems"], J::Array(vec![]));
    assert_eq!(report["integrityOk"], true);
    assert_eq!(report["sessions"].as_u64().unwrap() as usize, healthy.len() + 3, "{report}");
    let (code, out, _) = run(&pg, &["check"]);
    assert_eq!(code, 0);
    assert!(out.ends_with("database integrity ok; no problems\n"), "{out}");
}

/// A parent cycle and a wrong counter planted in one session, the same way in both stores:
/// `check` reports them on the server as on SQLite, and the tree and context of the damaged
/// session (cut before the repeated entry, with a warning) read the same.
#[test]
fn check_finds_a_problem_planted_on_the_server() {
    let Some(b) = both(&[common::oracle().join("sessions")]) else { return };
    // A session without problems whose first three entries form a chain.
    let (path, ids) = sessions(&b.sqlite)
        .into_iter()
        .filter(|(p, _, ids)| ids.len() >= 5 && run(&b.sqlite, &["check", "--json", p]).0 == 0)
        .find_map(|(p, _, ids)| {
            let (_, out, _) = run(&b.sqlite, &["branch", "--json", &p]);
            let path: Vec<J> = serde_json::from_str(&out).unwrap();
            let chain: Vec<String> = path.iter().take(3).filter_map(|e| e["id"].as_str().map(str::to_owned)).collect();
            (chain.len() == 3 && chain[..] == ids[..3]).then_some((p, chain))
        })
        .expect("a healthy session starting with a chain");
    let (root, third) = (&ids[0], &ids[2]);
    let local = sessiondb::db::open(Path::new(&b.sqlite)).unwrap();
    let planted = local
        .sqlite()
        .execute(
            "UPDATE entries SET parent_id = ?1 WHERE id = ?2 AND session = (SELECT sid FROM sessions WHERE path = ?3)",
            [third, root, &path],
        )
        .unwrap();
    local.sqlite().execute("UPDATE sessions SET entry_count = entry_count + 1 WHERE path = ?1", [&path]).unwrap();
    drop(local);
    assert_eq!(planted, 1);
    let quoted = |s: &str| format!("'{}'", s.replace('\'', "''"));
    let session = format!("(SELECT skey FROM sessions WHERE origin = '' AND path = {})", quoted(&path));
    let planted = common::pg::execute(
        &b.pg,
        &format!(
            "UPDATE entries SET parent_id = {} WHERE id = {} AND session = {session}",
            quoted(third),
            quoted(root)
        ),
    );
    assert_eq!(planted, 1);
    common::pg::execute(&b.pg, &format!("UPDATE sessions SET entry_count = entry_count + 1 WHERE skey = {session}"));

    let (code, out, _) = b.same(&["check", "--json", &path]);
    assert_eq!(code, 1);
    let report: J = serde_json::from_str(&out).unwrap();
    let kinds: Vec<&str> = report["problems"].as_array().unwrap().iter().map(|f| f["kind"].as_str().unwrap()).collect();
    assert!(kinds.contains(&"parent-cycle") && kinds.contains(&"counts"), "{report}");
    let cycle = report["problems"].as_array().unwrap().iter().find(|f| f["kind"] == "parent-cycle").unwrap();
    assert_eq!(cycle["sessionPath"], J::String(path.clone()));
    assert!(cycle["message"].as_str().unwrap().contains("cycle of 3 entries"), "{cycle}");
    let (code, _, _) = b.same(&["check", "--json"]);
    assert_eq!(code, 1);
    for args in [&["tree", "--json", &path][..], &["context", "--json", &path], &["show", &path]] {
        b.same(args);
    }
}

/// A team's server: sessions pushed from other machines are read by reference too, and one
/// path (or id) pushed from two machines is ambiguous, the error naming each `origin:path`.
#[test]
fn references_find_pushed_sessions_and_name_the_origins_when_ambiguous() {
    let Some(url) = common::pg::server() else { return };
    let dir = tempfile::tempdir().unwrap();
    let sqlite = dir.path().join("local.sqlite").to_string_lossy().into_owned();
    let (file, _) = common::golden("x-labels.jsonl");
    let file = file.to_string_lossy().into_owned();
    let (code, _, err) = run(&sqlite, &["import", &file]);
    assert_eq!(code, 0, "{err}");
    let pg = common::pg::fresh_db(&url);
    let (code, _, err) = run(&sqlite, &["push", "--to", &pg, "--origin", "alice"]);
    assert_eq!(code, 0, "{err}");
    let id = sessions(&sqlite)[0].1.clone();
    // One origin: the commands read it as on SQLite.
    for args in [&["show", &file][..], &["tree", "--json", &id], &["context", "--json", &id[..8]], &["check", "--json"]]
    {
        let (a, b) = (run(&sqlite, args), run(&pg, args));
        assert_eq!((a.0, &a.1), (b.0, &b.1), "{args:?}: {}", b.2);
    }
    // A second machine pushes the same file.
    let (code, _, err) = run(&sqlite, &["push", "--to", &pg, "--origin", "bob"]);
    assert_eq!(code, 0, "{err}");
    for reference in [&file, &id, &id[..8]] {
        let (code, out, err) = run(&pg, &["show", reference]);
        assert_eq!(code, 2, "{reference}: {out}");
        assert!(out.is_empty());
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        for origin in ["alice", "bob"] {
            assert!(err.contains(&format!("{origin}:{file}")), "{reference}: {err}");
        }
    }
    let (code, out, _) = run(&pg, &["check", "--json"]);
    assert_eq!(code, 1, "the file has a label without a target");
    assert_eq!(serde_json::from_str::<J>(&out).unwrap()["sessions"], 2);
}

/// The lines of scattered keys (every third entry, as pi's `/tree` asks for every assistant)
/// are each entry's own line, on SQLite and on the server: one statement reads them by key,
/// not the range between them.
#[test]
fn scattered_keys_read_their_own_lines_on_both_backends() {
    use sessiondb::json::parse;
    use sessiondb::manager::{NewSessionOptions, SessionManager};
    let (_d, sqlite, _) = common::temp_db();
    let pg = common::pg::server().map(|url| common::pg::fresh_db(&url));
    let dbs: Vec<String> = std::iter::once(sqlite.to_string_lossy().into_owned()).chain(pg).collect();
    for db in &dbs {
        let home = tempfile::tempdir().unwrap();
        let folder = home.path().join("sessions").to_string_lossy().into_owned();
        let mut m =
            SessionManager::create(Path::new(db), "/work/app", Some(&folder), NewSessionOptions::default()).unwrap();
        for i in 0..60 {
            let text = format!(r#"{{"role":"user","content":"question {i}","timestamp":{i}}}"#);
            m.append_message(parse(text.as_bytes()).unwrap()).unwrap();
        }
        let links = m.entry_steps(None).unwrap();
        let lines: Vec<String> = m.entries().unwrap().iter().map(|e| e.to_json()).collect();
        assert_eq!(links.len(), lines.len());
        // Every third, then a key past the last line (no line: skipped).
        let mut keys: Vec<_> = (0..links.len()).step_by(3).map(|i| links.key(i)).collect();
        let past = links.key(links.len() - 1) + 1;
        keys.push(past);
        let mut got = Vec::new();
        m.lines_at(&keys, &mut |k, line| got.push((k, String::from_utf8(line.to_vec()).unwrap()))).unwrap();
        let want: Vec<_> = (0..links.len()).step_by(3).map(|i| (links.key(i), lines[i].clone())).collect();
        assert_eq!(got, want, "{db}");
    }
}
