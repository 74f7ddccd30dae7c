//! What pi's tree selector reads of each assistant message (`pi::tree_row`) is stored with its
//! line when the line is written: by an import, an append, a fork and a branched session. The
//! stored rows are the rows of the lines, and a reader asking for rows gets the same whether
//! they are stored (SQLite), missing (rows written before the column) or never stored
//! (PostgreSQL).
mod common;

use sessiondb::internals::tree_row;
use sessiondb::json::{parse, Value};
use sessiondb::manager::{NewSessionOptions, SessionManager};
use sessiondb::EntryKey;
use std::collections::BTreeMap;
use std::path::Path;

/// Every line of session `file` by key, and its keys in file order.
fn lines(db: &Path, file: &str) -> BTreeMap<EntryKey, String> {
    let m = SessionManager::open(db, file, None, None).unwrap();
    let keys = m.entry_steps(None).unwrap().keys().to_vec();
    let mut out = BTreeMap::new();
    m.lines_at(&keys, &mut |k, line| {
        out.insert(k, String::from_utf8(line.to_vec()).unwrap());
    })
    .unwrap();
    assert_eq!(out.len(), keys.len());
    out
}

fn is_assistant(line: &str) -> bool {
    let Ok(Value::Object(o)) = parse(line.as_bytes()) else { return false };
    let role = o.get("message").and_then(|m| m.as_object()).and_then(|m| m.get("role")).and_then(Value::as_str);
    o.get("type").and_then(Value::as_str) == Some("message") && role == Some("assistant")
}

/// The tree rows stored in SQLite for `keys`, by key.
fn stored(conn: &sessiondb::db::Db, keys: &[EntryKey]) -> BTreeMap<EntryKey, String> {
    let (lo, hi) = (keys.iter().min().unwrap().0, keys.iter().max().unwrap().0);
    let mut st = conn
        .sqlite()
        .prepare("SELECT key, tree_row FROM entries WHERE key BETWEEN ?1 AND ?2 AND tree_row IS NOT NULL")
        .unwrap();
    st.query_map([lo, hi], |r| Ok((EntryKey(r.get(0)?), r.get(1)?))).unwrap().map(Result::unwrap).collect()
}

/// The rows `pi::tree_row` gives the assistant lines of `lines`.
fn rows_of(lines: &BTreeMap<EntryKey, String>) -> BTreeMap<EntryKey, String> {
    lines
        .iter()
        .filter(|(_, l)| is_assistant(l))
        .filter_map(|(&k, l)| tree_row::of_line(l.as_bytes()).map(|r| (k, r)))
        .collect()
}

