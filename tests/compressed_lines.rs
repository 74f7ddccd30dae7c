//! Stored lines are zstd frames (migration V17): a database written before them is packed in
//! place when opened, exports stay byte for byte, and `check` names a line whose frame is damaged.

mod common;

use serde_json::Value as J;
use sessiondb::db::Db;
use sessiondb::import::ImportOptions;
use std::path::Path;

/// The schema version before lines were packed.
const BEFORE: i32 = 16;

/// Every session's export, by sid.
fn exports(db: &Db) -> Vec<(i64, Vec<u8>)> {
    let sids: Vec<i64> = db
        .sqlite()
        .prepare("SELECT sid FROM sessions ORDER BY sid")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    sids.into_iter()
        .map(|sid| {
            let mut out = Vec::new();
            sessiondb::export::write_session(db, sessiondb::SessionKey(sid), &mut out).unwrap();
            (sid, out)
        })
        .collect()
}

fn count(db: &Db, sql: &str) -> i64 {
    db.sqlite().query_row(sql, [], |r| r.get(0)).unwrap()
}

/// Lines stored as they are, not as frames.
const PLAIN: &str =
    "SELECT count(*) FROM entries WHERE body_key IS NULL AND typeof(body) = 'text' AND length(body) > 64";

/// Joined texts stored as they are.
const PLAIN_TEXTS: &str = "SELECT count(*) FROM list_texts WHERE typeof(text) = 'text' AND length(text) > 64";

/// Copies every row of the database at `from` into `to` (created at an older schema), with
/// lines and joined texts unpacked: what an older sessiondb would have written.
fn copy_unpacked(from: &Path, to: &Path) {
    let db = Db::from_sqlite(rusqlite::Connection::open(to).unwrap());
    let c = db.sqlite();
    c.pragma_update(None, "foreign_keys", "OFF").unwrap();
    c.execute("ATTACH ?1 AS new", [from.to_str().unwrap()]).unwrap();
    let tables: Vec<String> = c
        .prepare("SELECT name FROM main.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'refinery_schema_history'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for t in tables {
        c.execute_batch(&format!("DELETE FROM main.{t}")).unwrap();
        common::copy_table_unpacked(c, "new", &t);
    }
    c.execute_batch("DETACH new").unwrap();
}

#[test]
fn a_database_written_before_packing_is_packed_in_place_and_exports_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    // pi's corpus (every method, forks, edge and legacy files) imported by this build...
    let (_d, fresh_path, mut fresh) = common::temp_db();
    let targets = sessiondb::import::collect_targets(&[common::oracle().join("sessions")]).unwrap();
    let summary = sessiondb::import::import_targets(&mut fresh, &targets, ImportOptions::default(), |_| {}).unwrap();
    assert!(summary.reports.len() > 20);
    // Short lines compress to no less than themselves without a dictionary (the corpus is too
    // small to train one from): those are kept as they are.
    let fresh_plain = count(&fresh, PLAIN);
    let fresh_lines = count(&fresh, "SELECT count(*) FROM entries WHERE body_key IS NULL");
    let fresh_plain_texts = count(&fresh, PLAIN_TEXTS);
    assert!(fresh_plain * 5 < fresh_lines, "this build stores frames: {fresh_plain} of {fresh_lines} lines are not");
    let want = exports(&fresh);
    let want_check = sessiondb::check::check_all(&fresh, |_| {}).unwrap().problems;
    drop(fresh);

    // ...and the same rows as the schema before V17 held them: every line as text.
    let old = dir.path().join("old.sqlite");
    sessiondb::internals::create_at_version(&old, BEFORE).unwrap();
    copy_unpacked(&fresh_path, &old);
    {
        let c = rusqlite::Connection::open(&old).unwrap();
        let blobs: i64 =
            c.query_row("SELECT count(*) FROM entries WHERE typeof(body) = 'blob'", [], |r| r.get(0)).unwrap();
        assert_eq!(blobs, 0);
        let version: i64 = c.query_row("SELECT max(version) FROM refinery_schema_history", [], |r| r.get(0)).unwrap();
        assert!(version <= i64::from(BEFORE));
    }
    let plain_before = {
        let db = Db::from_sqlite(rusqlite::Connection::open(&old).unwrap());
        count(&db, PLAIN)
    };
    assert!(plain_before > 1000, "{plain_before}");

    // Opening it with this build migrates it and packs every line in place.
    let db = sessiondb::db::open(&old).unwrap();
    assert!(count(&db, PLAIN) <= fresh_plain, "{} lines left as text", count(&db, PLAIN));
    assert_eq!(count(&db, "SELECT count(*) FROM maintenance"), 0);
    // Joined texts stay text (migration 20): a listing reads them all.
    assert_eq!(count(&db, PLAIN_TEXTS), fresh_plain_texts);
    assert_eq!(count(&db, "SELECT count(*) FROM list_texts WHERE typeof(text) = 'blob'"), 0);
    assert_eq!(exports(&db), want, "every export is byte for byte the same");
    assert_eq!(sessiondb::check::check_all(&db, |_| {}).unwrap().problems, want_check);

    // A migration cut short (some lines packed, some not) goes on at the next open.
    db.sqlite()
        .execute_batch(
            "UPDATE entries SET body = sessiondb_line(body, body_dict), body_dict = NULL WHERE key % 2 = 0 AND body_key IS NULL;
             INSERT INTO maintenance(task) VALUES ('compress-lines');",
        )
        .unwrap();
    let packed = count(&db, PLAIN);
    assert!(packed > fresh_plain);
    drop(db);
    let db = sessiondb::db::open(&old).unwrap();
    assert!(count(&db, PLAIN) <= fresh_plain);
    assert_eq!(exports(&db), want);
}

