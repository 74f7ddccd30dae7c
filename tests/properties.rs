//! Property tests that run in CI with bounded case counts (the `fuzz/` targets run the same
//! properties for as long as one likes): the scanner accepts what the parser accepts,
//! `parse → to_json → parse` is a fixed point, and import never panics on random bytes.

mod common;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use sessiondb::import::{import_file, FileStatus, ImportOptions};
use sessiondb::json::{self, Value};
use std::cell::RefCell;

fn config(cases: u32) -> Config {
    Config { cases, failure_persistence: None, ..Config::default() }
}

/// JSON text as JavaScript writes and mangles it: odd numbers, escapes (lone surrogates
/// included), duplicate and integer-like keys, whitespace.
fn json_text() -> impl Strategy<Value = String> {
    let number = "-?(0|[1-9][0-9]{0,24})(\\.[0-9]{1,20})?([eE][+-]?[0-9]{1,4})?";
    let string = "\"([a-z0-9 é中😀\u{2028}]|\\\\[\"\\\\/bfnrt]|\\\\u[0-9a-fA-F]{4}|\\\\u[dD][89abAB][0-9a-fA-F]{2})*\"";
    let leaf = prop_oneof![
        Just("null".to_string()),
        Just("true".to_string()),
        Just("false".to_string()),
        proptest::string::string_regex(number).unwrap(),
        proptest::string::string_regex(string).unwrap(),
    ];
    let key = prop_oneof![
        proptest::string::string_regex("\"(0|1|12|01|4294967295|a|b|id|type|__proto__)\"").unwrap(),
        proptest::string::string_regex(string).unwrap(),
    ]
    .boxed();
    let ws = proptest::string::string_regex("[ \t\r\n]{0,2}").unwrap().boxed();
    leaf.prop_recursive(6, 64, 6, move |inner| {
        prop_oneof![
            (proptest::collection::vec(inner.clone(), 0..6), ws.clone())
                .prop_map(|(items, w)| format!("[{w}{}{w}]", items.join(&format!("{w},")))),
            (proptest::collection::vec((key.clone(), inner), 0..6), ws.clone()).prop_map(|(members, w)| {
                let m: Vec<String> = members.into_iter().map(|(k, v)| format!("{k}{w}:{v}")).collect();
                format!("{{{w}{}}}", m.join(","))
            }),
        ]
    })
}

/// Valid JSON text with one random edit (a byte range removed, or a character inserted).
fn mangled_text() -> impl Strategy<Value = String> {
    let chars: Vec<char> = "{}[]\",:\\ 0123456789eE.+-tfnul\u{0}\n\u{1}é".chars().collect();
    (
        json_text(),
        any::<prop::sample::Index>(),
        any::<prop::sample::Index>(),
        prop::sample::select(chars),
        any::<bool>(),
    )
        .prop_map(|(text, a, b, c, insert)| {
            let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
            let i = bounds[a.index(bounds.len())];
            let mut out = text.clone();
            if insert {
                out.insert(i, c);
            } else {
                let j = bounds[b.index(bounds.len())].max(i);
                out.replace_range(i..j, "");
            }
            out
        })
}

/// The scanner agrees with the parser: same validity (deeper nesting than the parser takes
/// aside), same "is an object".
fn agrees(text: &str) -> Result<(), TestCaseError> {
    let parsed = json::parse(text.as_bytes());
    let scanned = json::scan_object(text.as_bytes());
    match &parsed {
        Ok(v) => {
            prop_assert!(scanned.is_ok(), "scan rejects {text:?}: {scanned:?}");
            prop_assert_eq!(scanned.unwrap().is_some(), matches!(v, Value::Object(_)), "object? {:?}", text);
        }
        Err(e) if e.reason == "nesting too deep" => {}
        Err(e) => prop_assert!(scanned.is_err(), "scan accepts {text:?}, parse says {e}"),
    }
    Ok(())
}

#[test]
fn scan_object_agrees_with_parse_on_validity() {
    let mut runner = TestRunner::new(config(2000));
    runner.run(&json_text(), |t| agrees(&t)).unwrap();
    let mut runner = TestRunner::new(config(4000));
    runner.run(&mangled_text(), |t| agrees(&t)).unwrap();
    let mut runner = TestRunner::new(config(2000));
    runner.run(&proptest::collection::vec(any::<u8>(), 0..64), |b| agrees(&String::from_utf8_lossy(&b))).unwrap();
}

#[test]
fn parse_to_json_parse_is_a_fixed_point() {
    let mut runner = TestRunner::new(config(3000));
    runner
        .run(&json_text(), |text| {
            let v = json::parse(text.as_bytes()).map_err(|e| TestCaseError::fail(format!("{text:?}: {e}")))?;
            let once = v.to_json();
            let again = json::parse(once.as_bytes()).map_err(|e| TestCaseError::fail(format!("{once:?}: {e}")))?;
            prop_assert_eq!(again.to_json(), once.clone(), "not a fixed point for {:?}", text);
            // What JSON.stringify writes has no whitespace and scans as it parses.
            prop_assert!(json::scan_object(once.as_bytes()).is_ok());
            Ok(())
        })
        .unwrap();
}

/// Random bytes, and random lines after a session header: import returns a report, never
/// panics; what it stores exports and checks.
#[test]
fn import_never_panics_on_random_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("random.jsonl");
    let conn = RefCell::new(sessiondb::db::open_in_memory().unwrap());
    let import = |bytes: &[u8]| -> Result<(), TestCaseError> {
        std::fs::write(&file, bytes).unwrap();
        let mut conn = conn.borrow_mut();
        let r = import_file(&mut conn, &file, None, ImportOptions { force: true, live: false });
        if r.status != FileStatus::Failed {
            let sid: sessiondb::SessionKey =
                conn.sqlite().query_row("SELECT sid FROM sessions", [], |r| r.get(0)).unwrap();
            let mut out = Vec::new();
            sessiondb::export::write_session(&conn, sid, &mut out).unwrap();
            prop_assert_eq!(out.iter().filter(|&&b| b == b'\n').count() as u64, r.entries + 1);
            sessiondb::check::check_session(&conn, sid).unwrap();
            let t = sessiondb::tree::SessionTree::open(&conn, sid).unwrap();
            t.projection(&sessiondb::tree::Leaf::Last).unwrap();
        }
        conn.sqlite().execute("DELETE FROM sessions", []).unwrap();
        Ok(())
    };
    let mut runner = TestRunner::new(config(300));
    runner.run(&proptest::collection::vec(any::<u8>(), 0..512), |b| import(&b)).unwrap();

    let header = r#"{"type":"session","version":3,"id":"p","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;
    let line = prop_oneof![
        json_text(),
        mangled_text(),
        proptest::string::string_regex(
            r#"\{"type":"(message|compaction|label|context_edit|session_info)","id":"[ab]","parentId":(null|"[abc]"),"timestamp":"2025-01-01T00:00:0[0-9].000Z"(,"message":\{"role":"(user|assistant|system)","content":"x"\})?(,"targetId":"[abc]")?(,"firstKeptEntryId":"[abc]")?\}"#
        )
        .unwrap(),
    ];
    let session = (proptest::collection::vec(line, 0..12), any::<bool>()).prop_map(move |(lines, v1)| {
        let h = if v1 { r#"{"type":"session","id":"p","cwd":"/p"}"# } else { header };
        format!("{h}\n{}\n", lines.join("\n"))
    });
    let mut runner = TestRunner::new(config(300));
    runner.run(&session, |s| import(s.as_bytes())).unwrap();
}
