//! File-name ordering as pi gets it from `String.prototype.localeCompare` (ICU, en-US):
//! punctuation before digits before letters, letters compared without case first, then
//! lowercase before uppercase. An approximation of ICU's root collation that is exact for
//! the ASCII names pi gives session files.

use std::cmp::Ordering;

/// ICU root order of ASCII punctuation and symbols.
const PUNCTUATION: &str = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";

fn primary(c: char) -> (u8, u32) {
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

#[cfg(test)]
mod tests {
    use super::*;

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
