//! Import and export against pi 1.6.0's own files and goldens (tests/fixtures/oracle.tar.xz).

mod common;

use sessiondb::import::{import_file, FileReport, FileStatus, ImportOptions, ImportSummary};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn export_bytes(conn: &sessiondb::db::Db, path: &Path) -> Vec<u8> {
    let s = sessiondb::resolve::resolve(conn, &path.to_string_lossy()).unwrap();
    let mut out = Vec::new();
    sessiondb::export::write_session(conn, s.sid, &mut out).unwrap();
    out
}

/// A fresh database of one backend, with the import and export the oracle tests use: every
/// oracle test below runs on SQLite and, when the test server is given, on PostgreSQL
/// (`common::backends`), and must give the same answers on both, through the same calls.
struct Store(sessiondb::db::Db);

impl Store {
    /// A fresh database of each backend under test, by name.
    fn each(dir: &Path, label: &str) -> Vec<(&'static str, Store)> {
        common::backends(dir, label)
            .into_iter()
            .map(|b| (b.name, Store(sessiondb::db::open(b.db.as_path()).unwrap())))
            .collect()
    }

    /// Imports `files` (each as a single file) as `sessiondb import` does.
    fn import(&mut self, files: &[PathBuf], opts: ImportOptions) -> ImportSummary {
        let targets = sessiondb::import::collect_targets(files).unwrap();
        sessiondb::import::import_targets(&mut self.0, &targets, opts, |_| {}).unwrap()
    }

    /// The export of the session imported from `path`.
    fn export(&mut self, path: &Path) -> Vec<u8> {
        export_bytes(&self.0, path)
    }
}

/// Every golden file with its report, imported in one run on `store`.
fn import_goldens(store: &mut Store) -> Vec<(&'static Path, &'static serde_json::Value, FileReport)> {
    let files: Vec<PathBuf> = common::goldens().iter().map(|(f, _)| f.clone()).collect();
    let summary = store.import(&files, ImportOptions::default());
    assert_eq!(summary.reports.len(), files.len());
    common::goldens().iter().zip(summary.reports).map(|((f, g), r)| (f.as_path(), g, r)).collect()
}

/// pi's `getEntries()` minus the JSON scalars sessiondb skips on purpose (a deliberate
/// difference from pi, listed in the README).
fn golden_object_entries(g: &serde_json::Value) -> Vec<serde_json::Value> {
    g["entries"].as_array().unwrap().iter().filter(|e| e.is_object()).cloned().collect()
}

/// True when the file's header (its first JSON object) has a version below 3 or none.
fn is_migrated(_g: &serde_json::Value, original: &[u8]) -> bool {
    let text = String::from_utf8_lossy(original);
    let header =
        text.split('\n').find_map(|l| serde_json::from_str::<serde_json::Value>(l).ok().filter(|v| v.is_object()));
    header.is_some_and(|h| h["version"].as_f64().is_none_or(|v| v < 3.0))
}

#[test]
fn every_oracle_file_imports_as_pi_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    for (backend, mut store) in Store::each(dir.path(), "every_oracle_file") {
        every_oracle_file_imports_as_pi_reads_it_on(backend, &mut store);
    }
}

