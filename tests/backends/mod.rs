//! Running a suite's assertions on PostgreSQL too: the test server (`SESSIONDB_TEST_PG_URL`;
//! without it the PostgreSQL half is skipped with a message, unless `SESSIONDB_REQUIRE_PG` is
//! set), a fresh database per use, and the SQLite database a test built pushed there under
//! origin `''` (the server's own sessions, which search and stats read as SQLite's).
#![allow(dead_code)]

use std::path::Path;

// The server and a fresh database on it: the helpers every suite on both backends shares
// (the suites using this module also have `mod common`).
pub use crate::common::pg::{fresh_db, server};

/// Runs the binary with `args` on `db` (a path or a URL); returns (status, stdout, stderr).
pub fn sdb(db: &str, args: &[&str]) -> (i32, String, String) {
    let out =
        std::process::Command::new(env!("CARGO_BIN_EXE_sessiondb")).arg("--db").arg(db).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `push --origin '' --json` of `local` to `url` with extra arguments; the summary.
pub fn push(local: &Path, url: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["push", "--to", url, "--origin", "", "--json"];
    args.extend_from_slice(extra);
    let (code, out, err) = sdb(local.to_str().unwrap(), &args);
    assert_eq!(code, 0, "push failed: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// `local` pushed into a fresh database of the test server: its URL and a handle on it.
pub fn pushed(local: &Path) -> Option<(String, sessiondb::db::Db)> {
    let url = fresh_db(&server()?);
    push(local, &url, &[]);
    let db = sessiondb::db::open(Path::new(&url)).unwrap();
    Some((url, db))
}

/// The same command gives the same status and output on the SQLite database and the server.
pub fn same_cli(local: &Path, url: &str, args: &[&str]) -> String {
    let (code, out, err) = sdb(local.to_str().unwrap(), args);
    let (pg_code, pg_out, pg_err) = sdb(url, args);
    assert_eq!((code, &out), (pg_code, &pg_out), "{args:?}: SQLite vs PostgreSQL ({err} / {pg_err})");
    out
}

/// Calls `sessiondb --db URL rpc` with requests (method, params) in order; the results.
pub fn rpc(url: &str, calls: &[(&str, serde_json::Value)]) -> Vec<serde_json::Value> {
    use std::io::Write;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_sessiondb"))
        .args(["--db", url, "rpc"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        let mut input = child.stdin.take().unwrap();
        for (i, (method, params)) in calls.iter().enumerate() {
            writeln!(input, "{}", serde_json::json!({"id": i, "method": method, "params": params})).unwrap();
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert!(v.get("error").is_none(), "{v}");
            v["result"].clone()
        })
        .collect()
}
