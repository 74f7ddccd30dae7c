//! `sessiondb check`: the oracle's edge files and cycles produce the findings they should,
//! pi-written sessions produce none, compaction paths agree with a plain path walk, large
//! sessions are checked in linear time, and the exit statuses.

mod common;

use serde_json::Value as J;
use sessiondb::check::{self, Kind};
use sessiondb::import::{collect_targets, import_file, import_targets, ImportOptions};
use sessiondb::tree::SessionTree;
use std::collections::BTreeSet;
use std::path::Path;

fn import_corpus(conn: &mut sessiondb::db::Db) {
    let c = common::oracle();
    let targets = collect_targets(&[c.join("sessions"), c.join("cycles")]).unwrap();
    import_targets(conn, &targets, ImportOptions::default(), |_| {}).unwrap();
}

fn file_name(path: &Option<String>) -> String {
    let p = path.as_deref().unwrap_or("");
    Path::new(p).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

#[test]
fn edge_files_and_cycles_give_the_expected_findings() {
    let (_d, _p, mut conn) = common::temp_db();
    import_corpus(&mut conn);
    let report = check::check_all(&conn, |_| {}).unwrap();
    assert!(report.integrity_ok);
    let edge: BTreeSet<(String, &str, Option<String>)> = report
        .problems
        .iter()
        .filter(|f| {
            let p = f.session_path.as_deref().unwrap_or("");
            p.contains("--home-u-edge--") || p.contains("/cycles/")
        })
        .map(|f| {
            let name = file_name(&f.session_path);
            let short = name.strip_prefix("2025-02-01T00-00-00-000Z_").unwrap_or(&name).to_string();
            (short, f.kind.code(), f.entry_id.clone())
        })
        .collect();
    let s = |x: &str| Some(x.to_string());
    let mut want: BTreeSet<(String, &str, Option<String>)> = [
        ("EDGE-self-parent.jsonl", "self-parent", s("5e1f5e1f")),
        ("edge-orphan.jsonl", "orphan", s("0f0f0f01")),
        ("edge.duplicate-ids.jsonl", "duplicate-id", s("8fbce744")),
        ("x-context-edit-oddities.jsonl", "context-edit-target", s("e0000009")),
        ("x-context-edit-oddities.jsonl", "compaction-first-kept", s("c000000c")),
        ("x-discovery.jsonl", "no-cwd", None),
        ("x-json-scalars.jsonl", "missing-id", None),
        ("x-labels.jsonl", "label-target", s("1ab00005")),
        ("cycle-2-leaf-in-cycle.jsonl", "parent-cycle", s("cccc000a")),
        ("cycle-3-off-path.jsonl", "parent-cycle", s("cccc000a")),
    ]
    .into_iter()
    .map(|(f, k, e)| (f.to_string(), k, e))
    .collect();
    // The v1 file without a version is re-chained with fresh ids (a deliberate difference from pi): its label and
    // compaction references dangle afterwards. The ids are random, so only kinds are compared.
    let v1: Vec<&str> = edge.iter().filter(|(f, _, _)| f == "x-no-version-tree.jsonl").map(|(_, k, _)| *k).collect();
    assert_eq!(v1, ["compaction-first-kept", "label-target", "label-target"]);
    want.extend(edge.iter().filter(|(f, _, _)| f == "x-no-version-tree.jsonl").cloned());
    assert_eq!(edge, want);

    // Explanations name what is wrong.
    let cycle = report.problems.iter().find(|f| f.kind == Kind::ParentCycle && f.line == Some(4)).unwrap();
    assert!(cycle.message.contains("cycle of 2 entries (cccc000a → cccc000b"), "{}", cycle.message);
    let dup = report.problems.iter().find(|f| f.kind == Kind::DuplicateId).unwrap();
    assert!(dup.message.contains("lines 6, 15"), "{}", dup.message);
    assert_eq!(dup.line, Some(6));
    let orphan = report.problems.iter().find(|f| f.kind == Kind::Orphan).unwrap();
    assert!(orphan.message.contains("ffffffff"));
    assert_eq!(orphan.session_id.as_deref(), Some("edge-orphan"));
}

/// The compaction finding agrees with a plain walk of the compaction's path, for every
/// compaction of the corpus (pi's generator gives many of them ids off their path).
#[test]
fn compaction_findings_agree_with_path_walks() {
    let (_d, _p, mut conn) = common::temp_db();
    import_corpus(&mut conn);
    let sids: Vec<(sessiondb::SessionKey, String)> = conn
        .sqlite()
        .prepare("SELECT sid, path FROM sessions")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut flagged_seen = 0;
    let mut kept_seen = 0;
    for (sid, path) in sids {
        let flagged: BTreeSet<String> = check::check_session(&conn, sid)
            .unwrap()
            .into_iter()
            .filter(|f| f.kind == Kind::CompactionFirstKept)
            .filter_map(|f| f.entry_id)
            .collect();
        let t = SessionTree::open(&conn, sid).unwrap();
        for row in t.all_entries().unwrap() {
            if row.kind.as_deref() != Some("compaction") {
                continue;
            }
            let id = row.id.clone().unwrap();
            let e = row.parse();
            let first = e.get("firstKeptEntryId").and_then(|v| v.as_str()).map(str::to_owned);
            let path_ids: Vec<String> =
                t.branch(Some(&id)).unwrap().entries.iter().filter_map(|r| r.id.clone()).collect();
            let before = &path_ids[..path_ids.len() - 1];
            let ok = match &first {
                Some(f) if *f == id => true,
                Some(f) => before.contains(f),
                None => false,
            };
            assert_eq!(flagged.contains(&id), !ok, "{path}: compaction {id} keeping from {first:?}");
            if ok {
                kept_seen += 1;
            } else {
                flagged_seen += 1;
            }
        }
    }
    assert!(flagged_seen > 10 && kept_seen > 10, "{flagged_seen} flagged, {kept_seen} fine");
}

#[test]
fn a_clean_pi_written_session_has_no_findings_and_exit_statuses() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    let c = common::oracle();
    let clean =
        c.join("sessions/--home-u-proj-a--/2026-12-03T00-35-28-934Z_01a23953-e425-718a-bccb-56957dc75fe8.jsonl");
    let (code, _, err) = common::run(&db, &["import", clean.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = common::run(&db, &["check"]);
    assert_eq!((code, err.as_str()), (0, ""), "{out}");
    assert!(out.contains("checked 1 session,") && out.contains("no problems"), "{out}");
    let (code, out, _) = common::run(&db, &["check", "--json", "01a23953-e425"]);
    assert_eq!(code, 0);
    let j: J = serde_json::from_str(&out).unwrap();
    assert_eq!(j["problems"], J::Array(vec![]));
    assert_eq!(j["integrityOk"], true);
    assert_eq!(j["sessions"], 1);

    // The pi-written sample sessions are clean too.
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sessions/--home-u-proj-a--");
    let (code, _, err) = common::run(&db, &["import", examples.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = common::run(&db, &["check"]);
    assert_eq!(code, 0, "{out}");

    // Problems: exit 1, one line per finding, then the summary.
    let orphan = c.join("sessions/--home-u-edge--/2025-02-01T00-00-00-000Z_edge-orphan.jsonl");
    common::run(&db, &["import", orphan.to_str().unwrap()]);
    let (code, out, err) = common::run(&db, &["check"]);
    assert_eq!(code, 1, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].contains("(session edge-orphan): entry 0f0f0f01, line 15: orphan: its parent ffffffff"));
    assert!(lines[1].contains("1 problem"), "{out}");
    // Checking one session reports only that session.
    assert_eq!(common::run(&db, &["check", clean.to_str().unwrap()]).0, 0);
    let (code, out, _) = common::run(&db, &["check", "--json", orphan.to_str().unwrap()]);
    assert_eq!(code, 1);
    let j: J = serde_json::from_str(&out).unwrap();
    let p = &j["problems"][0];
    assert_eq!(
        (&p["kind"], &p["sessionId"], &p["entryId"], &p["line"]),
        (&J::from("orphan"), &J::from("edge-orphan"), &J::from("0f0f0f01"), &J::from(15))
    );
    assert!(p["sessionPath"].as_str().unwrap().ends_with("edge-orphan.jsonl"));

    // Errors: exit 2 with one line.
    let (code, _, err) = common::run(&db, &["check", "no-such-session"]);
    assert_eq!(code, 2);
    assert!(err.starts_with("sessiondb: error: ") && err.lines().count() == 1, "{err}");
    let (code, _, err) = common::run(&dir.path().join("missing.sqlite"), &["check"]);
    assert_eq!(code, 2);
    assert!(err.contains("missing.sqlite") && err.contains("no database"), "{err}");
}

/// Damage made to the stored rows (not to the file) is found: counters that disagree with the
/// lines, a regular-tree flag that lies, a row whose session is gone.
#[test]
fn damaged_rows_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sessions");
    assert_eq!(common::run(&db, &["import", examples.to_str().unwrap()]).0, 0);
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        let sid: i64 = conn.query_row("SELECT min(sid) FROM sessions", [], |r| r.get(0)).unwrap();
        conn.execute("DELETE FROM entries WHERE key = (SELECT max(key) FROM entries WHERE session = ?1)", [sid])
            .unwrap();
        let sid2: i64 = conn.query_row("SELECT max(sid) FROM sessions", [], |r| r.get(0)).unwrap();
        // Give the second session a repeated id while it claims to be regular.
        conn.execute(
            "UPDATE entries SET id = (SELECT id FROM entries WHERE session = ?1 ORDER BY key LIMIT 1) \
             WHERE key = (SELECT max(key) FROM entries WHERE session = ?1)",
            [sid2],
        )
        .unwrap();
        conn.execute("UPDATE sessions SET tree_ok = 1 WHERE sid = ?1", [sid2]).unwrap();
        conn.pragma_update(None, "foreign_keys", "OFF").unwrap();
        conn.execute("INSERT INTO entries (key, session, seq, body) VALUES ((999 << 32) | 1, 999, 1, '{}')", [])
            .unwrap();
    }
    let (code, out, _) = common::run(&db, &["check", "--json"]);
    assert_eq!(code, 1, "{out}");
    let j: J = serde_json::from_str(&out).unwrap();
    let kinds: BTreeSet<&str> = j["problems"].as_array().unwrap().iter().map(|p| p["kind"].as_str().unwrap()).collect();
    for k in ["counts", "tree-flag", "duplicate-id", "foreign-key"] {
        assert!(kinds.contains(k), "{k} missing: {out}");
    }
    assert_eq!(j["integrityOk"], false);
}

/// A damaged database file: never a panic; either problems (exit 1) or a clear error (exit 2).
#[test]
fn a_corrupted_database_file_is_reported_not_panicked_on() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sessions");
    assert_eq!(common::run(&db, &["import", examples.to_str().unwrap()]).0, 0);
    {
        // Fold the WAL into the file so that damage to the file is damage to the data.
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.pragma_update(None, "journal_mode", "DELETE").unwrap();
    }
    let mut bytes = std::fs::read(&db).unwrap();
    let page = 4096;
    assert!(bytes.len() > 8 * page);
    // Scribble over a few whole b-tree pages (not page 1, which holds the schema).
    for p in [3, bytes.len() / page / 2, bytes.len() / page - 2] {
        for b in &mut bytes[p * page..(p + 1) * page] {
            *b = 0x5a;
        }
    }
    std::fs::write(&db, &bytes).unwrap();
    let (code, out, err) = common::run(&db, &["check"]);
    assert!(code == 1 || code == 2, "{code}: {out} {err}");
    assert!(!err.contains("panicked"), "{err}");
    if code == 1 {
        assert!(out.contains("database: integrity: "), "{out}");
    } else {
        assert!(err.starts_with("sessiondb: error: ") && err.lines().count() == 1, "{err}");
    }
}