#[test]
fn check_names_the_session_and_entry_of_a_damaged_line_and_export_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sessions");
    assert_eq!(common::run(&db, &["import", examples.to_str().unwrap()]).0, 0);
    // The sample sessions have findings of their own (pi's files can): none about lines.
    let (_, before, _) = common::run(&db, &["check", "--json"]);
    assert!(!before.contains("damaged-line"), "{before}");
    let (session_id, entry_id, seq, path) = {
        let conn = rusqlite::Connection::open(&db).unwrap();
        let (key, frame, session_id, entry_id, seq, path): (i64, Vec<u8>, String, String, i64, String) = conn
            .query_row(
                "SELECT e.key, e.body, s.id, e.id, e.seq, s.path FROM entries e JOIN sessions s ON s.sid = e.session \
                 WHERE typeof(e.body) = 'blob' ORDER BY length(e.body) DESC LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)),
            )
            .unwrap();
        let mut bad = frame.clone();
        let mid = bad.len() / 2;
        bad[mid] ^= 0x20;
        conn.execute("UPDATE entries SET body = ?1 WHERE key = ?2", rusqlite::params![bad, key]).unwrap();
        (session_id, entry_id, seq, path)
    };
    let (code, out, err) = common::run(&db, &["check", "--json"]);
    assert_eq!(code, 1, "{out}{err}");
    let j: J = serde_json::from_str(&out).unwrap();
    let damaged: Vec<&J> = j["problems"].as_array().unwrap().iter().filter(|p| p["kind"] == "damaged-line").collect();
    assert_eq!(damaged.len(), 1, "{out}");
    let problems = |s: &str| serde_json::from_str::<J>(s).unwrap()["problems"].as_array().unwrap().len();
    assert_eq!(problems(&out), problems(&before) + 1, "{out}");
    let p = damaged[0];
    assert_eq!(p["sessionId"], session_id.as_str());
    assert_eq!(p["entryId"], entry_id.as_str());
    assert_eq!(p["line"], seq + 1);
    assert!(p["message"].as_str().unwrap().contains("damaged"), "{p}");
    // The human-readable report names it too.
    let (code, out, _) = common::run(&db, &["check"]);
    assert_eq!(code, 1);
    assert!(out.contains("damaged-line") && out.contains(&entry_id), "{out}");
    // Export never writes a line other than the one stored: it stops with an error.
    let (code, _, err) = common::run(&db, &["export", &path]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("damaged"), "{err}");
}

