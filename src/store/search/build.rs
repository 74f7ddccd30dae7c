//! The build pipeline both backends run: texts tokenized on several threads, each into its
//! own vocabulary, gathered into postings in memory (one thread) while the next batch is
//! tokenized, and handed to the backend to write when the memory bound is reached.

use crate::hash::FxHashMap;
use crate::store::extract;
use crate::store::keys::EntryKey;
use crate::store::search::codec::put_varint;
use crate::store::search::vocab::{Part, Vocab};

/// Queued entries read per batch (their lines are in memory together).
pub(crate) const READ_BATCH: i64 = 2000;

/// Memory the postings gathered in memory may take before they are written (bytes, an
/// estimate): what bounds a build's peak.
pub(crate) const FLUSH_BYTES: usize = 96 << 20;

/// Deleted entries below which the index is never rebuilt for them.
pub(in crate::store) const REBUILD_MIN_DELETED: i64 = 10_000;

/// One token's keys being gathered: the last key added and the encoded gaps.
#[derive(Default)]
pub(in crate::store) struct Posting {
    pub(in crate::store) last: u64,
    pub(in crate::store) bytes: Vec<u8>,
}

/// A run of copies being gathered (see `search_copies`).
#[derive(Debug, Clone, Copy)]
pub(in crate::store) struct Run {
    pub(in crate::store) lo: EntryKey,
    pub(in crate::store) hi: EntryKey,
    pub(in crate::store) shift: i64,
}

/// What a build has gathered and not yet written.
#[derive(Default)]
pub(in crate::store) struct Gathered {
    /// Tokens, with their postings at the same index.
    pub(in crate::store) tokens: Vec<Box<str>>,
    pub(in crate::store) postings: Vec<Posting>,
    pub(in crate::store) index: FxHashMap<Box<str>, u32>,
    /// Per tokenizing thread: its ids' indexes here.
    pub(in crate::store) ids: Vec<Vec<u32>>,
    pub(in crate::store) bytes: usize,
    pub(in crate::store) runs: Vec<Run>,
    pub(in crate::store) open_run: Option<Run>,
    /// Queued keys read (to dequeue at the write), ascending.
    pub(in crate::store) keys: Vec<EntryKey>,
}

impl Gathered {
    /// Learns the tokens thread `w` gave ids to since last time.
    pub(in crate::store) fn learn(&mut self, w: usize, v: &mut Vocab) {
        if self.ids.len() <= w {
            self.ids.resize_with(w + 1, Vec::new);
        }
        for t in v.fresh.drain(..) {
            // The thread's copy of the token, its map slot and `seen`: about 48 bytes besides.
            self.bytes += t.len() + 48;
            let at = match self.index.get(&*t) {
                Some(&at) => at,
                None => {
                    let at = self.tokens.len() as u32;
                    // Two copies, the map's slot and the posting: about 96 bytes besides.
                    self.bytes += 2 * t.len() + 96;
                    self.index.insert(t.clone(), at);
                    self.tokens.push(t);
                    self.postings.push(Posting::default());
                    at
                }
            };
            self.ids[w].push(at);
        }
    }

    /// Adds entry `key` to the postings of the tokens thread `w` calls `ids`.
    pub(in crate::store) fn add_ids(&mut self, key: EntryKey, w: usize, ids: &[u32]) {
        let k = key.0 as u64;
        let at = &self.ids[w];
        for &id in ids {
            let p = &mut self.postings[at[id as usize] as usize];
            let before = p.bytes.capacity();
            put_varint(&mut p.bytes, k.wrapping_sub(p.last));
            p.last = k;
            self.bytes += p.bytes.capacity() - before;
        }
    }

    pub(in crate::store) fn add_copy(&mut self, copy: EntryKey, owner: EntryKey) {
        let shift = copy - owner;
        if let Some(r) = &mut self.open_run {
            if r.shift == shift && owner > r.hi && owner.session() == r.hi.session() {
                r.hi = owner;
                return;
            }
            self.runs.push(*r);
        }
        self.open_run = Some(Run { lo: owner, hi: owner, shift });
    }

    pub(in crate::store) fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// A queued entry read: its key, and its line's owner (a copy) or its line.
pub(in crate::store) enum Queued {
    Copy(EntryKey, EntryKey),
    Line(EntryKey, String),
    Gone(EntryKey),
}

/// The token ids of some lines' texts, by one tokenizing thread.
pub(in crate::store) fn tokenize(lines: &[(EntryKey, &str)], v: &mut Vocab) -> Part {
    let mut part = Part { ids: Vec::new(), ends: Vec::with_capacity(lines.len()) };
    for (_, l) in lines {
        if let Some(text) = extract::text_of_line(l) {
            v.add_text(&text, &mut part.ids);
        }
        part.ends.push(part.ids.len());
    }
    part
}

/// A batch tokenized and not yet gathered: its texts' keys, and each thread's part (thread
/// `w` tokenized the `w`-th run of texts).
pub(in crate::store) type Tokenized = (Vec<EntryKey>, Vec<Part>);

pub(in crate::store) fn gather(g: &mut Gathered, (keys, parts): Tokenized) {
    let mut keys = keys.iter();
    for (w, part) in parts.iter().enumerate() {
        let mut start = 0;
        for (&end, &k) in part.ends.iter().zip(&mut keys) {
            g.add_ids(k, w, &part.ids[start..end]);
            start = end;
        }
    }
}
