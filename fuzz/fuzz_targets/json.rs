//! The JSON parser, the validating scanner and the serializer.
//!
//! Properties: no panic on any bytes; on text (what the line reader hands over, invalid UTF-8
//! already replaced) `scan_object` accepts exactly what `parse` accepts (deeper nesting than
//! `parse` allows is the only difference) and agrees on "is an object";
//! `parse → to_json → parse → to_json` is a fixed point.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sessiondb::json::{self, Value};

fuzz_target!(|data: &[u8]| {
    // Raw bytes: anything goes, nothing panics.
    let _ = json::parse(data);
    let _ = json::scan_object(data);
    let text = String::from_utf8_lossy(data);
    let _ = json::parse_or_raw(&text);
    check_text(text.as_bytes());
});

fn check_text(text: &[u8]) {
    let parsed = json::parse(text);
    let scanned = json::scan_object(text);
    match &parsed {
        Ok(v) => {
            let obj = scanned.as_ref().expect("scan rejects what parse accepts");
            assert_eq!(obj.is_some(), matches!(v, Value::Object(_)), "object or not");
            let once = v.to_json();
            let again = json::parse(once.as_bytes()).expect("serialized JSON parses");
            assert_eq!(again.to_json(), once, "to_json is a fixed point");
            assert!(json::scan_object(once.as_bytes()).is_ok());
        }
        Err(e) if e.reason == "nesting too deep" => {
            // Valid but deep: scan decides alone; parse_or_raw keeps it verbatim when valid.
            if scanned.is_ok() {
                let raw = json::parse_or_raw(std::str::from_utf8(text).unwrap()).expect("raw");
                assert!(matches!(raw, Value::Raw(_)));
            }
        }
        Err(_) => assert!(scanned.is_err(), "scan accepts what parse rejects"),
    }
}
