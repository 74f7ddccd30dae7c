//! `push` into PostgreSQL and the commands served from it, against a real server: the one
//! `.ci/postgres.sh` starts (`SESSIONDB_TEST_PG_URL`). Without that variable the tests skip
//! with a message, unless `SESSIONDB_REQUIRE_PG` is set (CI), where they fail.
//! Each test works in a database of its own on that server.

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The server's URL, or `None` (the test skips) when there is none.
fn server() -> Option<String> {
    common::pg::server()
}

/// A new, empty database on the server; returns its URL.
fn fresh_db(url: &str) -> String {
    common::pg::fresh_db_named(url, "t")
}

fn sdb(db: &str, args: &[&str]) -> (i32, String, String) {
    let out = common::bin().arg("--db").arg(db).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `push --json` of `local` to `url` with extra arguments; the summary.
fn push(local: &Path, url: &str, extra: &[&str]) -> Value {
    let mut args = vec!["push", "--to", url, "--json"];
    args.extend_from_slice(extra);
    let (code, out, err) = sdb(local.to_str().unwrap(), &args);
    assert_eq!(code, 0, "push failed: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn export_all(db: &str, out: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let (code, _, err) = sdb(db, &["export", "--all", "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    common::read_tree(out)
}

fn header(id: &str, cwd: &str) -> String {
    format!(r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2025-03-01T10:00:00.000Z","cwd":"{cwd}"}}"#)
}

fn message(n: usize, parent: Option<usize>, text: &str) -> String {
    let parent = parent.map_or("null".to_string(), |p| format!("\"e{p:07}\""));
    format!(
        r#"{{"type":"message","id":"e{n:07}","parentId":{parent},"timestamp":"2025-03-01T10:00:{:02}.000Z","message":{{"role":"user","content":"{text}","timestamp":1740823200000}}}}"#,
        n % 60
    )
}

/// A session file of `n` messages.
fn session_text(id: &str, n: usize) -> String {
    let mut t = header(id, "/p/one");
    t.push('\n');
    for i in 0..n {
        t.push_str(&message(i, i.checked_sub(1), &format!("line {i} of {id}")));
        t.push('\n');
    }
    t
}

/// Rows of a table on the server.
fn count(url: &str, sql: &str) -> i64 {
    let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
    c.query_one(sql, &[]).unwrap().get(0)
}

#[test]
fn the_oracle_corpus_round_trips_through_the_server_byte_for_byte() {
    let Some(url) = server() else { return };
    let url = fresh_db(&url);
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("local.sqlite");
    // The oracle corpus (pi's own files, examples/sessions among them), and shared/corpus/real.
    let mut sources = vec![common::oracle().join("sessions")];
    let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/real");
    if real.is_dir() {
        sources.push(real);
    }
    let mut args = vec!["import"];
    args.extend(sources.iter().map(|p| p.to_str().unwrap()));
    let (code, _, err) = common::run(&local, &args);
    assert!(code == 0 || code == 1, "{err}");

    let first = push(&local, &url, &["--origin", "m1"]);
    assert!(first["new"].as_u64().unwrap() > 30, "{first}");
    assert_eq!(first["new"], first["sessions"]);
    let lines = first["lines"].as_u64().unwrap();
    assert_eq!(count(&url, "SELECT count(*) FROM entries") as u64, lines);

    // Every session, exported from the server, is what SQLite exports: the same files, the same bytes.
    let from_sqlite = export_all(local.to_str().unwrap(), &dir.path().join("sqlite"));
    let from_pg = export_all(&url, &dir.path().join("pg"));
    assert_eq!(from_sqlite.len(), first["sessions"].as_u64().unwrap() as usize);
    let from_pg: std::collections::BTreeMap<PathBuf, Vec<u8>> =
        from_pg.into_iter().map(|(p, b)| (p.strip_prefix("m1").unwrap().to_path_buf(), b)).collect();
    assert!(from_sqlite == from_pg, "exports differ");
    // ...and the valid v3 files of the corpus are what pi wrote, byte for byte.
    let src = common::oracle().join("sessions");
    let mut same = 0;
    for (file, g) in common::goldens() {
        let original = std::fs::read(file).unwrap();
        if g["openError"].is_null()
            && g["rewrittenChanged"] == false
            && !original.is_empty()
            && !original.contains(&b'\r')
        {
            let valid = String::from_utf8_lossy(&original)
                .split('\n')
                .all(|l| l.is_empty() || serde_json::from_str::<Value>(l).is_ok_and(|v| v.is_object()));
            if valid {
                assert!(from_pg.get(file.strip_prefix(&src).unwrap()) == Some(&original), "{}", file.display());
                same += 1;
            }
        }
    }
    assert!(same >= 25, "{same}");

    // One session by id, to stdout and to a file.
    let (_, found, _) = sdb(local.to_str().unwrap(), &["find", "--json", "01a23953-e42c-718a-bccb-569788a91100"]);
    let path: Vec<String> = serde_json::from_str(&found).unwrap();
    let (code, out, err) = sdb(&url, &["export", "01a23953-e42c-718a"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.as_bytes(), std::fs::read(&path[0]).unwrap());

    // list and find answer as on SQLite.
    for args in [
        &["list", "--json"][..],
        &["list", "--json", "--cwd", "/home/u/proj-a"],
        &["list", "--json", "--sort", "name", "--limit", "5"],
        &["list"],
        &["find", "--json", "01a23953-e42c-718a-bccb-569788a91100"],
        &["find", "--json", "01a2"],
        &["find", "--json", "no-such-id"],
    ] {
        let on_sqlite = sdb(local.to_str().unwrap(), args);
        let on_pg = sdb(&url, args);
        assert_eq!(on_sqlite.0, on_pg.0, "{args:?}: {}", on_pg.2);
        assert!(on_sqlite.1 == on_pg.1, "{args:?}: outputs differ");
    }

    // A second push writes nothing.
    let second = push(&local, &url, &["--origin", "m1"]);
    assert_eq!(second["lines"], 0, "{second}");
    assert_eq!(second["unchanged"], first["sessions"], "{second}");
    assert_eq!(second["batches"], 0, "{second}");
}

#[test]
fn appends_alone_are_pushed_and_rewritten_sessions_are_sent_again() {
    let Some(url) = server() else { return };
    let url = fresh_db(&url);
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions/--p-one--");
    std::fs::create_dir_all(&sessions).unwrap();
    let (a, b) = (sessions.join("a.jsonl"), sessions.join("b.jsonl"));
    std::fs::write(&a, session_text("sess-a", 50)).unwrap();
    std::fs::write(&b, session_text("sess-b", 20)).unwrap();
    let local = dir.path().join("local.sqlite");
    let from = dir.path().join("sessions");
    let from = from.to_str().unwrap();

    let first = push(&local, &url, &["--from", from, "--origin", "m"]);
    assert_eq!((first["new"].as_u64(), first["lines"].as_u64()), (Some(2), Some(70)), "{first}");

    // Three lines appended to a: only those are sent.
    let mut text = std::fs::read_to_string(&a).unwrap();
    for i in 50..53 {
        text.push_str(&message(i, Some(i - 1), "appended"));
        text.push('\n');
    }
    std::fs::write(&a, &text).unwrap();
    let second = push(&local, &url, &["--from", from, "--origin", "m"]);
    assert_eq!(second["appended"], 1, "{second}");
    assert_eq!(second["unchanged"], 1, "{second}");
    assert_eq!(second["lines"], 3, "{second}");
    assert_eq!(sdb(&url, &["export", "sess-a"]).1, text);
    assert_eq!(count(&url, "SELECT count(*) FROM entries"), 73);

    // b rewritten with other lines (a line changed in the middle, the same count): sent whole.
    let mut lines: Vec<String> = session_text("sess-b", 20).lines().map(str::to_string).collect();
    lines[7] = message(6, Some(5), "changed in place");
    let rewritten = lines.join("\n") + "\n";
    std::fs::write(&b, &rewritten).unwrap();
    let third = push(&local, &url, &["--from", from, "--origin", "m"]);
    assert_eq!(third["resent"], 1, "{third}");
    assert_eq!(third["lines"], 20, "{third}");
    assert_eq!(sdb(&url, &["export", "sess-b"]).1, rewritten);
    assert_eq!(count(&url, "SELECT count(*) FROM entries"), 73);

    // Deleted locally: kept on the server, unless --prune.
    std::fs::remove_file(&b).unwrap();
    let kept = push(&local, &url, &["--from", from, "--origin", "m"]);
    assert_eq!(kept["pruned"], 0, "{kept}");
    assert_eq!(sdb(&url, &["export", "sess-b"]).0, 0);
    let pruned = push(&local, &url, &["--from", from, "--origin", "m", "--prune"]);
    assert_eq!(pruned["pruned"], 1, "{pruned}");
    assert_eq!(sdb(&url, &["export", "sess-b"]).0, 2);
    assert_eq!(count(&url, "SELECT count(*) FROM entries"), 53);

    let again = push(&local, &url, &["--from", from, "--origin", "m"]);
    assert_eq!((again["lines"].as_u64(), again["batches"].as_u64()), (Some(0), Some(0)), "{again}");
}

#[test]
fn two_origins_with_identical_paths_are_kept_apart() {
    let Some(url) = server() else { return };
    let url = fresh_db(&url);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    let (one, two) = (dir.path().join("one.sqlite"), dir.path().join("two.sqlite"));
    std::fs::write(&file, session_text("same-path", 5)).unwrap();
    common::run(&one, &["import", file.to_str().unwrap()]);
    let other = session_text("same-path", 8);
    std::fs::write(&file, &other).unwrap();
    common::run(&two, &["import", file.to_str().unwrap()]);
    assert_eq!(push(&one, &url, &["--origin", "alice"])["new"], 1);
    assert_eq!(push(&two, &url, &["--origin", "bob"])["new"], 1);
    assert_eq!(count(&url, "SELECT count(*) FROM sessions"), 2);
    assert_eq!(count(&url, "SELECT count(*) FROM entries"), 13);
    let (code, out, _) = sdb(&url, &["find", "--json", "same-path"]);
    assert_eq!(code, 0);
    let paths: Vec<String> = serde_json::from_str(&out).unwrap();
    assert_eq!(paths.len(), 2);
    let (code, _, err) = sdb(&url, &["export", "same-path"]);
    assert_eq!(code, 2);
    assert!(err.contains("ambiguous") && err.contains("alice:") && err.contains("bob:"), "{err}");
    let out = dir.path().join("out");
    let tree = export_all(&url, &out);
    assert_eq!(tree.len(), 2);
    assert_eq!(tree.iter().find(|(p, _)| p.starts_with("bob")).unwrap().1, other.as_bytes());
}

#[test]
fn concurrent_pushes_of_one_origin_take_turns() {
    let Some(url) = server() else { return };
    let url = fresh_db(&url);
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("s");
    std::fs::create_dir_all(&folder).unwrap();
    for i in 0..40 {
        std::fs::write(folder.join(format!("{i}.jsonl")), session_text(&format!("conc-{i}"), 30)).unwrap();
    }
    let local = dir.path().join("local.sqlite");
    common::run(&local, &["import", folder.to_str().unwrap()]);
    let children: Vec<_> = (0..4)
        .map(|_| {
            common::bin()
                .args(["--db", local.to_str().unwrap(), "push", "--to", &url, "--origin", "c", "--json"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut written = 0;
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let s: Value = serde_json::from_slice(&out.stdout).unwrap();
        written += s["lines"].as_u64().unwrap();
    }
    assert_eq!(written, 1200, "one push sent everything, the others nothing");
    assert_eq!(count(&url, "SELECT count(*) FROM sessions"), 40);
    assert_eq!(count(&url, "SELECT count(*) FROM entries"), 1200);
}

#[test]
fn watch_pushes_a_change() {
    let Some(url) = server() else { return };
    let url = fresh_db(&url);
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("s");
    std::fs::create_dir_all(&folder).unwrap();
    let file = folder.join("w.jsonl");
    std::fs::write(&file, session_text("watched", 3)).unwrap();
    let local = dir.path().join("local.sqlite");
    let child = common::bin()
        .args(["--db", local.to_str().unwrap(), "push", "--to", &url, "--from", folder.to_str().unwrap()])
        .args(["--origin", "w", "--watch", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    follows_an_append(&url, child, &file, "watched");
}

/// A watching process (`child`) has brought `file`'s 3 lines into the server: a line appended
/// to the file reaches it too (within 60 s), and the server then exports the file's bytes.
fn follows_an_append(url: &str, mut child: std::process::Child, file: &Path, id: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let wait_for = |lines: i64| {
        let held = || {
            let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
            // The schema appears with the first write.
            c.query_one("SELECT coalesce(sum(last_seq), 0)::bigint FROM sessions", &[])
                .map_or(0, |r| r.get::<_, i64>(0))
        };
        while held() != lines {
            assert!(std::time::Instant::now() < deadline, "the watcher did not bring {lines} lines in time");
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    };
    wait_for(3);
    let mut text = std::fs::read_to_string(file).unwrap();
    text.push_str(&message(3, Some(2), "while watching"));
    text.push('\n');
    std::fs::write(file, &text).unwrap();
    wait_for(4);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(sdb(url, &["export", id]).1, text);
}

#[test]
fn server_errors_are_one_line_naming_the_server_and_the_cause() {
    let Some(url) = server() else { return };
    let url = fresh_db(&url);
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("local.sqlite");
    let file = dir.path().join("e.jsonl");
    std::fs::write(&file, session_text("err-one", 2)).unwrap();
    common::run(&local, &["import", file.to_str().unwrap()]);
    let local = local.to_str().unwrap();
    let one_line = |err: &str, want: &[&str]| {
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        for w in want {
            assert!(err.contains(w), "{err:?} lacks {w:?}");
        }
    };

    // Unreachable: a port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let (code, _, err) = sdb(local, &["push", "--to", &format!("postgres://u:secret@127.0.0.1:{closed}/x")]);
    assert_eq!(code, 2);
    one_line(&err, &[&format!("127.0.0.1:{closed}/x"), "refused"]);
    assert!(!err.contains("secret"));

    // Wrong password.
    let (user_pw, rest) = url.split_once('@').unwrap();
    let user = user_pw.rsplit_once(':').unwrap().0;
    let wrong = format!("{user}:not-the-password@{rest}");
    let (code, _, err) = sdb(&wrong, &["list"]);
    assert_eq!(code, 2);
    one_line(&err, &["wrong credentials", rest.split('/').next().unwrap()]);
    assert!(!err.contains("not-the-password"), "{err}");

    // A schema newer than this sessiondb: nothing is written.
    push(Path::new(local), &url, &["--origin", "e"]);
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    c.batch_execute(
        "INSERT INTO refinery_schema_history (version, name, applied_on, checksum) \
         VALUES (999, 'future', '2030-01-01', '0')",
    )
    .unwrap();
    let before = count(&url, "SELECT count(*) FROM entries");
    std::fs::write(&file, session_text("err-one", 4)).unwrap();
    common::run(Path::new(local), &["import", file.to_str().unwrap()]);
    for args in [&["push", "--to", &url][..], &["--db", &url, "list"]] {
        let (code, _, err) = if args[0] == "push" { sdb(local, args) } else { sdb(&url, &args[2..]) };
        assert_eq!(code, 2);
        one_line(&err, &["schema version 999 is newer", "postgres://127.0.0.1:"]);
    }
    assert_eq!(count(&url, "SELECT count(*) FROM entries"), before);
}

/// Every command runs on a server now; what cannot is refused in one line, naming why.
#[test]
fn what_postgresql_cannot_serve_is_refused_in_one_line() {
    let Some(url) = server() else { return };
    // Schemes sessiondb does not serve at all stay refused, and create nothing.
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = Command::new(env!("CARGO_BIN_EXE_sessiondb"))
        .current_dir(dir.path())
        .args(["--db", "mysql://h/db", "list"])
        .output()
        .map(|o| (o.status.code().unwrap(), o.stdout, String::from_utf8_lossy(&o.stderr).into_owned()))
        .unwrap();
    assert_eq!(code, 2);
    assert!(err.contains("does not serve mysql://"), "{err}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // push needs a local source.
    let (code, out, err) = sdb(&url, &["push", "--to", &url]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("local SQLite database"), "{err}");
    assert!(!err.contains(url.split_once('@').unwrap().0.rsplit_once(':').unwrap().1), "password shown: {err}");
}

/// Every per-session and per-entry statement of the PostgreSQL store can be answered from an
/// index (checked with sequential scans disabled: a plan that still scans has no index to use).
#[test]
fn per_session_queries_use_an_index() {
    use sessiondb::internals::pg_store::write;
    let Some(url) = server() else { return };
    let url = fresh_db(&url);
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("local.sqlite");
    let file = dir.path().join("p.jsonl");
    std::fs::write(&file, session_text("plans", 5)).unwrap();
    common::run(&local, &["import", file.to_str().unwrap()]);
    push(&local, &url, &["--origin", "p"]);
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    c.batch_execute("SET enable_seqscan = off").unwrap();
    let text: &(dyn postgres::types::ToSql + Sync) = &"x";
    let key: &(dyn postgres::types::ToSql + Sync) = &1i64;
    let keys: &(dyn postgres::types::ToSql + Sync) = &vec![(1i64 << 32) | 1, (1i64 << 32) | 3];
    use sessiondb::internals::{discovery, entry_rows, integrity, sessions, write as local_write};
    let cases: Vec<(&str, &str, Vec<&(dyn postgres::types::ToSql + Sync)>)> = vec![
        // A look across origins (`list`, `serve`) and export.
        ("in dir, every origin", discovery::PG_SESSION_INFOS_IN_DIR_EVERY, vec![text]),
        ("for cwd, every origin", discovery::PG_SESSION_INFOS_FOR_CWD_EVERY, vec![text]),
        ("for cwd", discovery::PG_SESSION_INFOS_FOR_CWD, vec![text]),
        ("info by key", discovery::PG_SESSION_INFO_BY_SID, vec![key]),
        ("lines", entry_rows::PG_ENTRY_BODIES, vec![key]),
        ("origin", write::ORIGIN_SESSIONS, vec![text]),
        ("drop lines", write::DELETE_LINES, vec![key]),
        // A catch-up: the sessions written since the last one.
        ("written since", sessiondb::internals::pg_store::PG_CHANGED, vec![key]),
        // The SessionManager's statements.
        ("last entry", entry_rows::PG_LAST_ENTRY, vec![key]),
        ("entry by id", entry_rows::PG_ENTRY_BY_ID, vec![key, text]),
        ("entry by key", entry_rows::PG_ENTRY_BY_KEY, vec![key, key]),
        ("all entries", entry_rows::PG_ALL_ENTRIES, vec![key]),
        ("labels", entry_rows::PG_LABEL_ENTRIES, vec![key]),
        ("children", entry_rows::PG_CHILDREN, vec![key, text]),
        ("walk up", entry_rows::PG_WALK_UP, vec![key, key, key, key]),
        ("walk up steps", entry_rows::PG_WALK_UP_STEPS, vec![key, key, key]),
        ("lines from", entry_rows::PG_LINES_FROM, vec![key, key, key]),
        ("lines at keys", entry_rows::PG_LINES_AT, vec![keys]),
        ("tree state", entry_rows::PG_SESSION_TREE_STATE, vec![key]),
        ("session by path", sessions::PG_SESSION_BY_PATH, vec![text]),
        ("entry id taken", sessions::PG_ENTRY_ID_EXISTS, vec![key, text]),
        ("header", sessions::PG_SESSION_HEADER, vec![key]),
        ("entry node", local_write::PG_ENTRY_NODE, vec![key, text]),
        ("stats", local_write::PG_SESSION_STATS, vec![key]),
        ("recent in dir", discovery::PG_SESSIONS_IN_DIR_BY_RECENCY, vec![text]),
        ("id in dir", discovery::PG_SESSIONS_WITH_ID_IN_DIR, vec![text, text]),
        ("infos in dir", discovery::PG_SESSION_INFOS_IN_DIR, vec![text]),
        ("list text", discovery::PG_LIST_TEXT, vec![key]),
        ("id taken", local_write::PG_ID_TAKEN, vec![key, text]),
        ("fold texts", local_write::PG_FOLD_TEXT, vec![key, key]),
        // Session references, recent and check.
        ("ref by id", discovery::PG_SESSIONS_BY_ID, vec![text]),
        ("ref by id prefix", discovery::PG_SESSIONS_BY_ID_PREFIX, vec![text, text]),
        ("refs at path", discovery::PG_SESSIONS_AT_PATH, vec![text]),
        ("most recent", discovery::PG_MOST_RECENT_SESSION, vec![]),
        ("check session", integrity::PG_CHECK_SESSION, vec![key]),
        ("check entries", integrity::PG_CHECK_ENTRIES, vec![key]),
        // Leases.
        ("lease", sessiondb::internals::lease::PG_LEASE, vec![key]),
        ("replace lease", sessiondb::internals::lease::PG_REPLACE_LEASE, vec![key, key, text, text, key, text, text]),
        ("renew lease", sessiondb::internals::lease::PG_RENEW_LEASE, vec![key, key, text, text]),
        ("release lease", sessiondb::internals::lease::PG_RELEASE_LEASE, vec![key, key, text, text]),
    ];
    let (bytes, float, flag): (Vec<u8>, f64, bool) = (b"x".to_vec(), 1.0, true);
    let b: &(dyn postgres::types::ToSql + Sync) = &bytes;
    let (f, t): (&(dyn postgres::types::ToSql + Sync), &(dyn postgres::types::ToSql + Sync)) = (&float, &flag);
    let append: Vec<&(dyn postgres::types::ToSql + Sync)> = vec![
        key, key, text, text, text, text, b, text, key, key, key, key, key, key, b, key, b, f, key, key, b, t, key, t,
    ];
    let relocate: Vec<&(dyn postgres::types::ToSql + Sync)> = vec![key, text, text, text, text, b];
    let cases: Vec<_> = cases
        .into_iter()
        .chain([("append", local_write::PG_APPEND_AT, append), ("move", sessions::PG_RELOCATE_SESSION, relocate)])
        .collect();
    for (what, sql, params) in cases {
        let plan: Vec<String> =
            c.query(&format!("EXPLAIN {sql}"), &params).unwrap().iter().map(|r| r.get::<_, String>(0)).collect();
        let plan = plan.join("\n");
        assert!(plan.contains("Index") && !plan.contains("Seq Scan"), "{what}: {plan}");
    }
    // A path alone or the newest session would also be found by a walk over a whole index
    // ((origin, path) is unique; sessions_pkey): these need their own.
    for (sql, params, index) in [
        (discovery::PG_SESSIONS_AT_PATH, vec![text], "sessions_by_path"),
        (discovery::PG_MOST_RECENT_SESSION, vec![], "sessions_by_origin_written"),
    ] {
        let plan: Vec<String> =
            c.query(&format!("EXPLAIN {sql}"), &params).unwrap().iter().map(|r| r.get::<_, String>(0)).collect();
        assert!(plan.join("\n").contains(index), "{sql}: {plan:?}");
    }
}

/// The CA of the test server's certificate (`SESSIONDB_TEST_PG_CA`), or `None` (skip).
fn server_ca() -> Option<String> {
    match std::env::var("SESSIONDB_TEST_PG_CA") {
        Ok(ca) if !ca.is_empty() => Some(ca),
        _ if std::env::var_os("SESSIONDB_REQUIRE_PG").is_some() => {
            panic!("SESSIONDB_REQUIRE_PG is set but SESSIONDB_TEST_PG_CA is not: .ci/postgres.sh made no CA")
        }
        _ => {
            eprintln!("skipped: the test server has no TLS (SESSIONDB_TEST_PG_CA unset)");
            None
        }
    }
}

fn with_params(url: &str, params: &str) -> String {
    format!("{url}{}{params}", if url.contains('?') { '&' } else { '?' })
}

#[test]
fn tls_modes_connect_verify_and_refuse_in_one_line() {
    let Some(url) = server() else { return };
    let Some(ca) = server_ca() else { return };
    let url = fresh_db(&url);
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("local.sqlite");
    std::fs::write(dir.path().join("t.jsonl"), session_text("tls-one", 30)).unwrap();
    common::run(&local, &["import", dir.path().join("t.jsonl").to_str().unwrap()]);
    let server_part = url.split_once('@').unwrap().1.to_string();
    let host_port = server_part.split('/').next().unwrap().to_string();

    // verify-full with the CA: the session goes up and comes back byte for byte.
    let full = with_params(&url, &format!("sslmode=verify-full&sslrootcert={ca}"));
    let first = push(&local, &full, &["--origin", "t"]);
    assert_eq!((first["new"].as_u64(), first["lines"].as_u64()), (Some(1), Some(30)), "{first}");
    let from_sqlite = export_all(local.to_str().unwrap(), &dir.path().join("sqlite"));
    let from_pg = export_all(&full, &dir.path().join("pg"));
    // The server's paths carry the origin; the bytes are the same.
    assert_eq!(from_pg.len(), 1);
    assert!(from_pg.values().eq(from_sqlite.values()), "the export over TLS differs from SQLite's");
    // The connection really is encrypted.
    let (code, out, err) = sdb(&full, &["list"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("tls-one"), "{out}");

    // require (unverified, as libpq), disable, and the environment's PGSSLMODE/PGSSLROOTCERT.
    for u in [
        with_params(&url, "sslmode=require"),
        with_params(&url, "sslmode=disable"),
        with_params(&url, "sslmode=prefer"),
    ] {
        let (code, out, err) = sdb(&u, &["list"]);
        assert_eq!(code, 0, "{u}: {err}");
        assert!(out.contains("tls-one"), "{out}");
    }
    let out = common::bin()
        .args(["--db", &url, "list"])
        .env("PGSSLMODE", "verify-full")
        .env("PGSSLROOTCERT", &ca)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let one_line = |err: &str, want: &[&str]| {
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        for w in want {
            assert!(err.contains(w), "{err:?} lacks {w:?}");
        }
        assert!(!err.contains(url.split_once('@').unwrap().0.rsplit(':').next().unwrap()), "password shown: {err}");
    };

    // verify-full without the CA (the public roots do not know it): refused, naming the server.
    let (code, _, err) = sdb(&with_params(&url, "sslmode=verify-full"), &["list"]);
    assert_eq!(code, 2, "{err}");
    one_line(&err, &[&host_port, "not trusted"]);
    // The environment's PGSSLMODE alone does the same.
    let out = common::bin().args(["--db", &url, "list"]).env("PGSSLMODE", "verify-ca").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    one_line(&String::from_utf8_lossy(&out.stderr), &[&host_port, "not trusted"]);

    // A CA other than the server's: refused too, for require with a root certificate as well.
    let wrong = dir.path().join("wrong-ca.crt");
    let made = Command::new("openssl")
        .args(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=wrong CA", "-keyout"])
        .arg(dir.path().join("wrong-ca.key"))
        .arg("-out")
        .arg(&wrong)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(made.success());
    for mode in ["verify-full", "verify-ca", "require"] {
        let u = with_params(&url, &format!("sslmode={mode}&sslrootcert={}", wrong.display()));
        let (code, _, err) = sdb(&u, &["list"]);
        assert_eq!(code, 2, "{mode}: {err}");
        one_line(&err, &[&host_port, "not trusted"]);
    }

    // A server without TLS (it answers "N" to the TLS request): require refuses, naming it.
    let plain = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = plain.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in plain.incoming().flatten() {
            use std::io::{Read, Write};
            let mut stream = stream;
            let mut request = [0u8; 8];
            if stream.read_exact(&mut request).is_ok() {
                let _ = stream.write_all(b"N");
            }
        }
    });
    let (code, _, err) =
        sdb(local.to_str().unwrap(), &["push", "--to", &format!("postgres://u:pw@127.0.0.1:{port}/x?sslmode=require")]);
    assert_eq!(code, 2, "{err}");
    one_line(&err, &[&format!("127.0.0.1:{port}/x"), "does not support TLS"]);
}

#[test]
fn a_server_too_old_and_a_host_name_mismatch_are_refused_in_one_line() {
    let Some(url) = server() else { return };
    let url = fresh_db(&url);
    let (cred, server_part) = url.split_once('@').unwrap();
    let password = cred.rsplit(':').next().unwrap().to_string();
    let one_line = |err: &str, want: &[&str]| {
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        for w in want {
            assert!(err.contains(w), "{err:?} lacks {w:?}");
        }
        assert!(!err.contains(&password), "password shown: {err}");
    };

    // A server older than PostgreSQL 12: this database answers the version checks as 11.22
    // would (a function in a schema searched before pg_catalog stands in for current_setting).
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let name = url.rsplit('/').next().unwrap();
    admin
        .batch_execute(&format!(
            "CREATE SCHEMA old; \
             CREATE FUNCTION old.current_setting(setting text) RETURNS text LANGUAGE sql AS $$ \
                SELECT CASE setting WHEN 'server_version_num' THEN '110022' WHEN 'server_version' THEN '11.22' \
                ELSE pg_catalog.current_setting(setting) END $$; \
             ALTER DATABASE {name} SET search_path = old, pg_catalog"
        ))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("local.sqlite");
    std::fs::write(dir.path().join("o.jsonl"), session_text("old-one", 3)).unwrap();
    common::run(&local, &["import", dir.path().join("o.jsonl").to_str().unwrap()]);
    let (code, out, err) = sdb(&url, &["list"]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty(), "{out}");
    one_line(&err, &[server_part, "PostgreSQL 11.22 is too old", "needs PostgreSQL 12"]);
    let (code, _, err) = sdb(local.to_str().unwrap(), &["push", "--to", &url]);
    assert_eq!(code, 2, "{err}");
    one_line(&err, &[server_part, "too old"]);
    // Nothing was written: not even the migrations' table.
    let tables: i64 = admin
        .query_one("SELECT count(*) FROM pg_catalog.pg_class WHERE relname = 'refinery_schema_history'", &[])
        .unwrap()
        .get(0);
    assert_eq!(tables, 0);

    // verify-full to a name the certificate does not list (the server's address given apart,
    // as libpq's hostaddr): refused, naming the host and the names the certificate has.
    let Some(ca) = server_ca() else { return };
    let port = server_part.split('/').next().unwrap().rsplit(':').next().unwrap();
    let fresh = fresh_db(&server().unwrap());
    let db = fresh.rsplit('/').next().unwrap();
    let wrong = format!("{cred}@wrong.example:{port}/{db}?hostaddr=127.0.0.1&sslrootcert={ca}");
    let (code, _, err) = sdb(&with_params(&wrong, "sslmode=verify-full"), &["list"]);
    assert_eq!(code, 2, "{err}");
    one_line(&err, &[&format!("wrong.example:{port}/{db}"), "host name mismatch", "localhost"]);
    // verify-ca checks the chain only: the same address connects.
    let (code, _, err) = sdb(&with_params(&wrong, "sslmode=verify-ca"), &["list"]);
    assert_eq!(code, 0, "{err}");
}

/// `db::open` of a PostgreSQL URL gives a PostgreSQL handle; a function with no PostgreSQL
/// version yet answers with a typed one-line error, never a panic or a local file.
#[test]
fn a_postgres_url_opens_the_server_and_unported_reads_say_so() {
    let Some(url) = server() else { return };
    let db_url = fresh_db(&url);
    let mut db = sessiondb::db::open(Path::new(&db_url)).unwrap();
    assert_eq!(db.backend(), sessiondb::db::Backend::Postgres);
    // Stats are served (no sessions: no groups).
    assert!(sessiondb::usage_stats::totals(&db, None, &Default::default()).unwrap().is_empty());
    // check is served: an empty database is clean.
    let report = sessiondb::check::check_all(&db, |_| {}).unwrap();
    assert!(report.is_clean() && report.integrity_ok && report.sessions == 0, "{report:?}");
    // Listing is served (the server's own sessions: none yet).
    assert!(sessiondb::discovery::list_everything(&db).unwrap().is_empty());
    // Transactions begin and roll back on the server.
    let tx = db.write().unwrap();
    assert!(!tx.is_idle());
    drop(tx);
    assert!(db.is_idle());
    db.write().unwrap().commit().unwrap();
    let existing = sessiondb::db::open_existing(Path::new(&db_url)).unwrap();
    assert_eq!(existing.backend(), sessiondb::db::Backend::Postgres);
}

/// One `sessiondb rpc` process appending to a session of its own, one request at a time as pi
/// does: the ids it acknowledged, the session's header id, and each append's round trip.
struct Writer {
    session_id: String,
    acked: Vec<String>,
    latencies: Vec<std::time::Duration>,
}

fn rpc_writer(url: &str, home: &Path, appends: usize, kill_after: Option<usize>) -> Writer {
    use std::io::{BufRead, BufReader, Write};
    let agent = home.join("agent");
    std::fs::create_dir_all(&agent).unwrap();
    let mut child = common::bin()
        .arg("--db")
        .arg(url)
        .arg("rpc")
        .env("PI_CODING_AGENT_DIR", &agent)
        .env("HOME", home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let mut call = |n: usize, method: &str, params: serde_json::Value| -> Value {
        let request = serde_json::json!({"id": n, "method": method, "params": params});
        writeln!(input, "{request}").unwrap();
        input.flush().unwrap();
        let mut line = String::new();
        output.read_line(&mut line).unwrap();
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
        assert!(v.get("error").is_none(), "{method}: {v}");
        v["result"].clone()
    };
    let created = call(0, "create", serde_json::json!([home.to_str().unwrap()]));
    let session_id = created["sessionId"].as_str().unwrap().to_string();
    let (mut acked, mut latencies) = (Vec::new(), Vec::new());
    for i in 0..appends {
        if kill_after == Some(i) {
            child.kill().unwrap(); // SIGKILL
            child.wait().unwrap();
            return Writer { session_id, acked, latencies };
        }
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        let message = serde_json::json!({"role": role, "content": [{"type": "text", "text": format!("append {i} of {role}")}], "timestamp": 1_700_000_000_000u64 + i as u64});
        let started = std::time::Instant::now();
        let id = call(i + 1, "appendMessage", serde_json::json!([message]));
        latencies.push(started.elapsed());
        acked.push(id.as_str().unwrap().to_string());
    }
    drop(input);
    assert!(child.wait().unwrap().success());
    Writer { session_id, acked, latencies }
}

/// Many `sessiondb rpc` processes append to sessions of one server at once, one of them killed
/// with SIGKILL halfway: every acknowledged entry is stored exactly once, each session's lines
/// are numbered 1..n without a gap and chain parent to child in order, and the session's
/// counters agree. `SESSIONDB_PG_LOAD=16x2000` runs the full load (the default is small).
#[test]
fn concurrent_writer_processes_lose_no_acknowledged_append() {
    let Some(url) = server() else { return };
    let db_url = fresh_db(&url);
    let load = std::env::var("SESSIONDB_PG_LOAD").unwrap_or_else(|_| "4x150".into());
    let (procs, appends) = load.split_once('x').expect("SESSIONDB_PG_LOAD is PROCESSESxAPPENDS");
    let (procs, appends): (usize, usize) = (procs.parse().unwrap(), appends.parse().unwrap());
    // The schema first, so that the writers do not all wait for the migration lock.
    drop(sessiondb::db::open(Path::new(&db_url)).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let writers: Vec<Writer> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..procs)
            .map(|p| {
                let (home, db_url) = (dir.path().join(format!("w{p}")), db_url.clone());
                s.spawn(move || rpc_writer(&db_url, &home, appends, (p == 0).then_some(appends / 2)))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let elapsed = started.elapsed();
    let mut all: Vec<std::time::Duration> = writers.iter().flat_map(|w| w.latencies.iter().copied()).collect();
    all.sort();
    let total = all.len();
    eprintln!(
        "{procs} writers x {appends} appends: {total} acknowledged in {:.1} s ({:.0}/s); append round trip p50 {:?}, p99 {:?}",
        elapsed.as_secs_f64(),
        total as f64 / elapsed.as_secs_f64(),
        all[total / 2],
        all[total * 99 / 100]
    );
    let mut client = postgres::Client::connect(&db_url, postgres::NoTls).unwrap();
    for (p, w) in writers.iter().enumerate() {
        let session = client
            .query_one("SELECT skey, entry_count, last_seq FROM sessions WHERE id = $1", &[&w.session_id])
            .unwrap();
        let skey: i64 = session.get("skey");
        let rows = client
            .query(
                "SELECT seq, id, parent_id, parent_key, depth FROM entries WHERE session = $1 ORDER BY seq",
                &[&skey],
            )
            .unwrap();
        let ids: Vec<String> = rows.iter().map(|r| r.get("id")).collect();
        // Lines 1..n, no gap, each the child of the line before.
        for (i, r) in rows.iter().enumerate() {
            let seq: i64 = r.get("seq");
            assert_eq!(seq, i as i64 + 1, "writer {p}: line numbers");
            let parent: Option<String> = r.get("parent_id");
            assert_eq!(
                parent.as_deref(),
                i.checked_sub(1).map(|j| ids[j].as_str()),
                "writer {p}: parent of line {seq}"
            );
            let parent_key: Option<i64> = r.get("parent_key");
            assert_eq!(parent_key, (i > 0).then_some((skey << 32) | i as i64), "writer {p}: parent key of line {seq}");
            assert_eq!(r.get::<_, Option<i64>>("depth"), Some(i as i64), "writer {p}: depth of line {seq}");
        }
        let unique: std::collections::HashSet<&String> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len(), "writer {p}: an id stored twice");
        // Every acknowledged append is there, in order; a killed writer may have one more.
        assert_eq!(&ids[..w.acked.len()], &w.acked[..], "writer {p}: acknowledged appends");
        let extra = if p == 0 { 1 } else { 0 };
        assert!(ids.len() <= w.acked.len() + extra, "writer {p}: {} stored, {} acknowledged", ids.len(), w.acked.len());
        assert_eq!(session.get::<_, i64>("entry_count"), ids.len() as i64, "writer {p}: entry_count");
        assert_eq!(session.get::<_, i64>("last_seq"), ids.len() as i64, "writer {p}: last_seq");
    }
    assert_eq!(writers[0].acked.len(), appends / 2, "the killed writer's acknowledged appends");
    // And sessiondb's own checks find nothing wrong with any of the sessions.
    let (code, out, err) = sdb(&db_url, &["check", "--json"]);
    assert_eq!(code, 0, "check: {out}{err}");
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(report["sessions"].as_u64(), Some(writers.len() as u64), "{report}");
}

/// Two processes append to one session at once: each append lands after the other's (the
/// session's row is locked while appending), so lines stay numbered without a gap or a repeat,
/// every acknowledged entry is stored once, and each writer's entries chain from its own leaf.
#[test]
fn two_writers_of_one_session_take_turns() {
    use std::io::{BufRead, BufReader, Write};
    let Some(url) = server() else { return };
    let db_url = fresh_db(&url);
    let dir = tempfile::tempdir().unwrap();
    let first = rpc_writer(&db_url, &dir.path().join("a"), 2, None);
    let mut client = postgres::Client::connect(&db_url, postgres::NoTls).unwrap();
    let session = client.query_one("SELECT skey, path FROM sessions WHERE id = $1", &[&first.session_id]).unwrap();
    let (skey, path): (i64, String) = (session.get("skey"), session.get("path"));
    // Both open the session before either appends: each starts from the same leaf.
    let opened = std::sync::Barrier::new(2);
    let acked: Vec<Vec<String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|p| {
                let (db_url, path, home) = (db_url.clone(), path.clone(), dir.path().join(format!("b{p}")));
                let opened = &opened;
                s.spawn(move || {
                    std::fs::create_dir_all(&home).unwrap();
                    let mut child = common::bin()
                        .args(["--db", &db_url, "rpc"])
                        .env("PI_CODING_AGENT_DIR", &home)
                        .env("HOME", &home)
                        .stdin(Stdio::piped())
                        .stdout(Stdio::piped())
                        .spawn()
                        .unwrap();
                    let mut input = child.stdin.take().unwrap();
                    let mut output = BufReader::new(child.stdout.take().unwrap());
                    let mut ids = Vec::new();
                    for i in 0..101 {
                        let (method, params) = if i == 0 {
                            ("open", serde_json::json!([path]))
                        } else {
                            ("appendCustomEntry", serde_json::json!([format!("writer-{p}"), {"n": i}]))
                        };
                        writeln!(input, "{}", serde_json::json!({"id": i, "method": method, "params": params}))
                            .unwrap();
                        input.flush().unwrap();
                        let mut line = String::new();
                        output.read_line(&mut line).unwrap();
                        let v: Value = serde_json::from_str(&line).unwrap();
                        assert!(v.get("error").is_none(), "{v}");
                        if i > 0 {
                            ids.push(v["result"].as_str().unwrap().to_string());
                        } else {
                            opened.wait();
                        }
                    }
                    drop(input);
                    assert!(child.wait().unwrap().success());
                    ids
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let rows =
        client.query("SELECT seq, id, parent_id FROM entries WHERE session = $1 ORDER BY seq", &[&skey]).unwrap();
    let seqs: Vec<i64> = rows.iter().map(|r| r.get("seq")).collect();
    assert_eq!(seqs, (1..=rows.len() as i64).collect::<Vec<_>>(), "lines numbered without a gap");
    let stored: Vec<String> = rows.iter().map(|r| r.get("id")).collect();
    assert_eq!(stored.len(), 2 + 200);
    let parent_of: std::collections::HashMap<String, Option<String>> =
        rows.iter().map(|r| (r.get("id"), r.get("parent_id"))).collect();
    for ids in &acked {
        // Each writer's entries chain from the session's leaf when it opened it, then each other.
        for pair in ids.windows(2) {
            assert_eq!(parent_of[&pair[1]].as_deref(), Some(pair[0].as_str()));
        }
        assert_eq!(parent_of[&ids[0]].as_deref(), Some(first.acked[1].as_str()));
    }
}

/// The oracle corpus pushed under origin `''` (the server's own sessions) reads back through
/// the tree functions exactly as from SQLite: every session's entries, tree and projection at
/// its last entry are equal, and `list` of every folder gives the same sessions.
#[test]
fn pushed_sessions_read_through_the_tree_as_on_sqlite() {
    let Some(url) = server() else { return };
    let db_url = fresh_db(&url);
    let (_d, _p, mut local) = common::temp_db();
    let targets = sessiondb::import::collect_targets(&[common::oracle().join("sessions")]).unwrap();
    sessiondb::import::import_targets(&mut local, &targets, Default::default(), |_| {}).unwrap();
    let server = sessiondb::db::open(db_url.as_str()).unwrap();
    let opts = sessiondb::pg::PushOptions::new("");
    sessiondb::pg::push(&local, &server, &opts, |_, _| {}).unwrap();
    let pg = sessiondb::db::open(Path::new(&db_url)).unwrap();
    let sessions = sessiondb::discovery::list_everything(&local).unwrap();
    assert!(sessions.len() > 20, "{}", sessions.len());
    let mut dirs = std::collections::BTreeSet::new();
    for info in &sessions {
        let path = info.path.clone();
        dirs.insert(Path::new(&path).parent().unwrap().to_string_lossy().into_owned());
        let sid = local.store().sid_by_path(&path).unwrap().unwrap();
        let skey = pg.store().sid_by_path(&path).unwrap().unwrap_or_else(|| panic!("{path}"));
        let (a, b) = (
            sessiondb::tree::SessionTree::open(&local, sid).unwrap(),
            sessiondb::tree::SessionTree::open(&pg, skey).unwrap(),
        );
        let bodies = |t: &sessiondb::tree::SessionTree<'_>| -> Vec<String> {
            t.all_entries().unwrap().into_iter().map(|r| r.body).collect()
        };
        assert_eq!(bodies(&a), bodies(&b), "{path}: entries");
        assert_eq!(a.is_regular(), b.is_regular(), "{path}: regular");
        let leaf = sessiondb::tree::Leaf::Last;
        assert_eq!(
            a.projection(&leaf).unwrap().0.to_json(),
            b.projection(&leaf).unwrap().0.to_json(),
            "{path}: projection"
        );
        let tree = |t: &sessiondb::tree::SessionTree<'_>| format!("{:?}", t.tree().unwrap());
        let mut ta = tree(&a);
        let mut tb = tree(&b);
        // Keys differ between the stores; the shape and the entries must not.
        ta.retain(|c| !c.is_ascii_digit());
        tb.retain(|c| !c.is_ascii_digit());
        assert_eq!(ta, tb, "{path}: tree");
    }
    for dir in dirs {
        let paths = |db: &sessiondb::db::Db| -> Vec<String> {
            let mut infos = sessiondb::discovery::list_dir(db, &dir, None).unwrap();
            sessiondb::discovery::fill_all_text(db, &mut infos).unwrap();
            infos.iter().map(|i| format!("{} {} {}", i.path, i.message_count, i.all_messages_text)).collect()
        };
        assert_eq!(paths(&local), paths(&pg), "list {dir}");
    }
}

/// The same appends through the SessionManager on SQLite and on PostgreSQL give the same
/// `allMessagesText`, across the folds that join appended texts into the session's row every
/// 256 lines (empty texts and lines without text among them), in the session and in a fork;
/// and an append whose id the session holds already writes nothing and says so.
#[test]
fn appended_texts_join_as_on_sqlite_and_a_taken_id_writes_nothing() {
    use sessiondb::internals::write::{AppendState, Appended};
    let Some(url) = server() else { return };
    let db_url = fresh_db(&url);
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("local.sqlite");
    let message = |i: usize| {
        let v = match i % 5 {
            0 => serde_json::json!({"role": "user", "content": "", "timestamp": 1740823200000u64 + i as u64}),
            1 => serde_json::json!({"role": "user", "content": format!("question {i}"), "timestamp": 1740823200000u64}),
            2 => {
                serde_json::json!({"role": "assistant", "content": [{"type": "toolCall", "id": "t", "name": "read", "arguments": {}}],
                "api": "x", "provider": "p", "model": "m", "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}, "stopReason": "toolUse", "timestamp": 1740823200000u64})
            }
            3 => {
                serde_json::json!({"role": "toolResult", "toolCallId": "t", "toolName": "read", "content": [{"type": "text", "text": "file"}], "isError": false, "timestamp": 1740823200000u64})
            }
            _ => {
                serde_json::json!({"role": "assistant", "content": [{"type": "text", "text": format!("answer {i} ✓")}],
                "api": "x", "provider": "p", "model": "m", "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}, "stopReason": "stop", "timestamp": 1740823200000u64})
            }
        };
        sessiondb::json::parse(v.to_string().as_bytes()).unwrap()
    };
    let mut texts = Vec::new();
    for db in [local.clone(), PathBuf::from(&db_url)] {
        let sessions = dir.path().join(if db == local { "s-sqlite" } else { "s-pg" });
        let sessions = sessions.to_str().unwrap();
        let mut m = sessiondb::SessionManager::create(&db, "/p/texts", Some(sessions), Default::default()).unwrap();
        for i in 0..600 {
            m.append_message(message(i)).unwrap();
        }
        let file = m.session_file().unwrap().to_string();
        drop(m);
        let fork =
            sessiondb::SessionManager::fork_from(&db, &file, "/p/fork", Some(sessions), Default::default()).unwrap();
        let fork_file = fork.session_file().unwrap().to_string();
        let conn = sessiondb::db::open(&db).unwrap();
        let mut infos = sessiondb::discovery::list_everything(&conn).unwrap();
        sessiondb::discovery::fill_all_text(&conn, &mut infos).unwrap();
        let text_of = |path: &str| infos.iter().find(|i| i.path == path).unwrap().all_messages_text.clone();
        texts.push((text_of(&file), text_of(&fork_file)));
        if db != local {
            let mut c = postgres::Client::connect(&db_url, postgres::NoTls).unwrap();
            let folded: i64 = c.query_one("SELECT text_seq FROM sessions WHERE path = $1", &[&file]).unwrap().get(0);
            assert_eq!(folded, 512, "appends fold the joined text every 256 lines");
            // An entry whose id the session holds is refused whole.
            let sid = conn.store().sid_by_path(&file).unwrap().unwrap();
            let (taken, lines): (String, i64) = {
                let r = c.query_one("SELECT id, (SELECT count(*) FROM entries WHERE session = $1) FROM entries WHERE session = $1 AND seq = 7", &[&sid]).unwrap();
                (r.get(0), r.get(1))
            };
            let line = format!(
                r#"{{"type":"custom","customType":"x","id":"{taken}","parentId":null,"timestamp":"2025-03-01T10:00:00.000Z"}}"#
            );
            let mut state = AppendState::default();
            assert_eq!(conn.store().append_new_entry(sid, &line, None, &mut state).unwrap(), Appended::IdTaken);
            let after: i64 = c.query_one("SELECT count(*) FROM entries WHERE session = $1", &[&sid]).unwrap().get(0);
            assert_eq!(after, lines);
            let fresh = line.replace(&taken, "fresh-id");
            assert!(matches!(conn.store().append_new_entry(sid, &fresh, None, &mut state).unwrap(), Appended::Key(_)));
        }
    }
    assert!(texts[0].0.contains("question 596") && texts[0].0.contains("answer 599 ✓"), "{}", &texts[0].0[..200]);
    assert_eq!(texts[1], texts[0], "PostgreSQL's allMessagesText is SQLite's");
    assert_eq!(texts[0].1, texts[0].0, "a fork has its source's text");
}

/// Every row of `sessions` and `entries` with the transaction that last wrote it: equal before
/// and after a command exactly when the command wrote nothing.
fn written(url: &str) -> Vec<String> {
    let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
    let mut rows: Vec<String> = c
        .query("SELECT 's' || skey || ':' || xmin::text FROM sessions ORDER BY skey", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let entries = c.query("SELECT 'e' || session || ':' || seq || ':' || xmin::text FROM entries ORDER BY 1", &[]);
    rows.extend(entries.unwrap().iter().map(|r| r.get::<_, String>(0)));
    rows
}

/// Whether `export --all` writes each file of `src` back as it is: the server's own sessions
/// (origin '') go where SQLite's would be, by their path below the imported folder.
fn exports_as(db: &str, out: &Path, src: &Path) -> bool {
    let _ = std::fs::remove_dir_all(out);
    let all = export_all(db, out);
    common::read_tree(src).iter().all(|(p, bytes)| all.get(p) == Some(bytes))
}

/// `import` into the server: the server's own sessions (origin ''); a second import of the
/// same files writes nothing; a changed file replaces its session; a file imported at the path
/// of a session the SessionManager made replaces that one; other sessions, the manager's and a
/// machine's pushed under the same path, are not touched.
#[test]
fn import_into_the_server_replaces_by_path_and_leaves_other_sessions() {
    let Some(url) = server() else { return };
    let db = fresh_db(&url);
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("p")).unwrap();
    let (f, g) = (src.join("p/f.jsonl"), src.join("p/g.jsonl"));
    std::fs::write(&f, session_text("sess-f", 5)).unwrap();
    std::fs::write(&g, session_text("sess-g", 3)).unwrap();
    // A session the SessionManager made on the server, and f pushed by a machine.
    let manager = rpc_writer(&db, &dir.path().join("home"), 4, None);
    let local = dir.path().join("local.sqlite");
    assert_eq!(common::run(&local, &["import", f.to_str().unwrap()]).0, 0);
    push(&local, &db, &["--origin", "laptop"]);
    let others = |db: &str| -> Vec<String> {
        let mut c = postgres::Client::connect(db, postgres::NoTls).unwrap();
        let sql = "SELECT s.origin || s.id || ':' || s.xmin::text || ':' || (SELECT count(*) || ':' || max(e.xmin::text) \
                   FROM entries e WHERE e.session = s.skey) FROM sessions s WHERE s.origin <> '' OR s.id = $1 ORDER BY 1";
        c.query(sql, &[&manager.session_id]).unwrap().iter().map(|r| r.get(0)).collect()
    };
    let untouched = others(&db);
    assert_eq!(untouched.len(), 2);

    let (code, out, err) = sdb(&db, &["import", "--json", src.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let s: Value = serde_json::from_str(&out).unwrap();
    assert_eq!((s["sessions"].as_u64(), s["replaced"].as_u64(), s["entries"].as_u64()), (Some(2), Some(0), Some(8)));
    let out_dir = dir.path().join("out");
    assert!(exports_as(&db, &out_dir, &src), "exports differ from the files");
    assert_eq!(count(&db, "SELECT count(*) FROM sessions WHERE origin = ''"), 3);

    // Again: nothing read, nothing written.
    let before = written(&db);
    let (code, out, err) = sdb(&db, &["import", "--json", src.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let s: Value = serde_json::from_str(&out).unwrap();
    assert_eq!((s["sessions"].as_u64(), s["unchanged"].as_u64()), (Some(0), Some(2)));
    assert_eq!(written(&db), before, "a second import wrote");

    // A grown file and a rewritten one replace their sessions.
    std::fs::write(&f, session_text("sess-f", 7)).unwrap();
    std::fs::write(&g, session_text("sess-g2", 2)).unwrap();
    let (code, out, err) = sdb(&db, &["import", "--json", src.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let s: Value = serde_json::from_str(&out).unwrap();
    assert_eq!((s["sessions"].as_u64(), s["replaced"].as_u64()), (Some(2), Some(2)));
    assert!(exports_as(&db, &out_dir, &src), "exports differ from the changed files");
    assert_eq!(count(&db, "SELECT count(*) FROM sessions WHERE origin = ''"), 3);
    assert_eq!(count(&db, "SELECT count(*) FROM sessions WHERE id = 'sess-g'"), 0);
    assert_eq!(others(&db), untouched, "the manager's session or the pushed one was touched");

    // A file at the very path of the manager's session replaces it, as on SQLite.
    let mut c = postgres::Client::connect(&db, postgres::NoTls).unwrap();
    let path: String = c.query_one("SELECT path FROM sessions WHERE id = $1", &[&manager.session_id]).unwrap().get(0);
    let path = PathBuf::from(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, session_text("sess-m", 2)).unwrap();
    let (code, out, err) = sdb(&db, &["import", "--json", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let s: Value = serde_json::from_str(&out).unwrap();
    assert_eq!((s["sessions"].as_u64(), s["replaced"].as_u64()), (Some(1), Some(1)));
    assert_eq!(count(&db, "SELECT count(*) FROM sessions WHERE origin = ''"), 3);
    let (code, out, err) = sdb(&db, &["export", "sess-m"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, session_text("sess-m", 2));
}

/// `sync` into the server: a second sync writes nothing, a sync after appends writes only the
/// appended lines, a file gone is marked missing (its session kept) or pruned, and the
/// SessionManager's sessions, which have no file, are neither.
#[test]
fn sync_into_the_server_writes_nothing_twice_and_then_only_appended_lines() {
    let Some(url) = server() else { return };
    let db = fresh_db(&url);
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let manager = rpc_writer(&db, &home, 2, None);
    // The sessions folder the manager's session names (it has no file there).
    let mut c = postgres::Client::connect(&db, postgres::NoTls).unwrap();
    let manager_path: String =
        c.query_one("SELECT path FROM sessions WHERE id = $1", &[&manager.session_id]).unwrap().get(0);
    let sessions = PathBuf::from(&manager_path).parent().unwrap().parent().unwrap().to_path_buf();
    let folder = sessions.join("--p-one--");
    std::fs::create_dir_all(&folder).unwrap();
    let files: Vec<PathBuf> = (0..3).map(|i| folder.join(format!("s{i}.jsonl"))).collect();
    for (i, f) in files.iter().enumerate() {
        std::fs::write(f, session_text(&format!("sync-{i}"), 4 + i)).unwrap();
    }
    let sync = |extra: &[&str]| -> Value {
        let mut args = vec!["sync", "--json", "--sessions-dir", sessions.to_str().unwrap()];
        args.extend_from_slice(extra);
        let (code, out, err) = sdb(&db, &args);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
    };
    let s = sync(&[]);
    assert_eq!((s["new"].as_u64(), s["entries_added"].as_u64()), (Some(3), Some(4 + 5 + 6)));
    let before = written(&db);
    let s = sync(&[]);
    assert_eq!((s["new"].as_u64(), s["unchanged"].as_u64(), s["entries_added"].as_u64()), (Some(0), Some(3), Some(0)));
    assert_eq!(written(&db), before, "a second sync wrote");

    // Two lines appended to one file: only they are written.
    let mut text = session_text("sync-1", 5);
    text.push_str(&message(5, Some(4), "appended a"));
    text.push('\n');
    text.push_str(&message(6, Some(5), "appended b"));
    text.push('\n');
    std::fs::write(&files[1], &text).unwrap();
    let s = sync(&[]);
    assert_eq!(
        (s["grown"].as_u64(), s["rewritten"].as_u64(), s["entries_added"].as_u64()),
        (Some(1), Some(0), Some(2))
    );
    let after = written(&db);
    let gone: Vec<&String> = before.iter().filter(|r| !after.contains(r)).collect();
    let added: Vec<&String> = after.iter().filter(|r| !before.contains(r)).collect();
    // The session's row (its counters) and the two new lines; no line rewritten.
    assert_eq!(gone.len(), 1, "rewritten: {gone:?}");
    assert!(gone[0].starts_with('s'), "{gone:?}");
    assert_eq!(added.iter().filter(|r| r.starts_with('e')).count(), 2, "{added:?}");
    let (code, out, err) = sdb(&db, &["export", "sync-1"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, text);

    // A file gone: kept and marked missing; pruned with --prune; the manager's session stays.
    std::fs::remove_file(&files[0]).unwrap();
    let s = sync(&[]);
    assert_eq!((s["missing"].as_u64(), s["pruned"].as_u64()), (Some(1), Some(0)));
    assert_eq!(count(&db, "SELECT count(*) FROM sessions WHERE id = 'sync-0'"), 1);
    let s = sync(&["--prune"]);
    assert_eq!((s["missing"].as_u64(), s["pruned"].as_u64()), (Some(0), Some(1)));
    assert_eq!(count(&db, "SELECT count(*) FROM sessions WHERE id = 'sync-0'"), 0);
    assert_eq!(count(&db, "SELECT count(*) FROM sessions WHERE origin = ''"), 3);

    // `sync FILE`: the named file only.
    std::fs::write(&files[2], session_text("sync-2", 7)).unwrap();
    let (code, out, err) =
        sdb(&db, &["sync", "--json", "--sessions-dir", sessions.to_str().unwrap(), files[2].to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let s: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (s["files_scanned"].as_u64(), s["grown"].as_u64(), s["entries_added"].as_u64()),
        (Some(1), Some(1), Some(1))
    );
}

/// `sync --watch` on the server: a line pi appends reaches the server while it runs.
#[test]
fn sync_watch_on_the_server_follows_an_append() {
    let Some(url) = server() else { return };
    let url = fresh_db(&url);
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("s/--p--");
    std::fs::create_dir_all(&folder).unwrap();
    let file = folder.join("w.jsonl");
    std::fs::write(&file, session_text("sync-watched", 3)).unwrap();
    let child = common::bin()
        .args(["--db", &url, "sync", "--watch", "--sessions-dir", dir.path().join("s").to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    follows_an_append(&url, child, &file, "sync-watched");
}

/// `sync --stdin` on the server: each request is answered on the connection kept open, and
/// a connection cut between two turns (a server restart) is replaced within the next request.
#[test]
fn sync_stdin_on_the_server_survives_a_cut_connection() {
    use common::sync_requests::{count_of, Requests};
    let Some(url) = server() else { return };
    let url = fresh_db(&url);
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("s/--p--");
    std::fs::create_dir_all(&folder).unwrap();
    let file = folder.join("held.jsonl");
    std::fs::write(&file, session_text("sync-held", 3)).unwrap();
    let mut r = Requests::start(&url, &dir.path().join("s"));
    let s = r.files(&[&file]);
    assert_eq!(count_of(&s, &["new", "entries_added"]), [Some(1), Some(3)], "{s}");
    let sessions = "SELECT count(*) FROM sessions WHERE id = 'sync-held'";
    assert_eq!(count(&url, sessions), 1);
    let entries = count(&url, "SELECT count(*) FROM entries");
    let cut = "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
               WHERE datname = current_database() AND pid <> pg_backend_pid()";
    assert!(count(&url, cut) >= 1, "the held connection is open between requests");
    std::fs::write(&file, session_text("sync-held", 5)).unwrap();
    let s = r.files(&[&file]);
    assert_eq!(count_of(&s, &["grown", "entries_added"]), [Some(1), Some(2)], "{s}");
    assert_eq!(count(&url, "SELECT count(*) FROM entries"), entries + 2);
    r.finish();
}

/// The catch-up finds what was written since the last one through `written_by` and `horizon`
/// (migration 14): a session written by a transaction that was still running during a
/// catch-up is found by the next one, and a deleted session's texts leave the index.
#[test]
fn the_catch_up_finds_writes_it_could_not_see_and_drops_deleted_sessions() {
    let Some(url) = server() else { return };
    let url = fresh_db(&url);
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("s/--p--");
    std::fs::create_dir_all(&folder).unwrap();
    let (a, b) = (folder.join("a.jsonl"), folder.join("b.jsonl"));
    std::fs::write(&a, session_text("zalpha", 3)).unwrap();
    std::fs::write(&b, session_text("zbeta", 3)).unwrap();
    let sessions = dir.path().join("s");
    let (code, _, err) = sdb(&url, &["sync", "--json", "--sessions-dir", sessions.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let hits = |q: &str| -> usize {
        let (code, out, err) = sdb(&url, &["search", q, "--json"]);
        assert!(code <= 1, "{err}");
        serde_json::from_str::<Vec<Value>>(&out).map_or(0, |v| v.len())
    };
    assert_eq!(hits("zalpha"), 3);

    // A transaction rewrites a's last line and is still open while a catch-up runs.
    let mut writer = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let mut tx = writer.transaction().unwrap();
    tx.batch_execute(
        "UPDATE entries SET body = convert_to(replace(convert_from(body, 'UTF8'), 'line 2 of', 'omega of'), 'UTF8') \
         WHERE session = (SELECT skey FROM sessions WHERE id = 'zalpha') AND seq = 3; \
         UPDATE sessions SET name = name WHERE id = 'zalpha'",
    )
    .unwrap();
    assert_eq!(hits("omega"), 0, "an uncommitted line was found");
    tx.commit().unwrap();
    assert_eq!(hits("omega"), 1, "the line written during the last catch-up was not found");

    // A session deleted (its file gone, pruned) leaves the index.
    std::fs::remove_file(&b).unwrap();
    let (code, out, err) = sdb(&url, &["sync", "--json", "--prune", "--sessions-dir", sessions.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"pruned\": 1"), "{out}");
    assert_eq!(hits("zbeta"), 0);
    assert_eq!(count(&url, "SELECT count(*) FROM search_gone"), 0);
    assert_eq!(hits("zalpha"), 3);
}

/// The probes the usage triggers run for every usage row written (an entry's copies before or
/// after a row, its first copy) use `search_usage_by_entry` with the row's place as part of the
/// index condition, even in the generic plan of a table just truncated (an `index --rebuild`):
/// with an index on entry_id alone the planner walked the primary key instead, reading every
/// earlier row for each row written (migration 15).
#[test]
fn usage_copy_probes_use_the_entry_index_after_a_truncate() {
    let Some(url) = server() else { return };
    let url = fresh_db(&url);
    let (code, _, err) = sdb(&url, &["stats"]);
    assert_eq!(code, 0, "{err}");
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    c.batch_execute("TRUNCATE search_usage; SET plan_cache_mode = force_generic_plan").unwrap();
    let probes = [
        "SELECT 1 FROM search_usage o WHERE o.entry_id = $1 AND o.ts IS NOT DISTINCT FROM $2 \
         AND ((o.session, o.seq) < ($3, $4)) IS TRUE",
        "UPDATE search_usage o SET first = false WHERE o.entry_id = $1 AND o.ts IS NOT DISTINCT FROM $2 \
         AND ((o.session, o.seq) > ($3, $4)) IS TRUE AND o.first",
        "SELECT n.session, n.seq FROM search_usage n WHERE n.entry_id = $1 AND n.ts IS NOT DISTINCT FROM $2 \
         ORDER BY n.session + 0, n.seq + 0 LIMIT 1",
    ];
    for (i, sql) in probes.iter().enumerate() {
        let (types, args) =
            if i < 2 { ("text, text, bigint, bigint", "'x', 'y', 1, 1") } else { ("text, text", "'x', 'y'") };
        c.batch_execute(&format!("PREPARE probe{i} ({types}) AS {sql}")).unwrap();
        let plan: Vec<String> = c
            .query(&format!("EXPLAIN EXECUTE probe{i} ({args})"), &[])
            .unwrap()
            .iter()
            .map(|r| r.get::<_, String>(0))
            .collect();
        let plan = plan.join("\n");
        assert!(plan.contains("search_usage_by_entry") && !plan.contains("search_usage_pkey"), "{sql}:\n{plan}");
    }
}

/// A catch-up that extracts many lines (an import, `index --rebuild`) gathers the search tables'
/// statistics: after a rebuild the planner otherwise took them for empty and scanned every
/// searchable entry for each search's hits.
#[test]
fn a_large_catch_up_gathers_statistics() {
    let Some(url) = server() else { return };
    let url = fresh_db(&url);
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("s/--p--");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("big.jsonl"), session_text("big-session", 20_050)).unwrap();
    let reltuples = |url: &str| count(url, "SELECT reltuples::bigint FROM pg_class WHERE relname = 'search_texts'");
    let (code, _, err) = sdb(&url, &["sync", "--json", "--sessions-dir", dir.path().join("s").to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(reltuples(&url) >= 20_000, "statistics not gathered: {}", reltuples(&url));
    let (code, _, err) = sdb(&url, &["index", "--rebuild", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(reltuples(&url) >= 20_000, "statistics not gathered after the rebuild: {}", reltuples(&url));
}
