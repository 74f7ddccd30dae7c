//! What search and usage statistics read from an entry, extracted once when it is written:
//! its searchable text, the text pi's `allMessagesText` joins, and its token usage.

use crate::js::json::{self, RawObject, Value};
use crate::store::derive::EntryFields;
use crate::store::stats::message_text;

/// Searchable text of one entry.
#[derive(Debug, Clone, PartialEq)]
pub struct TextRow {
    /// Message role, or the entry type.
    pub role: String,
    /// The text.
    pub text: String,
    /// pi's `extractTextContent` for user/assistant messages with text.
    pub list_text: Option<String>,
}

/// Token usage of one entry.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UsageRow {
    /// Provider, when known.
    pub provider: Option<String>,
    /// Model, when known.
    pub model: Option<String>,
    /// Input tokens.
    pub input: i64,
    /// Output tokens.
    pub output: i64,
    /// Cache-read tokens.
    pub cache_read: i64,
    /// Cache-write tokens.
    pub cache_write: i64,
    /// Total tokens (`totalTokens`, else the sum of the four).
    pub total: i64,
    /// Cost (`cost.total`, or a plain number).
    pub cost: f64,
    /// Values left out (zero above) because they were not plausible for one entry (tokens a
    /// whole number up to 10^9, a cost up to 10^6).
    pub invalid: i64,
    /// Whether `input`, `output`, `cacheRead`, `cacheWrite` and `cost.total` are all present in
    /// the line and equal to the columns above (no value left out, `cost` an object, no `-0`),
    /// and `provider` and `model`, when strings, are held whole (no lone surrogate): a reader
    /// may answer those from the row without reading the line (see [`Extras::usage_in_line`]).
    pub exact: bool,
}

fn str_of(v: Option<&Value>) -> Option<String> {
    match v {
        Some(Value::String(s)) => Some(s.to_str().into_owned()),
        _ => None,
    }
}

