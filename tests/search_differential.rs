//! Search against a plain scan: every hit is an entry whose text contains every term
//! (case-insensitively), and no such entry is missed, on the oracle corpus and on synthetic
//! text with CJK, emoji, combining marks and code.

mod backends;
mod common;

use sessiondb::search::{self, SearchFilter};
use std::collections::BTreeMap;

/// Case folding as search defines it: each character to the first of its lowercase.
fn fold(s: &str) -> String {
    s.chars().map(|c| c.to_lowercase().next().unwrap_or(c)).collect()
}

/// Every searchable entry: (session file, entry id) → its text, folded.
fn texts(conn: &sessiondb::db::Db) -> Vec<((String, String), String)> {
    let mut st = conn
        .sqlite()
        .prepare(
            "SELECT s.path, e.id, e.body FROM texts t JOIN sessions s ON s.sid = t.session \
             JOIN entry_lines e ON e.key = t.key",
        )
        .unwrap();
    let rows = st
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?, r.get::<_, String>(2)?)))
        .unwrap();
    rows.map(Result::unwrap)
        .filter_map(|(path, id, body)| {
            let text = sessiondb::internals::extract::text_of_line(&body)?;
            Some(((path, id.unwrap_or_default()), fold(&text)))
        })
        .collect()
}

/// A small deterministic generator (no dependency on the order tests run in).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

/// Queries cut from the texts: substrings of 1 to 14 characters at random places (inside
/// words, across spaces and punctuation), some quoted as phrases, some with a second term
/// from another text.
fn queries(all: &[((String, String), String)], n: usize, seed: u64) -> Vec<String> {
    let mut rng = Lcg(seed);
    let mut out = Vec::new();
    while out.len() < n {
        let (_, text) = &all[rng.next(all.len())];
        let chars: Vec<char> = text.chars().collect();
        if chars.is_empty() {
            continue;
        }
        let len = 1 + rng.next(14);
        let at = rng.next(chars.len());
        let cut: String = chars[at..(at + len).min(chars.len())].iter().collect();
        if cut.contains('"') || cut.trim().is_empty() {
            continue;
        }
        let q = match rng.next(4) {
            0 if cut.contains(' ') => format!("\"{cut}\""),
            1 => {
                let (_, other) = &all[rng.next(all.len())];
                let word: String = other.split_whitespace().nth(rng.next(8)).unwrap_or("x").chars().take(6).collect();
                if word.contains('"') {
                    continue;
                }
                format!("{} {word}", cut.trim())
            }
            _ => cut,
        };
        out.push(q);
    }
    out
}

/// The terms of a query as search reads them: words, or phrases in double quotes.
fn terms(q: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, part) in q.split('"').enumerate() {
        if i % 2 == 1 {
            if !part.trim().is_empty() {
                out.push(fold(part));
            }
        } else {
            out.extend(part.split_whitespace().map(fold));
        }
    }
    out
}

/// Whether `t` lies inside a `[` `]` mark of the (folded) snippet `s`.
fn marked(s: &str, t: &str) -> bool {
    s.match_indices(t).any(|(at, _)| {
        let open = s[..at].rfind('[');
        let close = s[at + t.len()..].find(']').map(|c| at + t.len() + c);
        matches!((open, close), (Some(o), Some(c)) if !s[o + 1..at].contains(']') && !s[at + t.len()..c].contains('['))
    })
}

