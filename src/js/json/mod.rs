//! JSON with JavaScript's semantics: `JSON.parse` grammar, object key order, doubles and
//! lone surrogates, and `JSON.stringify` output. pi writes every line with `JSON.stringify`, so
//! anything sessiondb writes again must come out the way Node would write it.

use std::borrow::Cow;
use std::fmt;

mod parser;
use parser::Parser;

/// Deepest nesting the tree-building parser accepts; deeper lines count as malformed.
/// Validation without building a tree ([`scan_object`]) has no depth limit.
pub const MAX_DEPTH: usize = 512;

/// A JavaScript string: UTF-16 code units kept as WTF-8 bytes, so lone surrogates survive.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct JsString(Vec<u8>);

impl JsString {
    /// The string as text; lone surrogates become U+FFFD.
    pub fn to_str(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.0)
    }
    /// The string as `&str` when it holds no lone surrogate.
    pub fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.0).ok()
    }
    /// The WTF-8 bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl From<&str> for JsString {
    fn from(s: &str) -> Self {
        JsString(s.as_bytes().to_vec())
    }
}

impl From<String> for JsString {
    fn from(s: String) -> Self {
        JsString(s.into_bytes())
    }
}

impl fmt::Debug for JsString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.to_str())
    }
}

/// A parsed JSON value with JavaScript semantics.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(f64),
    String(JsString),
    Array(Vec<Value>),
    Object(Object),
    /// JSON text written verbatim (a stored line too deeply nested to be parsed as a tree).
    Raw(String),
}

impl Value {
    /// The value as a string, if it is one without lone surrogates.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => s.as_str(),
            _ => None,
        }
    }
    /// The object, if the value is one.
    pub fn as_object(&self) -> Option<&Object> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }
    /// Mutable object access.
    pub fn as_object_mut(&mut self) -> Option<&mut Object> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }
    /// JavaScript truthiness.
    pub fn is_truthy(&self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Number(n) => *n != 0.0 && !n.is_nan(),
            Value::String(s) => !s.0.is_empty(),
            Value::Array(_) | Value::Object(_) | Value::Raw(_) => true,
        }
    }
    /// `JSON.stringify(value)`.
    pub fn to_json(&self) -> String {
        let mut out = Vec::new();
        write_value(&mut out, self);
        // Only lone surrogates could make this invalid, and write_value escapes them.
        String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }
}

/// A JavaScript object: integer-like keys first in ascending order, then the other keys in
/// insertion order; a repeated key keeps its first position and takes the last value.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Object {
    entries: Vec<(JsString, Value)>,
}

impl Object {
    /// An empty object.
    pub fn new() -> Self {
        Object::default()
    }
    /// `JSON.stringify(object)`, without wrapping (and so copying) it in a [`Value`].
    pub fn to_json(&self) -> String {
        let mut out = Vec::new();
        write_object(&mut out, self);
        String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }
    /// Value of `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries.iter().find(|(k, _)| k.0 == key.as_bytes()).map(|(_, v)| v)
    }
    /// Mutable value of `key`.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.entries.iter_mut().find(|(k, _)| k.0 == key.as_bytes()).map(|(_, v)| v)
    }
    /// Sets `key` as a JavaScript assignment does: in place when present, else where JavaScript
    /// puts a new key.
    pub fn set(&mut self, key: impl Into<JsString>, value: Value) {
        let key = key.into();
        if let Some(slot) = self.entries.iter_mut().find(|(k, _)| *k == key) {
            slot.1 = value;
            return;
        }
        self.insert_new(key, value);
    }
    /// `delete obj[key]`.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let pos = self.entries.iter().position(|(k, _)| k.0 == key.as_bytes())?;
        Some(self.entries.remove(pos).1)
    }
    /// Keys and values in JavaScript's order.
    pub fn iter(&self) -> impl Iterator<Item = (&JsString, &Value)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }
    /// Number of keys.
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    /// True when the object has no keys.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn insert_new(&mut self, key: JsString, value: Value) {
        match array_index(&key.0) {
            Some(idx) => {
                // Integer keys sit before all string keys, in ascending order.
                let pos = self
                    .entries
                    .iter()
                    .position(|(k, _)| array_index(&k.0).is_none_or(|other| other > idx))
                    .unwrap_or(self.entries.len());
                self.entries.insert(pos, (key, value));
            }
            None => self.entries.push((key, value)),
        }
    }
}