fn every_oracle_file_imports_as_pi_reads_it_on(backend: &str, store: &mut Store) {
    let mut checked = 0;
    for (file, g, report) in import_goldens(store) {
        let original = std::fs::read(file).unwrap();
        let name = format!("{backend}: {}", file.display());
        if !g["openError"].is_null() {
            assert_eq!(report.status, FileStatus::Failed, "{name}: pi refuses it: {}", g["openError"]);
            continue;
        }
        if original.is_empty() {
            // pi writes a fresh header into a 0-byte file; there is nothing to import.
            assert_eq!(report.status, FileStatus::Failed, "{name}");
            assert!(report.reason.as_deref().unwrap().contains("empty file"), "{name}: {:?}", report.reason);
            continue;
        }
        assert_eq!(report.status, FileStatus::Imported, "{name}: {:?}", report.reason);
        let expected = golden_object_entries(g);
        assert_eq!(report.entries as usize, expected.len(), "{name}: entry count");

        let exported = store.export(file);
        let text = String::from_utf8(exported.clone()).unwrap();
        let lines: Vec<&str> = text.strip_suffix('\n').unwrap().split('\n').collect();
        // The header and then every entry pi sees, as the same JSON.
        let header: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(header, g["header"], "{name}: header");
        let entry_lines: Vec<&str> = lines[1..]
            .iter()
            .copied()
            .filter(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["type"] != "session")
            .collect();
        assert_eq!(entry_lines.len(), expected.len(), "{name}: exported entry lines");
        let migrated = is_migrated(g, &original);
        if !migrated {
            for (line, want) in entry_lines.iter().zip(&expected) {
                let got: serde_json::Value = serde_json::from_str(line).unwrap();
                assert_eq!(&got, want, "{name}: entry");
            }
            // Every exported line is a line of the file, verbatim (without its terminator).
            let original_text = String::from_utf8_lossy(&original);
            let source_lines: std::collections::HashSet<&str> =
                original_text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
            for line in &lines {
                assert!(source_lines.contains(line), "{name}: exported line not in the source: {line}");
            }
        }
        checked += 1;
    }
    assert!(checked >= 40, "{backend}: only {checked} files checked");
}

#[test]
fn valid_v3_files_round_trip_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    for (backend, mut store) in Store::each(dir.path(), "valid_v3") {
        valid_v3_files_round_trip_byte_for_byte_on(backend, &mut store);
    }
}

fn valid_v3_files_round_trip_byte_for_byte_on(backend: &str, store: &mut Store) {
    let mut checked = 0;
    for (file, g, r) in import_goldens(store) {
        let original = std::fs::read(file).unwrap();
        // Valid v3 files as pi wrote them: pi leaves them untouched on open.
        let ok = g["openError"].is_null()
            && g["rewrittenChanged"] == false
            && !original.is_empty()
            && g["header"]["version"] == 3
            && !original.windows(2).any(|w| w == b"\r\n")
            && String::from_utf8_lossy(&original)
                .split('\n')
                .filter(|l| !l.is_empty())
                .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok_and(|v| v.is_object()));
        if !ok {
            continue;
        }
        assert_eq!(r.status, FileStatus::Imported, "{backend}: {}", file.display());
        assert!(store.export(file) == original, "{backend}: {}: export differs from the file", file.display());
        checked += 1;
    }
    assert!(checked >= 20, "{backend}: only {checked} valid v3 files");
}

/// Replaces the ids sessiondb generated while migrating with the ones pi generated, pairing
/// them by line: both number the same entries in the same order.
fn map_migration_ids(ours: &str, theirs: &str) -> String {
    let mut map: HashMap<String, String> = HashMap::new();
    for (a, b) in ours.lines().zip(theirs.lines()) {
        let va: serde_json::Value = serde_json::from_str(a).unwrap();
        let vb: serde_json::Value = serde_json::from_str(b).unwrap();
        if let (Some(ia), Some(ib)) = (va["id"].as_str(), vb["id"].as_str()) {
            if va["type"] != "session" {
                map.insert(ia.to_string(), ib.to_string());
            }
        }
    }
    let mut out = ours.to_string();
    for (a, b) in &map {
        out = out.replace(&format!("\"{a}\""), &format!("\"{b}\""));
    }
    out
}

#[test]
fn migrated_files_export_exactly_as_pi_rewrites_them() {
    let dir = tempfile::tempdir().unwrap();
    for (backend, mut store) in Store::each(dir.path(), "migrated") {
        migrated_files_export_exactly_as_pi_rewrites_them_on(backend, &mut store);
    }
}

