//! A database an older sessiondb made still opens, on each backend: `tests/fixtures/upgrade/`
//! holds databases made by the sessiondb of commit c5c7be1d (SQLite schema 19, PostgreSQL
//! schema 16) and their sessions as it exported them (`sessions/`; `regenerate.sh` there makes
//! them all). This build opens each database, applies the migrations it lacks, and then
//! - its migration history names every migration as a fresh database's does: the same
//!   versions, names and checksums. refinery refuses a database whose applied migrations were
//!   renamed or edited since, but only once there is a migration left to apply; this catches a
//!   moved or edited migration file before then;
//! - `export --all` writes back every session byte for byte as the old sessiondb exported it;
//! - `list`, `search`, `stats` and `check` print what they print on a fresh import of those
//!   exported files (the folder the files were read from aside);
//! - on SQLite, the entries whose usages are read from their lines are those of a fresh import.
//!
//! The PostgreSQL half is skipped without `SESSIONDB_TEST_PG_URL` (failing instead when
//! `SESSIONDB_REQUIRE_PG` is set).

mod common;

use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/upgrade");
/// The fixtures' sessions as the old sessiondb exported them.
const SESSIONS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/upgrade/sessions");

/// A migration as a database's `refinery_schema_history` records it: version, name, checksum.
type Applied = (i64, String, String);

fn run(db: &str, args: &[&str]) -> (i32, String, String) {
    let out = common::bin().arg("--db").arg(db).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// stdout of a command that must succeed.
fn ok(db: &str, args: &[&str]) -> String {
    let (code, out, err) = run(db, args);
    assert_eq!(code, 0, "{db} {args:?}: {err}");
    out
}

fn sqlite_history(path: &str) -> Vec<Applied> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut st = conn
        .prepare("SELECT version, name, CAST(checksum AS TEXT) FROM refinery_schema_history ORDER BY version")
        .unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect()
}

/// The entries whose usages are read from their lines (`usage_lines`, filled at open for an
/// older database), by session id and line number: keys differ between databases.
fn sqlite_usage_lines(path: &str) -> Vec<(String, i64)> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut st = conn
        .prepare(
            "SELECT s.id, e.seq FROM usage_lines l JOIN entries e ON e.key = l.key JOIN sessions s ON s.sid = e.session \
             ORDER BY 1, 2",
        )
        .unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
}

fn pg_history(url: &str) -> Vec<Applied> {
    let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
    c.query("SELECT version, name, checksum::text FROM refinery_schema_history ORDER BY version", &[])
        .unwrap()
        .iter()
        .map(|r| (i64::from(r.get::<_, i32>(0)), r.get(1), r.get(2)))
        .collect()
}

/// The folder the sessions of `db` were imported from (every path is `ROOT/<project>/<file>`).
fn sessions_root(db: &str) -> String {
    let list: serde_json::Value = serde_json::from_str(&ok(db, &["list", "--json"])).unwrap();
    let roots: std::collections::BTreeSet<PathBuf> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|s| Path::new(s["path"].as_str().unwrap()).parent().unwrap().parent().unwrap().to_path_buf())
        .collect();
    assert_eq!(roots.len(), 1, "{db}: sessions from more than one folder: {roots:?}");
    roots.into_iter().next().unwrap().to_string_lossy().into_owned()
}

