//! Bulk imports run with a rollback journal while the database is theirs alone, and give it
//! back to WAL mode when another process asks for it.

mod common;

use sessiondb::internals::bulk::BulkJournal;
use std::time::{Duration, Instant};

fn journal_mode(conn: &sessiondb::db::Db) -> String {
    conn.sqlite().query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap()
}

#[test]
fn an_import_alone_uses_a_rollback_journal_and_leaves_wal_mode_behind() {
    let (_d, db, conn) = common::temp_db();
    let mut bulk = BulkJournal::enter(conn.sqlite());
    assert!(bulk.is_rollback());
    assert_eq!(journal_mode(&conn), "truncate");
    let sync: i64 = conn.sqlite().query_row("PRAGMA synchronous", [], |r| r.get(0)).unwrap();
    assert_eq!(sync, 2, "FULL while in rollback mode");
    bulk.leave(conn.sqlite());
    assert_eq!(journal_mode(&conn), "wal");
    let sync: i64 = conn.sqlite().query_row("PRAGMA synchronous", [], |r| r.get(0)).unwrap();
    assert_eq!(sync, 1, "NORMAL again");
    assert!(!sessiondb::db::beside(&db, "-journal").exists());
}

#[test]
fn an_import_beside_another_connection_stays_in_wal_mode() {
    let (_d, db, conn) = common::temp_db();
    let other = sessiondb::db::open(&db).unwrap();
    let _: i64 = other.sqlite().query_row("SELECT count(*) FROM sessions", [], |r| r.get(0)).unwrap();
    let bulk = BulkJournal::enter(conn.sqlite());
    assert!(!bulk.is_rollback());
    assert_eq!(journal_mode(&conn), "wal");
}

#[test]
fn a_process_opening_the_database_mid_import_gets_wal_mode_back_at_the_next_transaction() {
    let (_d, db, mut conn) = common::temp_db();
    let mut bulk = BulkJournal::enter(conn.sqlite());
    assert!(bulk.is_rollback());
    // A batch in progress: its write lock keeps the newcomer out.
    let tx = conn.sqlite_mut().transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).unwrap();
    tx.execute_batch("CREATE TABLE probe (x); INSERT INTO probe VALUES (1)").unwrap();
    let newcomer = {
        let db = db.clone();
        std::thread::spawn(move || {
            let c = sessiondb::db::open(&db)?;
            let mode: String = c.sqlite().query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
            let seen: i64 = c.sqlite().query_row("SELECT count(*) FROM probe", [], |r| r.get(0))?;
            Ok::<_, sessiondb::Error>((mode, seen))
        })
    };
    // The newcomer asks the import to yield...
    let marker = sessiondb::db::beside(&db, "-yield");
    let start = Instant::now();
    while !marker.exists() {
        assert!(start.elapsed() < Duration::from_secs(20), "no yield marker");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(!newcomer.is_finished());
    // ... which it does once the batch is committed.
    tx.commit().unwrap();
    bulk.between_transactions(conn.sqlite());
    assert!(!bulk.is_rollback());
    let (mode, seen) = newcomer.join().unwrap().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((mode.as_str(), seen), ("wal", 1));
    assert_eq!(journal_mode(&conn), "wal");
    assert!(!marker.exists());
    assert!(!sessiondb::db::beside(&db, "-journal").exists());
}

#[test]
fn a_cli_import_leaves_the_database_in_wal_mode_with_everything_in_it() {
    let (_d, db, conn) = common::temp_db();
    drop(conn);
    let (code, _, err) = common::run(&db, &["import", common::oracle().join("sessions").to_str().unwrap()]);
    assert!(code == 0 || code == 1, "{err}"); // 1: the corpus holds deliberately broken files
    let conn = sessiondb::db::Db::from_sqlite(rusqlite::Connection::open(&db).unwrap());
    assert_eq!(journal_mode(&conn), "wal");
    let ok: String = conn.sqlite().query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(ok, "ok");
    let sessions: i64 = conn.sqlite().query_row("SELECT count(*) FROM sessions", [], |r| r.get(0)).unwrap();
    assert!(sessions > 10, "{sessions}");
    assert!(!sessiondb::db::beside(&db, "-journal").exists() && !sessiondb::db::beside(&db, "-yield").exists());
}