fn migrated_files_export_exactly_as_pi_rewrites_them_on(backend: &str, store: &mut Store) {
    let mut names = Vec::new();
    for (file, g, r) in import_goldens(store) {
        let original = std::fs::read(file).unwrap();
        if !g["openError"].is_null() || original.is_empty() || !is_migrated(g, &original) {
            continue;
        }
        assert_eq!(r.status, FileStatus::Imported, "{backend}: {}", file.display());
        assert!(r.migrated_from.is_some(), "{backend}: {}: should be migrated", file.display());
        let ours = String::from_utf8(store.export(file)).unwrap();
        let theirs = g["rewritten"].as_str().unwrap();
        let mapped = map_migration_ids(&ours, theirs);
        assert_eq!(mapped.len(), theirs.len(), "{backend}: {}: length", file.display());
        assert!(mapped == theirs, "{backend}: {}: migrated export differs from pi's rewrite", file.display());
        names.push(file.file_name().unwrap().to_string_lossy().into_owned());
    }
    for must in
        ["before-compaction.v1.jsonl", "large-session.v1.jsonl", "edge-v2-hookmessage.jsonl", "x-no-version-tree.jsonl"]
    {
        assert!(names.iter().any(|n| n.ends_with(must)), "{backend}: {must} not checked: {names:?}");
    }
}