/// Checks every query's hits against a plain scan; returns each query's hits as JSON.
fn differential(conn: &sessiondb::db::Db, qs: &[String]) -> Vec<String> {
    let all = texts(conn);
    let mut answers = Vec::new();
    let everything = SearchFilter { limit: i64::MAX, ..SearchFilter::default() };
    for q in qs {
        let ts = terms(q);
        let mut want: BTreeMap<(String, String), usize> = BTreeMap::new();
        for (id, text) in &all {
            if ts.iter().all(|t| text.contains(t.as_str())) {
                *want.entry(id.clone()).or_default() += 1;
            }
        }
        let hits = search::search(conn, q, &everything).unwrap();
        answers.push(json(&hits));
        let mut got: BTreeMap<(String, String), usize> = BTreeMap::new();
        for h in &hits {
            // The snippet shows every term inside a mark, in brackets.
            for t in &ts {
                assert!(marked(&fold(&h.snippet), t), "{q:?}: {t:?} unmarked in {}", h.snippet);
            }
            *got.entry((h.session_file.clone(), h.entry_id.clone().unwrap_or_default())).or_default() += 1;
        }
        if got != want {
            let missed: Vec<_> = want.keys().filter(|k| !got.contains_key(*k)).take(5).collect();
            let extra: Vec<_> = got.keys().filter(|k| !want.contains_key(*k)).take(5).collect();
            panic!(
                "query {q:?}: {} hits, {} matching entries; missed {missed:?}; not matching {extra:?}",
                got.len(),
                want.len()
            );
        }
    }
    answers
}

/// The sessions of `local` (the SQLite database `sqlite` holds) pushed to a fresh database of
/// the test server: every query's hits there are exact too, and the same as SQLite's (order,
/// ranks, snippets; `--sessions` too). Returns the server's URL and handle.
fn on_postgres(
    local: &std::path::Path,
    sqlite: &sessiondb::db::Db,
    qs: &[String],
    answers: &[String],
) -> Option<(String, sessiondb::db::Db)> {
    let (url, mut pg) = backends::pushed(local)?;
    search::catch_up(&mut pg, |_, _| {}).unwrap();
    same_on_both(sqlite, &pg, qs, answers);
    Some((url, pg))
}

/// Every query's hits on the server equal `answers` (SQLite's, checked against a plain scan
/// by [`differential`]); the default top 20, a top 3 and `--sessions` equal SQLite's.
fn same_on_both(sqlite: &sessiondb::db::Db, pg: &sessiondb::db::Db, qs: &[String], answers: &[String]) {
    let everything = SearchFilter { limit: i64::MAX, ..SearchFilter::default() };
    // Every other query in full, every fourth also as a top-N and `--sessions` (a debug build
    // checks every candidate's text: all of them would double the suite's time).
    for (i, (q, want)) in qs.iter().zip(answers).enumerate().step_by(2) {
        assert_eq!(&json(&search::search(pg, q, &everything).unwrap()), want, "{q:?}: SQLite vs PostgreSQL");
        if i % 4 != 0 {
            continue;
        }
        let limit = if q.len() % 2 == 0 { 0 } else { 3 };
        let f = SearchFilter { limit, ..SearchFilter::default() };
        let (a, b) = (search::search(sqlite, q, &f).unwrap(), search::search(pg, q, &f).unwrap());
        assert_eq!(json(&a), json(&b), "{q:?} limit {limit}: SQLite vs PostgreSQL");
        let (a, b) = (search::search_sessions(sqlite, q, &f).unwrap(), search::search_sessions(pg, q, &f).unwrap());
        assert_eq!(json(&a), json(&b), "{q:?} --sessions limit {limit}: SQLite vs PostgreSQL");
    }
    // Filters.
    let f =
        SearchFilter { role: Some("user".into()), since_ms: Some(1_700_000_000_000), limit: 50, ..Default::default() };
    for q in qs.iter().take(20) {
        assert_eq!(json(&search::search(sqlite, q, &f).unwrap()), json(&search::search(pg, q, &f).unwrap()), "{q:?}");
    }
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap()
}

#[test]
fn search_hits_are_exactly_the_entries_containing_every_term_on_the_oracle_corpus() {
    let (_dir, db, mut conn) = common::temp_db();
    let (code, _, err) = common::run(&db, &["import", common::oracle().join("sessions").to_str().unwrap()]);
    assert!(code == 0 || code == 1, "{err}"); // 1: the corpus holds deliberately broken files
    search::catch_up(&mut conn, |_, _| {}).unwrap();
    let all = texts(&conn);
    assert!(all.len() > 1000, "{} texts", all.len());
    let mut qs = queries(&all, 300, 7);
    qs.extend(["session-manager.ts", "中文", "ü", "e", "->", "{\"", "the the", "zz9 qq8"].map(String::from));
    let answers = differential(&conn, &qs);
    on_postgres(&db, &conn, &qs, &answers);
}

