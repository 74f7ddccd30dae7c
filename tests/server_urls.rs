//! One rule says whether a database names a PostgreSQL server: `sessiondb::pg::is_url`. The
//! Node binding (bindings/node/test/server-urls.test.mjs) and the pi package
//! (integrations/pi/test/paths.test.mjs) are fed the same texts, tests/fixtures/server-urls.json,
//! and must give the same answers as this test.

use sessiondb::db::Location;
use std::process::Command;

fn cases() -> Vec<(String, bool)> {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/server-urls.json"))
        .expect("tests/fixtures/server-urls.json");
    serde_json::from_str(&text).expect("a list of [text, isServerUrl]")
}

#[test]
fn the_scheme_is_recognised_in_any_case() {
    let cases = cases();
    assert!(
        cases.iter().any(|(t, url)| *url && t.starts_with("POSTGRES://")),
        "the fixture lacks an upper-case scheme"
    );
    for (text, url) in &cases {
        assert_eq!(sessiondb::pg::is_url(text), *url, "is_url({text:?})");
        assert_eq!(matches!(Location::parse(text), Location::Server(_)), *url, "Location::parse({text:?})");
    }
}

#[test]
fn the_cli_answers_the_same() {
    // `--db ""` is refused by the option parser before any rule is asked.
    for (text, url) in cases().into_iter().filter(|(t, _)| !t.is_empty()) {
        let out = Command::new(env!("CARGO_BIN_EXE_sessiondb"))
            .args(["--db", &text, "paths", "--json"])
            .output()
            .expect("run sessiondb");
        assert!(out.status.success(), "paths --db {text:?}: {}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("paths --json is JSON");
        assert_eq!(v["server"], url, "paths --db {text:?}");
    }
}

/// The driver parses only a lower-case scheme: an upper-case URL reaches the server all the
/// same (here a port nobody listens on: refused, not "not a PostgreSQL URL").
#[test]
fn an_upper_case_url_is_connected_to() {
    for url in ["POSTGRES://u@127.0.0.1:1/db?connect_timeout=2", "PostgreSQL://u@127.0.0.1:1/db?connect_timeout=2"] {
        let Err(e) = sessiondb::db::open(url) else { panic!("{url}: nothing listens on port 1") };
        let message = e.to_string();
        assert!(!message.contains("not a PostgreSQL URL"), "{url}: {message}");
        assert!(message.contains("127.0.0.1"), "{url}: the error names the server: {message}");
    }
}
