//! Entry and session ids as pi makes them.

use uuid::Uuid;

/// A fresh entry id: the first 8 hex characters of a random UUID, retried on collision, a full
/// UUID after 100 collisions (as pi's `generateId`).
pub fn new_entry_id(mut taken: impl FnMut(&str) -> bool) -> String {
    for _ in 0..100 {
        let id = Uuid::new_v4().to_string()[..8].to_string();
        if !taken(&id) {
            return id;
        }
    }
    Uuid::new_v4().to_string()
}

/// A fresh session id (UUIDv7, as pi's `uuidv7()`).
pub fn new_session_id() -> String {
    Uuid::now_v7().to_string()
}

/// pi's rule for caller-supplied session ids: `^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$`.
pub fn is_valid_session_id(id: &str) -> bool {
    let b = id.as_bytes();
    let edge = |c: &u8| c.is_ascii_alphanumeric();
    let inner = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-');
    !b.is_empty() && edge(&b[0]) && edge(&b[b.len() - 1]) && b.iter().all(inner)
}

/// pi's error text for an invalid session id.
pub const INVALID_SESSION_ID: &str = "Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', and start and end with an alphanumeric character";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_id_rule() {
        for ok in ["a", "a1", "my.session-1_x", "01a2394b-bd4c-75a3-a875-c365b00d2249"] {
            assert!(is_valid_session_id(ok), "{ok}");
        }
        for bad in ["", "-a", "a-", ".a", "a b", "../../etc/passwd", "a/b", "é"] {
            assert!(!is_valid_session_id(bad), "{bad}");
        }
        let id = new_entry_id(|_| false);
        assert_eq!(id.len(), 8);
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(new_entry_id(|_| true).len(), 36);
    }
}
