//! Postings that stay merged (issue 29): a small corpus, then hundreds of single-turn syncs
//! (one user and one assistant message appended to a session file, that file synced, the
//! index caught up, as the pi package does after each turn), with sessions deleted and files
//! rewritten on the way. The postings rows stay within a bound of the same database's after
//! `index --rebuild`, the keys of deleted entries are dropped by merges, and every query's
//! hits equal the rebuilt index's. On SQLite, and on PostgreSQL when `SESSIONDB_TEST_PG_URL`
//! is set.

mod common;

use sessiondb::db::Db;
use sessiondb::internals::keys::{EntryKey, SessionKey};
use sessiondb::internals::search_index;
use sessiondb::search::{self, SearchFilter};
use sessiondb::sync::{SyncOptions, SyncSummary};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Initial sessions, turns each; single-turn syncs after; turns before a new session starts.
const SESSIONS: usize = 12;
const TURNS: usize = 6;
const SYNCS: usize = 360;
const TURNS_PER_SESSION: usize = 30;

/// A small deterministic generator.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

const WORDS: &[&str] = &[
    "the",
    "function",
    "error",
    "handling",
    "retry",
    "backoff",
    "parse",
    "session",
    "index",
    "merge",
    "query",
    "token",
    "build",
    "cargo",
    "test",
    "async",
    "await",
    "schema",
    "migration",
    "ledger",
    "sqlite",
    "postgres",
    "branch",
    "commit",
    "review",
    "cache",
    "buffer",
    "stream",
    "header",
    "entry",
    "snapshot",
    "compaction",
];

/// A message's text: common words (the first ones most), and one rare word of its own.
fn text(rng: &mut Lcg, n: usize) -> String {
    let mut words: Vec<String> = (0..8 + rng.next(10))
        .map(|_| {
            let a = rng.next(WORDS.len());
            WORDS[rng.next(a + 1)].to_string()
        })
        .collect();
    words.push(format!("rare{n}x"));
    words.join(" ")
}

/// Session files being written: their paths, last entry ids and a clock.
struct Corpus {
    root: PathBuf,
    files: Vec<(PathBuf, Option<String>)>,
    rng: Lcg,
    ts: i64,
    n: usize,
}

impl Corpus {
    fn new(root: &Path) -> Corpus {
        let root = root.join("--w-p--");
        std::fs::create_dir_all(&root).unwrap();
        Corpus { root, files: Vec::new(), rng: Lcg(29), ts: 1_790_000_000_000, n: 0 }
    }

    fn iso(&self) -> String {
        sessiondb::internals::jstime::iso_from_ms(self.ts)
    }

    fn new_session(&mut self) -> usize {
        let i = self.files.len();
        let id = format!("01900000-0000-7000-8000-{:012x}", i);
        let path = self.root.join(format!("s{i:04}_{id}.jsonl"));
        let header =
            serde_json::json!({"type": "session", "version": 3, "id": id, "timestamp": self.iso(), "cwd": "/w/p"});
        std::fs::write(&path, format!("{header}\n")).unwrap();
        self.files.push((path, None));
        i
    }

    /// Appends a user and an assistant message to session `i`; its file.
    fn turn(&mut self, i: usize) -> PathBuf {
        let mut out = String::new();
        for role in ["user", "assistant"] {
            self.ts += 30_000;
            self.n += 1;
            let id = format!("{:08x}", self.n);
            let t = text(&mut self.rng, self.n);
            let mut message =
                serde_json::json!({"role": role, "content": [{"type": "text", "text": t}], "timestamp": self.ts});
            if role == "assistant" {
                message["api"] = "anthropic-messages".into();
                message["provider"] = "anthropic".into();
                message["model"] = "claude-test".into();
                message["stopReason"] = "stop".into();
            }
            let e = serde_json::json!({"type": "message", "id": id, "parentId": self.files[i].1, "timestamp": self.iso(), "message": message});
            out.push_str(&format!("{e}\n"));
            self.files[i].1 = Some(id);
        }
        let path = self.files[i].0.clone();
        let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        std::io::Write::write_all(&mut f, out.as_bytes()).unwrap();
        path
    }
}

/// The database, and how a file or the folder is synced into it (as the `sync` command does).
struct Target {
    db: Db,
}

impl Target {
    fn sync_file(&mut self, dir: &Path, file: &Path) {
        let mut s = SyncSummary::default();
        let paths = [file.to_path_buf()];
        sessiondb::sync::sync_paths(&mut self.db, dir, &paths, &mut s).unwrap();
        search_index::catch_up(&mut self.db, |_, _| {}).unwrap();
    }

    fn sync_dir(&mut self, dir: &Path) {
        let opts = SyncOptions { prune: true };
        drop(sessiondb::sync::sync_dir(&mut self.db, dir, opts, |_, _| {}).unwrap());
        search_index::catch_up(&mut self.db, |_, _| {}).unwrap();
    }
}

/// The keys the postings hold of each token (a key counted once per row holding it), of
/// sessions `of` only when given.
fn posting_keys(db: &Db, of: Option<&[SessionKey]>) -> usize {
    let terms = search_index::terms_starting(db, "", 1_000_000).unwrap();
    let mut n = 0;
    for t in &terms {
        for blob in search_index::posting_blobs(db, t).unwrap() {
            search_index::keys_upto(&blob, EntryKey(i64::MAX), |k| {
                if of.is_none_or(|of| of.contains(&k.session())) {
                    n += 1;
                }
            });
        }
    }
    n
}

/// The session keys of some files.
fn sids_of(db: &Db, files: &[&Path]) -> Vec<SessionKey> {
    let all = db.store().infos_all(sessiondb::discovery::Origins::Every).unwrap();
    files
        .iter()
        .map(|f| all.iter().find(|i| Path::new(&i.path) == *f).unwrap_or_else(|| panic!("{f:?} not stored")).sid)
        .collect()
}

