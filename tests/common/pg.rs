//! The PostgreSQL side of the suites that run on both backends: the test server
//! (`SESSIONDB_TEST_PG_URL`, started by `.ci/postgres.sh`), a fresh database per test, and the
//! oracle corpus pushed into it as the server's own sessions (origin `''`).
//! Without the variable a test skips with a message, unless `SESSIONDB_REQUIRE_PG` is set
//! (CI), where it fails.

use std::path::Path;

/// The server's URL, or `None` (the PostgreSQL half of a test skips) when there is none.
pub fn server() -> Option<String> {
    match std::env::var("SESSIONDB_TEST_PG_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var_os("SESSIONDB_REQUIRE_PG").is_some() => {
            panic!("SESSIONDB_REQUIRE_PG is set but SESSIONDB_TEST_PG_URL is not: source .ci/postgres.sh")
        }
        _ => {
            eprintln!("skipped on PostgreSQL: SESSIONDB_TEST_PG_URL unset (`. .ci/postgres.sh` starts a server)");
            None
        }
    }
}

/// A new, empty database on the server; returns its URL.
pub fn fresh_db(url: &str) -> String {
    fresh_db_named(url, "b")
}

/// A new, empty database on the server `url` whose name starts with `label`; returns its URL.
pub fn fresh_db_named(url: &str, label: &str) -> String {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let name = format!(
        "{}_{}_{}_{}",
        label.replace(|c: char| !c.is_ascii_alphanumeric(), "_").to_ascii_lowercase(),
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::SeqCst),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos()
    );
    let mut admin = postgres::Client::connect(url, postgres::NoTls).expect("connect to the test server");
    admin.batch_execute(&format!("CREATE DATABASE {name} ENCODING 'UTF8' TEMPLATE template0")).unwrap();
    let (base, _) = url.rsplit_once('/').unwrap();
    format!("{base}/{name}")
}

/// Pushes every session of `local` into a fresh database on the server under origin `''`
/// (sessions the server holds as its own, which every command reads as SQLite's); returns
/// the URL of that database.
pub fn pushed(local: &sessiondb::db::Db, url: &str) -> String {
    let db_url = fresh_db(url);
    let server = sessiondb::db::open(db_url.as_str()).unwrap();
    let opts = sessiondb::pg::PushOptions::new("");
    sessiondb::pg::push(local, &server, &opts, |_, _| {}).unwrap();
    db_url
}

/// Opens the database `url` names.
pub fn open(url: &str) -> sessiondb::db::Db {
    sessiondb::db::open(Path::new(url)).unwrap()
}

/// Runs a statement on the server (a test planting a problem).
pub fn execute(url: &str, sql: &str) -> u64 {
    let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
    c.execute(sql, &[]).unwrap()
}