#[test]
fn the_real_legacy_files_migrate_like_pi() {
    // ../shared/corpus/real holds the same two files the oracle archive carries; compare the
    // shared copies byte for byte with the archive's so the goldens above cover them, and
    // import the shared copies on each backend: exported as pi rewrites them.
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/real");
    let names = ["before-compaction.v1.jsonl", "large-session.v1.jsonl"];
    for name in names {
        let (file, _) = common::golden(name);
        if let Ok(real) = std::fs::read(shared.join(name)) {
            assert_eq!(std::fs::read(&file).unwrap(), real, "{name}: archive copy differs from shared/corpus/real");
        }
    }
    if !shared.is_dir() {
        eprintln!("skipped: no {}", shared.display());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (backend, mut store) in Store::each(dir.path(), "real") {
        let files: Vec<PathBuf> = names.iter().map(|n| shared.join(n)).collect();
        let s = store.import(&files, ImportOptions::default());
        assert_eq!((s.sessions, s.failures), (2, 0), "{backend}");
        for (name, file) in names.iter().zip(&files) {
            let (_, g) = common::golden(name);
            let ours = String::from_utf8(store.export(file)).unwrap();
            let theirs = g["rewritten"].as_str().unwrap();
            assert!(map_migration_ids(&ours, theirs) == theirs, "{backend}: {name}: export differs from pi's rewrite");
        }
    }
}

#[test]
fn edge_files_import_as_the_spec_says() {
    let (_d, _p, mut conn) = common::temp_db();
    let imp = |conn: &mut sessiondb::db::Db, suffix: &str| {
        let (file, g) = common::golden(suffix);
        (import_file(conn, &file, None, ImportOptions::default()), g, file)
    };
    let (r, _, _) = imp(&mut conn, "edge-malformed-lines.jsonl");
    assert_eq!(r.status, FileStatus::Imported);
    assert!(r.malformed_lines >= 3 && r.skipped.iter().all(|s| s.line > 1), "{r:?}");
    let (r, _, _) = imp(&mut conn, "edge_blank_lines.jsonl");
    assert!(r.blank_lines > 0, "{r:?}");
    assert_eq!(r.malformed_lines, 0);
    let (r, _, _) = imp(&mut conn, "edge-header-only.jsonl");
    assert_eq!((r.status, r.entries), (FileStatus::Imported, 0));
    let (r, _, _) = imp(&mut conn, "edge-first-line-not-header.jsonl");
    assert_eq!(r.status, FileStatus::Failed);
    assert!(r.reason.unwrap().contains("not a session header"));
    let (r, g, _) = imp(&mut conn, "edge.duplicate-ids.jsonl");
    assert_eq!(r.entries as usize, g["entries"].as_array().unwrap().len());
    let (r, _, file) = imp(&mut conn, "Edge-CRLF.jsonl");
    assert_eq!(r.status, FileStatus::Imported);
    let want = String::from_utf8(std::fs::read(&file).unwrap()).unwrap().replace("\r\n", "\n");
    assert_eq!(String::from_utf8(export_bytes(&conn, &file)).unwrap(), want);
    let (r, g, file) = imp(&mut conn, "edge-no-trailing-newline.jsonl");
    assert_eq!(r.status, FileStatus::Imported);
    assert_eq!(String::from_utf8(export_bytes(&conn, &file)).unwrap(), g["rewritten"].as_str().unwrap());
    let (r, _, _) = imp(&mut conn, "x-bom.jsonl");
    assert_eq!(r.status, FileStatus::Failed, "a BOM-prefixed header does not parse");
    // Nothing from the failed files reached the database.
    let sessions: i64 = conn.sqlite().query_row("SELECT count(*) FROM sessions", [], |r| r.get(0)).unwrap();
    assert_eq!(sessions, 6);
}

#[test]
fn importing_again_changes_nothing() {
    let (_d, _p, mut conn) = common::temp_db();
    let dir = common::oracle().join("sessions");
    let targets = sessiondb::import::collect_targets(&[dir]).unwrap();
    let first = sessiondb::import::import_targets(&mut conn, &targets, ImportOptions::default(), |_| {}).unwrap();
    let snapshot = |conn: &sessiondb::db::Db| -> Vec<(String, i64, String)> {
        let mut st = conn.sqlite().prepare("SELECT s.path, e.seq, sessiondb_line(e.body, e.body_dict) FROM entries e JOIN sessions s ON s.sid = e.session ORDER BY s.path, e.seq").unwrap();
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect()
    };
    let before = snapshot(&conn);
    let second = sessiondb::import::import_targets(&mut conn, &targets, ImportOptions::default(), |_| {}).unwrap();
    assert_eq!(second.sessions, 0);
    assert_eq!(second.unchanged, first.sessions);
    assert_eq!(second.failures, first.failures);
    assert_eq!(snapshot(&conn), before);
    // Forced: every session is replaced by an identical one (migration ids aside).
    let third =
        sessiondb::import::import_targets(&mut conn, &targets, ImportOptions { force: true, live: false }, |_| {})
            .unwrap();
    assert_eq!((third.sessions, third.replaced), (first.sessions, first.sessions));
    let after = snapshot(&conn);
    assert_eq!(after.len(), before.len());
}

/// As `importing_again_changes_nothing`, on every backend, through what each exports.
#[test]
fn importing_again_changes_nothing_on_each_backend() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<PathBuf> = common::goldens().iter().map(|(f, _)| f.clone()).collect();
    for (backend, mut store) in Store::each(dir.path(), "again") {
        let first = store.import(&files, ImportOptions::default());
        let exports = |store: &mut Store| -> Vec<Vec<u8>> {
            let imported = first.reports.iter().filter(|r| r.status == FileStatus::Imported);
            imported.map(|r| store.export(&r.path)).collect()
        };
        let before = exports(&mut store);
        let second = store.import(&files, ImportOptions::default());
        assert_eq!(second.sessions, 0, "{backend}");
        assert_eq!(second.unchanged, first.sessions, "{backend}");
        assert_eq!(second.failures, first.failures, "{backend}");
        assert!(exports(&mut store) == before, "{backend}: a second import changed a session");
        let third = store.import(&files, ImportOptions { force: true, live: false });
        assert_eq!((third.sessions, third.replaced), (first.sessions, first.sessions), "{backend}");
        assert_eq!(exports(&mut store).len(), before.len(), "{backend}");
    }
}