/// The numeric value of a key that JavaScript treats as an array index (canonical decimal
/// below 2^32 - 1).
pub(crate) fn array_index(key: &[u8]) -> Option<u32> {
    if key.is_empty() || key.len() > 10 || (key.len() > 1 && key[0] == b'0') {
        return None;
    }
    let mut n: u64 = 0;
    for &b in key {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n * 10 + u64::from(b - b'0');
    }
    if n < u64::from(u32::MAX) {
        Some(n as u32)
    } else {
        None
    }
}

/// Why a line is not valid JSON for `JSON.parse`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// Byte offset in the input.
    pub offset: usize,
    /// What was wrong.
    pub reason: &'static str,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.reason, self.offset)
    }
}

impl std::error::Error for SyntaxError {}

/// `JSON.parse(text)`, or the text kept verbatim when it is valid but nested deeper than
/// [`MAX_DEPTH`].
pub fn parse_or_raw(text: &str) -> Result<Value, SyntaxError> {
    match parse(text.as_bytes()) {
        Ok(v) => Ok(v),
        Err(e) if e.reason == DEPTH_REASON => {
            scan_object(text.as_bytes())?;
            Ok(Value::Raw(text.to_string()))
        }
        Err(e) => Err(e),
    }
}

const DEPTH_REASON: &str = "nesting too deep";

/// `JSON.parse(text)` into a [`Value`].
pub fn parse(text: &[u8]) -> Result<Value, SyntaxError> {
    let mut p = Parser { s: text, i: 0 };
    p.ws();
    let v = p.value(0)?;
    p.ws();
    if p.i != text.len() {
        return Err(p.err("unexpected text after JSON value"));
    }
    Ok(v)
}

/// A top-level JSON object whose member values are left unparsed (validated only).
#[derive(Debug, Clone, Default)]
pub struct RawObject<'a> {
    members: Vec<(JsString, &'a [u8])>,
}

impl<'a> RawObject<'a> {
    /// Raw text of the member `key` (the last one, as `JSON.parse` keeps the last value).
    pub fn raw(&self, key: &str) -> Option<&'a [u8]> {
        self.members.iter().rev().find(|(k, _)| k.0 == key.as_bytes()).map(|(_, v)| *v)
    }
    /// Parsed value of `key`.
    pub fn get(&self, key: &str) -> Option<Value> {
        self.raw(key).and_then(|r| parse(r).ok())
    }
    /// The member `key` if it is a string (without lone surrogates).
    pub fn get_str(&self, key: &str) -> Option<String> {
        let raw = self.raw(key)?;
        if raw.first() != Some(&b'"') {
            return None;
        }
        match parse(raw) {
            Ok(Value::String(s)) => s.as_str().map(str::to_owned),
            _ => None,
        }
    }
    /// True if the object has `key`.
    pub fn has(&self, key: &str) -> bool {
        self.raw(key).is_some()
    }
    /// Keys and raw values in text order (repeats included).
    pub fn members(&self) -> &[(JsString, &'a [u8])] {
        &self.members
    }
}

/// Validates `text` as `JSON.parse` would and, when it is an object, returns its members
/// unparsed. `Ok(None)` means valid JSON that is not an object.
pub fn scan_object(text: &[u8]) -> Result<Option<RawObject<'_>>, SyntaxError> {
    let mut p = Parser { s: text, i: 0 };
    p.ws();
    if p.peek() != Some(b'{') {
        p.skip_value()?;
        p.ws();
        if p.i != text.len() {
            return Err(p.err("unexpected text after JSON value"));
        }
        return Ok(None);
    }
    p.i += 1;
    let mut obj = RawObject::default();
    p.ws();
    if p.peek() == Some(b'}') {
        p.i += 1;
    } else {
        loop {
            p.ws();
            if p.peek() != Some(b'"') {
                return Err(p.err("expected a string key"));
            }
            let key = p.string()?;
            p.ws();
            p.expect(b':')?;
            p.ws();
            let start = p.i;
            p.skip_value()?;
            obj.members.push((key, &text[start..p.i]));
            p.ws();
            match p.next() {
                Some(b',') => continue,
                Some(b'}') => break,
                _ => return Err(p.err("expected ',' or '}'")),
            }
        }
    }
    p.ws();
    if p.i != text.len() {
        return Err(p.err("unexpected text after JSON value"));
    }
    Ok(Some(obj))
}