#[test]
fn search_hits_are_exact_on_cjk_emoji_combining_marks_and_code() {
    let samples = [
        "会话管理器的搜索功能很快。日本語のテキストも検索できる、カタカナとひらがな。",
        "emoji 😀 and 👩‍💻 family 👨‍👩‍👧 flags 🇫🇷 and keycap 1️⃣ in text",
        "combining: cafe\u{301} vs café, ñ vs n\u{303}, Zalgo z\u{36b}\u{33f}a\u{35b}",
        "fn parse_header(line: &str) -> Result<Header, Error> { let v = json!({\"a\": [1, 2]}); v?.get(\"a\") }",
        "ΣΊΣΥΦΟΣ σίσυφος İstanbul ǅemal ﬁle Straße ß ẞ K kelvin",
        "ไทยภาษาไม่มีช่องว่าง กับ 한국어 텍스트 and Ελληνικά",
        "tabs\tand\nnewlines\r\nand  double  spaces -- dashes—em ‘quotes’ “double” …",
    ];
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    let mut file = String::from(
        r#"{"type":"session","version":3,"id":"synthetic","timestamp":"2025-03-01T10:00:00.000Z","cwd":"/p/s"}"#,
    );
    file.push('\n');
    let mut parent = "null".to_string();
    for (i, t) in samples.iter().enumerate() {
        let content = serde_json::to_string(t).unwrap();
        file.push_str(&format!(
            r#"{{"type":"message","id":"s{i}","parentId":{parent},"timestamp":"2025-03-01T10:00:01.000Z","message":{{"role":"user","content":{content},"timestamp":1740823201000}}}}"#
        ));
        file.push('\n');
        parent = format!("\"s{i}\"");
    }
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, file).unwrap();
    assert_eq!(common::run(&db, &["import", path.to_str().unwrap()]).0, 0);
    let conn = sessiondb::db::open(&db).unwrap();
    let all = texts(&conn);
    // Every substring of up to 8 characters of every text, and random longer ones.
    let mut qs: Vec<String> = Vec::new();
    for (_, t) in &all {
        let chars: Vec<char> = t.chars().collect();
        for i in 0..chars.len() {
            for len in 1..=8.min(chars.len() - i) {
                let q: String = chars[i..i + len].iter().collect();
                if !q.contains('"') && !q.trim().is_empty() && !qs.contains(&q) {
                    qs.push(q);
                }
            }
        }
    }
    qs.extend(queries(&all, 200, 11));
    qs.extend(["CAFÉ", "STRASSE", "İSTANBUL", "Σίσυφος", "ǆemal", "K"].map(String::from));
    let answers = differential(&conn, &qs);
    on_postgres(&db, &conn, &qs, &answers);
}

