//! What pi's tree selector (`TreeList`, pi 1.6.0's `modes/interactive/components/tree-selector.js`)
//! reads of every assistant message to build its rows: whether `hasTextContent(content)` holds,
//! `stopReason`, and the tool calls `flattenTree` puts in its `toolCallMap`. Stored with each
//! assistant line when it is written (the `tree_row` column), so that `/tree` on a long session
//! reads these instead of every assistant's line; the Node binding reads them
//! (`assistantRows`). A line it cannot answer exactly (pi would throw, or the shape is unusual)
//! has none: JavaScript parses that entry instead.

use crate::js::json::{self, js_trim, RawObject, Value};

/// The row of one assistant line as JSON, `[hasText, stopReason, calls]`, where `stopReason` is
/// the value when it is not an object or array (`true` for one: only its truthiness and its
/// equality to "stop" and "toolUse" are looked at; `false` when absent) and each call is
/// `[id, name, index in content, arguments?]`, the arguments given only when they are not an
/// object (an object's are read from the entry when a row shows them); `None` when pi's reads
/// cannot be answered from it.
pub fn of_line(line: &[u8]) -> Option<String> {
    of_entry(&json::scan_object(line).ok()??)
}

/// [`of_line`] of an entry already scanned.
pub fn of_entry(entry: &RawObject<'_>) -> Option<String> {
    let message = json::scan_object(entry.raw("message")?).ok()??;
    let stop = match message.raw("stopReason") {
        None => "false".to_string(),
        Some(raw) => match json::parse(raw).ok()? {
            Value::Object(_) | Value::Array(_) | Value::Raw(_) => "true".to_string(),
            v => v.to_json(),
        },
    };
    let mut has_text = false;
    let mut calls = Vec::new();
    // Scanned, not parsed: a block's other fields (a text once one is known to have text, a
    // tool call's object arguments: whole files for pi's write tool) are never parsed.
    match message.raw("content") {
        Some(raw) if raw.first() == Some(&b'[') => {
            for (index, block) in json::scan_array(raw).ok()??.into_iter().enumerate() {
                let Some(b) = json::scan_object(block).ok()? else { continue };
                match b.get("type") {
                    Some(t) if t.as_str() == Some("text") => match b.raw("text") {
                        Some(text) if text.first() == Some(&b'"') => {
                            has_text = has_text || {
                                let Value::String(s) = json::parse(text).ok()? else { return None };
                                !js_trim(&s.to_str()).is_empty()
                            };
                        }
                        Some(text) if json::parse(text).ok()?.is_truthy() => return None, // pi's text.trim() throws
                        _ => {}
                    },
                    Some(t) if t.as_str() == Some("toolCall") => {
                        let (Some(id), Some(name)) = (b.get("id"), b.get("name")) else { return None };
                        let args = match b.raw("arguments") {
                            Some(a) if a.first() == Some(&b'{') => String::new(),
                            Some(a) => match json::parse(a).ok()? {
                                Value::Raw(_) => return None,
                                Value::Object(_) => String::new(),
                                v => format!(",{}", v.to_json()),
                            },
                            None => return None,
                        };
                        calls.push(format!("[{},{},{index}{args}]", id.to_json(), name.to_json()));
                    }
                    _ => {}
                }
            }
        }
        Some(raw) => match json::parse(raw).ok()? {
            Value::String(s) => has_text = !js_trim(&s.to_str()).is_empty(),
            Value::Raw(_) => return None,
            _ => {}
        },
        None => {}
    }
    Some(format!("[{has_text},{stop},[{}]]", calls.join(",")))
}

#[cfg(test)]
mod tests {
    /// Each line's row as the parsing version before the scan wrote it (compared then over
    /// 220,000 lines of HUGE, the 10k corpus and the real sessions).
    #[test]
    fn rows_are_what_a_parse_of_the_content_gives() {
        let cases = [
            // A text that is not a string and truthy: pi's trim() throws, JavaScript parses it.
            (
                r#"{"message":{"role":"assistant","content":[{"type":"text","text":" \n"},{"type":"text","text":7}]}}"#,
                None,
            ),
            (
                r#"{"message":{"role":"assistant","content":[{"type":"text","text":"hi"},{"type":"text","text":7}]}}"#,
                None,
            ),
            (
                r#"{"message":{"role":"assistant","content":[{"type":"text","text":0},{"type":"text","text":"\u00a0"}],"stopReason":{"a":1}}}"#,
                Some("[false,true,[]]"),
            ),
            (
                r#"{"message":{"role":"assistant","content":"  x ","stopReason":"toolUse"}}"#,
                Some(r#"[true,"toolUse",[]]"#),
            ),
            (r#"{"message":{"role":"assistant","content":null}}"#, Some("[false,false,[]]")),
            (
                r#"{"message":{"content":[1,"s",{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a"}},{"type":"toolCall","id":2,"name":"w","arguments":"raw"},{"type":"\u0074ext","text":"t","text":""}]}}"#,
                Some(r#"[false,false,[["c1","read",2],[2,"w",3,"raw"]]]"#),
            ),
            (r#"{"message":{"content":[{"type":"toolCall","id":"c1","name":"read"}]}}"#, None),
            (
                r#"{"message":{"content":[{"type":"toolCall","id":"c1","name":"read","arguments":[1,{"b":null}]}]}}"#,
                Some(r#"[false,false,[["c1","read",0,[1,{"b":null}]]]]"#),
            ),
        ];
        for (line, want) in cases {
            assert_eq!(super::of_line(line.as_bytes()).as_deref(), want, "{line}");
        }
    }
}
