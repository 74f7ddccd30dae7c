//! File-name ordering as pi gets it from `String.prototype.localeCompare` (ICU, en-US):
//! punctuation before digits before letters, letters compared without case first, then
//! lowercase before uppercase. An approximation of ICU's root collation that is exact for
//! the ASCII names pi gives session files.

use std::cmp::Ordering;

/// ICU root order of ASCII punctuation and symbols.
const PUNCTUATION: &str = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";

/// [`primary_slow`] of every ASCII character.
static ASCII_PRIMARY: std::sync::LazyLock<[(u8, u32); 128]> =
    std::sync::LazyLock::new(|| std::array::from_fn(|i| primary_slow(char::from(i as u8))));

fn primary(c: char) -> (u8, u32) {
    match ASCII_PRIMARY.get(c as usize) {
        Some(&p) => p,
        None => primary_slow(c),
    }
}

fn primary_slow(c: char) -> (u8, u32) {
    if c.is_whitespace() {
        (0, c as u32)
    } else if let Some(i) = PUNCTUATION.find(c) {
        (1, i as u32)
    } else if c.is_ascii_digit() {
        (2, c as u32)
    } else if c.is_alphabetic() {
        (3, c.to_lowercase().next().unwrap_or(c) as u32)
    } else {
        (1, 100 + c as u32)
    }
}

/// `a.localeCompare(b)` for file names.
pub fn locale_cmp(a: &str, b: &str) -> Ordering {
    let pa = a.chars().map(primary);
    let pb = b.chars().map(primary);
    pa.cmp(pb)
        .then_with(|| {
            // Tertiary: lowercase before uppercase.
            let ta = a.chars().map(|c| c.is_uppercase());
            let tb = b.chars().map(|c| c.is_uppercase());
            ta.cmp(tb)
        })
        .then_with(|| a.cmp(b))
}

/// A key whose order is [`locale_cmp`]'s: computed once per name, it makes sorting many
/// names a matter of byte comparisons.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SortKey(Vec<u8>, Vec<bool>, String);

/// The [`SortKey`] of `s`.
pub fn sort_key(s: &str) -> SortKey {
    let mut primary_bytes = Vec::with_capacity(s.len() * 5);
    for (class, code) in s.chars().map(primary) {
        primary_bytes.push(class);
        primary_bytes.extend_from_slice(&code.to_be_bytes());
    }
    SortKey(primary_bytes, s.chars().map(char::is_uppercase).collect(), s.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sort_keys_order_as_locale_cmp() {
        let names = [
            "a_b",
            "a-b",
            "a.b",
            "a1",
            "ab",
            "edge",
            "EDGE",
            "EDGE-x",
            "edge-y",
            "Edge-CRLF",
            "edge-empty",
            "",
            "a",
            "2026-01-01T00-00-00-000Z_0199.jsonl",
            "2026-01-01T00-00-00-000Z_019a.jsonl",
            "é",
            "e",
            "E",
            "z ",
            "z",
        ];
        for a in names {
            for b in names {
                assert_eq!(sort_key(a).cmp(&sort_key(b)), locale_cmp(a, b), "{a:?} vs {b:?}");
            }
        }
    }

    #[test]
    fn punctuation_digits_letters_case() {
        assert_eq!(locale_cmp("a_b", "a-b"), Ordering::Less);
        assert_eq!(locale_cmp("a-b", "a.b"), Ordering::Less);
        assert_eq!(locale_cmp("a.b", "a1"), Ordering::Less);
        assert_eq!(locale_cmp("a1", "ab"), Ordering::Less);
        assert_eq!(locale_cmp("edge", "EDGE"), Ordering::Less);
        assert_eq!(locale_cmp("EDGE-x", "edge-y"), Ordering::Less);
        assert_eq!(locale_cmp("Edge-CRLF", "edge-empty"), Ordering::Less);
    }
}
