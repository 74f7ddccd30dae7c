//! The `sessiondb import` / `export` commands end to end.

mod common;

use std::path::Path;

/// A v3 line of every entry type, with the values JSON writers get wrong.
const ODD_V3: &str = concat!(
    r#"{"type":"session","version":3,"id":"odd-values","timestamp":"2025-03-01T10:00:00.000Z","cwd":"/home/u/ünï 中文"}"#,
    "\n",
    r#"{"type":"model_change","id":"a0000001","parentId":null,"timestamp":"2025-03-01T10:00:00.001Z","provider":"anthropic","modelId":"claude"}"#,
    "\n",
    r#"{"type":"thinking_level_change","id":"a0000002","parentId":"a0000001","timestamp":"2025-03-01T10:00:00.002Z","thinkingLevel":"high"}"#,
    "\n",
    r#"{"type":"message","id":"a0000003","parentId":"a0000002","timestamp":"2025-03-01T10:00:00.003Z","message":{"role":"user","content":"emoji 😀 U+2028 [ ] ctrl \u0001\u001f\b\f\n\r\t quote \" backslash \\ é \u00e9 \/ ","timestamp":1740823200003}}"#,
    "\n",
    r#"{"type":"message","id":"a0000004","parentId":"a0000003","timestamp":"2025-03-01T10:00:00.004Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"ok"},{"type":"toolCall","id":"c1","name":"bash","arguments":{"n":1e21,"m":1E21,"sum":0.30000000000000004,"neg":-0,"big":9007199254740993,"f":1.0,"tiny":1e-7,"ex":5e-324}}],"provider":"anthropic","model":"claude","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0.1,"output":0.2,"cacheRead":0,"cacheWrite":0,"total":0.30000000000000004}},"stopReason":"toolUse","timestamp":1740823200004}}"#,
    "\n",
    r#"{"type":"message","id":"a0000005","parentId":"a0000004","timestamp":"2025-03-01T10:00:00.005Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"\u2028\u2029 lone \ud800 pair \ud83d\ude00"}],"isError":false,"timestamp":1740823200005}}"#,
    "\n",
    r#"{"type":"usage","id":"a0000006","parentId":"a0000005","timestamp":"2025-03-01T10:00:00.006Z","kind":"summary","provider":"p","model":"m","usage":{"input":1,"output":2},"note":"n"}"#,
    "\n",
    r#"{"type":"compaction","id":"a0000007","parentId":"a0000006","timestamp":"2025-03-01T10:00:00.007Z","summary":"sum","firstKeptEntryId":"a0000004","tokensBefore":123,"details":{"a":[]},"fromHook":false}"#,
    "\n",
    r#"{"type":"branch_summary","id":"a0000008","parentId":"a0000003","timestamp":"2025-03-01T10:00:00.008Z","fromId":"a0000007","summary":"bs"}"#,
    "\n",
    r#"{"type":"custom","customType":"ext","data":{"2":"b","1":"a","z":null},"id":"a0000009","parentId":"a0000008","timestamp":"2025-03-01T10:00:00.009Z"}"#,
    "\n",
    r#"{"type":"custom_message","customType":"ext","content":"hi","display":true,"id":"a000000a","parentId":"a0000009","timestamp":"2025-03-01T10:00:00.010Z"}"#,
    "\n",
    r#"{"type":"context_edit","id":"a000000b","parentId":"a000000a","timestamp":"2025-03-01T10:00:00.011Z","targetId":"a0000003","replacement":null}"#,
    "\n",
    r#"{"type":"label","id":"a000000c","parentId":"a000000b","timestamp":"2025-03-01T10:00:00.012Z","targetId":"a0000003","label":"bookmark"}"#,
    "\n",
    r#"{"type":"session_info","id":"a000000d","parentId":"a000000c","timestamp":"2025-03-01T10:00:00.013Z","name":"odd values"}"#,
    "\n",
    r#"{"type":"future_kind","id":"a000000e","parentId":"a000000d","timestamp":"2025-03-01T10:00:00.014Z","whatever":{"nested":[1,2,{"x":-0.0}]}}"#,
    "\n",
);

