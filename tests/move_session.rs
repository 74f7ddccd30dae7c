//! `sessiondb move`: the file goes to pi's folder for the new cwd with the header's cwd
//! rewritten as pi writes it, the database follows (export, `list --cwd`, `recent`, `find`),
//! refusals leave everything as it was, and a move killed at any step leaves one whole copy
//! that the next command finishes or undoes.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

const ID: &str = "0190aaaa-0000-7000-8000-00000000beef";
const TS: &str = "2025-03-01T10:00:00.000Z";
const OLD_CWD: &str = "/home/u/old-project";

/// The header as pi would have written it for `cwd`: cwd in its place, parentSession after it.
fn header(cwd: &str) -> String {
    format!(
        r#"{{"type":"session","version":3,"id":"{ID}","timestamp":"{TS}","cwd":{},"parentSession":"/x/parent.jsonl"}}"#,
        serde_json::to_string(cwd).unwrap()
    )
}

/// The lines after the header: a small branched conversation.
fn body() -> String {
    let mut s = String::new();
    let mut parent = "null".to_string();
    for i in 0..6 {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        let id = format!("e{i:07}");
        // The assistant's replies carry usage, which `stats --cwd` counts.
        let usage = if i % 2 == 0 {
            String::new()
        } else {
            r#","provider":"p","model":"m","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0.001,"output":0.002,"cacheRead":0,"cacheWrite":0,"total":0.003}}"#.to_string()
        };
        s.push_str(&format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2025-03-01T10:00:0{i}.000Z","message":{{"role":"{role}","content":"moving words {i}","timestamp":{}{usage}}}}}"#,
            1_740_823_200_000u64 + i
        ));
        s.push('\n');
        parent = format!("\"{id}\"");
    }
    s
}

struct Setup {
    _tmp: tempfile::TempDir,
    agent: PathBuf,
    sessions: PathBuf,
    db: PathBuf,
    old_file: PathBuf,
    project: PathBuf,
}

impl Setup {
    /// A sessions folder with the session at pi's place for OLD_CWD, synced into `db` (a
    /// SQLite file in the folder when `None`), and a project folder to move it to.
    fn new(db: Option<PathBuf>) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let agent = tmp.path().join("agent");
        let sessions = agent.join("sessions");
        let old_dir = sessions.join("--home-u-old-project--");
        std::fs::create_dir_all(&old_dir).unwrap();
        let old_file = old_dir.join(format!("2025-03-01T10-00-00-000Z_{ID}.jsonl"));
        std::fs::write(&old_file, format!("{}\n{}", header(OLD_CWD), body())).unwrap();
        let project = tmp.path().join("new project");
        std::fs::create_dir_all(&project).unwrap();
        let db = db.unwrap_or_else(|| tmp.path().join("db.sqlite"));
        let s = Setup { _tmp: tmp, agent, sessions, db, old_file, project };
        let (code, _, err) = s.run(&["sync", "--sessions-dir", s.sessions.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        s
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = common::bin();
        c.env("PI_CODING_AGENT_DIR", &self.agent).env_remove("PI_CODING_AGENT_SESSION_DIR");
        c.arg("--db").arg(&self.db).args(args);
        c
    }

    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let out = self.cmd(args).output().unwrap();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
    }

    fn move_args(&self) -> Vec<String> {
        let s = |p: &Path| p.to_str().unwrap().to_string();
        vec!["move".into(), ID.into(), s(&self.project), "--sessions-dir".into(), s(&self.sessions), "--json".into()]
    }

    fn new_file(&self) -> PathBuf {
        let enc = self.project.to_str().unwrap().trim_start_matches('/').replace('/', "-");
        self.sessions.join(format!("--{enc}--")).join(format!("2025-03-01T10-00-00-000Z_{ID}.jsonl"))
    }