#[test]
fn stored_tree_rows_are_the_rows_of_their_lines_after_imports_appends_and_copies() {
    let (dir, db, conn) = common::temp_db();
    let (code, _, err) = common::run(&db, &["import", common::oracle().join("sessions").to_str().unwrap()]);
    assert!(code == 0 || code == 1, "{err}"); // 1: the corpus holds deliberately broken files
    let files: Vec<String> = conn
        .sqlite()
        .prepare("SELECT s.path FROM sessions s JOIN entries e ON e.session = s.sid WHERE e.role = 'assistant' GROUP BY s.sid ORDER BY count(*) DESC, s.sid")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(files.len() > 10, "{} sessions with assistants", files.len());
    let mut rows = 0;
    for file in &files {
        let lines = lines(&db, file);
        let keys: Vec<EntryKey> = lines.keys().copied().collect();
        let want = rows_of(&lines);
        assert_eq!(stored(&conn, &keys), want, "{file}");
        rows += want.len();
    }
    assert!(rows > 500, "{rows} rows");

    // An append, then a fork and a branched session of the busiest session: their copies carry
    // the rows.
    let busiest = &files[0];
    let mut m = SessionManager::open(&db, busiest, None, None).unwrap();
    let call = r#"{"role":"assistant","content":[{"type":"text","text":"  "},{"type":"toolCall","id":"c9","name":"bash","arguments":{"command":"ls"}}],"stopReason":"toolUse","timestamp":5}"#;
    m.append_message(parse(call.as_bytes()).unwrap()).unwrap();
    let path = m.get_branch(None).unwrap();
    let mid = path[path.len() / 2].as_object().and_then(|o| o.get("id")).and_then(Value::as_str).unwrap().to_string();
    let out = dir.path().join("copies");
    let fork =
        SessionManager::fork_from(&db, busiest, "/copy", Some(out.to_str().unwrap()), NewSessionOptions::default())
            .unwrap()
            .session_file()
            .unwrap()
            .to_string();
    let branched = m.create_branched_session(Some(&mid)).unwrap().unwrap();
    for file in [busiest, &fork, &branched] {
        let lines = lines(&db, file);
        let keys: Vec<EntryKey> = lines.keys().copied().collect();
        let want = rows_of(&lines);
        assert!(!want.is_empty(), "{file}");
        assert_eq!(stored(&conn, &keys), want, "{file}");
    }
    let appended = lines(&db, busiest);
    let last = appended.values().last().unwrap();
    assert_eq!(
        stored(&conn, &[*appended.keys().last().unwrap()]).values().next().unwrap(),
        r#"[false,"toolUse",[["c9","bash",1]]]"#,
        "{last}"
    );

    // A reader gets each assistant's row, stored or not: the same once the stored rows are
    // gone (rows written before the column).
    let m = SessionManager::open(&db, busiest, None, None).unwrap();
    let assistants: Vec<EntryKey> = appended.iter().filter(|(_, l)| is_assistant(l)).map(|(&k, _)| k).collect();
    let read = m.tree_rows_at(&assistants).unwrap();
    let want: Vec<Option<String>> = assistants.iter().map(|k| tree_row::of_line(appended[k].as_bytes())).collect();
    assert_eq!(read, want);
    conn.sqlite().execute("UPDATE entries SET tree_row = NULL", []).unwrap();
    assert_eq!(m.tree_rows_at(&assistants).unwrap(), want);
}

/// A server stores no tree rows: its readers read the lines, and get what SQLite stores.
#[test]
fn tree_rows_read_the_same_on_both_backends() {
    let dir = tempfile::tempdir().unwrap();
    for b in common::backends(dir.path(), "rows") {
        let db = b.db.to_string_lossy().into_owned();
        let folder = dir.path().join(b.name).to_string_lossy().into_owned();
        let mut m =
            SessionManager::create(Path::new(&db), "/work/app", Some(&folder), NewSessionOptions::default()).unwrap();
        for i in 0..40 {
            let text = match i % 4 {
                0 => format!(r#"{{"role":"user","content":"q {i}","timestamp":{i}}}"#),
                1 => format!(
                    r#"{{"role":"assistant","content":[{{"type":"text","text":"a {i}"}}],"stopReason":"stop","timestamp":{i}}}"#
                ),
                2 => format!(
                    r#"{{"role":"assistant","content":[{{"type":"toolCall","id":"t{i}","name":"read","arguments":"{i}"}}],"stopReason":"toolUse","timestamp":{i}}}"#
                ),
                _ => format!(r#"{{"role":"toolResult","toolCallId":"t{i}","content":[],"timestamp":{i}}}"#),
            };
            m.append_message(parse(text.as_bytes()).unwrap()).unwrap();
        }
        let file = m.session_file().unwrap().to_string();
        let lines = lines(Path::new(&db), &file);
        let keys: Vec<EntryKey> = lines.iter().filter(|(_, l)| is_assistant(l)).map(|(&k, _)| k).collect();
        assert_eq!(keys.len(), 20, "{}", b.name);
        let want: Vec<Option<String>> = keys.iter().map(|k| tree_row::of_line(lines[k].as_bytes())).collect();
        assert!(want.iter().all(Option::is_some));
        let m = SessionManager::open(Path::new(&db), &file, None, None).unwrap();
        assert_eq!(m.tree_rows_at(&keys).unwrap(), want, "{}", b.name);
    }
}