#[test]
fn odd_values_and_every_entry_type_round_trip_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    for b in common::backends(dir.path(), "odd") {
        odd_values_round_trip_on(dir.path(), b.name, &b.db);
    }
}

fn odd_values_round_trip_on(dir: &Path, backend: &str, db: &Path) {
    let file = dir.join("odd.jsonl");
    std::fs::write(&file, ODD_V3).unwrap();
    let (code, out, err) = common::run(db, &["import", "--json", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{backend}: {err}");
    let summary: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(summary["sessions"], 1, "{backend}");
    assert_eq!(summary["entries"], 14, "{backend}");
    assert_eq!(summary["skipped_lines"], 0, "{backend}");
    for reference in ["odd-values", "odd-", file.to_str().unwrap()] {
        let (code, out, err) = common::run(db, &["export", reference]);
        assert_eq!(code, 0, "{backend}: {reference}: {err}");
        assert!(out == ODD_V3, "{backend}: {reference}: export differs");
    }
    let copy = dir.join(format!("copy-{backend}.jsonl"));
    let (code, _, err) = common::run(db, &["export", "odd-values", "-o", copy.to_str().unwrap()]);
    assert_eq!(code, 0, "{backend}: {err}");
    assert_eq!(std::fs::read_to_string(copy).unwrap(), ODD_V3, "{backend}");
}

#[cfg(unix)]
#[test]
fn new_databases_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("nested/dirs/db.sqlite");
    let file = dir.path().join("odd.jsonl");
    std::fs::write(&file, ODD_V3).unwrap();
    let (code, _, err) = common::run(&db, &["import", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let mode = std::fs::metadata(&db).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn session_references_that_match_nothing_or_several_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    for (i, id) in ["abcd-one", "abcd-two"].iter().enumerate() {
        let f = dir.path().join(format!("{i}.jsonl"));
        std::fs::write(&f, ODD_V3.replacen("odd-values", id, 1)).unwrap();
        assert_eq!(common::run(&db, &["import", f.to_str().unwrap()]).0, 0);
    }
    let (code, _, err) = common::run(&db, &["export", "abcd"]);
    assert_eq!(code, 2);
    assert!(err.contains("ambiguous") && err.contains("abcd-one") && err.contains("abcd-two"), "{err}");
    let (code, _, err) = common::run(&db, &["export", "zzzz"]);
    assert_eq!(code, 2);
    assert!(err.contains("no session"), "{err}");
    let (code, _, err) = common::run(&db, &["export", "abc"]);
    assert_eq!(code, 2);
    assert!(err.contains("at least 4"), "{err}");
    assert_eq!(common::run(&db, &["export", "abcd-one"]).0, 0);
}

#[test]
fn a_bad_file_is_reported_and_does_not_stop_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir(&src).unwrap();
    std::fs::write(src.join("a.jsonl"), ODD_V3).unwrap();
    std::fs::write(src.join("b.jsonl"), "not json at all\n{\"type\":\"message\"}\n").unwrap();
    std::fs::write(src.join("c.jsonl"), ODD_V3.replacen("odd-values", "other", 1)).unwrap();
    std::fs::write(src.join("notes.txt"), "ignored").unwrap();
    // The same messages, exit statuses and summaries on each backend.
    for b in common::backends(dir.path(), "bad_file") {
        let (db, backend) = (&b.db, b.name);
        let (code, out, err) = common::run(db, &["import", src.to_str().unwrap()]);
        assert_eq!(code, 1, "{backend}: a failure makes the exit status 1");
        let b_file = src.join("b.jsonl");
        assert_eq!(
            err,
            format!(
                "{}: not imported: not a session file: line 2: the first JSON object is not a session header\n",
                b_file.display()
            ),
            "{backend}"
        );
        assert!(out.contains("sessions") && out.contains("failures"), "{backend}: {out}");
        let (_, out, _) = common::run(db, &["import", "--json", src.to_str().unwrap()]);
        let s: serde_json::Value = serde_json::from_str(&out).unwrap();
        let totals = (s["files"].as_u64(), s["unchanged"].as_u64(), s["failures"].as_u64());
        assert_eq!(totals, (Some(3), Some(2), Some(1)), "{backend}");
        // Nothing of the bad file was written: two sessions, exported as they were.
        let back = dir.path().join(format!("back-{backend}"));
        let (code, out, err) = common::run(db, &["export", "--all", "--out", back.to_str().unwrap()]);
        assert_eq!(code, 0, "{backend}: {err}");
        assert!(out.contains("exported 2 sessions"), "{backend}: {out}");
        let (code, _, err) = common::run(db, &["import", dir.path().join("missing").to_str().unwrap()]);
        assert_eq!(code, 2, "{backend}");
        assert!(err.contains("missing") && err.contains("No such file"), "{backend}: {err}");
    }
}

/// A small valid session as pi writes it.
fn synthetic_session(i: usize, cwd: &str) -> (String, String) {
    let id = format!("0190a000-0000-7000-8000-{i:012}");
    let ts = format!("2025-01-{:02}T{:02}:{:02}:00.000Z", 1 + i % 28, i % 24, i % 60);
    let mut lines = vec![format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"{ts}","cwd":{}}}"#,
        sessiondb::json::quote(cwd)
    )];
    let mut parent = "null".to_string();
    for j in 0..5 {
        let eid = format!("{:08x}", i * 16 + j);
        let role = if j % 2 == 0 { "user" } else { "assistant" };
        lines.push(format!(
            r#"{{"type":"message","id":"{eid}","parentId":{parent},"timestamp":"{ts}","message":{{"role":"{role}","content":"message {j} of session {i} ✓","timestamp":{}}}}}"#,
            1_735_689_600_000u64 + (i * 10 + j) as u64
        ));
        parent = format!("\"{eid}\"");
    }
    let name = sessiondb::internals::layout::relative_session_path(cwd, &ts, &id);
    (name, lines.join("\n") + "\n")
}

