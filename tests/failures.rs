//! Clear failures: a database from a newer sessiondb, a missing database, files and folders
//! without permission, a path that is a folder or not a database, a full disk. Each gives one
//! line `sessiondb: error: <path>: <cause>` and exit status 2, never a panic.
//!
//! Permission tests need a user that permissions apply to. Tests run as root in CI, where
//! file modes do not stop anything: as root the commands run through
//! `setpriv --reuid=65534 --regid=65534` (user nobody); without `setpriv` those tests are
//! skipped with a note. As another user they run directly.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One error line naming `path`, exit status 2.
fn assert_clear_error(code: i32, err: &str, path: &Path, cause: &str) {
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("sessiondb: error: "), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains(&path.display().to_string()), "names {}: {err}", path.display());
    assert!(err.contains(cause), "says {cause:?}: {err}");
}

fn output(mut cmd: Command, stdin: &str) -> (i32, String, String) {
    use std::io::Write;
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sessions")
}

fn imported_db(dir: &Path) -> PathBuf {
    let db = dir.join("db.sqlite");
    let (code, _, err) = common::run(&db, &["import", examples().to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    db
}

/// Read commands and what they need.
fn read_commands() -> Vec<Vec<&'static str>> {
    vec![
        vec!["list"],
        vec!["check"],
        vec!["stats"],
        vec!["recent"],
        vec!["find", "x-no-version-tree"],
        vec!["search", "hello"],
        vec!["export", "x-no-version-tree"],
        vec!["context", "x-no-version-tree"],
        vec!["tree", "x-no-version-tree"],
        vec!["export", "--all", "--out", "/nonexistent-sessiondb-out"],
    ]
}

#[test]
fn a_database_from_a_newer_sessiondb_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let db = imported_db(dir.path());
    let (newer, applied) = {
        let conn = rusqlite::Connection::open(&db).unwrap();
        let known: i64 = conn.query_row("SELECT max(version) FROM refinery_schema_history", [], |r| r.get(0)).unwrap();
        // Versions may have gaps (migrations numbered apart on branches): count the rows.
        let applied: i64 = conn.query_row("SELECT count(*) FROM refinery_schema_history", [], |r| r.get(0)).unwrap();
        conn.execute(
            "INSERT INTO refinery_schema_history (version, name, applied_on, checksum) \
             VALUES (?1, 'from_the_future', '2030-01-01T00:00:00Z', '1')",
            [known + 1],
        )
        .unwrap();
        (known + 1, applied)
    };
    let says = format!("database schema version {newer} is newer than this sessiondb knows");
    for args in read_commands().into_iter().chain([vec!["import", examples().to_str().unwrap()], vec!["index"]]) {
        let (code, _, err) = common::run(&db, &args);
        assert_clear_error(code, &err, &db, &says);
        assert!(err.contains("upgrade sessiondb"), "{err}");
    }
    let mut rpc = common::bin();
    rpc.arg("--db").arg(&db).arg("rpc");
    let (code, out, _) = output(rpc, "{\"id\":1,\"method\":\"create\",\"params\":[\"/x\"]}\n");
    assert_eq!(code, 0);
    assert!(out.contains(&says) && out.contains(r#""error""#), "{out}");
    assert!(matches!(sessiondb::db::open(&db), Err(sessiondb::Error::NewerDatabase { .. })));
    // Nothing was migrated or written.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let versions: i64 = conn.query_row("SELECT count(*) FROM refinery_schema_history", [], |r| r.get(0)).unwrap();
    assert_eq!(versions, applied + 1);
    let sessions: i64 = conn.query_row("SELECT count(*) FROM sessions", [], |r| r.get(0)).unwrap();
    assert_eq!(sessions, 4);
}

#[test]
fn read_commands_on_a_missing_database_say_so_and_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("nothing-here.sqlite");
    for args in read_commands() {
        let (code, _, err) = common::run(&db, &args);
        assert_clear_error(code, &err, &db, "no database here");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "no file was created");
}

#[test]
fn a_folder_or_a_file_that_is_not_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("folder.sqlite");
    std::fs::create_dir(&folder).unwrap();
    let garbage = dir.path().join("garbage.sqlite");
    std::fs::write(&garbage, "this is not a database, just text that is long enough to have a header\n".repeat(20))
        .unwrap();
    for args in read_commands().into_iter().chain([vec!["import", examples().to_str().unwrap()]]) {
        let (code, _, err) = common::run(&folder, &args);
        assert_clear_error(code, &err, &folder, "is a directory, not a database file");
        let (code, _, err) = common::run(&garbage, &args);
        assert_clear_error(code, &err, &garbage, "file is not a database");
    }
    assert!(std::fs::read(&garbage).unwrap().starts_with(b"this is not a database"));
}

