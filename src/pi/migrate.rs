//! Migration of v1 and v2 session files to v3, with pi's exact key placement.

use crate::js::json::{Object, Value};
use crate::pi::ids;
use std::collections::HashSet;

/// The version pi writes.
pub const CURRENT_VERSION: f64 = 3.0;

/// The header's version as pi compares it: `header.version ?? 1`, coerced to a number.
pub fn header_version(header: &Object) -> f64 {
    match header.get("version") {
        None | Some(Value::Null) => 1.0,
        Some(v) => to_number(v),
    }
}

/// JavaScript `ToNumber` for the values a header may hold.
fn to_number(v: &Value) -> f64 {
    match v {
        Value::Null => 0.0,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Number(n) => *n,
        Value::String(s) => {
            let t = crate::js::json::js_trim(&s.to_str()).to_string();
            if t.is_empty() {
                0.0
            } else {
                t.parse().unwrap_or(f64::NAN)
            }
        }
        Value::Array(a) if a.is_empty() => 0.0,
        Value::Array(a) if a.len() == 1 => to_number(&a[0]),
        _ => f64::NAN,
    }
}

/// True when a file with this header is migrated on load.
pub fn needs_migration(header: &Object) -> bool {
    // `version >= 3` is false for NaN: pi then "migrates" (and rewrites) without changes.
    let v = header_version(header);
    v.is_nan() || v < CURRENT_VERSION
}

fn type_is(entry: &Value, t: &str) -> bool {
    entry.as_object().and_then(|o| o.get("type")).and_then(Value::as_str) == Some(t)
}

/// Migrates file entries (header first) in place, as pi's `migrateToCurrentVersion`.
/// Returns true when a migration ran (pi then rewrites the file).
pub fn migrate(entries: &mut [Value]) -> bool {
    let Some(version) = entries.iter().find(|e| type_is(e, "session")).and_then(Value::as_object).map(header_version)
    else {
        return false;
    };
    if version >= CURRENT_VERSION {
        return false;
    }
    if version < 2.0 {
        v1_to_v2(entries);
    }
    if version < 3.0 {
        v2_to_v3(entries);
    }
    true
}

fn v1_to_v2(entries: &mut [Value]) {
    let mut taken: HashSet<String> = HashSet::new();
    let mut prev: Option<String> = None;
    for i in 0..entries.len() {
        if type_is(&entries[i], "session") {
            if let Some(o) = entries[i].as_object_mut() {
                o.set("version", Value::Number(2.0));
            }
            continue;
        }
        let id = ids::new_entry_id(|c| taken.contains(c));
        taken.insert(id.clone());
        // A compaction's index points at a file entry that may already hold its new id
        // (earlier entries) or still its old one (later entries), exactly as in pi.
        let kept_id = match entries[i].as_object().and_then(|o| o.get("type")).and_then(Value::as_str) {
            Some("compaction") => match entries[i].as_object().and_then(|o| o.get("firstKeptEntryIndex")) {
                Some(Value::Number(n)) => Some(first_kept_target(entries, *n, i, &id)),
                _ => None,
            },
            _ => None,
        };
        let Some(o) = entries[i].as_object_mut() else { continue };
        o.set("id", Value::String(id.as_str().into()));
        o.set("parentId", prev.as_deref().map_or(Value::Null, |p| Value::String(p.into())));
        prev = Some(id);
        if let Some(target) = kept_id {
            if let Some(target) = target {
                o.set("firstKeptEntryId", target);
            }
            o.remove("firstKeptEntryIndex");
        }
    }
}

/// The value `entries[index].id` has when pi reads it while migrating entry `current`.
fn first_kept_target(entries: &[Value], index: f64, current: usize, current_id: &str) -> Option<Value> {
    if index.fract() != 0.0 || index < 0.0 || index >= entries.len() as f64 {
        return None;
    }
    let idx = index as usize;
    if type_is(&entries[idx], "session") {
        return None;
    }
    if idx == current {
        return Some(Value::String(current_id.into()));
    }
    // Earlier entries were already given their new id; later ones keep the old one (if any).
    entries[idx].as_object()?.get("id").cloned()
}

fn v2_to_v3(entries: &mut [Value]) {
    for entry in entries.iter_mut() {
        let Some(o) = entry.as_object_mut() else { continue };
        match o.get("type").and_then(Value::as_str) {
            Some("session") => o.set("version", Value::Number(3.0)),
            Some("message") => {
                if let Some(Value::Object(m)) = o.get_mut("message") {
                    if m.get("role").and_then(Value::as_str) == Some("hookMessage") {
                        m.set("role", Value::String("custom".into()));
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::js::json::parse;

    fn lines(src: &[&str]) -> Vec<Value> {
        src.iter().map(|l| parse(l.as_bytes()).unwrap()).collect()
    }

    #[test]
    fn v1_gets_ids_and_chain_at_the_end() {
        let mut e = lines(&[
            r#"{"type":"session","id":"s","timestamp":"t","cwd":"/"}"#,
            r#"{"type":"message","timestamp":"t","message":{"role":"hookMessage"}}"#,
            r#"{"type":"compaction","firstKeptEntryIndex":1,"summary":"x"}"#,
        ]);
        assert!(migrate(&mut e));
        let h = e[0].to_json();
        assert_eq!(h, r#"{"type":"session","id":"s","timestamp":"t","cwd":"/","version":3}"#);
        let m = e[1].as_object().unwrap();
        let id1 = m.get("id").unwrap().as_str().unwrap().to_string();
        assert_eq!(
            e[1].to_json(),
            format!(
                r#"{{"type":"message","timestamp":"t","message":{{"role":"custom"}},"id":"{id1}","parentId":null}}"#
            )
        );
        let c = e[2].as_object().unwrap();
        let id2 = c.get("id").unwrap().as_str().unwrap().to_string();
        assert_eq!(
            e[2].to_json(),
            format!(
                r#"{{"type":"compaction","summary":"x","id":"{id2}","parentId":"{id1}","firstKeptEntryId":"{id1}"}}"#
            )
        );
    }

    #[test]
    fn version_rules() {
        let h = |s: &str| parse(s.as_bytes()).unwrap().as_object().unwrap().clone();
        assert!(needs_migration(&h(r#"{"type":"session","id":"x"}"#)));
        assert!(needs_migration(&h(r#"{"type":"session","id":"x","version":2}"#)));
        assert!(!needs_migration(&h(r#"{"type":"session","id":"x","version":3}"#)));
        assert!(!needs_migration(&h(r#"{"type":"session","id":"x","version":4}"#)));
        assert!(!needs_migration(&h(r#"{"type":"session","id":"x","version":"3"}"#)));
    }
}