#[test]
fn a_directory_of_1000_sessions_imports_and_exports_back_identically() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("sessions");
    let cwds = ["/home/u/a", "/home/u/b c", "/srv/x:y", "/home/u/ü/中文"];
    for i in 0..1000 {
        let (rel, text) = synthetic_session(i, cwds[i % cwds.len()]);
        let p = src.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    for b in common::backends(dir.path(), "dir1000") {
        let (db, backend) = (&b.db, b.name);
        let (code, out, err) = common::run(db, &["import", "--json", src.to_str().unwrap()]);
        assert_eq!(code, 0, "{backend}: {err}");
        let s: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            (s["sessions"].as_u64(), s["entries"].as_u64(), s["failures"].as_u64()),
            (Some(1000), Some(5000), Some(0)),
            "{backend}"
        );
        let (code, out, _) = common::run(db, &["import", src.to_str().unwrap()]);
        assert_eq!(code, 0, "{backend}");
        assert!(out.lines().any(|l| l.starts_with("unchanged") && l.ends_with(" 1000")), "{backend}: {out}");
        let back = dir.path().join(format!("back-{backend}"));
        let (code, out, err) = common::run(db, &["export", "--all", "--out", back.to_str().unwrap()]);
        assert_eq!(code, 0, "{backend}: {err}");
        assert!(out.contains("exported 1000 sessions"), "{backend}: {out}");
        let (a, b) = (common::read_tree(&src), common::read_tree(&back));
        assert_eq!(a.len(), 1000);
        assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>(), "{backend}");
        assert!(a == b, "{backend}: exported tree differs");
    }
}