/// Validates `text` as `JSON.parse` would and, when it is an array, returns its elements
/// unparsed (a reader looking at a few fields of each element parses no more than those).
/// `Ok(None)` means valid JSON that is not an array.
pub fn scan_array(text: &[u8]) -> Result<Option<Vec<&[u8]>>, SyntaxError> {
    let mut p = Parser { s: text, i: 0 };
    p.ws();
    if p.peek() != Some(b'[') {
        p.skip_value()?;
        p.ws();
        if p.i != text.len() {
            return Err(p.err("unexpected text after JSON value"));
        }
        return Ok(None);
    }
    p.i += 1;
    let mut items = Vec::new();
    p.ws();
    if p.peek() == Some(b']') {
        p.i += 1;
    } else {
        loop {
            p.ws();
            let start = p.i;
            p.skip_value()?;
            items.push(&text[start..p.i]);
            p.ws();
            match p.next() {
                Some(b',') => continue,
                Some(b']') => break,
                _ => return Err(p.err("expected ',' or ']'")),
            }
        }
    }
    p.ws();
    if p.i != text.len() {
        return Err(p.err("unexpected text after JSON value"));
    }
    Ok(Some(items))
}

/// Writes `value` as `JSON.stringify` does.
pub fn write_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => write_number(out, *n),
        Value::String(s) => write_string(out, &s.0),
        Value::Raw(text) => out.extend_from_slice(text.as_bytes()),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, item);
            }
            out.push(b']');
        }
        Value::Object(obj) => write_object(out, obj),
    }
}

/// Writes `obj` as `JSON.stringify` does.
fn write_object(out: &mut Vec<u8>, obj: &Object) {
    out.push(b'{');
    for (i, (k, v)) in obj.entries.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_string(out, &k.0);
        out.push(b':');
        write_value(out, v);
    }
    out.push(b'}');
}

/// A number as JavaScript prints it (`Number.prototype.toString`); non-finite → `null`.
pub fn write_number(out: &mut Vec<u8>, n: f64) {
    if !n.is_finite() {
        out.extend_from_slice(b"null");
    } else if n == 0.0 {
        out.push(b'0'); // -0 too
    } else {
        let mut buf = ryu_js::Buffer::new();
        out.extend_from_slice(buf.format_finite(n).as_bytes());
    }
}

/// A string literal as `JSON.stringify` writes it, from WTF-8 bytes.
pub fn write_string(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    let mut i = 0;
    let mut start = 0;
    while let Some(n) = escape_special(&s[i..]) {
        i += n;
        let b = s[i];
        let esc: Option<&[u8]> = match b {
            b'"' => Some(b"\\\""),
            b'\\' => Some(b"\\\\"),
            0x08 => Some(b"\\b"),
            0x0c => Some(b"\\f"),
            b'\n' => Some(b"\\n"),
            b'\r' => Some(b"\\r"),
            b'\t' => Some(b"\\t"),
            _ => None,
        };
        if let Some(e) = esc {
            out.extend_from_slice(&s[start..i]);
            out.extend_from_slice(e);
            i += 1;
            start = i;
        } else if b < 0x20 {
            out.extend_from_slice(&s[start..i]);
            out.extend_from_slice(format!("\\u{:04x}", b).as_bytes());
            i += 1;
            start = i;
        } else if b == 0xED && i + 2 < s.len() && s[i + 1] >= 0xA0 {
            // A surrogate encoded on its own (WTF-8): JSON.stringify escapes lone surrogates.
            let cp = (u32::from(b & 0x0F) << 12) | (u32::from(s[i + 1] & 0x3F) << 6) | u32::from(s[i + 2] & 0x3F);
            out.extend_from_slice(&s[start..i]);
            out.extend_from_slice(format!("\\u{:04x}", cp).as_bytes());
            i += 3;
            start = i;
        } else {
            i += 1;
        }
    }
    out.extend_from_slice(&s[start..]);
    out.push(b'"');
}

