//! The vocabulary of a tokenizing thread: its tokens get ids of its own, so that the gatherer
//! finds a token's postings by index instead of hashing and comparing the token again.

use crate::hash::FxHashMap;
use crate::store::search::tokens;

/// A token → id map of one tokenizing thread (ids count up from 0).
#[derive(Default)]
pub(in crate::store) struct Ids(FxHashMap<Box<str>, u32>);

impl Ids {
    /// The id of `t`, and whether it is new.
    fn id(&mut self, t: &str) -> (u32, bool) {
        if let Some(&id) = self.0.get(t) {
            return (id, false);
        }
        let id = self.0.len() as u32;
        self.0.insert(t.into(), id);
        (id, true)
    }
}

/// A tokenizing thread's vocabulary until the postings are written: its tokens get ids of
/// its own, so that the gatherer (one thread) finds a token's postings by index instead of
/// hashing and comparing the token again (which was two thirds of the build's serial work).
#[derive(Default)]
pub(in crate::store) struct Vocab {
    pub(in crate::store) ids: Ids,
    /// Tokens given ids since the gatherer last took them, in the order of their ids.
    pub(in crate::store) fresh: Vec<Box<str>>,
    /// Per id: the number of the last text holding it (a text gives each token once).
    pub(in crate::store) seen: Vec<u32>,
    pub(in crate::store) texts: u32,
}

impl Vocab {
    /// Appends the ids of the distinct tokens of `text` to `out`.
    pub(in crate::store) fn add_text(&mut self, text: &str, out: &mut Vec<u32>) {
        self.texts += 1;
        let Vocab { ids, fresh, seen, texts } = self;
        tokens::each_token(text, |t| {
            let (id, new) = ids.id(t);
            if new {
                fresh.push(t.into());
                seen.push(0);
            }
            let last = &mut seen[id as usize];
            if *last != *texts {
                *last = *texts;
                out.push(id);
            }
        });
    }
}

/// A batch's texts as one tokenizing thread gives them: each text's token ids, the text
/// ending at the matching entry of `ends`.
#[derive(Default)]
pub(in crate::store) struct Part {
    pub(in crate::store) ids: Vec<u32>,
    pub(in crate::store) ends: Vec<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn token_ids_are_one_per_distinct_token() {
        let mut ids = Ids::default();
        let mut known: HashMap<String, u32> = HashMap::new();
        let mut words: Vec<String> = Vec::new();
        for i in 0..5000u32 {
            // Short, exactly 8 bytes, longer ones sharing their first 8, and non-ASCII.
            words.push(format!("w{i}"));
            words.push(format!("abcdefg{}", i % 10));
            words.push(format!("abcdefgh{i}"));
            words.push(format!("abcdefghijklmnopq{}", i % 300));
            words.push(format!("會話{}", i % 77));
        }
        for w in words.iter().chain(&words) {
            let (id, new) = ids.id(w);
            let next = known.len() as u32;
            let want = *known.entry(w.clone()).or_insert(next);
            assert_eq!((id, new), (want, want == next), "{w}");
        }
    }
}