/// Text of content blocks: text, thinking, tool calls (name and arguments), images skipped.
fn blocks_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.to_str().into_owned(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(Value::as_object)
            .filter_map(|b| match b.get("type").and_then(Value::as_str) {
                Some("text") => str_of(b.get("text")),
                Some("thinking") => str_of(b.get("thinking")),
                Some("toolCall") => Some(format!(
                    "{} {}",
                    str_of(b.get("name")).unwrap_or_default(),
                    b.get("arguments").map(Value::to_json).unwrap_or_default()
                )),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The searchable text of an entry, if it has any.
pub fn text_of(f: &EntryFields, entry: &RawObject<'_>, message: Option<&RawObject<'_>>) -> Option<TextRow> {
    let (role, text, list_text) = match f.kind.as_deref()? {
        "message" => {
            let m = message?;
            let role = f.role.clone().unwrap_or_default();
            if role == "system" {
                return None;
            }
            let content = m.get("content");
            let mut text = content.as_ref().map(blocks_text).unwrap_or_default();
            if let Some(tool) = str_of(m.get("toolName").as_ref()) {
                text = format!("{tool}\n{text}");
            }
            for extra in ["command", "output"] {
                if let Some(s) = str_of(m.get(extra).as_ref()) {
                    text.push('\n');
                    text.push_str(&s);
                }
            }
            let list_text = match (&content, role.as_str()) {
                (Some(c), "user" | "assistant") => Some(message_text(c)).filter(|t| !t.is_empty()),
                _ => None,
            };
            (role, text, list_text)
        }
        "custom_message" => {
            ("custom".to_string(), entry.get("content").map(|c| blocks_text(&c)).unwrap_or_default(), None)
        }
        kind @ ("compaction" | "branch_summary") => (kind.to_string(), str_of(entry.get("summary").as_ref())?, None),
        "session_info" => ("session_info".to_string(), str_of(entry.get("name").as_ref())?, None),
        _ => return None,
    };
    (!text.trim().is_empty() || list_text.is_some()).then_some(TextRow { role, text, list_text })
}

/// Largest token count one entry can plausibly record (a billion tokens in one turn).
const MAX_TOKENS: f64 = 1e9;

/// Largest cost one entry can plausibly record.
const MAX_COST: f64 = 1e6;

/// A usage value that counts: for tokens a whole number in `[0, 10^9]`, for a cost a finite
/// number in `[0, 10^6]`. `Err(())` for any other value present (negative, fractional tokens,
/// implausibly large like the 2^53 of a corrupt file, infinite, `null` for NaN, a string),
/// which is left out and counted; `Ok(None)` when absent. This is the one place the rule lives:
/// `stats` and `serve` read the rows it leaves.
fn valid(v: Option<&Value>, tokens: bool) -> std::result::Result<Option<f64>, ()> {
    let max = if tokens { MAX_TOKENS } else { MAX_COST };
    match v {
        None => Ok(None),
        Some(Value::Number(n)) if (0.0..=max).contains(n) && (!tokens || n.fract() == 0.0) => Ok(Some(*n)),
        Some(_) => Err(()),
    }
}

fn usage_from(v: &Value, provider: Option<Value>, model: Option<Value>) -> Option<UsageRow> {
    let o = v.as_object()?;
    let whole = |v: &Option<Value>| !matches!(v, Some(Value::String(s)) if s.as_str().is_none());
    let strings_whole = whole(&provider) && whole(&model);
    let (provider, model) = (str_of(provider.as_ref()), str_of(model.as_ref()));
    let present = ["input", "output", "cacheRead", "cacheWrite"].iter().all(|k| plain(o.get(k)))
        && matches!(o.get("cost"), Some(Value::Object(c)) if plain(c.get("total")));
    let mut invalid = 0;
    let mut take = |v: Option<&Value>, tokens: bool| {
        valid(v, tokens).unwrap_or_else(|()| {
            invalid += 1;
            None
        })
    };
    let [input, output, cache_read, cache_write] =
        ["input", "output", "cacheRead", "cacheWrite"].map(|k| take(o.get(k), true).unwrap_or(0.0) as i64);
    let total = match o.get("totalTokens") {
        None => Some(input + output + cache_read + cache_write),
        t => take(t, true).map(|n| n as i64),
    }
    .unwrap_or(0);
    let cost = match o.get("cost") {
        Some(Value::Object(c)) => take(c.get("total"), false),
        c => take(c, false),
    }
    .unwrap_or(0.0);
    Some(UsageRow {
        provider,
        model,
        input,
        output,
        cache_read,
        cache_write,
        total,
        cost,
        invalid,
        exact: present && invalid == 0 && strings_whole,
    })
}

/// A number present and not `-0` (which the columns would give back as `0`); whether it is
/// plausible is `valid`'s rule, counted in `invalid`.
fn plain(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::Number(n)) if !n.is_sign_negative())
}

/// The token usage an entry records: an assistant message's, a `usage` entry's, or a
/// compaction's or branch summary's.
pub fn usage_of(f: &EntryFields, entry: &RawObject<'_>, message: Option<&RawObject<'_>>) -> Option<UsageRow> {
    match f.kind.as_deref()? {
        "message" if f.role.as_deref() == Some("assistant") => {
            let m = message?;
            usage_from(&m.get("usage")?, m.get("provider"), m.get("model"))
        }
        "usage" => usage_from(&entry.get("usage")?, entry.get("provider"), entry.get("model")),
        "compaction" | "branch_summary" => usage_from(&entry.get("usage")?, None, None),
        _ => None,
    }
}

/// Whether a reader must read the line for the entry's `usage` or its message's `usage` (pi's
/// usage totals read them from every entry): one of them is present and its usage row (`usage`,
/// from [`usage_of`]) is missing, not exact, or the other one's. An entry not listed has
/// neither, or only the one its exact row gives: the Node binding answers pi's footer from the
/// rows and the list without reading lines.
pub fn usage_in_line(
    f: &EntryFields,
    entry: &RawObject<'_>,
    message: Option<&RawObject<'_>>,
    usage: Option<&UsageRow>,
) -> bool {
    let exact = usage.is_some_and(|u| u.exact);
    let (own_row, message_row) = match f.kind.as_deref() {
        Some("message") => (false, exact && f.role.as_deref() == Some("assistant")),
        Some("usage" | "compaction" | "branch_summary") => (exact, false),
        _ => (false, false),
    };
    // A message's `usage` is read through its `message` only for a message entry with a role
    // (`EntryFields::read` scans `message` for those alone).
    let message_usage = message.is_some_and(|m| f.role.is_some() && m.has("usage"));
    (entry.has("usage") && !own_row) || (message_usage && !message_row)
}

/// Whether an entry has searchable text (decided from its type and role, without reading
/// its content), and the `allMessagesText` part of a user/assistant message.
pub fn searchable(f: &EntryFields, message: Option<&RawObject<'_>>) -> Option<(String, Option<String>)> {
    match f.kind.as_deref()? {
        "message" => {
            let role = f.role.clone().unwrap_or_default();
            if role == "system" {
                return None;
            }
            let list_text = match role.as_str() {
                "user" | "assistant" => {
                    message.and_then(|m| m.get("content")).map(|c| message_text(&c)).filter(|t| !t.is_empty())
                }
                _ => None,
            };
            Some((role, list_text))
        }
        "custom_message" => Some(("custom".to_string(), None)),
        kind @ ("compaction" | "branch_summary" | "session_info") => Some((kind.to_string(), None)),
        _ => None,
    }
}

/// The searchable text of a stored entry line (what the index holds and snippets show).
pub fn text_of_line(body: &str) -> Option<String> {
    let obj = json::scan_object(body.as_bytes()).ok().flatten()?;
    let (f, message) = EntryFields::read(&obj);
    text_of(&f, &obj, message.as_ref()).map(|t| t.text)
}

/// The search and usage rows an entry line gives, read from the line alone (so that an
/// import can read them on another thread than the one writing).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extras {
    /// Role (or type) of a searchable entry, and its part of `allMessagesText`.
    pub search: Option<(String, Option<String>)>,
    /// Its token usage.
    pub usage: Option<UsageRow>,
    /// Whether its `usage` or its message's `usage` is present in the line without its usage
    /// row giving it exactly (see [`usage_in_line`]).
    pub usage_in_line: bool,
}