#[test]
fn search_stays_exact_over_forks_branched_sessions_and_deletes() {
    use sessiondb::{NewSessionOptions, SessionManager};
    let (dir, db, mut conn) = common::temp_db();
    let (code, _, err) = common::run(&db, &["import", common::oracle().join("sessions").to_str().unwrap()]);
    assert!(code == 0 || code == 1, "{err}");
    search::catch_up(&mut conn, |_, _| {}).unwrap();
    // The sessions with the most searchable entries: each forked, its fork forked again (copies
    // of copies point at the line's owner), and a branched session from the middle of its path.
    let sources: Vec<String> = conn
        .sqlite()
        .prepare("SELECT s.path FROM sessions s JOIN texts t ON t.session = s.sid GROUP BY s.sid ORDER BY count(*) DESC, s.sid LIMIT 4")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let out = dir.path().join("forks");
    let out = out.to_str().unwrap();
    let mut forks = Vec::new();
    for (i, src) in sources.iter().enumerate() {
        let a = SessionManager::fork_from(&db, src, &format!("/fork/{i}"), Some(out), NewSessionOptions::default())
            .unwrap();
        let a_file = a.session_file().unwrap().to_string();
        let b =
            SessionManager::fork_from(&db, &a_file, "/fork/again", Some(out), NewSessionOptions::default()).unwrap();
        forks.push(b.session_file().unwrap().to_string());
        let mut m = SessionManager::open(&db, src, None, None).unwrap();
        let path = m.get_branch(None).unwrap();
        let mid =
            path[path.len() / 2].as_object().and_then(|o| o.get("id")).and_then(|v| v.as_str()).unwrap().to_string();
        m.create_branched_session(Some(&mid)).unwrap();
    }
    let copies: i64 =
        conn.sqlite().query_row("SELECT count(*) FROM entries WHERE body_key IS NOT NULL", [], |r| r.get(0)).unwrap();
    assert!(copies > 100, "{copies} copies");
    search::catch_up(&mut conn, |_, _| {}).unwrap();
    let all = texts(&conn);
    let mut qs = queries(&all, 120, 13);
    qs.extend(["session-manager.ts", "the the", "e"].map(String::from));
    let answers = differential(&conn, &qs);
    // `--sessions` counts every copy's session.
    let everything = SearchFilter { limit: i64::MAX, ..SearchFilter::default() };
    let per_session = search::search_sessions(&conn, &qs[0], &everything).unwrap();
    let sessions: std::collections::BTreeSet<String> =
        search::search(&conn, &qs[0], &everything).unwrap().into_iter().map(|h| h.session_file).collect();
    assert_eq!(per_session.iter().map(|s| s.session_file.clone()).collect::<std::collections::BTreeSet<_>>(), sessions);
    // On a server the copies are lines of their own.
    let server = on_postgres(&db, &conn, &qs, &answers);
    // Deleting the sessions holding the lines gives the copies their lines (indexed anew),
    // and deleting a fork leaves its keys in the postings only: still exact.
    for path in sources.iter().take(2).chain(forks.iter().take(1)) {
        conn.sqlite().execute("DELETE FROM sessions WHERE path = ?1", [path]).unwrap();
    }
    search::catch_up(&mut conn, |_, _| {}).unwrap();
    let answers = differential(&conn, &qs);
    // Pushed with --prune: the deleted sessions' lines leave the server's hits too.
    if let Some((url, mut pg)) = server {
        let summary = backends::push(&db, &url, &["--prune"]);
        assert_eq!(summary["pruned"], 3, "{summary}");
        search::catch_up(&mut pg, |_, _| {}).unwrap();
        same_on_both(&conn, &pg, &qs, &answers);
    }
}

mod schema_v9 {
    refinery::embed_migrations!("migrations/sqlite");
}

