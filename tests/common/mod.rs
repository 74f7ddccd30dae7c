//! Shared test helpers: the oracle corpus (written by pi 1.6.0, see
//! tests/fixtures/regenerate.sh), goldens, temporary databases and the CLI binary.
#![allow(dead_code)]

pub mod pg;
pub mod sync_requests;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The extracted oracle corpus directory (`sessions/`, `cycles/`, `goldens/`, `corpus.json`).
pub fn oracle() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let archive = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/oracle.tar.xz");
        let bytes = std::fs::read(&archive).expect("tests/fixtures/oracle.tar.xz");
        let tag = format!("oracle-{}-{}", bytes.len(), simple_hash(&bytes));
        let dest = Path::new(env!("CARGO_TARGET_TMPDIR")).join(tag);
        if !dest.join("corpus/goldens/_meta.json").exists() {
            let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
            let mut tar_bytes = Vec::new();
            lzma_rs::xz_decompress(&mut &bytes[..], &mut tar_bytes).expect("xz archive");
            let mut ar = tar::Archive::new(&tar_bytes[..]);
            ar.set_preserve_mtime(true);
            ar.unpack(tmp.path()).expect("unpack oracle archive");
            // Another test binary may have won the race; either copy is complete.
            let _ = std::fs::rename(tmp.path(), &dest);
        }
        dest.join("corpus")
    })
}

fn simple_hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100000001b3))
}

/// Every golden per-file record, with the session file it describes.
pub fn goldens() -> &'static [(PathBuf, serde_json::Value)] {
    static GOLDENS: OnceLock<Vec<(PathBuf, serde_json::Value)>> = OnceLock::new();
    GOLDENS.get_or_init(load_goldens)
}

fn load_goldens() -> Vec<(PathBuf, serde_json::Value)> {
    let root = oracle();
    let mut out = Vec::new();
    let mut stack = vec![root.join("goldens/sessions")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "json") {
                let g: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
                let file = root.join(g["file"].as_str().unwrap());
                out.push((file, g));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The golden for the corpus file whose name ends with `suffix`.
pub fn golden(suffix: &str) -> (PathBuf, serde_json::Value) {
    goldens()
        .iter()
        .find(|(p, _)| p.to_string_lossy().ends_with(suffix))
        .cloned()
        .unwrap_or_else(|| panic!("no golden for {suffix}"))
}

/// Every file below `root` with its bytes, keyed by its path relative to `root`.
pub fn read_tree(root: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.strip_prefix(root).unwrap().to_path_buf(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// The `sessiondb` binary.
pub fn bin() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_sessiondb"))
}

/// Runs the binary with `args` on database `db`; returns (status, stdout, stderr).
pub fn run(db: &Path, args: &[&str]) -> (i32, String, String) {
    let out = bin().arg("--db").arg(db).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A fresh database in a temporary directory.
pub fn temp_db() -> (tempfile::TempDir, PathBuf, sessiondb::db::Db) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("test.sqlite");
    let conn = sessiondb::db::open(&path).unwrap();
    (dir, path, conn)
}

/// A backend an oracle test runs on: its name (for messages) and a fresh, empty database to
/// give as `--db`.
pub struct Backend {
    /// "SQLite" or "PostgreSQL".
    pub name: &'static str,
    /// A SQLite file (not created yet) or a server database URL.
    pub db: PathBuf,
}

/// The backends an oracle test runs on, each with a fresh database: SQLite always (a file in
/// `dir`), PostgreSQL when the test server is given ([`pg::server`]: skipped with a message
/// without it, a failure when `SESSIONDB_REQUIRE_PG` is set).
pub fn backends(dir: &Path, label: &str) -> Vec<Backend> {
    let mut out = vec![Backend { name: "SQLite", db: dir.join(format!("{label}.sqlite")) }];
    if let Some(url) = pg::server() {
        out.push(Backend { name: "PostgreSQL", db: PathBuf::from(pg::fresh_db_named(&url, label)) });
    }
    out
}

/// A session of `n` messages of varied words, about `n` × 1.5 KB: its first lines are packed
/// before the dictionary is trained (without one), the rest with it.
pub fn long_session(path: &Path, n: usize) -> Vec<u8> {
    const WORDS: &[&str] = &[
        "ledger",
        "migration",
        "function",
        "error",
        "handling",
        "retry",
        "backoff",
        "the",
        "session",
        "branch",
        "compaction",
        "summary",
        "tool",
        "result",
        "file",
        "write",
        "read",
        "export",
        "import",
        "index",
    ];
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) as usize
    };
    let mut out = String::from(
        r#"{"type":"session","version":3,"id":"0a0b0c0d-0000-4000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work/long"}"#,
    );
    out.push('\n');
    let mut parent = "null".to_string();
    for i in 0..n {
        let words: Vec<&str> = (0..100 + next() % 300).map(|_| WORDS[next() % WORDS.len()]).collect();
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        let id = format!("{:08x}", i + 1);
        let text = format!("{} #{}", words.join(" "), next());
        let m = serde_json::json!({ "role": role, "content": [{ "type": "text", "text": text }], "timestamp": 1_767_225_600_000u64 + i as u64 });
        out.push_str(&format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:{:02}.000Z","message":{m}}}"#,
            i % 60
        ));
        out.push('\n');
        parent = format!("\"{id}\"");
    }
    std::fs::write(path, &out).unwrap();
    out.into_bytes()
}

/// Copies the rows of table `t` of the attached schema `from` into `main`, in the columns `main`
/// has, with lines and joined texts unpacked (`sessiondb_line`, registered on `c`): what an
/// older sessiondb, which stored them as text, held.
pub fn copy_table_unpacked(c: &rusqlite::Connection, from: &str, t: &str) {
    let cols: Vec<String> = c
        .prepare(&format!("SELECT name FROM pragma_table_info('{t}', 'main')"))
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let read: Vec<String> = cols
        .iter()
        .map(|col| match (t, col.as_str()) {
            ("entries", "body") => "sessiondb_line(body, body_dict)".to_string(),
            ("list_texts", "text") => "sessiondb_line(text, text_dict)".to_string(),
            _ => col.clone(),
        })
        .collect();
    let sql = format!("INSERT INTO main.{t} ({}) SELECT {} FROM {from}.{t}", cols.join(", "), read.join(", "));
    c.execute(&sql, []).unwrap();
}