/// Each query's hits, as (file, entry id), all of them.
fn answers(db: &Db, queries: &[String]) -> Vec<BTreeSet<(String, String)>> {
    let f = SearchFilter { limit: 1_000_000, ..Default::default() };
    queries
        .iter()
        .map(|q| {
            search::search(db, q, &f)
                .unwrap()
                .into_iter()
                .map(|h| (h.session_file, h.entry_id.unwrap_or_default()))
                .collect()
        })
        .collect()
}

fn run(name: &str, location: &str) {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Corpus::new(dir.path());
    let root = dir.path().to_path_buf();
    for _ in 0..SESSIONS {
        let i = c.new_session();
        for _ in 0..TURNS {
            c.turn(i);
        }
    }
    let db = sessiondb::db::open(Path::new(location)).unwrap();
    let mut t = Target { db };
    t.sync_dir(&root);
    let (import_rows, _) = search_index::posting_shape(&t.db).unwrap();

    let mut current = c.new_session();
    let (mut gone, mut stale_then) = (Vec::new(), 0);
    let mut most_rows = 0;
    for k in 0..SYNCS {
        if k > 0 && k % TURNS_PER_SESSION == 0 {
            current = c.new_session();
        }
        let file = c.turn(current);
        t.sync_file(&root, &file);
        if k == 120 {
            // Two sessions written by single-turn syncs deleted (their files removed, pruned),
            // and one rewritten (an earlier line changed: imported again, whole).
            let files: Vec<&Path> = (SESSIONS + 1..SESSIONS + 3).map(|i| c.files[i].0.as_path()).collect();
            gone = sids_of(&t.db, &files);
            stale_then = posting_keys(&t.db, Some(&gone));
            for i in [SESSIONS + 1, SESSIONS + 2] {
                std::fs::remove_file(&c.files[i].0).unwrap();
            }
            let (path, _) = &c.files[SESSIONS];
            let body = std::fs::read_to_string(path).unwrap().replacen("\"the ", "\"thee ", 1);
            std::fs::write(path, body).unwrap();
            t.sync_dir(&root);
        }
        let (rows, _) = search_index::posting_shape(&t.db).unwrap();
        most_rows = most_rows.max(rows);
    }

    let (rows, batches) = search_index::posting_shape(&t.db).unwrap();
    let keys = posting_keys(&t.db, None);
    // Keys of the sessions deleted.
    let stale_now = posting_keys(&t.db, Some(&gone));
    let mut queries: Vec<String> = WORDS.iter().map(|w| w.to_string()).collect();
    queries.extend(
        ["error handling", "backoff retry", "the function", "merg", "thee", "rare5x", "rare300x"].map(String::from),
    );
    // Rare words of entries kept, deleted (sessions SESSIONS+1, +2) and rewritten.
    let first_turn = 2 * SESSIONS * TURNS;
    for n in [first_turn + 3, first_turn + 2 * TURNS_PER_SESSION + 5, first_turn + 4 * TURNS_PER_SESSION + 7, c.n - 1] {
        queries.push(format!("rare{n}x"));
    }
    let merged = answers(&t.db, &queries);

    search::reset(&mut t.db).unwrap();
    search_index::catch_up(&mut t.db, |_, _| {}).unwrap();
    let (rebuilt_rows, rebuilt_batches) = search_index::posting_shape(&t.db).unwrap();
    let rebuilt_keys = posting_keys(&t.db, None);
    assert_eq!(posting_keys(&t.db, Some(&gone)), 0, "{name}: the deleted sessions' keys are not given again");
    let rebuilt = answers(&t.db, &queries);

    eprintln!(
        "{name}: import {import_rows} rows; after {SYNCS} syncs {rows} rows in {batches} batches (most {most_rows}), \
         {keys} keys ({stale_now} stale of {stale_then} deleted, {} besides); rebuilt {rebuilt_rows} rows in {rebuilt_batches} batches, {rebuilt_keys} keys",
        keys as i64 - stale_now as i64 - rebuilt_keys as i64
    );
    for ((q, m), r) in queries.iter().zip(&merged).zip(&rebuilt) {
        assert_eq!(m, r, "{name}: hits of {q:?} merged vs rebuilt");
    }
    assert!(rebuilt.iter().filter(|r| !r.is_empty()).count() >= queries.len() - 3, "{name}: the queries find entries");
    // Unmerged, every sync would add its tokens' rows: about 30 each.
    assert!(
        rows * 2 <= rebuilt_rows * 3 && most_rows * 2 <= rebuilt_rows * 3,
        "{name}: {rows} rows (most {most_rows}) against {rebuilt_rows} rebuilt"
    );
    assert!(batches <= 32, "{name}: {batches} batches");
    // The keys of the deleted entries are mostly merged away (some may still sit in batches
    // not merged since); every other key is there once, but the rewritten session's: SQLite
    // imports it again under new keys (its old ones dropped by merges, or not yet), a server
    // under the same ones (the old line's words may stay, as a key given again).
    assert!(stale_then > 0 && stale_now * 2 < stale_then, "{name}: {stale_now} stale keys left of {stale_then}");
    let rewritten = keys - stale_now - rebuilt_keys;
    assert!(rewritten <= 2 * TURNS_PER_SESSION, "{name}: {rewritten} keys besides");
}

#[test]
fn postings_stay_merged_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("merge.sqlite");
    run("SQLite", path.to_str().unwrap());
}

#[test]
fn postings_stay_merged_on_postgres() {
    let Some(url) = common::pg::server() else { return };
    let url = common::pg::fresh_db_named(&url, "merge");
    run("PostgreSQL", &url);
}
