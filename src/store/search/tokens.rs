//! How search splits text into word tokens, and a query term into the tokens a matching text
//! must hold.
//!
//! Text is folded character by character (lowercase, one character for one), then each
//! character is a separator, part of a word, or a token of its own (ideographs and kana, which
//! are written without spaces, and symbols such as emoji). Because the class of a character
//! depends on that character alone, a folded query term that occurs in a folded text is made
//! of: the tokens strictly inside it, which are whole tokens of the text too; and at its two
//! ends, words that may be cut: the first a suffix of a text token, the last a prefix (one
//! word alone may sit anywhere inside a token). [`term_tokens`] says which; search looks those
//! up in the index and checks every candidate against the text, so no match is missed and
//! none is false.

use crate::hash::{FxBuildHasher, FxHashMap};
use std::hash::BuildHasher;

/// The tokens written by [`index_text`]: each token's hash and where it starts in the
/// output (a set of owned tokens made a fifth of an index build allocating and freeing them).
#[derive(Default)]
pub struct TokenSet(FxHashMap<u64, usize>);

/// How a folded character takes part in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Separates tokens.
    Sep,
    /// Part of a word (runs of these are one token).
    Word,
    /// A token by itself.
    Single,
}

/// The case-folded form of a character (one character: texts and queries fold alike, and
/// the positions of matches carry over to the original text).
pub fn fold(c: char) -> char {
    if c.is_ascii() {
        c.to_ascii_lowercase()
    } else {
        c.to_lowercase().next().unwrap_or(c)
    }
}

/// A text folded character by character.
pub fn fold_str(s: &str) -> String {
    s.chars().map(fold).collect()
}

/// Scripts written without spaces between words: each character is its own token.
fn unspaced(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF          // Thai, Lao
        | 0x1000..=0x109F        // Myanmar
        | 0x1780..=0x17FF        // Khmer
        | 0x2E80..=0x2FDF        // CJK radicals
        | 0x3040..=0x30FF        // Hiragana, Katakana
        | 0x31F0..=0x31FF        // Katakana extensions
        | 0x3400..=0x4DBF        // CJK extension A
        | 0x4E00..=0x9FFF        // CJK unified ideographs
        | 0xF900..=0xFAFF        // CJK compatibility ideographs
        | 0x20000..=0x3FFFF) // CJK extensions B and later
}

/// Combining marks that stay inside the word they mark.
fn combining(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F)
}

/// The class of a folded character. Tokens hold ASCII letters and digits and non-ASCII
/// characters only, so the index's `ascii` tokenizer splits them exactly at the spaces
/// between them.
pub fn class(c: char) -> Class {
    if c.is_ascii() {
        return if c.is_ascii_alphanumeric() { Class::Word } else { Class::Sep };
    }
    if c.is_whitespace() || c.is_control() {
        Class::Sep
    } else if unspaced(c) {
        Class::Single
    } else if c.is_alphanumeric() || combining(c) {
        Class::Word
    } else {
        Class::Single
    }
}

/// Calls `f` with each token of `text` (folded) in order.
pub fn each_token(text: &str, mut f: impl FnMut(&str)) {
    let b = text.as_bytes();
    let mut word = String::new();
    let mut one = [0u8; 4];
    let mut i = 0;
    while i < b.len() {
        if b[i] < 0x80 && word.is_empty() {
            // ASCII, outside a word: a run of letters and digits followed by ASCII (or the
            // end) is a word by itself, given as it is when it has no capital (folding and
            // copying each character was a tenth of an index build).
            if !b[i].is_ascii_alphanumeric() {
                i += 1;
                continue;
            }
            let start = i;
            while i < b.len() && b[i].is_ascii_alphanumeric() {
                i += 1;
            }
            let w = &text[start..i];
            let whole = i == b.len() || b[i] < 0x80;
            if whole && !w.bytes().any(|c| c.is_ascii_uppercase()) {
                f(w);
                continue;
            }
            word.push_str(w);
            word.make_ascii_lowercase();
            if whole {
                f(&word);
                word.clear();
            }
            continue;
        }
        let Some(ch) = text[i..].chars().next() else { break };
        i += ch.len_utf8();
        let c = fold(ch);
        match class(c) {
            Class::Word => word.push(c),
            k => {
                if !word.is_empty() {
                    f(&word);
                    word.clear();
                }
                if k == Class::Single {
                    f(c.encode_utf8(&mut one));
                }
            }
        }
    }
    if !word.is_empty() {
        f(&word);
    }
}

