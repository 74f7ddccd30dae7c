//! The access token: generated from the system's random source, compared in constant time,
//! carried by a cookie (set once from `?token=`) or an `Authorization: Bearer` header.

/// Name of the cookie a browser keeps the token in.
pub const COOKIE: &str = "sessiondb_token";

/// A new token: 244 random bits (two version-4 UUIDs), as hex.
pub fn generate() -> String {
    format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple())
}

/// `a == b` in a time that does not depend on where they differ.
pub fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The token a request carries in its `Cookie` or `Authorization` header.
pub fn carried<'a>(cookie: Option<&'a str>, authorization: Option<&'a str>) -> Option<&'a str> {
    if let Some(t) = authorization.and_then(|h| h.strip_prefix("Bearer ")) {
        return Some(t.trim());
    }
    cookie?.split(';').find_map(|c| c.trim().strip_prefix(COOKIE)?.strip_prefix('='))
}

/// The `Set-Cookie` value that keeps `token` in the browser: not readable by scripts, never
/// sent by another site's requests.
pub fn set_cookie(token: &str) -> String {
    format!("{COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_compared_whole_and_found_in_either_header() {
        let t = generate();
        assert_eq!(t.len(), 64);
        assert!(same(&t, &t.clone()) && !same(&t, &t[..63]) && !same("abc", "abd"));
        assert_eq!(carried(Some("a=1; sessiondb_token=xyz; b=2"), None), Some("xyz"));
        assert_eq!(carried(None, Some("Bearer xyz")), Some("xyz"));
        assert_eq!(carried(Some("other=1"), None), None);
    }
}