/// 100,000 entries with a compaction every 10 entries and a 20,000-entry parent cycle: the
/// check is one pass (a per-entry path walk would take minutes).
#[test]
fn large_sessions_are_checked_in_linear_time() {
    const N: usize = 100_000;
    const CYCLE: usize = 20_000;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.jsonl");
    let mut text =
        String::from(r#"{"type":"session","version":3,"id":"big","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/b"}"#);
    text.push('\n');
    for i in 0..N {
        let parent = if i == 0 { "null".to_string() } else { format!("\"{:08x}\"", i - 1) };
        if i % 10 == 9 {
            text.push_str(&format!(
                r#"{{"type":"compaction","id":"{i:08x}","parentId":{parent},"timestamp":"2025-01-01T00:00:00.000Z","summary":"s","firstKeptEntryId":"{:08x}","tokensBefore":1}}"#,
                i - 5
            ));
        } else {
            text.push_str(&format!(
                r#"{{"type":"message","id":"{i:08x}","parentId":{parent},"timestamp":"2025-01-01T00:00:00.000Z","message":{{"role":"user","content":"m","timestamp":1}}}}"#
            ));
        }
        text.push('\n');
    }
    // A cycle: c0 -> c(CYCLE-1) -> ... -> c1 -> c0, and a compaction hanging off it that keeps
    // from a cycle member (on its path) and one that keeps from the main chain (not).
    for i in 0..CYCLE {
        let parent = (i + CYCLE - 1) % CYCLE;
        text.push_str(&format!(
            r#"{{"type":"message","id":"c{i:07x}","parentId":"c{parent:07x}","timestamp":"2025-01-01T00:00:00.000Z","message":{{"role":"user","content":"c","timestamp":1}}}}"#
        ));
        text.push('\n');
    }
    text.push_str(r#"{"type":"compaction","id":"k0000001","parentId":"c0000005","timestamp":"2025-01-01T00:00:00.000Z","summary":"s","firstKeptEntryId":"c0000100","tokensBefore":1}"#);
    text.push('\n');
    text.push_str(r#"{"type":"compaction","id":"k0000002","parentId":"c0000005","timestamp":"2025-01-01T00:00:00.000Z","summary":"s","firstKeptEntryId":"00000005","tokensBefore":1}"#);
    text.push('\n');
    std::fs::write(&file, text).unwrap();
    let (_d, _p, mut conn) = common::temp_db();
    let r = import_file(&mut conn, &file, None, ImportOptions::default());
    assert_eq!(r.entries as usize, N + CYCLE + 2, "{r:?}");
    let start = std::time::Instant::now();
    let report = check::check_all(&conn, |_| {}).unwrap();
    let took = start.elapsed();
    let found: Vec<(Kind, Option<&str>)> = report.problems.iter().map(|f| (f.kind, f.entry_id.as_deref())).collect();
    assert_eq!(
        found,
        [(Kind::ParentCycle, Some("c0000000")), (Kind::CompactionFirstKept, Some("k0000002"))],
        "{:?}",
        report.problems
    );
    assert!(report.problems[0].message.contains("cycle of 20000 entries"));
    assert!(took.as_secs() < 20, "check took {took:?}");
}
