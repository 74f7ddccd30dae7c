//! Search against a plain scan: every hit is an entry whose text contains every term
//! (case-insensitively), and no such entry is missed, on the oracle corpus and on synthetic
//! text with CJK, emoji, combining marks and code.

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

fn differential(conn: &sessiondb::db::Db, qs: &[String]) {
    let all = texts(conn);
    let everything = SearchFilter { limit: i64::MAX, ..SearchFilter::default() };
    for q in qs {
        let ts = terms(q);
        let mut want: BTreeMap<(String, String), usize> = BTreeMap::new();
        for (id, text) in &all {
            if ts.iter().all(|t| text.contains(t.as_str())) {
                *want.entry(id.clone()).or_default() += 1;
            }
        }
        let hits = search::search(conn.sqlite(), q, &everything).unwrap();
        let mut got: BTreeMap<(String, String), usize> = BTreeMap::new();
        for h in &hits {
            // The snippet shows the first term's match, in brackets.
            assert!(fold(&h.snippet).contains(&format!("[{}]", ts[0])), "{q:?}: {}", h.snippet);
            *got.entry((h.session_file.clone(), h.entry_id.clone().unwrap_or_default())).or_default() += 1;
        }
        assert_eq!(got, want, "query {q:?}");
    }
}

#[test]
fn search_hits_are_exactly_the_entries_containing_every_term_on_the_oracle_corpus() {
    let (_dir, db, mut conn) = common::temp_db();
    let (code, _, err) = common::run(&db, &["import", common::oracle().join("sessions").to_str().unwrap()]);
    assert!(code == 0 || code == 1, "{err}"); // 1: the corpus holds deliberately broken files
    search::catch_up(conn.sqlite_mut(), |_, _| {}).unwrap();
    let all = texts(&conn);
    assert!(all.len() > 1000, "{} texts", all.len());
    let mut qs = queries(&all, 300, 7);
    qs.extend(["session-manager.ts", "中文", "ü", "e", "->", "{\"", "the the", "zz9 qq8"].map(String::from));
    differential(&conn, &qs);
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
    differential(&conn, &qs);
}