/// The distinct tokens of a text, joined by spaces (what the index stores for it), added to
/// `out`; `seen` is scratch space.
pub fn index_text(text: &str, seen: &mut TokenSet, out: &mut String) {
    seen.0.clear();
    let base = out.len();
    each_token(text, |t| {
        let h = FxBuildHasher.hash_one(t);
        let written = |at: usize| out[at..].split(' ').next() == Some(t);
        let seen_before = match seen.0.get(&h) {
            Some(&at) if written(at) => true,
            // Another token with that hash (rare): look through what was written.
            Some(_) => out[base..].split(' ').any(|w| w == t),
            None => false,
        };
        if !seen_before {
            if !out.is_empty() {
                out.push(' ');
            }
            seen.0.entry(h).or_insert(out.len());
            out.push_str(t);
        }
    });
}

/// Where a query token may sit in a text token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// It is the whole token.
    Exact,
    /// It begins the token (the term ends inside a word).
    Prefix,
    /// It ends the token (the term begins inside a word).
    Suffix,
    /// Anywhere inside the token (the term is one cut word).
    Inside,
}

/// The tokens a text holds when it contains `term` (folded), and where each sits.
pub fn term_tokens(term: &str) -> Vec<(String, Fit)> {
    let chars: Vec<char> = term.chars().map(fold).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match class(chars[i]) {
            Class::Sep => i += 1,
            Class::Single => {
                out.push((chars[i].to_string(), Fit::Exact));
                i += 1;
            }
            Class::Word => {
                let start = i;
                while i < chars.len() && class(chars[i]) == Class::Word {
                    i += 1;
                }
                let fit = match (start == 0, i == chars.len()) {
                    (true, true) => Fit::Inside,
                    (true, false) => Fit::Suffix,
                    (false, true) => Fit::Prefix,
                    (false, false) => Fit::Exact,
                };
                out.push((chars[start..i].iter().collect(), fit));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(text: &str) -> String {
        let mut out = String::new();
        index_text(text, &mut TokenSet::default(), &mut out);
        out
    }

    #[test]
    fn texts_split_into_distinct_folded_tokens() {
        assert_eq!(index("Fix the parseHeader() bug, fix it"), "fix the parseheader bug it");
        assert_eq!(index("会话管理 ok😀!"), "会 话 管 理 ok 😀");
        assert_eq!(index("cafe\u{301} Ünïcode"), "cafe\u{301} ünïcode");
    }

    /// Tokens character by character, as `each_token` gives them without its ASCII path.
    fn tokens_slowly(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut word = String::new();
        for c in text.chars().map(fold) {
            match class(c) {
                Class::Word => word.push(c),
                k => {
                    if !word.is_empty() {
                        out.push(std::mem::take(&mut word));
                    }
                    if k == Class::Single {
                        out.push(c.to_string());
                    }
                }
            }
        }
        if !word.is_empty() {
            out.push(word);
        }
        out
    }

    #[test]
    fn ascii_words_split_as_every_other_character() {
        let pieces = ["Ab", "cd", "É", "é", "x\u{301}", "日", "😀", " ", "-", "9", "İ", "ß", "\n", "Σ", "ok.", "ÖL"];
        let mut texts = vec![String::new()];
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    texts.push(format!("{a}{b}{c}"));
                    texts.push(format!("{a}{b}{c}{a}"));
                }
            }
        }
        texts.push("Fix the parseHeader() bug, fix it: naïve CAFÉ café Straße ΣΟΦΊΑ 会话abc😀def".into());
        for t in &texts {
            let mut got = Vec::new();
            each_token(t, |w| got.push(w.to_string()));
            assert_eq!(got, tokens_slowly(t), "{t:?}");
        }
    }

    #[test]
    fn query_terms_say_where_their_tokens_sit() {
        use Fit::*;
        assert_eq!(term_tokens("factorin"), [("factorin".to_string(), Inside)]);
        assert_eq!(
            term_tokens("session-manager.ts"),
            [("session".to_string(), Suffix), ("manager".to_string(), Exact), ("ts".to_string(), Prefix)]
        );
        assert_eq!(term_tokens(".ts"), [("ts".to_string(), Prefix)]);
        assert_eq!(term_tokens("会话"), [("会".to_string(), Exact), ("话".to_string(), Exact)]);
        assert!(term_tokens("->").is_empty());
    }
}