/// The old database `old`, not yet opened by this build, at schema `version`, against `fresh`,
/// this build's import of the same files; `history` reads a database's migration history.
fn assert_upgraded(old: &str, fresh: &str, version: i64, history: fn(&str) -> Vec<Applied>) {
    let before = history(old);
    assert_eq!(before.last().map(|a| a.0), Some(version), "{old}: the fixture's schema version");
    let old_root = sessions_root(old); // the first command: this build opens and migrates it
    let fresh_history = history(fresh);
    let old_history = history(old);
    for applied in &before {
        assert!(
            fresh_history.contains(applied),
            "{old}: the fixture applied migration {applied:?}, which this build names or sums differently: \
             a migration file was renamed or edited\nthis build: {fresh_history:?}"
        );
    }
    assert_eq!(old_history, fresh_history, "{old}: the migrations applied after opening it");

    let new_root = sessions_root(fresh);
    // Outputs name session files: the old database read them from another folder.
    let same = |args: &[&str]| {
        let (a_code, a, a_err) = run(old, args);
        let (b_code, b, b_err) = run(fresh, args);
        assert_eq!(a_code, b_code, "{args:?}: exit status\nold: {a_err}\nfresh: {b_err}");
        assert_eq!(a.replace(&old_root, &new_root), b, "{args:?}: stdout of the upgraded database");
        b
    };
    let list = same(&["list", "--json"]);
    assert_eq!(serde_json::from_str::<serde_json::Value>(&list).unwrap().as_array().unwrap().len(), 4);
    for query in ["refactor", "中文", "\"lorem ipsum\"", "emoji"] {
        let hits = same(&["search", "--json", "--limit", "100", query]);
        assert!(hits.contains("sessionId"), "search {query}: no hits\n{hits}");
        same(&["search", "--json", "--sessions", query]);
    }
    same(&["search", "--json", "--role", "user", "session"]);
    same(&["stats", "--json"]);
    same(&["check", "--json"]);

    let dir = tempfile::tempdir().unwrap();
    ok(old, &["export", "--all", "--out", dir.path().to_str().unwrap()]);
    let exported = common::read_tree(dir.path());
    let expected = common::read_tree(Path::new(SESSIONS));
    assert_eq!(exported.keys().collect::<Vec<_>>(), expected.keys().collect::<Vec<_>>(), "{old}: files exported");
    for (file, bytes) in &expected {
        assert!(exported[file] == *bytes, "{old}: {} differs from the old sessiondb's export", file.display());
    }
}

#[test]
fn a_sqlite_database_of_schema_19_opens_migrated_with_its_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.sqlite");
    std::fs::copy(Path::new(FIXTURES).join("sqlite-v19.sqlite"), &old).unwrap();
    let old = old.to_str().unwrap();
    let fresh = dir.path().join("fresh.sqlite");
    let fresh = fresh.to_str().unwrap();
    ok(fresh, &["import", SESSIONS]);
    assert!(packed_list_texts(old) > 0, "the fixture's joined texts are packed, as schema 19 stored them");
    assert_upgraded(old, fresh, 19, sqlite_history);
    assert_eq!(packed_list_texts(old), 0, "V20 keeps the joined texts as text");
    assert_eq!(packed_list_texts(fresh), 0);
    // V21: rows written before carry no note of their line's form (a branch reads their
    // lines); an import notes them.
    assert_eq!(noted_rows(old), 0);
    assert!(noted_rows(fresh) > 0);
    // V22: the entries whose usages only their lines give, as a fresh import lists them.
    let listed = sqlite_usage_lines(fresh);
    assert!(listed.len() >= 5, "the fixtures' odd usages: {listed:?}");
    assert_eq!(sqlite_usage_lines(old), listed, "usage_lines of the upgraded database");
}

/// Entry rows noted as holding a line in JSON.stringify form.
fn noted_rows(path: &str) -> i64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row("SELECT count(*) FROM entries WHERE plain IS NOT NULL", [], |r| r.get(0)).unwrap()
}

/// Joined `allMessagesText` rows stored packed.
fn packed_list_texts(path: &str) -> i64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row("SELECT count(*) FROM list_texts WHERE typeof(text) <> 'text' OR text_dict IS NOT NULL", [], |r| {
        r.get(0)
    })
    .unwrap()
}

#[test]
fn a_postgresql_database_of_schema_16_opens_migrated_with_its_sessions() {
    let Some(url) = common::pg::server() else { return };
    let old = common::pg::fresh_db_named(&url, "upgrade_old");
    let dump = std::fs::read_to_string(Path::new(FIXTURES).join("postgres-v16.sql")).unwrap();
    postgres::Client::connect(&old, postgres::NoTls).unwrap().batch_execute(&dump).unwrap();
    let fresh = common::pg::fresh_db_named(&url, "upgrade_fresh");
    ok(&fresh, &["import", SESSIONS]);
    assert_upgraded(&old, &fresh, 16, pg_history);
}