/// `JSON.stringify(string)` for ordinary text.
pub fn quote(s: &str) -> String {
    let mut out = Vec::with_capacity(s.len() + 2);
    write_string(&mut out, s.as_bytes());
    String::from_utf8(out).unwrap_or_default()
}

/// JavaScript's `String.prototype.trim` whitespace (JSON whitespace is narrower).
pub fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}' | '\u{2028}' | '\u{2029}' | '\u{202F}' | '\u{205F}' | '\u{3000}' | '\u{FEFF}'
    )
}

/// `s.trim()` as JavaScript does it.
pub fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_whitespace)
}

/// Position of the first byte that ends a run of plain string bytes: a quote, a backslash or
/// a control character. Eight bytes at a time: string scanning is most of an import's parsing.
pub(crate) fn string_special(s: &[u8]) -> Option<usize> {
    first_special::<false>(s)
}

/// [`string_special`], also stopping at 0xED (the lead byte of a surrogate encoded on its own),
/// for writing strings as `JSON.stringify` does.
fn escape_special(s: &[u8]) -> Option<usize> {
    first_special::<true>(s)
}

fn first_special<const ED: bool>(s: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Bytes of `v` that are zero (exact for the lowest one, which is all that is used).
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let special = |b: u8| b == b'"' || b == b'\\' || b < 0x20 || (ED && b == 0xED);
    let mut chunks = s.chunks_exact(8);
    let mut at = 0;
    for chunk in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        let w = u64::from_le_bytes(w);
        let mut found = zero(w ^ (ONES * u64::from(b'"')))
            | zero(w ^ (ONES * u64::from(b'\\')))
            | (w.wrapping_sub(ONES * 0x20) & !w & HIGH);
        if ED {
            found |= zero(w ^ (ONES * 0xED));
        }
        if found != 0 {
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    chunks.remainder().iter().position(|&b| special(b)).map(|n| at + n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_special_finds_the_first_quote_backslash_or_control_byte() {
        let naive = |s: &[u8]| s.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20);
        let naive_ed = |s: &[u8]| s.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20 || b == 0xED);
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for len in 0..40 {
            for _ in 0..200 {
                let bytes: Vec<u8> = (0..len)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        // Mostly plain bytes (ASCII and UTF-8 continuation), some specials.
                        match state % 16 {
                            0 => b'"',
                            1 => b'\\',
                            2 => (state >> 8) as u8 % 0x20,
                            3 => 0x80 | (state >> 8) as u8,
                            4 => 0xED,
                            _ => 0x20 + (state >> 8) as u8 % 0x5f,
                        }
                    })
                    .collect();
                assert_eq!(string_special(&bytes), naive(&bytes), "{bytes:?}");
                assert_eq!(escape_special(&bytes), naive_ed(&bytes), "{bytes:?}");
            }
        }
        for b in 0..=255u8 {
            for at in 0..17 {
                let mut v = vec![b'a'; 17];
                v[at] = b;
                assert_eq!(string_special(&v), naive(&v), "byte {b} at {at}");
                assert_eq!(escape_special(&v), naive_ed(&v), "byte {b} at {at}");
            }
        }
    }

    fn rt(s: &str) -> String {
        parse(s.as_bytes()).unwrap().to_json()
    }

    #[test]
    fn numbers_format_like_javascript() {
        assert_eq!(rt("1e21"), "1e+21");
        assert_eq!(rt("1E21"), "1e+21");
        assert_eq!(rt("0.1"), "0.1");
        assert_eq!(rt("1.0"), "1");
        assert_eq!(rt("-0"), "0");
        assert_eq!(rt("1e-7"), "1e-7");
        assert_eq!(rt("0.30000000000000004"), "0.30000000000000004");
        assert_eq!(rt("1e400"), "null");
        assert_eq!(rt("12345678901234567890"), "12345678901234567000");
        assert_eq!(rt("123456789012345678901"), "123456789012345680000");
    }

    #[test]
    fn keys_follow_javascript_order() {
        assert_eq!(rt(r#"{"b":1,"2":2,"a":3,"1":4,"01":5}"#), r#"{"1":4,"2":2,"b":1,"a":3,"01":5}"#);
        assert_eq!(rt(r#"{"a":1,"b":2,"a":3}"#), r#"{"a":3,"b":2}"#);
        assert_eq!(rt(r#"{"4294967295":1,"4294967294":2}"#), r#"{"4294967294":2,"4294967295":1}"#);
    }

    #[test]
    fn strings_escape_like_javascript() {
        assert_eq!(rt(r#""\u00e9\/\u2028\u0001\u001f\u007f""#), "\"é/\u{2028}\\u0001\\u001f\u{7f}\"");
        assert_eq!(rt(r#""\ud83d\ude00""#), "\"😀\"");
        assert_eq!(rt(r#""\ud83d""#), r#""\ud83d""#);
        assert_eq!(rt(r#""\ude00x\ud800\ud800""#), r#""\ude00x\ud800\ud800""#);
        assert_eq!(rt(r#""\b\f\n\r\t\"\\""#), r#""\b\f\n\r\t\"\\""#);
    }

    #[test]
    fn grammar_is_strict() {
        for bad in [
            "",
            "{",
            "01",
            "1.",
            ".5",
            "+1",
            "[1,]",
            "{\"a\":1,}",
            "'a'",
            "\u{feff}{}",
            "nul",
            "\"\t\"",
            "{a:1}",
            "1 2",
            "\"\\x\"",
        ] {
            assert!(parse(bad.as_bytes()).is_err(), "{bad:?} should fail");
            assert!(scan_object(bad.as_bytes()).is_err(), "{bad:?} should fail scan");
        }
        for good in [" {} ", "\r\n[1,2]\t", "-0.5e-3", "\"\"", "null", "{\"a\":[{},[]]}"] {
            assert!(parse(good.as_bytes()).is_ok(), "{good:?}");
            assert!(scan_object(good.as_bytes()).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn scan_handles_deep_nesting_without_recursion() {
        let deep = format!("{{\"a\":{}1{}}}", "[".repeat(200_000), "]".repeat(200_000));
        let obj = scan_object(deep.as_bytes()).unwrap().unwrap();
        assert!(obj.has("a"));
        assert!(parse(deep.as_bytes()).is_err());
        let limit = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        let v = parse(limit.as_bytes()).unwrap();
        assert_eq!(v.to_json(), limit);
        let unbalanced = format!("{{\"a\":{}1{}}}", "[".repeat(10), "]".repeat(9));
        assert!(scan_object(unbalanced.as_bytes()).is_err());
    }

    #[test]
    fn raw_object_members() {
        let text = br#"{"type":"message","id":"ab","parentId":null,"message":{"role":"user"},"id":"cd"}"#;
        let obj = scan_object(text).unwrap().unwrap();
        assert_eq!(obj.get_str("id").as_deref(), Some("cd"));
        assert_eq!(obj.raw("parentId"), Some(&b"null"[..]));
        assert_eq!(obj.raw("message"), Some(&br#"{"role":"user"}"#[..]));
        assert!(scan_object(b"[1]").unwrap().is_none());
    }

    #[test]
    fn raw_array_items() {
        let text = br#" [ 1 , {"a":[2,3]} ,"x\"y", [] ,null] "#;
        let items = scan_array(text).unwrap().unwrap();
        assert_eq!(items, [&b"1"[..], br#"{"a":[2,3]}"#, br#""x\"y""#, b"[]", b"null"]);
        assert_eq!(scan_array(b"[]").unwrap().unwrap().len(), 0);
        assert!(scan_array(br#"{"a":1}"#).unwrap().is_none());
        for bad in ["[1,]", "[1 2]", "[", "[1]]", "[,1]"] {
            assert!(scan_array(bad.as_bytes()).is_err(), "{bad}");
        }
    }

    #[test]
    fn set_places_new_keys_like_javascript() {
        let mut v = parse(br#"{"type":"session","id":"x"}"#).unwrap();
        let o = v.as_object_mut().unwrap();
        o.set("version", Value::Number(2.0));
        o.set("type", Value::String("session".into()));
        assert_eq!(v.to_json(), r#"{"type":"session","id":"x","version":2}"#);
    }
}
