//! The vocabulary of a tokenizing thread: its tokens get ids of its own, so that the gatherer
//! finds a token's postings by index instead of hashing and comparing the token again.

use crate::store::search::tokens;

/// A token → id map of one tokenizing thread: open addressing over 16-byte slots holding a
/// token's first 8 bytes (most tokens whole: no string to fetch and compare, which was a
/// third of a build in `HashMap<Box<str>, u32>`), its length and its id.
pub(in crate::store) struct Ids {
    slots: Vec<Slot>,
    /// Slots are found by the top bits of a token's hash: `64 - shift` of them.
    shift: u32,
    /// Per id: where its bytes start in `arena` (their length is in its slot).
    starts: Vec<usize>,
    arena: Vec<u8>,
}

#[derive(Clone, Copy)]
struct Slot {
    head: u64,
    len: u32,
    /// `u32::MAX`: empty.
    id: u32,
}

const EMPTY: Slot = Slot { head: 0, len: 0, id: u32::MAX };

/// Up to the first 8 bytes of a token, zero-padded (tokens hold no zero byte).
fn head(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    let n = b.len().min(8);
    w[..n].copy_from_slice(&b[..n]);
    u64::from_le_bytes(w)
}

fn token_hash(b: &[u8], head: u64) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = (head ^ (b.len() as u64).rotate_left(56)).wrapping_mul(K);
    if b.len() > 8 {
        for c in b[8..].chunks(8) {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            h = (h.rotate_left(23) ^ u64::from_le_bytes(w)).wrapping_mul(K);
        }
    }
    h
}

impl Default for Ids {
    fn default() -> Self {
        Ids { slots: vec![EMPTY; 1 << 10], shift: 64 - 10, starts: Vec::new(), arena: Vec::new() }
    }
}

impl Ids {
    /// The id of `t`, and whether it is new (ids count up from 0).
    fn id(&mut self, t: &str) -> (u32, bool) {
        let b = t.as_bytes();
        let hd = head(b);
        let mask = self.slots.len() - 1;
        let mut i = (token_hash(b, hd) >> self.shift) as usize;
        loop {
            let s = self.slots[i];
            if s.id == u32::MAX {
                break;
            }
            if s.head == hd && s.len as usize == b.len() {
                let at = self.starts[s.id as usize];
                if b.len() <= 8 || self.arena[at + 8..at + b.len()] == b[8..] {
                    return (s.id, false);
                }
            }
            i = (i + 1) & mask;
        }
        let id = self.starts.len() as u32;
        self.slots[i] = Slot { head: hd, len: b.len() as u32, id };
        self.starts.push(self.arena.len());
        self.arena.extend_from_slice(b);
        if self.starts.len() * 2 > self.slots.len() {
            self.grow();
        }
        (id, true)
    }

    /// Twice the slots, every token placed again.
    fn grow(&mut self) {
        let twice = vec![EMPTY; self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, twice);
        self.shift -= 1;
        let mask = self.slots.len() - 1;
        for s in old.into_iter().filter(|s| s.id != u32::MAX) {
            let at = self.starts[s.id as usize];
            let mut i = (token_hash(&self.arena[at..at + s.len as usize], s.head) >> self.shift) as usize;
            while self.slots[i].id != u32::MAX {
                i = (i + 1) & mask;
            }
            self.slots[i] = s;
        }
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