#[test]
fn a_file_failing_midway_leaves_nothing_and_its_batch_mates_stay() {
    let (_d, _p, mut conn) = common::temp_db();
    let dir = tempfile::tempdir().unwrap();
    let header = |id: &str| {
        format!(r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}}"#)
    };
    let entry = |id: &str, parent: &str| {
        format!(
            r#"{{"type":"custom","customType":"t","data":{{}},"id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z"}}"#
        )
    };
    let files = [
        ("a.jsonl", vec![header("s-a"), entry("a1", "null"), entry("a2", r#""a1""#)]),
        ("b.jsonl", vec![header("s-b"), entry("b1", "null"), entry("boom", r#""b1""#), entry("b3", r#""boom""#)]),
        ("c.jsonl", vec![header("s-c"), entry("c1", "null")]),
    ];
    for (name, lines) in &files {
        std::fs::write(dir.path().join(name), lines.join("\n") + "\n").unwrap();
    }
    // The second file fails after some of its rows were written.
    conn.sqlite().execute_batch(
        "CREATE TEMP TRIGGER boom BEFORE INSERT ON entries WHEN new.id = 'boom' BEGIN SELECT RAISE(ABORT, 'boom'); END;",
    )
    .unwrap();
    let targets = sessiondb::import::collect_targets(&[dir.path().to_path_buf()]).unwrap();
    let s = sessiondb::import::import_targets(&mut conn, &targets, ImportOptions::default(), |_| {}).unwrap();
    let statuses: Vec<FileStatus> = s.reports.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [FileStatus::Imported, FileStatus::Failed, FileStatus::Imported]);
    assert!(s.reports[1].reason.as_deref().is_some_and(|r| r.contains("boom")), "{:?}", s.reports[1].reason);
    let ids: Vec<String> = conn
        .sqlite()
        .prepare("SELECT id FROM sessions ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(ids, ["s-a", "s-c"]);
    let rows: i64 = conn.sqlite().query_row("SELECT count(*) FROM entries", [], |r| r.get(0)).unwrap();
    assert_eq!(rows, 3, "no row of the failed file is left");
    for (name, lines) in [&files[0], &files[2]] {
        assert_eq!(export_bytes(&conn, &dir.path().join(name)), (lines.join("\n") + "\n").into_bytes());
    }
}

#[test]
fn new_databases_get_8k_pages_and_old_ones_keep_theirs() {
    let dir = tempfile::tempdir().unwrap();
    let page_size =
        |c: &sessiondb::db::Db| -> i64 { c.sqlite().query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap() };
    let fresh = sessiondb::db::open(dir.path().join("new.sqlite")).unwrap();
    assert_eq!(page_size(&fresh), 8192);
    let old_path = dir.path().join("old.sqlite");
    let old = rusqlite::Connection::open(&old_path).unwrap();
    old.execute_batch("PRAGMA page_size = 4096; PRAGMA journal_mode = WAL; CREATE TABLE t(x);").unwrap();
    drop(old);
    let old = sessiondb::db::open(&old_path).unwrap();
    assert_eq!(page_size(&old), 4096);
    // The checkpoint threshold follows the page size: 32 MiB of WAL either way.
    let pages =
        |c: &sessiondb::db::Db| -> i64 { c.sqlite().query_row("PRAGMA wal_autocheckpoint", [], |r| r.get(0)).unwrap() };
    assert_eq!((pages(&fresh) * 8192, pages(&old) * 4096), (32 << 20, 32 << 20));
}

/// A folder's files are imported in `Path` order (by components), whatever the names: a name
/// sorting before `/` byte-wise (`a-b` against `a/…`) does not move a subfolder's files.
#[test]
fn folders_are_walked_in_path_order() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("sessions");
    let names =
        ["a/x.jsonl", "a-b/y.jsonl", "a.b/z.jsonl", "a/b/c.jsonl", "ab.jsonl", "A.jsonl", "a-/w.jsonl", "a/b.jsonl"];
    for n in names {
        let p = root.join(n);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, "").unwrap();
    }
    std::fs::write(root.join("a/notes.txt"), "").unwrap();
    let targets = sessiondb::import::collect_targets(std::slice::from_ref(&root)).unwrap();
    let got: Vec<PathBuf> = targets.iter().map(|t| t.path.clone()).collect();
    let mut want: Vec<PathBuf> = names.iter().map(|n| root.join(n)).collect();
    want.sort();
    assert_eq!(got, want);
    let rel: Vec<&str> = targets.iter().map(|t| t.rel_path.as_str()).collect();
    assert_eq!(rel, want.iter().map(|p| p.strip_prefix(&root).unwrap().to_str().unwrap()).collect::<Vec<_>>());
}