#[test]
fn export_all_of_the_oracle_corpus_reproduces_its_valid_v3_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut outputs = Vec::new();
    for b in common::backends(dir.path(), "oracle_all") {
        outputs.push(export_all_of_the_oracle_corpus_on(dir.path(), b.name, &b.db));
    }
    // The same messages and summary on each backend.
    for (backend, o) in &outputs[1..] {
        assert_eq!(o, &outputs[0].1, "{backend}: import's output differs from SQLite's");
    }
}

/// Imports the oracle corpus on `db` and checks `export --all`; import's (stderr, stdout).
fn export_all_of_the_oracle_corpus_on(
    dir: &Path,
    backend: &'static str,
    db: &Path,
) -> (&'static str, (String, String)) {
    let src = common::oracle().join("sessions");
    let (code, out, err) = common::run(db, &["import", src.to_str().unwrap()]);
    assert_eq!(code, 1, "{backend}: the corpus holds files pi refuses too");
    let back = dir.join(format!("back-{backend}"));
    assert_eq!(common::run(db, &["export", "--all", "--out", back.to_str().unwrap()]).0, 0, "{backend}");
    let exported = common::read_tree(&back);
    let mut same = 0;
    for (file, g) in common::goldens() {
        let original = std::fs::read(file).unwrap();
        let rel = file.strip_prefix(&src).unwrap();
        if g["openError"].is_null() && g["rewrittenChanged"] == false && !original.is_empty() {
            let valid = String::from_utf8_lossy(&original)
                .split('\n')
                .all(|l| l.is_empty() || serde_json::from_str::<serde_json::Value>(l).is_ok_and(|v| v.is_object()));
            if valid && !original.contains(&b'\r') {
                assert!(exported.get(rel) == Some(&original), "{backend}: {}", rel.display());
                same += 1;
            }
        }
    }
    assert!(same >= 25, "{backend}: {same}");
    // The summary names the database; the rest is the same everywhere.
    let out = out.lines().filter(|l| !l.starts_with("database: ")).collect::<Vec<_>>().join("\n");
    (backend, (err, out))
}

/// Output to a reader that stops early (`sessiondb show X | head -1`) ends quietly with
/// status 0, for every command that prints more than a pipe holds.
#[test]
fn output_to_a_closed_pipe_ends_quietly_with_status_0() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    let file = dir.path().join("long.jsonl");
    let mut text = String::from(
        r#"{"type":"session","version":3,"id":"long-one","timestamp":"2025-03-01T10:00:00.000Z","cwd":"/p/long"}"#,
    );
    text.push('\n');
    let mut parent = "null".to_string();
    for i in 0..3000 {
        text.push_str(&format!(
            r#"{{"type":"message","id":"e{i:07}","parentId":{parent},"timestamp":"2025-03-01T10:00:00.000Z","message":{{"role":"user","content":"pipe test line {i} with some words to fill the pipe buffer quickly","timestamp":1740823200000}}}}"#
        ));
        text.push('\n');
        parent = format!("\"e{i:07}\"");
    }
    std::fs::write(&file, &text).unwrap();
    assert_eq!(common::run(&db, &["import", file.to_str().unwrap()]).0, 0);
    for args in [
        &["show", "long-one"][..],
        &["context", "long-one"],
        &["context", "long-one", "--json"],
        &["tree", "long-one"],
        &["export", "long-one"],
        &["search", "pipe test", "--limit", "3000"],
        &["search", "pipe test", "--limit", "3000", "--json"],
    ] {
        let mut child = common::bin()
            .arg("--db")
            .arg(&db)
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
        // The reader is gone: the rest of the output meets a closed pipe.
        let out = child.wait_with_output().unwrap();
        assert!(!first.is_empty(), "{args:?}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{args:?}");
    }
}
