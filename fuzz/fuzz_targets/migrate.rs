//! The line classifier and the v1/v2 → v3 migration on the object lines of the input.
//!
//! Properties: no panic; every migrated line is a JSON object that scans; a migrated header
//! is version 3; migrating again changes nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sessiondb::json::{self, Value};
use sessiondb::internals::jsonl::{classify, LineKind, LineReader};
use sessiondb::internals::migrate;

fuzz_target!(|data: &[u8]| {
    let mut reader = LineReader::new(data);
    let mut entries = Vec::new();
    while let Ok(Some(line)) = reader.next_line() {
        if let LineKind::Object(obj) = classify(&line.text) {
            let _ = obj.get_str("type");
            let _ = obj.get("id");
            if let Ok(v) = json::parse(line.text.as_bytes()) {
                entries.push(v);
            }
        }
    }
    if let Some(h) = entries.first().and_then(Value::as_object) {
        let _ = migrate::needs_migration(h);
    }
    let migrated = migrate::migrate(&mut entries);
    let lines: Vec<String> = entries.iter().map(Value::to_json).collect();
    for l in &lines {
        assert!(matches!(json::scan_object(l.as_bytes()), Ok(Some(_))), "migrated line is an object: {l}");
    }
    if migrated {
        let header = entries
            .iter()
            .find_map(|e| e.as_object().filter(|o| o.get("type").and_then(Value::as_str) == Some("session")));
        let v = header.map(migrate::header_version);
        assert_eq!(v, Some(3.0), "migrated header is version 3");
        // Migrating the result again is a no-op.
        let mut again = entries.clone();
        assert!(!migrate::migrate(&mut again));
        assert_eq!(again.iter().map(Value::to_json).collect::<Vec<_>>(), lines);
    }
});