    fn export(&self) -> Vec<u8> {
        let out = self.cmd(&["export", ID]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    }

    fn json(&self, args: &[&str]) -> serde_json::Value {
        let (code, out, err) = self.run(args);
        assert_eq!(code, 0, "{args:?}: {err}");
        serde_json::from_str(&out).unwrap()
    }

    /// Every file below the sessions folder, by path relative to it.
    fn files(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![self.sessions.clone()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    out.push(p.strip_prefix(&self.sessions).unwrap().to_string_lossy().into_owned());
                }
            }
        }
        out.sort();
        out
    }

    /// Asserts the session is at the new place, whole, and the database agrees.
    fn assert_moved(&self) {
        let new_file = self.new_file();
        assert!(!self.old_file.exists(), "the old file is gone");
        let bytes = std::fs::read(&new_file).unwrap();
        let expected = format!("{}\n{}", header(self.project.to_str().unwrap()), body());
        assert_eq!(String::from_utf8_lossy(&bytes), expected, "the header's cwd is the new folder, the rest as it was");
        assert_eq!(self.export(), bytes, "export equals the new file byte for byte");
        let rel = new_file.strip_prefix(&self.sessions).unwrap().to_string_lossy().into_owned();
        assert_eq!(self.files(), vec![rel], "one file, no leftovers");
        self.assert_listed_at(&new_file, self.project.to_str().unwrap());
    }

    /// Asserts the session is where it was, whole, and the database agrees.
    fn assert_not_moved(&self) {
        let bytes = std::fs::read(&self.old_file).unwrap();
        assert_eq!(String::from_utf8_lossy(&bytes), format!("{}\n{}", header(OLD_CWD), body()));
        assert_eq!(self.export(), bytes);
        assert_eq!(self.files(), vec![self.old_file.strip_prefix(&self.sessions).unwrap().to_string_lossy()]);
        self.assert_listed_at(&self.old_file, OLD_CWD);
    }

    /// `list --cwd`, `recent --cwd` and `find` see the session at `file` only, under `cwd`.
    fn assert_listed_at(&self, file: &Path, cwd: &str) {
        let listed = self.json(&["list", "--cwd", cwd, "--json"]);
        let paths: Vec<&str> = listed.as_array().unwrap().iter().map(|s| s["path"].as_str().unwrap()).collect();
        assert_eq!(paths, vec![file.to_str().unwrap()], "list --cwd {cwd}");
        let other = if cwd == OLD_CWD { self.project.to_str().unwrap().to_string() } else { OLD_CWD.to_string() };
        assert_eq!(self.json(&["list", "--cwd", &other, "--json"]), serde_json::json!([]), "list --cwd {other}");
        let recent = self.json(&["recent", "--cwd", cwd, "--json"]);
        assert_eq!(recent["file"].as_str(), Some(file.to_str().unwrap()), "recent --cwd {cwd}");
        assert_eq!(self.json(&["find", ID, "--json"]), serde_json::json!([file.to_str().unwrap()]));
        // Search and stats by project see it under `cwd` only.
        let hits = |cwd: &str| {
            // Exit status 1: nothing found.
            let (code, out, err) = self.run(&["search", "moving", "--cwd", cwd, "--json"]);
            assert!(code == 0 || code == 1, "search --cwd {cwd}: {err}");
            let found: serde_json::Value = serde_json::from_str(&out).unwrap();
            let files: Vec<String> =
                found.as_array().unwrap().iter().map(|h| h["sessionFile"].as_str().unwrap().to_string()).collect();
            files.into_iter().collect::<std::collections::BTreeSet<_>>().into_iter().collect::<Vec<_>>()
        };
        assert_eq!(hits(cwd), vec![file.to_str().unwrap().to_string()], "search --cwd {cwd}");
        assert_eq!(hits(&other), Vec::<String>::new(), "search --cwd {other}");
        let used = |cwd: &str| self.json(&["stats", "--cwd", cwd, "--json"])["total"]["entries"].as_u64();
        assert_eq!((used(cwd), used(&other)), (Some(3), Some(0)), "stats --cwd");
    }
}

