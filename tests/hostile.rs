//! Hostile input through `import` and `rpc`: deeply nested JSON, very long lines, NUL bytes,
//! invalid UTF-8, huge numbers, ids with SQL and path characters, a session id like
//! `../../etc/passwd`, a cwd with newlines. Nothing panics, memory stays bounded (the
//! commands run under an address-space limit), every command keeps answering, and
//! `export --all` writes nothing outside its output directory.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Address-space limit for the commands below (KiB): a bound far below what an unbounded
/// allocation (a recursive parse, a copy per nesting level) would need.
const MEMORY_LIMIT_KB: u64 = 1 << 20; // 1 GiB

/// Exit status of a Rust panic.
const PANIC_STATUS: i32 = 101;

/// Runs the binary under the memory limit, feeding `stdin`.
fn run_limited(db: &Path, args: &[&str], stdin: &[u8], limit_kb: u64) -> (i32, Vec<u8>, String) {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {limit_kb} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_sessiondb"))
        .arg("--db")
        .arg(db)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().unwrap_or(-1), out.stdout, err)
}

fn run(db: &Path, args: &[&str]) -> (i32, String, String) {
    let (code, out, err) = run_limited(db, args, b"", MEMORY_LIMIT_KB);
    assert_ne!(code, PANIC_STATUS, "{args:?} panicked: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(code != -1, "{args:?} was killed (memory limit?): {err}");
    (code, String::from_utf8_lossy(&out).into_owned(), err)
}

fn header(id: &str, cwd: &str) -> String {
    format!(r#"{{"type":"session","version":3,"id":{id},"timestamp":"2025-01-01T00:00:00.000Z","cwd":{cwd}}}"#)
}

fn message(id: &str, parent: &str, content: &str) -> String {
    format!(
        r#"{{"type":"message","id":{id},"parentId":{parent},"timestamp":"2025-01-01T00:00:01.000Z","message":{{"role":"user","content":{content},"timestamp":1}}}}"#
    )
}

const DEPTH: usize = 1_000_000;

fn nested(depth: usize) -> String {
    format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
}

/// One file per hostile input: (file name, bytes).
fn hostile_files() -> Vec<(&'static str, Vec<u8>)> {
    let mut files: Vec<(&'static str, Vec<u8>)> = Vec::new();
    let mut add = |name, lines: Vec<String>| {
        let mut bytes = lines.join("\n").into_bytes();
        bytes.push(b'\n');
        files.push((name, bytes));
    };
    // 1e6 levels inside an entry, in the header, and unbalanced.
    add(
        "deep.jsonl",
        vec![
            header(r#""deep""#, r#""/h/deep""#),
            message(r#""d0000001""#, "null", &nested(DEPTH)),
            message(r#""d0000002""#, r#""d0000001""#, &format!(r#"{{"a":{}}}"#, nested(DEPTH))),
            message(r#""d0000003""#, r#""d0000002""#, &"[".repeat(DEPTH)),
            message(r#""d0000004""#, r#""d0000002""#, r#""after the deep lines""#),
        ],
    );
    add(
        "deep-header.jsonl",
        vec![format!(r#"{{"type":"session","version":3,"id":"deep-header","cwd":"/h","x":{}}}"#, nested(DEPTH))],
    );
    add(
        "deep-v1.jsonl",
        vec![r#"{"type":"session","id":"deep-v1","cwd":"/h"}"#.into(), message("1", "null", &nested(DEPTH))],
    );
    // NUL as escapes everywhere (valid JSON); a raw NUL byte makes a line malformed.
    add(
        "nul.jsonl",
        vec![
            header(r#""nul\u0000id""#, r#""/h/nul\u0000cwd""#),
            message(r#""n\u00000001""#, "null", r#""nul \u0000 in content""#),
            message(r#""n0000002""#, r#""n\u00000001""#, r#""child of the NUL id""#),
            format!("{}\0", message(r#""n0000003""#, r#""n0000002""#, r#""raw NUL after""#)),
            message(r#""n0000004""#, r#""n0000002""#, "\"raw \0 NUL inside a string\""),
        ],
    );
    // Huge and tiny numbers in every numeric field sessiondb reads.
    add(
        "numbers.jsonl",
        vec![
            header(r#""numbers""#, r#""/h/numbers""#),
            r#"{"type":"message","id":"h0000001","parentId":null,"timestamp":123456789012345678901234567890,"message":{"role":"user","content":"big","timestamp":1e400}}"#.into(),
            r#"{"type":"message","id":"h0000002","parentId":"h0000001","timestamp":"+275760-09-13T00:00:00.001Z","message":{"role":"assistant","content":[{"type":"text","text":1e400}],"provider":"p","model":"m","usage":{"input":1e300,"output":1e300,"cacheRead":-1e300,"cacheWrite":123456789012345678901234567890,"cost":{"total":1e400}},"timestamp":-1e400}}"#.into(),
            r#"{"type":"usage","id":"h0000003","parentId":"h0000002","timestamp":"2025-01-01T00:00:00.000Z","kind":"k","provider":"p","model":"m","usage":{"input":9007199254740993,"output":1e-400,"totalTokens":1e400}}"#.into(),
            r#"{"type":"compaction","id":"h0000004","parentId":"h0000003","timestamp":"2025-01-01T00:00:00.000Z","summary":"s","firstKeptEntryId":"h0000001","tokensBefore":1e400,"usage":{"input":-123456789012345678901234567890}}"#.into(),
            r#"{"type":"thinking_level_change","id":"h0000005","parentId":"h0000004","timestamp":-0,"thinkingLevel":1e400}"#.into(),
        ],
    );
    // Ids with SQL and path characters, pointing at each other.
    let sql = r#""'; DROP TABLE entries; --""#;
    let path = r#""../../etc/passwd""#;
    add(
        "sql-ids.jsonl",
        vec![
            header(r#""sql-ids""#, r#""/h/sql""#),
            message(sql, "null", r#""sql id""#),
            message(path, sql, r#""path id""#),
            format!(
                r#"{{"type":"label","id":"\"; DELETE FROM sessions; --","parentId":{path},"timestamp":"2025-01-01T00:00:00.000Z","targetId":{sql},"label":"'); DROP TABLE sessions; --"}}"#
            ),
            format!(
                r#"{{"type":"context_edit","id":"%s%n%x","parentId":"\"; DELETE FROM sessions; --","timestamp":"2025-01-01T00:00:00.000Z","targetId":{path},"replacement":{{"content":"x"}}}}"#
            ),
            format!(
                r#"{{"type":"compaction","id":"/etc/shadow","parentId":"%s%n%x","timestamp":"2025-01-01T00:00:00.000Z","summary":"s","firstKeptEntryId":{path},"tokensBefore":1}}"#
            ),
        ],
    );
    // Session ids that are paths.
    for (name, id) in [
        ("id-passwd.jsonl", r#""../../etc/passwd""#),
        ("id-absolute.jsonl", r#""/etc/passwd""#),
        ("id-dotdot.jsonl", "\"..\""),
        ("id-empty.jsonl", r#""""#),
        ("id-slashes.jsonl", r#""a/../../b\\..\\c""#),
    ] {
        add(name, vec![header(id, r#""/h/ids""#), message(r#""i0000001""#, "null", r#""hi""#)]);
    }
    // A cwd with newlines (and one that climbs).
    add(
        "cwd-newlines.jsonl",
        vec![header(r#""cwd-newlines""#, r#""/h/a\nb\r\nc\u2028d""#), message(r#""c0000001""#, "null", r#""hi""#)],
    );
    add(
        "cwd-climbs.jsonl",
        vec![header(r#""cwd-climbs""#, r#""../../../../etc""#), message(r#""c0000001""#, "null", r#""hi""#)],
    );
    // Invalid UTF-8 in the header, an id and content; a line of garbage bytes; a half line.
    let mut bad: Vec<u8> = Vec::new();
    bad.extend_from_slice(b"{\"type\":\"session\",\"version\":3,\"id\":\"utf8-\xff\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/h/\xfe\xff\"}\n");
    bad.extend_from_slice(b"{\"type\":\"message\",\"id\":\"u0000001\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"bad \xc3\x28 \xed\xa0\x80 \xf0\x28\x8c\x28\",\"timestamp\":1}}\n");
    bad.extend_from_slice(b"{\"type\":\"message\",\"id\":\"u\xff\xfe2\",\"parentId\":\"u0000001\",\"timestamp\":\"t\",\"message\":{\"role\":\"user\",\"content\":\"x\",\"timestamp\":1}}\n");
    bad.extend_from_slice(b"\xff\xfe\xfd not even json\n");
    bad.extend_from_slice(b"{\"type\":\"message\",\"id\":\"u0000003\",\"parentId\":\"u0000001\",");
    files.push(("utf8.jsonl", bad));
    files
}

/// Every file below `root`.
fn files_below(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// `export --all` into a directory nested deep inside `root` (so that even an escape by a few
/// `..` would land inside `root`, where this test sees it): every file written is under the
/// output directory, and nothing else changed below `root`.
fn export_stays_inside(db: &Path, root: &Path) -> Vec<PathBuf> {
    let out = root.join("x1/x2/x3/x4/x5/x6/out");
    std::fs::create_dir_all(&out).unwrap();
    let before: Vec<PathBuf> = files_below(root);
    let (code, stdout, err) = run(db, &["export", "--all", "--out", out.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{err}");
    let listed: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let after = files_below(root);
    let new: Vec<&PathBuf> = after.iter().filter(|p| !before.contains(p)).collect();
    let canon_out = out.canonicalize().unwrap();
    for p in &new {
        let c = p.canonicalize().unwrap();
        assert!(c.starts_with(&canon_out), "{} is outside {}", c.display(), canon_out.display());
        assert!(!c.strip_prefix(&canon_out).unwrap().components().any(|c| c.as_os_str() == ".."), "{}", c.display());
    }
    for f in listed.as_array().unwrap() {
        let p = PathBuf::from(f["path"].as_str().unwrap());
        assert!(p.starts_with(&out), "{}", p.display());
        assert!(new.contains(&&p), "{} listed but not written", p.display());
    }
    new.into_iter().cloned().collect()
}

#[test]
fn hostile_files_import_and_every_command_answers() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir_all(&input).unwrap();
    for (name, bytes) in hostile_files() {
        std::fs::write(input.join(name), bytes).unwrap();
    }
    let db = dir.path().join("db.sqlite");
    let (code, out, err) = run(&db, &["import", "--json", input.to_str().unwrap()]);
    assert_eq!(code, 1, "the deep header is refused: {out} {err}");
    let summary: serde_json::Value = serde_json::from_str(&out).unwrap();
    let report = |name: &str| {
        summary["reports"].as_array().unwrap().iter().find(|r| r["path"].as_str().unwrap().ends_with(name)).unwrap()
    };
    assert_eq!(report("deep-header.jsonl")["status"], "failed");
    assert_eq!(report("deep.jsonl")["entries"], 3, "the unbalanced line is skipped: {}", report("deep.jsonl"));
    assert_eq!(report("deep-v1.jsonl")["malformed_lines"], 1, "a v1 line too deep to migrate");
    assert_eq!(report("nul.jsonl")["entries"], 2, "raw NUL bytes make lines malformed");
    assert_eq!(report("numbers.jsonl")["entries"], 5);
    assert_eq!(report("sql-ids.jsonl")["entries"], 5);
    assert_eq!(report("utf8.jsonl")["entries"], 2, "{}", report("utf8.jsonl"));
    for r in summary["reports"].as_array().unwrap() {
        let name = r["path"].as_str().unwrap();
        if !name.ends_with("deep-header.jsonl") {
            assert_ne!(r["status"], "failed", "{r}");
        }
    }
    // The tables are all there.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let n: i64 = conn.query_row("SELECT count(*) FROM sessions", [], |r| r.get(0)).unwrap();
    assert_eq!(n, 13);
    drop(conn);

    // Every read command on every session: an answer, never a panic.
    for (name, _) in hostile_files() {
        if name == "deep-header.jsonl" {
            continue;
        }
        let f = input.join(name);
        let f = f.to_str().unwrap();
        for args in [
            vec!["export", f],
            vec!["export", "--format", "markdown", "--thinking", f],
            vec!["export", "--format", "html", "--thinking", f],
            vec!["context", "--json", f],
            vec!["context", f],
            vec!["branch", "--json", f],
            vec!["tree", "--json", f],
            vec!["tree", f],
            vec!["show", f],
            vec!["check", "--json", f],
        ] {
            let (code, _, err) = run(&db, &args);
            assert!(code == 0 || (args[0] == "check" && code == 1), "{args:?}: {code} {err}");
        }
    }
    // Exports are the stored lines, byte for byte: the deep lines come back whole.
    let (_, out, _) = run(&db, &["export", input.join("deep.jsonl").to_str().unwrap()]);
    assert!(out.contains(&nested(DEPTH)));
    // The transcripts hold a line too deep to parse as it is: fenced in Markdown; in HTML its
    // first 4 KB, the rest folded under <details>.
    let (_, md, _) = run(&db, &["export", "--format", "markdown", input.join("deep.jsonl").to_str().unwrap()]);
    assert!(md.contains(&nested(DEPTH)));
    let (_, page, _) = run(&db, &["export", "--format", "html", input.join("deep.jsonl").to_str().unwrap()]);
    assert!(page.contains(&format!("{}1{}", "[".repeat(DEPTH - 4096), "]".repeat(DEPTH))));
    assert!(page.contains("A line too deeply nested to show as a tree") && page.contains("<details class=\"fold\">"));
    for args in [
        vec!["list", "--json"],
        vec!["list"],
        vec!["search", "sql id"],
        vec!["search", "--json", "in content"],
        vec!["stats", "--json"],
        vec!["stats", "--by", "model"],
        vec!["find", "../../etc/passwd"],
        vec!["recent"],
        vec!["check"],
        vec!["check", "--json"],
    ] {
        let (code, _, err) = run(&db, &args);
        assert!(code == 0 || (args[0] == "check" && code == 1), "{args:?}: {code} {err}");
    }
    let (_, out, _) = run(&db, &["check", "--json"]);
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["integrityOk"], true);

    let written = export_stays_inside(&db, dir.path());
    assert_eq!(written.len(), 13);
}

/// A JSON-lines session over `rpc`, returning the responses.
fn rpc(db: &Path, requests: &[u8], limit_kb: u64) -> Vec<String> {
    let (code, out, err) = run_limited(db, &["rpc"], requests, limit_kb);
    assert_eq!(code, 0, "rpc exited {code}: {err}");
    assert!(err.is_empty(), "{err}");
    let text = String::from_utf8(out).expect("responses are UTF-8");
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    for l in &lines {
        // Responses are JSON objects (lone surrogates escaped, no raw control characters).
        assert!(matches!(sessiondb::json::scan_object(l.as_bytes()), Ok(Some(_))), "{l}");
    }
    lines
}

#[test]
fn hostile_requests_over_rpc_get_answers() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    let agent = dir.path().join("agent");
    let mut req: Vec<u8> = Vec::new();
    let mut line = |s: &str| {
        req.extend_from_slice(s.as_bytes());
        req.push(b'\n');
    };
    let sql = r#"'; DROP TABLE entries; --"#;
    line(&format!(r#"{{"id":1,"method":"create","params":["/h/a\nb\r\nc",{agent:?}]}}"#, agent = agent.join("s")));
    line(&format!(
        r#"{{"id":2,"method":"appendMessage","params":[{{"role":"user","content":{},"timestamp":1}}]}}"#,
        nested(DEPTH)
    ));
    line(
        r#"{"id":3,"method":"appendMessage","params":[{"role":"user","content":"nul \u0000 here","timestamp":1e400}]}"#,
    );
    line(
        r#"{"id":4,"method":"appendMessage","params":[{"role":"assistant","content":[{"type":"text","text":123456789012345678901234567890}],"usage":{"input":1e300,"output":1e300},"provider":"p","model":"m","timestamp":-1e400}]}"#,
    );
    line(&format!(r#"{{"id":5,"method":"appendLabelChange","params":["{sql}","x"]}}"#));
    line(r#"{"id":6,"method":"branch","params":["../../etc/passwd"]}"#);
    line(&format!(r#"{{"id":7,"method":"appendCustomEntry","params":["{sql}",{{"path":"../../etc/passwd"}}]}}"#));
    line(r#"{"id":8,"method":"appendSessionInfo","params":["name\nwith\r\nnewlines \u0000"]}"#);
    line(r#"{"id":9,"method":"create","params":["/h",null,{"id":"../../etc/passwd"}]}"#);
    line(r#"{"id":10,"method":"getTree","params":[]}"#);
    line(r#"{"id":11,"method":"buildSessionContext","params":[]}"#);
    line(r#"{"id":12,"method":"getEntries","params":[]}"#);
    line(&format!(r#"{{"id":"{sql}","method":"{sql}","params":[]}}"#));
    line(&format!(r#"{{"id":{},"method":"getLeafId"}}"#, nested(DEPTH)));
    line(r#"{"id":13,"method":"create","params":["/h/nul\u0000cwd"]}"#);
    line(r#"{"id":14,"method":"appendMessage","params":[{"role":"user","content":"in the NUL cwd","timestamp":1}]}"#);
    line(r#"{"id":15,"method":"appendCompaction","params":["s","../../etc/passwd",1e400]}"#);
    line(r#"{"id":16,"method":"buildSessionProjection","params":[]}"#);
    line(r#"{"id":17,"method":"listAll","params":[]}"#);
    std::fs::write(dir.path().join("notes.txt"), "not a session").unwrap();
    let climbing = dir.path().join("a/b/../../notes.txt");
    line(&format!(r#"{{"id":18,"method":"open","params":[{climbing:?}]}}"#));
    line(r#"{"id":19,"method":"getSessionFile","params":[]}"#);
    req.extend_from_slice(b"{\"id\":20,\"method\":\"appendMessage\",\"params\":[{\"role\":\"user\",\"content\":\"raw \xff\xfe bytes\",\"timestamp\":1}]}\n");
    req.extend_from_slice(b"\0\0\0\n");
    req.extend_from_slice(b"{\"id\":21,\"method\":\"getEntryCount\",\"params\":[]}\0\n");
    req.extend_from_slice(b"{\"id\":22,\"method\":\"getEntryCount\",\"params\":[]}\n");
    // A session file whose header id is a path: opened (imported), appended to, exported.
    let evil = dir.path().join("evil.jsonl");
    let text = format!(
        "{}\n{}\n",
        header(r#""../../etc/passwd""#, r#""/h/evil""#),
        message(r#""e0000001""#, "null", r#""hi""#)
    );
    std::fs::write(&evil, text).unwrap();
    req.extend_from_slice(format!("{{\"id\":23,\"method\":\"open\",\"params\":[{evil:?}]}}\n").as_bytes());
    req.extend_from_slice(
        br#"{"id":24,"method":"appendMessage","params":[{"role":"user","content":"more","timestamp":1}]}"#,
    );
    req.extend_from_slice(b"\n{\"id\":25,\"method\":\"getSessionId\",\"params\":[]}\n");
    let responses = rpc(&db, &req, MEMORY_LIMIT_KB);
    assert_eq!(responses.len(), 28, "one response per non-blank line: {responses:#?}");
    assert!(responses[26].starts_with(r#"{"id":24,"result""#), "{}", responses[26]);
    assert_eq!(responses[27], r#"{"id":25,"result":"../../etc/passwd"}"#);
    let r = |i: usize| responses[i].as_str();
    assert!(r(0).contains(r#""result""#), "{}", r(0));
    assert!(r(1).contains("nesting too deep"), "{}", r(1));
    assert!(r(2).starts_with(r#"{"id":3,"result""#), "{}", r(2));
    assert!(r(3).starts_with(r#"{"id":4,"result""#), "{}", r(3));
    assert!(r(4).contains("not found"), "{}", r(4));
    assert!(r(5).contains("Entry ../../etc/passwd not found"), "{}", r(5));
    assert!(r(6).starts_with(r#"{"id":7,"result""#), "{}", r(6));
    assert!(r(7).starts_with(r#"{"id":8,"result""#), "{}", r(7));
    assert!(r(8).contains("Session id must be"), "{}", r(8));
    assert!(r(12).contains("unknown method"), "{}", r(12));
    assert!(r(13).contains("nesting too deep"), "{}", r(13));
    assert!(r(15).starts_with(r#"{"id":14,"result""#), "{}", r(15));
    assert!(r(17).starts_with(r#"{"id":16,"result""#), "{}", r(17));
    assert!(r(19).contains("not a valid pi session"), "{}", r(19));
    assert!(r(21).starts_with(r#"{"id":20,"result""#), "{}", r(21));
    assert!(r(22).contains("invalid JSON"), "{}", r(22));
    assert!(r(23).contains("invalid JSON"), "{}", r(23));
    assert!(r(24).starts_with(r#"{"id":22,"result""#), "{}", r(24));

    // The database is whole and its sessions export inside the output directory.
    let (code, out, _) = run(&db, &["check", "--json"]);
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["integrityOk"], true, "{out}");
    assert!(code == 0 || code == 1);
    let written = export_stays_inside(&db, dir.path());
    assert_eq!(written.len(), 3, "{written:?}");
    assert!(written.iter().any(|p| p.ends_with("evil.jsonl")), "{written:?}");
    // Nothing was written where the hostile paths point.
    assert!(!agent.exists(), "sessiondb writes no session files");
}

/// A symbolic link already inside the output directory does not lead the export out of it.
#[cfg(unix)]
#[test]
fn export_refuses_a_symlink_that_leads_out_of_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("proj");
    std::fs::create_dir_all(input.join("a/b")).unwrap();
    let file = input.join("a/b/s.jsonl");
    let text = format!("{}\n{}\n", header(r#""sym""#, r#""/h""#), message(r#""s0000001""#, "null", r#""hi""#));
    std::fs::write(&file, text).unwrap();
    let db = dir.path().join("db.sqlite");
    assert_eq!(run(&db, &["import", input.to_str().unwrap()]).0, 0);
    let out = dir.path().join("out");
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    // The session is exported as a/b/s.jsonl; a/ inside the output is a link elsewhere.
    std::os::unix::fs::symlink(&elsewhere, out.join("a")).unwrap();
    let (code, _, err) = run(&db, &["export", "--all", "--out", out.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("refusing to write outside") && err.lines().count() == 1, "{err}");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0, "nothing created through the link");
}

/// Size of the long line: 100 MB takes about 20 CPU seconds through import, export, context
/// and rpc in a debug build, so the default test uses 16 MB (`SESSIONDB_LONG_LINE_MB`
/// overrides it) and the full size is an ignored test.
fn long_line_size() -> usize {
    std::env::var("SESSIONDB_LONG_LINE_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(16) << 20
}

/// A long string with escapes, quotes and multi-byte characters spread through it.
fn long_content(size: usize) -> String {
    let chunk = "lorem ipsum \\n \\\"quoted\\\" é 中文 😀 \\u0041 dolor sit amet ";
    let mut s = String::with_capacity(size + chunk.len() + 2);
    s.push('"');
    while s.len() < size {
        s.push_str(chunk);
    }
    s.push('"');
    s
}

fn long_line_through_import_and_rpc(size: usize, limit_kb: u64) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("long.jsonl");
    let content = long_content(size);
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&file).unwrap());
        writeln!(f, "{}", header(r#""long""#, r#""/h/long""#)).unwrap();
        writeln!(f, "{}", message(r#""l0000001""#, "null", &content)).unwrap();
        writeln!(f, "{}", message(r#""l0000002""#, r#""l0000001""#, r#""short""#)).unwrap();
        // The same long line, broken: unterminated string at the end of the file.
        f.write_all(&message(r#""l0000003""#, r#""l0000002""#, &content).as_bytes()[..content.len() / 2]).unwrap();
    }
    let db = dir.path().join("db.sqlite");
    let (code, out, err) = run_limited(&db, &["import", "--json", file.to_str().unwrap()], b"", limit_kb);
    assert_eq!(code, 0, "{err}");
    let summary: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!((summary["entries"].as_u64(), summary["skipped_lines"].as_u64()), (Some(2), Some(1)));
    let (code, out, err) = run_limited(&db, &["export", "long"], b"", limit_kb);
    assert_eq!(code, 0, "{err}");
    let exported = String::from_utf8(out).unwrap();
    assert_eq!(exported.lines().nth(1).map(str::len), Some(message(r#""l0000001""#, "null", &content).len()));
    let (code, _, err) = run_limited(&db, &["context", "--json", "long"], b"", limit_kb);
    assert_eq!(code, 0, "{err}");

    // The same over rpc: one request line of that size.
    let req = format!(
        "{}\n{}\n{}\n",
        r#"{"id":1,"method":"create","params":["/h/long-rpc"]}"#,
        format_args!(
            r#"{{"id":2,"method":"appendMessage","params":[{{"role":"user","content":{content},"timestamp":1}}]}}"#
        ),
        r#"{"id":3,"method":"getEntryCount","params":[]}"#,
    );
    drop(content);
    let responses = rpc(&db, req.as_bytes(), limit_kb);
    assert_eq!(responses.len(), 3);
    assert!(responses[1].starts_with(r#"{"id":2,"result":""#), "{}", &responses[1][..100.min(responses[1].len())]);
    assert_eq!(responses[2], r#"{"id":3,"result":1}"#);
}

#[test]
fn a_long_line_through_import_and_rpc() {
    let size = long_line_size();
    // Bounded: a few copies of the line, plus the program.
    long_line_through_import_and_rpc(size, MEMORY_LIMIT_KB.max((size as u64 >> 10) * 12 + (512 << 10)));
}

/// The full 100 MB line (`cargo test --test hostile -- --ignored`, ~30 s in a debug build).
#[test]
#[ignore = "100 MB line: ~30 s in a debug build; run with -- --ignored"]
fn a_100_mb_line_through_import_and_rpc() {
    long_line_through_import_and_rpc(100 << 20, 100 * 12 * 1024 + (512 << 10));
}

/// Repeated ids put one node under several parents; nested, they multiply (fuzzing found a
/// 23 KB file whose tree pi's JSON would expand past 500 MB). Here 40 levels would expand to
/// 2^40 nodes: the tree lists every subtree once instead, and answers at once.
#[test]
fn repeated_ids_cannot_blow_up_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("dag.jsonl");
    let mut lines = vec![header(r#""dag""#, r#""/h""#), message(r#""x0""#, "null", r#""root""#)];
    for i in 1..=40 {
        let p = format!("\"x{}\"", i - 1);
        lines.push(message(&format!("\"a{i}\""), &p, r#""a""#));
        lines.push(message(&format!("\"b{i}\""), &p, r#""b""#));
        // The same id under both: its subtree (everything below) is placed twice.
        lines.push(message(&format!("\"x{i}\""), &format!("\"a{i}\""), r#""x under a""#));
        lines.push(message(&format!("\"x{i}\""), &format!("\"b{i}\""), r#""x under b""#));
    }
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let db = dir.path().join("db.sqlite");
    assert_eq!(run(&db, &["import", file.to_str().unwrap()]).0, 0);
    let start = std::time::Instant::now();
    let (code, out, err) = run(&db, &["tree", "--json", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let nodes: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    assert!(nodes.len() <= 4 * 40 + 1, "{} nodes", nodes.len());
    let responses = rpc(
        &db,
        format!(
            "{{\"id\":1,\"method\":\"open\",\"params\":[{:?}]}}\n{{\"id\":2,\"method\":\"getTree\",\"params\":[]}}\n",
            file.to_str().unwrap()
        )
        .as_bytes(),
        MEMORY_LIMIT_KB,
    );
    assert!(responses[1].starts_with(r#"{"id":2,"result":[{"entry""#), "{}", responses[1]);
    assert!(responses[1].len() < 100_000);
    assert!(start.elapsed().as_secs() < 10, "{:?}", start.elapsed());
    // Small repeats still show every placement, as pi does (tests/tree_projection.rs compares
    // the oracle's duplicate-ids file with pi's own tree).
}

/// Hostile command-line arguments: odd dates and ages, queries full of LIKE and FTS syntax,
/// references that are paths or SQL. Answers or one error line, never a panic.
#[test]
fn hostile_arguments_get_answers_or_errors() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir_all(&input).unwrap();
    let file = input.join("s.jsonl");
    let text = format!("{}\n{}\n", header(r#""args""#, r#""/h/args""#), message(r#""a0000001""#, "null", r#""hello""#));
    std::fs::write(&file, text).unwrap();
    let db = dir.path().join("db.sqlite");
    assert_eq!(run(&db, &["import", input.to_str().unwrap()]).0, 0);
    let long_query = "x".repeat(100_000);
    let cases: Vec<Vec<&str>> = vec![
        vec!["stats", "--since", "7é"],
        vec!["stats", "--since", "é"],
        vec!["stats", "--since", ""],
        vec!["stats", "--since", "99999999999999999d"],
        vec!["stats", "--since=-9223372036854775807d"],
        vec!["stats", "--until", "+275760-09-13T00:00:00.000Z"],
        vec!["stats", "--by", "'; DROP TABLE usage; --"],
        vec!["search", ""],
        vec!["search", "%"],
        vec!["search", "_\\%'\""],
        vec!["search", "\"unbalanced"],
        vec!["search", "NEAR(a b) OR x* AND -y"],
        vec!["search", &long_query],
        vec!["search", "hello", "--since", "9999999999999999999m"],
        vec!["search", "hello", "--limit=-5"],
        vec!["search", "hello", "--role", "'; DROP TABLE texts; --"],
        vec!["find", ""],
        vec!["find", "%"],
        vec!["export", ""],
        vec!["export", "../../etc/passwd"],
        vec!["export", "arg"],
        vec!["export", "%"],
        vec!["context", "--leaf", "'; DROP TABLE entries; --", "args"],
        vec!["children", "args", "../../etc/passwd"],
        vec!["branch", "--from", "\u{1}\u{7f}", "args"],
        vec!["list", "--cwd", "\n"],
        vec!["list", "--session-dir", "../../../../../../.."],
        vec!["recent", "--cwd", "../.."],
        vec!["check", "../../etc/passwd"],
    ];
    for args in cases {
        let (code, _, err) = run(&db, &args);
        assert!(code == 0 || ((code == 1 || code == 2) && err.lines().count() <= 1), "{args:?}: {code} {err}");
    }
    // The database is unharmed.
    let (code, _, err) = run(&db, &["check"]);
    assert_eq!(code, 0, "{err}");
}