/// A command that runs as a user file permissions apply to, or `None` (skip) when that is
/// impossible.
fn unprivileged() -> Option<Command> {
    let uid = Command::new("id").arg("-u").output().ok()?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return Some(Command::new(env!("CARGO_BIN_EXE_sessiondb")));
    }
    let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].into_iter().find(|p| Path::new(p).exists())?;
    let mut cmd = Command::new(setpriv);
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", env!("CARGO_BIN_EXE_sessiondb")]);
    // The binary must be reachable by that user.
    let probe = Command::new(setpriv)
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", env!("CARGO_BIN_EXE_sessiondb"), "--version"])
        .output()
        .ok()?;
    probe.status.success().then_some(cmd)
}

fn run_unprivileged(db: &Path, args: &[&str], stdin: &str) -> Option<(i32, String, String)> {
    let mut cmd = unprivileged()?;
    cmd.arg("--db").arg(db).args(args);
    Some(output(cmd, stdin))
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn files_and_folders_without_permission() {
    if unprivileged().is_none() {
        eprintln!("skipped: running as root without setpriv, permissions cannot be tested");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    chmod(dir.path(), 0o755);
    let import = examples();
    let import = import.to_str().unwrap();

    // A database file that cannot be read (sessiondb creates them 0600).
    let private = dir.path().join("private");
    std::fs::create_dir(&private).unwrap();
    let db = imported_db(&private);
    chmod(&db, 0o600);
    chmod(&private, 0o777);
    for args in [vec!["list"], vec!["import", import]] {
        let (code, _, err) = run_unprivileged(&db, &args, "").unwrap();
        assert_clear_error(code, &err, &db, "cannot read the database file: Permission denied");
    }

    // A read-only database file in a writable folder: reads work, writes are refused.
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let db = imported_db(&ro);
    chmod(&db, 0o444);
    chmod(&ro, 0o777);
    let (code, out, err) = run_unprivileged(&db, &["list"], "").unwrap();
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("x-no-version-tree") || out.lines().count() > 2, "{out}");
    let (code, _, err) = run_unprivileged(&db, &["import", import], "").unwrap();
    assert_clear_error(code, &err, &db, "the database file is read-only");
    let (code, out, _) = run_unprivileged(
        &db,
        &["rpc"],
        "{\"id\":1,\"method\":\"create\",\"params\":[\"/x\"]}\n{\"id\":2,\"method\":\"getSessionId\",\"params\":[]}\n",
    )
    .unwrap();
    assert_eq!(code, 0);
    let first = out.lines().next().unwrap();
    assert!(first.contains(r#""error""#) && first.contains("the database file is read-only"), "{out}");

    // A readable database in a folder that cannot be written: SQLite cannot make its -wal and
    // -shm files, so even reads fail, and say why.
    let fixed = dir.path().join("fixed");
    std::fs::create_dir(&fixed).unwrap();
    let db = imported_db(&fixed);
    chmod(&db, 0o644);
    chmod(&fixed, 0o755);
    for args in [vec!["list"], vec!["import", import]] {
        let (code, _, err) = run_unprivileged(&db, &args, "").unwrap();
        assert_clear_error(code, &err, &db, "cannot create files in");
        assert!(err.contains("-wal and -shm"), "{err}");
    }
    // A new database in a folder that cannot be written.
    let new_db = fixed.join("new.sqlite");
    let (code, _, err) = run_unprivileged(&new_db, &["import", import], "").unwrap();
    assert_clear_error(code, &err, &new_db, "cannot create the database file: Permission denied");
    let deeper = fixed.join("sub/new.sqlite");
    let (code, _, err) = run_unprivileged(&deeper, &["import", import], "").unwrap();
    assert_clear_error(code, &err, &fixed.join("sub"), "cannot create the database's folder: Permission denied");

    // A folder that cannot even be entered.
    let closed = dir.path().join("closed");
    std::fs::create_dir(&closed).unwrap();
    let db = imported_db(&closed);
    chmod(&closed, 0o700);
    let (code, _, err) = run_unprivileged(&db, &["list"], "").unwrap();
    assert_clear_error(code, &err, &db, "cannot reach the database file: Permission denied");
    let (code, _, err) = run_unprivileged(&db, &["import", import], "").unwrap();
    assert_clear_error(code, &err, &db, "Permission denied");
    chmod(&closed, 0o755);
}

/// A full disk, simulated with a file-size limit (`ulimit -f`, SIGXFSZ ignored so that writes
/// fail with EFBIG as on a full disk): one error line, every file whole or absent.
#[test]
fn a_full_disk_leaves_whole_files_and_one_error_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    let corpus = common::oracle().join("sessions");
    let out = Command::new("sh")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 4096; exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_sessiondb"))
        .arg("--db")
        .arg(&db)
        .args(["import", corpus.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let last = err.lines().last().unwrap_or_default();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(last.starts_with("sessiondb: error: ") && last.contains(&db.display().to_string()), "{last}");
    assert!(last.contains("could not be written to the database"), "{last}");
    assert!(err.lines().filter(|l| l.contains("disk I/O error") || l.contains("disk is full")).count() == 1, "{err}");
    // What is in the database is whole: integrity holds and every session has all its lines.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let ok: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(ok, "ok");
    let (code, out, _) = common::run(&db, &["check", "--json"]);
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(j["problems"].as_array().unwrap().iter().all(|p| p["kind"] != "counts"), "{out}");
    assert!(code == 0 || code == 1);
    let sessions: i64 = conn.query_row("SELECT count(*) FROM sessions", [], |r| r.get(0)).unwrap();
    assert!(sessions > 0, "some files fit");
    let mut st = conn.prepare("SELECT path, entry_count FROM sessions").unwrap();
    let rows: Vec<(String, i64)> =
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect();
    let (_d, _p, mut fresh) = common::temp_db();
    for (path, count) in rows {
        let r = sessiondb::import::import_file(&mut fresh, Path::new(&path), None, Default::default());
        assert_eq!(r.entries as i64, count, "{path} is whole");
    }
}

/// A `--db` URL is refused in one line naming it, and nothing is created: before, `postgres://…`
/// made a folder `postgres:` holding a new SQLite file.
#[test]
fn database_urls_are_refused_and_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for url in ["postgres://host/db", "postgresql://u@h:5432/x", "sqlite://a.db"] {
        // PostgreSQL serves every command (tests/postgres.rs); other schemes are refused.
        let postgres = url.starts_with("postgres");
        for args in [
            &["import", concat!(env!("CARGO_MANIFEST_DIR"), "/examples/sessions")][..],
            &["list"][..],
            &["search", "x"][..],
        ] {
            let out = common::bin().current_dir(dir.path()).arg("--db").arg(url).args(args).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            if postgres {
                // Served: the server is looked for (and not found), in one line naming it.
                assert_eq!(out.status.code(), Some(2), "{err}");
                assert_eq!(err.trim_end().lines().count(), 1, "{err}");
                assert!(err.contains("error connecting to server"), "{err}");
                continue;
            }
            assert_clear_error(out.status.code().unwrap_or(-1), &err, Path::new(url), "does not serve");
        }
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing created");
    // A path that merely contains "://" after a folder is still a path.
    let (_, _, err) = common::run(&dir.path().join("a://b.sqlite"), &["list"]);
    assert!(!err.contains("does not serve"), "{err}");
}
