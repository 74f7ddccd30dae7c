//! Responses and the headers every one of them carries: a Content-Security-Policy that lets
//! the page load only its own stylesheet and script (no inline code, no other origin), no
//! framing, no MIME sniffing, no referrer; and reading a request's query string.

use std::collections::HashMap;
use std::io::Read;

/// The policy on every response: only this server's own files; images also as `data:` URLs
/// (a session's screenshots, raster types only, see `pages::transcript`); no inline script or
/// style, no plugins, no base or form target elsewhere, no framing.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
    connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// A response body: bytes in memory or a stream (an export), with its length when known.
pub enum Body {
    Bytes(Vec<u8>),
    Stream(Box<dyn Read + Send>, Option<usize>),
}

/// What a handler answers.
pub struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Body,
    pub headers: Vec<(&'static str, String)>,
}

impl Response {
    pub fn html(status: u16, markup: maud::Markup) -> Response {
        Response {
            status,
            content_type: "text/html; charset=utf-8",
            body: Body::Bytes(markup.into_string().into_bytes()),
            headers: Vec::new(),
        }
    }

    pub fn text(status: u16, text: impl Into<String>) -> Response {
        Response {
            status,
            content_type: "text/plain; charset=utf-8",
            body: Body::Bytes(text.into().into_bytes()),
            headers: Vec::new(),
        }
    }

    pub fn redirect(to: String) -> Response {
        let mut r = Response::text(303, "");
        r.headers.push(("Location", to));
        r
    }

    /// A permanent redirect (an old address of a page).
    pub fn moved(to: String) -> Response {
        let mut r = Response::text(308, "");
        r.headers.push(("Location", to));
        r
    }

    pub fn with(mut self, name: &'static str, value: impl Into<String>) -> Response {
        self.headers.push((name, value.into()));
        self
    }

    /// The tiny_http response with the security headers added.
    pub fn into_tiny(self, head_only: bool) -> tiny_http::Response<Box<dyn Read + Send>> {
        let (reader, len): (Box<dyn Read + Send>, Option<usize>) = match self.body {
            Body::Bytes(b) => {
                let n = b.len();
                (Box::new(std::io::Cursor::new(if head_only { Vec::new() } else { b })), Some(n))
            }
            Body::Stream(r, n) => (if head_only { Box::new(std::io::empty()) } else { r }, n),
        };
        let mut headers = vec![
            header("Content-Type", self.content_type),
            header("Content-Security-Policy", CSP),
            header("X-Content-Type-Options", "nosniff"),
            header("X-Frame-Options", "DENY"),
            header("Referrer-Policy", "no-referrer"),
            header("Cross-Origin-Opener-Policy", "same-origin"),
            header("Cross-Origin-Resource-Policy", "same-origin"),
        ];
        if !self.headers.iter().any(|(n, _)| *n == "Cache-Control") {
            headers.push(header("Cache-Control", "no-store"));
        }
        headers.extend(self.headers.iter().map(|(n, v)| header(n, v)));
        tiny_http::Response::new(tiny_http::StatusCode(self.status), headers, reader, len, None)
    }
}

fn header(name: &str, value: &str) -> tiny_http::Header {
    // Values are ours (never a session's text): only a filename could hold odd bytes, and
    // those are replaced before they get here.
    tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes())
        .unwrap_or_else(|()| tiny_http::Header::from_bytes(name.as_bytes(), &b"invalid"[..]).expect("static header"))
}

/// A request's path and query parameters (the first value of each name).
pub struct Query {
    /// The path, percent-decoded.
    pub path: String,
    /// The path as sent (its segments are decoded one by one where one may hold a `/`).
    pub raw_path: String,
    raw_query: Option<String>,
    params: HashMap<String, String>,
}

impl Query {
    pub fn parse(url: &str) -> Query {
        let (path, query) = url.split_once('?').unwrap_or((url, ""));
        let raw_path = path.to_string();
        let raw_query = url.split_once('?').map(|(_, q)| q.to_string()).filter(|q| !q.is_empty());
        let path = percent_decode(path);
        let mut params = HashMap::new();
        for (k, v) in form_urlencoded::parse(query.as_bytes()) {
            params.entry(k.into_owned()).or_insert_with(|| v.into_owned());
        }
        Query { path, raw_path, raw_query, params }
    }

    /// The query string as sent, when there is one.
    pub fn raw_query(&self) -> Option<&str> {
        self.raw_query.as_deref()
    }

    /// A parameter, `None` when absent or blank.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.params.get(name).map(|v| v.trim()).filter(|v| !v.is_empty())
    }

    /// The path and query without `name` (the token after it was moved to a cookie).
    pub fn without(&self, name: &str) -> String {
        let rest: Vec<(&String, &String)> = self.params.iter().filter(|(k, _)| *k != name).collect();
        if rest.is_empty() {
            return self.path.clone();
        }
        format!("{}?{}", self.path, form_urlencoded::Serializer::new(String::new()).extend_pairs(rest).finish())
    }
}

pub fn percent_decode(path: &str) -> String {
    form_urlencoded::parse(format!("p={}", path.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

/// `base?k=v&...` with the pairs whose value is present, encoded.
pub fn link(base: &str, pairs: &[(&str, Option<&str>)]) -> String {
    let mut s = form_urlencoded::Serializer::new(String::new());
    let mut any = false;
    for (k, v) in pairs {
        if let Some(v) = v {
            s.append_pair(k, v);
            any = true;
        }
    }
    if any {
        format!("{base}?{}", s.finish())
    } else {
        base.to_string()
    }
}
