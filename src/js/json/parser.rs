//! JSON.parse's grammar: the recursive-descent parser behind [`super::parse`].

use super::*;

pub(super) struct Parser<'a> {
    pub(super) s: &'a [u8],
    pub(super) i: usize,
}

impl<'a> Parser<'a> {
    pub(super) fn err(&self, reason: &'static str) -> SyntaxError {
        SyntaxError { offset: self.i, reason }
    }
    pub(super) fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    pub(super) fn next(&mut self) -> Option<u8> {
        let b = self.peek();
        if b.is_some() {
            self.i += 1;
        }
        b
    }
    pub(super) fn expect(&mut self, b: u8) -> Result<(), SyntaxError> {
        if self.peek() == Some(b) {
            self.i += 1;
            Ok(())
        } else {
            Err(self.err("unexpected character"))
        }
    }
    /// JSON whitespace only: space, tab, LF, CR (not a BOM, not U+00A0).
    pub(super) fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }
    pub(super) fn literal(&mut self, word: &'static [u8]) -> Result<(), SyntaxError> {
        if self.s[self.i..].starts_with(word) {
            self.i += word.len();
            Ok(())
        } else {
            Err(self.err("invalid literal"))
        }
    }

    pub(super) fn value(&mut self, depth: usize) -> Result<Value, SyntaxError> {
        if depth > MAX_DEPTH {
            return Err(self.err(DEPTH_REASON));
        }
        match self.peek() {
            None => Err(self.err("unexpected end of input")),
            Some(b'n') => self.literal(b"null").map(|_| Value::Null),
            Some(b't') => self.literal(b"true").map(|_| Value::Bool(true)),
            Some(b'f') => self.literal(b"false").map(|_| Value::Bool(false)),
            Some(b'"') => self.string().map(Value::String),
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.peek() == Some(b']') {
                    self.i += 1;
                    return Ok(Value::Array(items));
                }
                loop {
                    self.ws();
                    items.push(self.value(depth + 1)?);
                    self.ws();
                    match self.next() {
                        Some(b',') => continue,
                        Some(b']') => return Ok(Value::Array(items)),
                        _ => return Err(self.err("expected ',' or ']'")),
                    }
                }
            }
            Some(b'{') => {
                self.i += 1;
                let mut obj = Object::new();
                self.ws();
                if self.peek() == Some(b'}') {
                    self.i += 1;
                    return Ok(Value::Object(obj));
                }
                loop {
                    self.ws();
                    if self.peek() != Some(b'"') {
                        return Err(self.err("expected a string key"));
                    }
                    let key = self.string()?;
                    self.ws();
                    self.expect(b':')?;
                    self.ws();
                    let v = self.value(depth + 1)?;
                    obj.set(key, v);
                    self.ws();
                    match self.next() {
                        Some(b',') => continue,
                        Some(b'}') => return Ok(Value::Object(obj)),
                        _ => return Err(self.err("expected ',' or '}'")),
                    }
                }
            }
            Some(b'-' | b'0'..=b'9') => {
                let start = self.i;
                self.number()?;
                // The grammar was checked, so the text is a valid Rust float literal too;
                // Rust rounds correctly like JavaScript and overflows to infinity.
                let text = std::str::from_utf8(&self.s[start..self.i]).map_err(|_| self.err("invalid number"))?;
                let n: f64 = text.parse().map_err(|_| self.err("invalid number"))?;
                Ok(Value::Number(n))
            }
            Some(_) => Err(self.err("unexpected character")),
        }
    }

    /// Skips one value, validating it, without recursion (any depth is fine).
    pub(super) fn skip_value(&mut self) -> Result<(), SyntaxError> {
        // Stack of open containers: b'[' or b'{'.
        let mut stack: Vec<u8> = Vec::new();
        loop {
            // Expect a value.
            self.ws();
            match self.peek() {
                None => return Err(self.err("unexpected end of input")),
                Some(b'n') => self.literal(b"null")?,
                Some(b't') => self.literal(b"true")?,
                Some(b'f') => self.literal(b"false")?,
                Some(b'"') => self.skip_string()?,
                Some(b'-' | b'0'..=b'9') => self.number()?,
                Some(b'[') => {
                    self.i += 1;
                    self.ws();
                    if self.peek() == Some(b']') {
                        self.i += 1;
                    } else {
                        stack.push(b'[');
                        continue;
                    }
                }
                Some(b'{') => {
                    self.i += 1;
                    self.ws();
                    if self.peek() == Some(b'}') {
                        self.i += 1;
                    } else {
                        self.object_key()?;
                        stack.push(b'{');
                        continue;
                    }
                }
                Some(_) => return Err(self.err("unexpected character")),
            }
            // A value ended: close containers or move to the next member.
            loop {
                let Some(&top) = stack.last() else { return Ok(()) };
                self.ws();
                match (top, self.next()) {
                    (_, Some(b',')) => {
                        if top == b'{' {
                            self.ws();
                            self.object_key()?;
                        }
                        break;
                    }
                    (b'[', Some(b']')) | (b'{', Some(b'}')) => {
                        stack.pop();
                    }
                    _ => return Err(self.err("expected ',' or a closing bracket")),
                }
            }
        }
    }

    /// A member key and its colon.
    pub(super) fn object_key(&mut self) -> Result<(), SyntaxError> {
        if self.peek() != Some(b'"') {
            return Err(self.err("expected a string key"));
        }
        self.skip_string()?;
        self.ws();
        self.expect(b':')
    }

    pub(super) fn number(&mut self) -> Result<(), SyntaxError> {
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                while let Some(b'0'..=b'9') = self.peek() {
                    self.i += 1;
                }
            }
            _ => return Err(self.err("invalid number")),
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.err("invalid number"));
            }
            while let Some(b'0'..=b'9') = self.peek() {
                self.i += 1;
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.err("invalid number"));
            }
            while let Some(b'0'..=b'9') = self.peek() {
                self.i += 1;
            }
        }
        Ok(())
    }

    pub(super) fn skip_string(&mut self) -> Result<(), SyntaxError> {
        self.i += 1; // opening quote
        loop {
            // Fast path over ordinary bytes.
            let rest = &self.s[self.i..];
            let n = string_special(rest);
            let Some(n) = n else {
                self.i = self.s.len();
                return Err(self.err("unterminated string"));
            };
            self.i += n;
            match self.s[self.i] {
                b'"' => {
                    self.i += 1;
                    return Ok(());
                }
                b'\\' => {
                    self.i += 1;
                    match self.next() {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {}
                        Some(b'u') => {
                            self.hex4()?;
                        }
                        _ => return Err(self.err("invalid escape")),
                    }
                }
                _ => return Err(self.err("control character in string")),
            }
        }
    }

    pub(super) fn hex4(&mut self) -> Result<u16, SyntaxError> {
        let digits = self.s.get(self.i..self.i + 4).ok_or_else(|| self.err("invalid \\u escape"))?;
        let mut v: u16 = 0;
        for &d in digits {
            let x = (d as char).to_digit(16).ok_or_else(|| self.err("invalid \\u escape"))?;
            v = v * 16 + x as u16;
        }
        self.i += 4;
        Ok(v)
    }

    pub(super) fn string(&mut self) -> Result<JsString, SyntaxError> {
        self.i += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let rest = &self.s[self.i..];
            let n = string_special(rest);
            let Some(n) = n else {
                self.i = self.s.len();
                return Err(self.err("unterminated string"));
            };
            out.extend_from_slice(&rest[..n]);
            self.i += n;
            match self.s[self.i] {
                b'"' => {
                    self.i += 1;
                    return Ok(JsString(out));
                }
                b'\\' => {
                    self.i += 1;
                    let c = match self.next() {
                        Some(b'"') => b'"',
                        Some(b'\\') => b'\\',
                        Some(b'/') => b'/',
                        Some(b'b') => 0x08,
                        Some(b'f') => 0x0c,
                        Some(b'n') => b'\n',
                        Some(b'r') => b'\r',
                        Some(b't') => b'\t',
                        Some(b'u') => {
                            let unit = self.hex4()?;
                            self.push_unit(&mut out, unit)?;
                            continue;
                        }
                        _ => return Err(self.err("invalid escape")),
                    };
                    out.push(c);
                }
                _ => return Err(self.err("control character in string")),
            }
        }
    }

    /// Appends a UTF-16 unit from a `\u` escape, pairing it with a following `\uDC00`-range
    /// escape when it is a high surrogate.
    pub(super) fn push_unit(&mut self, out: &mut Vec<u8>, unit: u16) -> Result<(), SyntaxError> {
        if (0xD800..0xDC00).contains(&unit) && self.s[self.i..].starts_with(b"\\u") {
            let save = self.i;
            self.i += 2;
            let low = self.hex4()?;
            if (0xDC00..0xE000).contains(&low) {
                let cp = 0x10000 + ((u32::from(unit) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
                let ch = char::from_u32(cp).unwrap_or('\u{FFFD}');
                let mut buf = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                return Ok(());
            }
            self.i = save;
        }
        push_wtf8(out, u32::from(unit));
        Ok(())
    }
}

/// Encodes a code point (surrogates included) as generalized UTF-8.
fn push_wtf8(out: &mut Vec<u8>, cp: u32) {
    if cp < 0x80 {
        out.push(cp as u8);
    } else if cp < 0x800 {
        out.push(0xC0 | (cp >> 6) as u8);
        out.push(0x80 | (cp & 0x3F) as u8);
    } else {
        out.push(0xE0 | (cp >> 12) as u8);
        out.push(0x80 | ((cp >> 6) & 0x3F) as u8);
        out.push(0x80 | (cp & 0x3F) as u8);
    }
}
