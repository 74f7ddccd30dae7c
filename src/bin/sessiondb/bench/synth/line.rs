//! Writing JSON objects with keys in a fixed order, as `JSON.stringify` writes them.

use sessiondb::json;

/// An object under construction: keys appear in the order they are added.
#[derive(Debug, Clone, Default)]
pub struct Obj {
    buf: String,
}

/// A JavaScript number as JSON (`1e+21`, `0.30000000000000004`, ...).
pub fn num(n: f64) -> String {
    let mut out = Vec::with_capacity(24);
    json::write_number(&mut out, n);
    String::from_utf8_lossy(&out).into_owned()
}

/// A JSON array of already-serialized values.
pub fn array<I: IntoIterator<Item = String>>(items: I) -> String {
    let mut out = String::from("[");
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&item);
    }
    out.push(']');
    out
}

/// A JSON array of strings.
pub fn str_array(items: &[String]) -> String {
    array(items.iter().map(|s| json::quote(s)))
}

impl Obj {
    /// An empty object.
    pub fn new() -> Self {
        Obj { buf: String::with_capacity(256) }
    }

    fn key(&mut self, k: &str) {
        self.buf.push(if self.buf.is_empty() { '{' } else { ',' });
        self.buf.push_str(&json::quote(k));
        self.buf.push(':');
    }

    /// Adds `k` with already-serialized JSON.
    pub fn raw(mut self, k: &str, value: &str) -> Self {
        self.key(k);
        self.buf.push_str(value);
        self
    }

    /// Adds a string.
    pub fn str(self, k: &str, v: &str) -> Self {
        let q = json::quote(v);
        self.raw(k, &q)
    }

    /// Adds a string, or `null` for `None`.
    pub fn str_or_null(self, k: &str, v: Option<&str>) -> Self {
        match v {
            Some(s) => self.str(k, s),
            None => self.raw(k, "null"),
        }
    }

    /// Adds a number.
    pub fn num(self, k: &str, v: f64) -> Self {
        let n = num(v);
        self.raw(k, &n)
    }

    /// Adds an integer.
    pub fn int(self, k: &str, v: i64) -> Self {
        self.raw(k, &v.to_string())
    }

    /// Adds a boolean.
    pub fn bool(self, k: &str, v: bool) -> Self {
        self.raw(k, if v { "true" } else { "false" })
    }

    /// The finished object.
    pub fn end(mut self) -> String {
        if self.buf.is_empty() {
            self.buf.push('{');
        }
        self.buf.push('}');
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_in_order() {
        let o = Obj::new().str("type", "a\"b").str_or_null("parentId", None).num("x", 0.1 + 0.2).int("n", 3).end();
        assert_eq!(o, r#"{"type":"a\"b","parentId":null,"x":0.30000000000000004,"n":3}"#);
        assert_eq!(Obj::new().end(), "{}");
        assert_eq!(str_array(&["a".into(), "b".into()]), r#"["a","b"]"#);
    }
}
