//! Imports read and parse files on a second thread: the same rows must come out as when each
//! file is read by the writer itself, and the reader must hand files over in order.

mod common;

use sessiondb::import::{self, ImportOptions};
use sessiondb::internals::readahead::{ReadAhead, Scanned};
use std::collections::HashMap;

/// Every row of the tables an import writes, as text, in key order, lines as they read back
/// (how each is packed depends on the dictionary its writer had trained by then). Migrated
/// sessions' rows are left out: migrating gives entries new random ids.
fn contents(conn: &sessiondb::db::Db) -> Vec<String> {
    let mut out = Vec::new();
    let migrated = "(SELECT sid FROM sessions WHERE source_version < version)";
    let entries = "key, session, seq, id, parent_id, type, ts, ts_ms, role, sessiondb_line(body, body_dict), \
        parent_key, depth, compaction_key, thinking_key, model_key, body_key";
    let tables = [
        ("sessions", "*", "1"),
        ("entries", entries, "rowid >> 32 NOT IN migrated"),
        ("texts", "*", "rowid >> 32 NOT IN migrated"),
        ("usage", "*", "rowid >> 32 NOT IN migrated"),
        ("list_texts", "sid, upto_seq, sessiondb_line(text, text_dict)", "rowid NOT IN migrated"),
        ("search_pending", "*", "rowid >> 32 NOT IN migrated"),
    ];
    for (table, cols, filter) in tables {
        let sql = format!("SELECT {cols} FROM {table} WHERE {} ORDER BY rowid", filter.replace("migrated", migrated));
        let mut st = conn.sqlite().prepare(&sql).unwrap();
        let n = st.column_count();
        let rows = st
            .query_map([], |r| {
                let cols: Vec<String> =
                    (0..n).map(|i| format!("{:?}", r.get::<_, rusqlite::types::Value>(i).unwrap())).collect();
                Ok(format!("{table}: {}", cols.join(" | ")))
            })
            .unwrap();
        out.extend(rows.map(Result::unwrap));
    }
    out
}

#[test]
fn an_import_read_ahead_stores_exactly_what_reading_file_by_file_stores() {
    // pi's corpus: every method, deep trees, forks, edge and legacy files.
    let targets = import::collect_targets(&[common::oracle().join("sessions")]).unwrap();
    assert!(targets.len() > 20, "{}", targets.len());

    let (_d1, _p1, mut ahead) = common::temp_db();
    let summary = import::import_targets(&mut ahead, &targets, ImportOptions::default(), |_| {}).unwrap();
    let (_d2, _p2, mut direct) = common::temp_db();
    let reports: Vec<_> = targets
        .iter()
        .map(|t| import::import_file(&mut direct, &t.path, Some(&t.rel_path), ImportOptions::default()))
        .collect();

    let statuses =
        |r: &[import::FileReport]| r.iter().map(|f| format!("{:?} {:?}", f.status, f.reason)).collect::<Vec<_>>();
    assert_eq!(statuses(&summary.reports), statuses(&reports));
    let (a, b) = (contents(&ahead), contents(&direct));
    assert!(a.len() > 1000, "{}", a.len());
    if let Some(i) = (0..a.len().max(b.len())).find(|&i| a.get(i) != b.get(i)) {
        panic!("first difference, row {i}:\n read ahead: {:?}\n direct:     {:?}", a.get(i), b.get(i));
    }
}

#[test]
fn the_reader_hands_files_over_in_order_and_skips_unchanged_ones() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let a =
        write("a.jsonl", "{\"type\":\"session\",\"id\":\"a\"}\n\n[1]\n{\"type\":\"message\",\"id\":\"x\"}\nnot json");
    let missing = dir.path().join("missing.jsonl");
    let b = write("b.jsonl", "{\"type\":\"session\",\"id\":\"b\"}\n");
    let c = write("c.jsonl", "{\"type\":\"session\",\"id\":\"c\"}\n");
    let d = write("d.jsonl", "{\"type\":\"session\",\"id\":\"d\"}\n");
    let known = HashMap::from([(b.clone(), sessiondb::internals::jsonl::file_signature(&b).unwrap())]);
    let mut reader = ReadAhead::start(vec![a.clone(), missing, b, c, d], known, None);

    let mut s = reader.take(0).expect("a is read");
    assert_eq!(s.signature.size, std::fs::metadata(&a).unwrap().len() as i64);
    let mut kinds = Vec::new();
    while let Some(l) = s.next_line().unwrap() {
        kinds.push(match l.scanned {
            Scanned::Blank => format!("{} blank", l.number),
            Scanned::Malformed(_) => format!("{} malformed", l.number),
            Scanned::Entry(p) => format!("{} {:?} {}", l.number, p.fields.id, l.terminated),
        });
    }
    assert_eq!(kinds, ["1 Some(\"a\") true", "2 blank", "3 malformed", "4 Some(\"x\") true", "5 malformed"]);
    // A missing file and an unchanged one are left to the writer.
    assert!(reader.take(1).is_none());
    assert!(reader.take(2).is_none());
    // A file given up halfway does not hold the next ones back; one not taken is dropped.
    drop(reader.take(3).expect("c is read"));
    let mut d = reader.take(4).expect("d is read");
    assert!(d.next_line().unwrap().is_some());
    assert!(d.next_line().unwrap().is_none());
    assert!(reader.take(5).is_none());
}
