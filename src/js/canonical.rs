//! Whether a line is already in `JSON.stringify` form: exactly what pi would write for the
//! value it parses to. A line that is can be kept as it is where pi re-serializes its entry
//! (createBranchedSession), without parsing and writing it again.
//!
//! The check is conservative: `true` guarantees `json::parse(text).to_json() == text`; `false`
//! only means "not shown", and the caller takes the slow path (parse and write).

use crate::js::json;

/// Deeper lines are left to the slow path (pi's lines nest a few levels).
const MAX_NESTING: usize = 64;

/// Objects with more keys are left to the slow path (repeated keys are looked for pairwise).
const MAX_KEYS: usize = 64;

/// Whether `text` is valid JSON written exactly as `JSON.stringify` writes its value.
pub fn is_stringify_form(text: &str) -> bool {
    let mut c = Checker { s: text.as_bytes(), i: 0, keys: Vec::new() };
    c.value(0) && c.i == c.s.len()
}

struct Checker<'a> {
    s: &'a [u8],
    i: usize,
    /// Keys of the objects being read, innermost last (to find repeated keys).
    keys: Vec<&'a [u8]>,
}

impl<'a> Checker<'a> {
    fn eat(&mut self, b: u8) -> bool {
        let hit = self.s.get(self.i) == Some(&b);
        self.i += usize::from(hit);
        hit
    }

    fn value(&mut self, depth: usize) -> bool {
        match self.s.get(self.i) {
            Some(b'"') => self.string().is_some(),
            Some(b'{') => depth < MAX_NESTING && self.object(depth),
            Some(b'[') => depth < MAX_NESTING && self.array(depth),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.word(b"true"),
            Some(b'f') => self.word(b"false"),
            Some(b'n') => self.word(b"null"),
            _ => false,
        }
    }

    fn word(&mut self, w: &[u8]) -> bool {
        let hit = self.s[self.i..].starts_with(w);
        self.i += if hit { w.len() } else { 0 };
        hit
    }

    fn array(&mut self, depth: usize) -> bool {
        self.i += 1;
        if self.eat(b']') {
            return true;
        }
        loop {
            if !self.value(depth + 1) {
                return false;
            }
            if !self.eat(b',') {
                return self.eat(b']');
            }
        }
    }

    fn object(&mut self, depth: usize) -> bool {
        self.i += 1;
        if self.eat(b'}') {
            return true;
        }
        let base = self.keys.len();
        let ok = loop {
            if self.s.get(self.i) != Some(&b'"') {
                break false;
            }
            let Some(key) = self.string() else { break false };
            // JavaScript moves integer-like keys first and keeps one of repeated keys: either
            // would make the written line differ (a key in this form is its own spelling).
            let own = &self.keys[base..];
            if json::array_index(key).is_some() || own.len() >= MAX_KEYS || own.contains(&key) {
                break false;
            }
            self.keys.push(key);
            if !self.eat(b':') || !self.value(depth + 1) {
                break false;
            }
            if !self.eat(b',') {
                break self.eat(b'}');
            }
        };
        self.keys.truncate(base);
        ok
    }

    /// A string as `JSON.stringify` writes it; returns its raw content.
    fn string(&mut self) -> Option<&'a [u8]> {
        self.i += 1;
        let start = self.i;
        loop {
            self.i += json::string_special(&self.s[self.i..])?;
            match self.s[self.i] {
                b'"' => {
                    self.i += 1;
                    return Some(&self.s[start..self.i - 1]);
                }
                b'\\' => match self.s.get(self.i + 1)? {
                    b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => self.i += 2,
                    // Other control characters are written `\u00xx`, lowercase; any other
                    // `\u` escape (or `\/`) is read back as a character written plainly.
                    b'u' => {
                        let d = self.s.get(self.i + 2..self.i + 6)?;
                        let low = match d[3] {
                            c @ b'0'..=b'9' => c - b'0',
                            c @ b'a'..=b'f' => c - b'a' + 10,
                            _ => return None,
                        };
                        let unit = match (d[0], d[1], d[2]) {
                            (b'0', b'0', b'0') => low,
                            (b'0', b'0', b'1') => 16 + low,
                            _ => return None,
                        };
                        if matches!(unit, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d) {
                            return None;
                        }
                        self.i += 6;
                    }
                    _ => return None,
                },
                _ => return None, // a raw control character: not JSON
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while self.s.get(self.i).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> bool {
        let start = self.i;
        let negative = self.eat(b'-');
        let int_start = self.i;
        let int_digits = self.digits();
        if int_digits == 0 || (int_digits > 1 && self.s[int_start] == b'0') {
            return false;
        }
        let mut plain = true;
        if self.eat(b'.') {
            plain = false;
            if self.digits() == 0 {
                return false;
            }
        }
        if self.eat(b'e') || self.eat(b'E') {
            plain = false;
            let _ = self.eat(b'+') || self.eat(b'-');
            if self.digits() == 0 {
                return false;
            }
        }
        let text = &self.s[start..self.i];
        if plain && int_digits <= 15 {
            // Exact in a double and written back digit for digit; only -0 is written "0".
            return !(negative && text == b"-0");
        }
        let Some(n) = std::str::from_utf8(text).ok().and_then(|t| t.parse::<f64>().ok()) else { return false };
        let mut out = Vec::with_capacity(text.len());
        json::write_number(&mut out, n);
        out == text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trips(text: &str) -> bool {
        json::parse(text.as_bytes()).is_ok_and(|v| v.to_json() == text)
    }

    #[test]
    fn accepts_what_json_stringify_writes() {
        for t in [
            r#"{"type":"message","id":"a1","parentId":null,"n":-12.5,"e":1e+21,"s":"tab\tq\"\\\u001f","a":[1,[],{}],"t":true}"#,
            r#""é\u0000x""#,
            "0",
            "[0.1,-3,123456789012345]",
        ] {
            assert!(round_trips(t), "{t}");
            assert!(is_stringify_form(t), "{t}");
        }
    }

    #[test]
    fn rejects_what_json_stringify_would_write_differently() {
        for t in [
            r#"{"a": 1}"#,
            r#" {"a":1}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"b":1,"1":2}"#,
            r#"{"1":2}"#,
            r#""\/""#,
            r#""\u0041""#,
            r#""\u001F""#,
            r#""\u000a""#,
            "-0",
            "1.0",
            "1E5",
            "1e400",
            "0.10",
            "12345678901234567890",
            "[1,]",
            r#"{"a":1"#,
            "",
        ] {
            assert!(!is_stringify_form(t), "{t}");
        }
    }

    #[test]
    fn true_only_for_lines_that_round_trip() {
        // Random lines over a small alphabet of JSON pieces: every accepted one round-trips.
        let pieces = [
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            "\"a\"",
            "\"b\"",
            "\"1\"",
            "\"\\u0001\"",
            "\"\\n\"",
            "0",
            "-0",
            "1.5",
            "1e3",
            "10",
            "true",
            "null",
            " ",
            "\"\\u00e9\"",
        ];
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut accepted = 0;
        for _ in 0..200_000 {
            let mut t = String::new();
            let len = (state % 9) as usize + 1;
            for _ in 0..len {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                t.push_str(pieces[(state % pieces.len() as u64) as usize]);
            }
            if is_stringify_form(&t) {
                accepted += 1;
                assert!(round_trips(&t), "{t}");
            }
        }
        assert!(accepted > 1000, "{accepted}");
    }
}