#[test]
fn a_database_indexed_at_schema_9_migrates_and_finds_the_same_hits() {
    // The oracle corpus imported by this build, copied into a database at schema 9 and
    // indexed there as schema 9 did (FTS5 rows of each entry's distinct tokens, vocabulary).
    let (dir, db, mut conn) = common::temp_db();
    let (code, _, err) = common::run(&db, &["import", common::oracle().join("sessions").to_str().unwrap()]);
    assert!(code == 0 || code == 1, "{err}");
    search::catch_up(&mut conn, |_, _| {}).unwrap();
    let old = dir.path().join("v9.sqlite");
    {
        let mut v9 = rusqlite::Connection::open(&old).unwrap();
        schema_v9::migrations::runner().set_target(refinery::Target::Version(9)).run(&mut v9).unwrap();
        // Lines are copied as schema 9 held them: unpacked.
        sessiondb::internals::lines::register(&v9).unwrap();
        v9.execute("ATTACH DATABASE ?1 AS src", [db.to_str().unwrap()]).unwrap();
        let tables: Vec<String> = v9
            .prepare("SELECT name FROM main.sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite%' AND name NOT LIKE 'search%' AND name NOT IN ('fts_pending', 'refinery_schema_history', 'maintenance')")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert!(tables.contains(&"texts".to_string()), "{tables:?}");
        let tx = v9.transaction().unwrap();
        for t in &tables {
            // The columns schema 9 has (later migrations added some, e.g. usage.first).
            common::copy_table_unpacked(&tx, "src", t);
        }
        let keys: Vec<(i64, String)> = tx
            .prepare("SELECT p.key, e.body FROM fts_pending p JOIN entry_lines e ON e.key = p.key")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert!(keys.len() > 1000, "{}", keys.len());
        for (key, body) in keys {
            let Some(text) = sessiondb::internals::extract::text_of_line(&body) else { continue };
            let mut doc = String::new();
            sessiondb::internals::tokens::index_text(&text, &mut Default::default(), &mut doc);
            if doc.is_empty() {
                continue;
            }
            tx.execute("INSERT INTO search_fts(rowid, tokens) VALUES (?1, ?2)", rusqlite::params![key, doc]).unwrap();
            for t in doc.split(' ') {
                tx.execute("INSERT OR IGNORE INTO search_terms(term) VALUES (?1)", [t]).unwrap();
            }
        }
        tx.execute("DELETE FROM fts_pending", []).unwrap();
        tx.commit().unwrap();
        let hits: i64 =
            v9.query_row("SELECT count(*) FROM search_fts WHERE search_fts MATCH 'session'", [], |r| r.get(0)).unwrap();
        assert!(hits > 0);
    }
    // Opening migrates it; the CLI's search indexes it the new way and finds what this build's
    // own import finds, in the same order.
    let all = texts(&conn);
    let mut qs = queries(&all, 40, 5);
    qs.extend(["session-manager.ts", "中文", "the the"].map(String::from));
    // A command line cannot hold NUL.
    qs.retain(|q| !q.contains('\0'));
    for q in &qs {
        let (c1, want, e1) = common::run(&db, &["search", "--json", "--limit", "1000", "--", q]);
        let (c2, got, e2) = common::run(&old, &["search", "--json", "--limit", "1000", "--", q]);
        assert_eq!(c1, c2, "{q:?}: {e1} {e2}");
        assert_eq!(got, want, "query {q:?}");
    }
    let version: i64 = sessiondb::db::open(&old)
        .unwrap()
        .sqlite()
        .query_row("SELECT max(version) FROM refinery_schema_history", [], |r| r.get(0))
        .unwrap();
    assert!(version >= 10);
}

/// A build that reads a few entries at a time and writes its postings many times over (each
/// write empties the tokenizing threads' vocabularies) indexes the same keys under the same
/// tokens as one that reads them all and writes once.
#[test]
fn postings_are_the_same_whatever_the_batches_and_memory_bound() {
    use sessiondb::internals::search_index;
    let (_dir, db, mut conn) = common::temp_db();
    let (code, _, err) = common::run(&db, &["import", common::oracle().join("sessions").to_str().unwrap()]);
    assert!(code == 0 || code == 1, "{err}");
    let postings = |conn: &sessiondb::db::Db| -> BTreeMap<String, Vec<sessiondb::EntryKey>> {
        let terms: Vec<String> = conn
            .sqlite()
            .prepare("SELECT term FROM search_terms")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        terms.into_iter().map(|t| (t.clone(), search_index::postings(conn, &t).unwrap())).collect()
    };
    // Batches written (small ones are merged as they accumulate: the postings stay the same).
    let batches = |conn: &sessiondb::db::Db| -> i64 {
        conn.sqlite().query_row("SELECT value FROM search_meta WHERE name = 'batch'", [], |r| r.get(0)).unwrap()
    };
    search_index::catch_up_in(&mut conn, 1 << 20, 1 << 30, |_, _| {}).unwrap();
    assert_eq!(batches(&conn), 1);
    let whole = postings(&conn);
    assert!(whole.len() > 1000, "{} tokens", whole.len());
    // 100 entries a batch (tokenized on every thread), then 37 (fewer than 64: one thread).
    for (n, bytes) in [(100, 1 << 16), (37, 1 << 12)] {
        search_index::reset(&mut conn).unwrap();
        search_index::catch_up_in(&mut conn, n, bytes, |_, _| {}).unwrap();
        assert!(batches(&conn) > 5, "{} batches", batches(&conn));
        assert_eq!(postings(&conn), whole);
    }
}