impl Extras {
    /// Reads them from a scanned entry (a header line gives none).
    pub fn of(f: &EntryFields, entry: &RawObject<'_>, message: Option<&RawObject<'_>>) -> Self {
        if f.is_header() {
            return Extras::default();
        }
        let usage = usage_of(f, entry, message);
        let usage_in_line = usage_in_line(f, entry, message, usage.as_ref());
        Extras { search: searchable(f, message), usage, usage_in_line }
    }

    /// The entry's part of `allMessagesText`.
    pub fn list_text(&self) -> Option<&str> {
        self.search.as_ref().and_then(|(_, t)| t.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn implausible_usage_values_are_left_out_and_counted() {
        let v = json::parse(br#"{"input":1e300,"output":7,"cacheRead":-1,"cacheWrite":1e400,"cost":{"total":null}}"#)
            .unwrap();
        let u = usage_from(&v, None, None).unwrap();
        assert_eq!((u.input, u.output, u.cache_read, u.cache_write, u.total, u.cost), (0, 7, 0, 0, 7, 0.0));
        assert_eq!(u.invalid, 4);
        // 2^53, what a corrupt file holds (the README's sample sessions): not one entry's usage.
        let v = json::parse(br#"{"input":9007199254740992,"output":9007199254740992,"totalTokens":9007199254740994,"cost":{"total":18014398509481984}}"#).unwrap();
        let u = usage_from(&v, None, None).unwrap();
        assert_eq!((u.input, u.output, u.total, u.cost, u.invalid), (0, 0, 0, 0.0, 4));
        // The limits themselves count; a fraction of a token, a string or a cost above 10^6 do not.
        let v = json::parse(br#"{"input":1000000000,"output":1.5,"cacheRead":"3","cost":1000000}"#).unwrap();
        let u = usage_from(&v, None, None).unwrap();
        assert_eq!(
            (u.input, u.output, u.cache_read, u.total, u.cost, u.invalid),
            (1_000_000_000, 0, 0, 1_000_000_000, 1e6, 2)
        );
        let v = json::parse(br#"{"input":1000000001,"cost":1000000.01}"#).unwrap();
        let u = usage_from(&v, None, None).unwrap();
        assert_eq!((u.input, u.cost, u.invalid), (0, 0.0, 2));
        let v = json::parse(br#"{"input":3,"output":4,"cost":0.5}"#).unwrap();
        let u = usage_from(&v, None, None).unwrap();
        assert_eq!((u.total, u.cost, u.invalid), (7, 0.5, 0));
    }

    #[test]
    fn a_usage_is_exact_when_the_columns_are_the_lines_numbers() {
        let exact = |text: &str| usage_from(&json::parse(text.as_bytes()).unwrap(), None, None).unwrap().exact;
        assert!(exact(r#"{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"cost":{"total":0.30000000000000004}}"#));
        assert!(exact(
            r#"{"reasoning":9,"cacheWrite":4,"cacheRead":3,"output":2,"input":1,"cost":{"input":1,"total":0}}"#
        ));
        // What pi would read differently from the columns: a missing number, a cost that is not
        // an object, -0, values left out as implausible (a fractional token, a cost over 10^6).
        assert!(!exact(r#"{"input":1,"output":2,"cacheRead":3,"cost":{"total":1}}"#));
        assert!(!exact(r#"{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"cost":1}"#));
        assert!(!exact(r#"{"input":-0,"output":2,"cacheRead":3,"cacheWrite":4,"cost":{"total":1}}"#));
        assert!(!exact(r#"{"input":1.5,"output":2,"cacheRead":3,"cacheWrite":4,"cost":{"total":1}}"#));
        assert!(!exact(r#"{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"cost":{"total":2e6}}"#));
        assert!(!exact(r#"{"input":1,"output":2,"cacheRead":3,"cacheWrite":"4","cost":{"total":1}}"#));
        assert!(!exact(r#"{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":1.5,"cost":{"total":1}}"#));
    }

    #[test]
    fn usages_a_row_does_not_give_are_read_from_the_line() {
        let in_line = |line: &str| {
            let obj = json::scan_object(line.as_bytes()).unwrap().unwrap();
            let (f, message) = EntryFields::read(&obj);
            Extras::of(&f, &obj, message.as_ref()).usage_in_line
        };
        let u = r#"{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"cost":{"total":0.5}}"#;
        let assistant = |usage: &str, extra: &str| {
            format!(
                r#"{{"type":"message","id":"a"{extra},"message":{{"role":"assistant","provider":"p","model":"m","usage":{usage}}}}}"#
            )
        };
        // Given by their rows, or absent.
        assert!(!in_line(&assistant(u, "")));
        assert!(!in_line(r#"{"type":"message","id":"t","message":{"role":"toolResult","content":[]}}"#));
        assert!(!in_line(&format!(r#"{{"type":"compaction","id":"c","usage":{u}}}"#)));
        assert!(!in_line(&format!(r#"{{"type":"usage","id":"u","provider":"p","usage":{u}}}"#)));
        assert!(!in_line(r#"{"type":"compaction","id":"c","summary":"s"}"#));
        // A usage no row gives, a row that is not exact, or a usage beside the row's.
        assert!(in_line(&format!(r#"{{"type":"message","id":"t","message":{{"role":"toolResult","usage":{u}}}}}"#)));
        assert!(in_line(r#"{"type":"message","id":"t","message":{"role":"toolResult","usage":null}}"#));
        assert!(in_line(&assistant("null", "")));
        assert!(in_line(&assistant(r#"{"input":1}"#, "")));
        assert!(in_line(&assistant(u, &format!(r#","usage":{u}"#))));
        assert!(in_line(&format!(
            r#"{{"type":"message","id":"u","usage":{u},"message":{{"role":"user","content":"q"}}}}"#
        )));
        assert!(in_line(&format!(r#"{{"type":"message","id":"u","message":{{"role":"user","usage":{u}}}}}"#)));
        assert!(in_line(&format!(r#"{{"type":"label","id":"l","usage":{u}}}"#)));
        // A provider the row cannot hold whole (a lone surrogate), a repeated key (the last wins).
        assert!(in_line(&assistant(u, "").replace(r#""provider":"p""#, r#""provider":"\ud800""#)));
        assert!(in_line(&format!(
            r#"{{"type":"message","id":"a","message":{{"role":"assistant","usage":{u},"usage":7}}}}"#
        )));
        // A message entry without a role string: its message is read whole anyway.
        assert!(!in_line(&format!(r#"{{"type":"message","id":"x","message":{{"role":1,"usage":{u}}}}}"#)));
    }
}