#[test]
fn moves_the_file_the_header_and_the_row() {
    let dir = tempfile::tempdir().unwrap();
    for backend in common::backends(dir.path(), "move") {
        let s = Setup::new(Some(backend.db.clone()));
        let args = s.move_args();
        let moved = s.json(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(
            moved,
            serde_json::json!({
                "sessionId": ID,
                "from": s.old_file.to_str().unwrap(),
                "to": s.new_file().to_str().unwrap(),
                "cwd": s.project.to_str().unwrap(),
                "fileMoved": true,
            }),
            "{}",
            backend.name
        );
        s.assert_moved();
        // The next sync finds the file as the move left it: nothing to read, nothing twice.
        let summary = s.json(&["sync", "--sessions-dir", s.sessions.to_str().unwrap(), "--json"]);
        assert_eq!((summary["new"].as_u64(), summary["unchanged"].as_u64()), (Some(0), Some(1)), "{}", backend.name);
        s.assert_moved();
    }
}

#[test]
fn lines_written_since_the_last_sync_move_with_it() {
    let s = Setup::new(None);
    let extra = r#"{"type":"label","id":"l0000001","parentId":"e0000005","timestamp":"2025-03-01T10:01:00.000Z","targetId":"e0000001","label":"kept"}"#;
    let mut f = std::fs::OpenOptions::new().append(true).open(&s.old_file).unwrap();
    std::io::Write::write_all(&mut f, format!("{extra}\n").as_bytes()).unwrap();
    drop(f);
    let (code, _, err) = s.run(&s.move_args().iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 0, "{err}");
    let bytes = std::fs::read(s.new_file()).unwrap();
    assert!(String::from_utf8_lossy(&bytes).ends_with(&format!("{extra}\n")), "the appended line moved too");
    assert_eq!(s.export(), bytes);
}

#[test]
fn refuses_an_existing_target_and_changes_nothing() {
    let s = Setup::new(None);
    std::fs::create_dir_all(s.new_file().parent().unwrap()).unwrap();
    std::fs::write(s.new_file(), "someone else's\n").unwrap();
    let (code, out, err) = s.run(&s.move_args().iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 2);
    assert_eq!(out, "");
    assert_eq!(err, format!("sessiondb: error: {} exists: refusing to overwrite it\n", s.new_file().display()));
    assert_eq!(std::fs::read(s.new_file()).unwrap(), b"someone else's\n");
    std::fs::remove_file(s.new_file()).unwrap();
    s.assert_not_moved();
}

#[test]
fn a_session_in_the_database_only_moves_there_alone() {
    let s = Setup::new(None);
    std::fs::remove_file(&s.old_file).unwrap();
    let moved = s.json(&s.move_args().iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(moved["fileMoved"], serde_json::json!(false));
    assert!(!s.new_file().exists(), "no file is made for it");
    let exported = String::from_utf8(s.export()).unwrap();
    assert_eq!(exported, format!("{}\n{}", header(s.project.to_str().unwrap()), body()));
    let listed = s.json(&["list", "--cwd", s.project.to_str().unwrap(), "--json"]);
    assert_eq!(listed.as_array().map(Vec::len), Some(1));
}

/// A move killed at each step it can reach: exactly one whole copy of the session (one
/// `.jsonl` holding it, one row), then the next `sync` (or `move`) leaves it all old or all
/// new, with nothing left behind; a move after an undone one succeeds.
#[test]
fn a_killed_move_leaves_one_copy_and_the_next_command_settles_it() {
    let whole = format!("{}\n{}", header(OLD_CWD), body());
    for (i, step) in sessiondb::relocate::CRASH_STEPS.iter().enumerate() {
        for next in ["sync", "move"] {
            let s = Setup::new(None);
            let args = s.move_args();
            let out = s
                .cmd(&args.iter().map(String::as_str).collect::<Vec<_>>())
                .env("SESSIONDB_TEST_CRASH_AT", step)
                .output()
                .unwrap();
            assert!(!out.status.success(), "{step}: the move was killed");
            // One copy: one session file names the session, with every line; one row.
            let copies: Vec<String> = s
                .files()
                .into_iter()
                .filter(|f| f.ends_with(".jsonl"))
                .filter(|f| std::fs::read_to_string(s.sessions.join(f)).unwrap().contains(ID))
                .collect();
            assert_eq!(copies.len(), 1, "{step}: {:?}", s.files());
            let text = std::fs::read_to_string(s.sessions.join(&copies[0])).unwrap();
            assert_eq!(text.lines().count(), whole.lines().count(), "{step}: whole");
            assert_eq!(s.json(&["find", ID, "--json"]).as_array().map(Vec::len), Some(1), "{step}: one row");
            let committed = i >= 2;
            match next {
                "sync" => {
                    let (code, _, err) = s.run(&["sync", "--sessions-dir", s.sessions.to_str().unwrap()]);
                    assert_eq!(code, 0, "{step}: {err}");
                    if committed {
                        s.assert_moved();
                    } else {
                        s.assert_not_moved();
                    }
                }
                _ => {
                    // The next move finishes the killed one (then finds nothing left to do),
                    // or undoes it and moves.
                    let moved = s.json(&args.iter().map(String::as_str).collect::<Vec<_>>());
                    let from = if committed { s.new_file() } else { s.old_file.clone() };
                    assert_eq!(moved["from"].as_str(), Some(from.to_str().unwrap()), "{step}");
                    assert_eq!(moved["fileMoved"], serde_json::json!(!committed), "{step}");
                    s.assert_moved();
                }
            }
            let (code, out, err) = s.run(&["check"]);
            assert_eq!(code, 0, "{step}: check: {out}{err}");
        }
    }
}

/// A session a live process holds (pi writing it through `sessiondb-pi`) is not moved: one
/// line names the holder and nothing changes; once released, it moves.
#[test]
fn refuses_a_session_a_live_process_holds() {
    let dir = tempfile::tempdir().unwrap();
    for backend in common::backends(dir.path(), "move_leased") {
        let s = Setup::new(Some(backend.db.clone()));
        // This test's process takes the lease: a live process on this host.
        let db = sessiondb::db::open_existing(&s.db).unwrap();
        let sid = sessiondb::resolve::resolve(&db, ID).unwrap().sid;
        assert_eq!(sessiondb::lease::acquire(&db, sid).unwrap(), sessiondb::lease::Acquired::Held);
        let (code, out, err) = s.run(&s.move_args().iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!((code, out.as_str()), (2, ""), "{}", backend.name);
        let holder = format!("process {} on ", std::process::id());
        assert!(
            err.starts_with(&format!("sessiondb: error: session {ID} is being written by {holder}"))
                && err.ends_with("; quit it first\n")
                && err.lines().count() == 1,
            "{}: {err}",
            backend.name
        );
        s.assert_not_moved();
        sessiondb::lease::release(&db, sid).unwrap();
        let (code, _, err) = s.run(&s.move_args().iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(code, 0, "{}: {err}", backend.name);
        s.assert_moved();
    }
}