#[test]
fn a_long_session_is_packed_and_unpacked_by_several_threads_in_order_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sessions").join("long.jsonl");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let bytes = common::long_session(&file, 6000);
    assert!(bytes.len() > 6 << 20, "{} bytes", bytes.len());
    let (_d, _path, mut db) = common::temp_db();
    let targets = sessiondb::import::collect_targets(std::slice::from_ref(&file)).unwrap();
    sessiondb::import::import_targets(&mut db, &targets, ImportOptions::default(), |_| {}).unwrap();
    // Frames packed before the dictionary was trained, and after: both kinds in one session.
    let without = count(&db, "SELECT count(*) FROM entries WHERE typeof(body) = 'blob' AND body_dict IS NULL");
    let with = count(&db, "SELECT count(*) FROM entries WHERE typeof(body) = 'blob' AND body_dict IS NOT NULL");
    assert!(without > 100 && with > 3000, "{without} frames without a dictionary, {with} with");
    let framed = count(&db, "SELECT sum(length(body)) FROM entries");
    assert!(framed * 4 < bytes.len() as i64, "{framed} bytes of frames for {} of lines", bytes.len());
    // Lines kept as text (a line that did not compress) among the frames, in several slices.
    let unpacked = db
        .sqlite()
        .execute(
            "UPDATE entries SET body = sessiondb_line(body, body_dict), body_dict = NULL \
             WHERE typeof(body) = 'blob' AND key % 500 = 7",
            [],
        )
        .unwrap();
    assert!(unpacked > 5, "{unpacked} lines kept as text");
    // Many slices, unpacked ahead by other threads, come back in file order.
    let sid = count(&db, "SELECT sid FROM sessions");
    let mut out = Vec::new();
    sessiondb::export::write_session(&db, sessiondb::SessionKey(sid), &mut out).unwrap();
    assert!(out == bytes, "the export differs from the file");
    // A damaged frame late in the session stops the export with an error, not a wrong line.
    let (key, mut frame): (i64, Vec<u8>) = db
        .sqlite()
        .query_row(
            "SELECT key, body FROM entries WHERE typeof(body) = 'blob' ORDER BY key DESC LIMIT 1 OFFSET 100",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let mid = frame.len() / 2;
    frame[mid] ^= 0x20;
    db.sqlite().execute("UPDATE entries SET body = ?1 WHERE key = ?2", rusqlite::params![frame, key]).unwrap();
    let mut out = Vec::new();
    let err = sessiondb::export::write_session(&db, sessiondb::SessionKey(sid), &mut out).unwrap_err();
    assert!(err.to_string().contains("damaged"), "{err}");
}

#[test]
fn a_session_over_16_mib_is_exported_to_its_file_byte_for_byte() {
    // Past 16 MiB the export hands written pages to the disk as it goes (a second thread).
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    std::fs::create_dir_all(sessions.join("--work-long--")).unwrap();
    let file = sessions.join("--work-long--").join("long.jsonl");
    let bytes = common::long_session(&file, 12_000);
    assert!(bytes.len() > 17 << 20, "{} bytes", bytes.len());
    let db = dir.path().join("db.sqlite");
    assert_eq!(common::run(&db, &["import", sessions.to_str().unwrap()]).0, 0);
    let out = dir.path().join("out");
    let (code, _, err) = common::run(&db, &["export", "--all", "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let exported = common::read_tree(&out);
    assert_eq!(exported.len(), 1);
    assert!(exported.values().next().unwrap() == &bytes, "the exported file differs");
}

#[test]
fn listed_texts_of_all_and_of_a_part_match_each_read_alone() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let first = String::from_utf8(common::long_session(&sessions.join("s000.jsonl"), 60)).unwrap();
    for i in 1..140 {
        let id = format!("0a0b0c0d-0000-4000-8000-{i:012}");
        let text = first.replace("0a0b0c0d-0000-4000-8000-000000000001", &id).replace("ledger", &format!("ledger{i}"));
        std::fs::write(sessions.join(format!("s{i:03}.jsonl")), text).unwrap();
    }
    let (_d, _path, mut db) = common::temp_db();
    let targets = sessiondb::import::collect_targets(std::slice::from_ref(&sessions)).unwrap();
    sessiondb::import::import_targets(&mut db, &targets, ImportOptions::default(), |_| {}).unwrap();
    // Stored as text, not packed (migration 20): a listing reads them as they are.
    assert_eq!(count(&db, "SELECT count(*) FROM list_texts WHERE typeof(text) = 'blob'"), 0);
    assert_eq!(count(&db, "SELECT count(*) FROM list_texts"), 140);
    let mut all = sessiondb::discovery::list_everything(&db).unwrap();
    assert_eq!(all.len(), 140);
    // Every session's text (a pass over all of them), then a part of them (each by its key).
    sessiondb::discovery::fill_all_text(&db, &mut all).unwrap();
    let part: Vec<(sessiondb::SessionKey, i64)> = all.iter().take(66).map(|i| (i.sid, i.last_seq)).collect();
    let part_texts = sessiondb::discovery::texts_of(&db, &part).unwrap();
    for (n, info) in all.iter().enumerate() {
        // One session alone, read by its key.
        let alone = sessiondb::discovery::texts_of(&db, &[(info.sid, info.last_seq)]).unwrap();
        assert!(info.all_messages_text.len() > 20_000, "{}", info.all_messages_text.len());
        assert!(info.all_messages_text == alone[0], "{}: the listed text differs", info.id);
        if n < part.len() {
            assert!(part_texts[n] == alone[0], "{}: the text of a part differs", info.id);
        }
    }
    let distinct: std::collections::BTreeSet<&str> = all.iter().map(|i| i.all_messages_text.as_str()).collect();
    assert_eq!(distinct.len(), 140, "each session its own text, none shifted onto another");
}
