//! What a query takes from the index: candidates (entries holding their own line, and the
//! copies of those lines, newest stored first), the filters of a search and the hit rows.

use crate::error::Result;
use crate::store::handle::Db;
pub use crate::store::interface::search::{HitRow, RowFilter};
use crate::store::keys::{EntryKey, SessionKey};

/// Candidates from the index: entries holding their own line (sorted keys), and the copies
/// of those lines, newest stored first.
pub struct Candidates {
    keys: Vec<EntryKey>,
    /// Per source: the keys' index range still to give (`lo..hi`) and the shift (0: the
    /// entries themselves; else copies at key + shift).
    sources: Vec<(usize, usize, i64)>,
    heap: std::collections::BinaryHeap<(EntryKey, usize)>,
    /// The last key given and the lines it was given with (a key comes once per line: a
    /// run may name a key that holds another line, or its own).
    last: Option<(EntryKey, Vec<Option<EntryKey>>)>,
}

impl Candidates {
    /// The candidates for the entries `keys` (ascending) and their copies.
    pub fn new(db: &Db, keys: Vec<EntryKey>) -> Result<Self> {
        let mut sources = vec![(0, keys.len(), 0)];
        for (lo, hi, shift) in db.store().copy_runs(&keys)? {
            let a = keys.partition_point(|&k| k < lo);
            let b = keys.partition_point(|&k| k <= hi);
            if a < b {
                sources.push((a, b, shift));
            }
        }
        let mut c = Candidates { keys, sources, heap: Default::default(), last: None };
        c.refill();
        Ok(c)
    }

    /// The entries' keys the candidates come from (ascending).
    pub fn keys(&self) -> &[EntryKey] {
        &self.keys
    }

    fn refill(&mut self) {
        self.heap.clear();
        for (i, &(lo, hi, shift)) in self.sources.iter().enumerate() {
            if hi > lo {
                self.heap.push((self.keys[hi - 1] + shift, i));
            }
        }
    }

    /// Skips the rest of session `sid`'s candidates.
    pub fn skip_session(&mut self, sid: SessionKey) {
        let below = sid.entry(0);
        for (lo, hi, shift) in &mut self.sources {
            let end = self.keys[*lo..*hi].partition_point(|&k| k + *shift < below);
            *hi = *lo + end;
        }
        self.refill();
    }
}

/// A candidate: the entry's key, and the key of the line it copies (None: its own).
impl Iterator for Candidates {
    type Item = (EntryKey, Option<EntryKey>);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (key, i) = self.heap.pop()?;
            let (lo, hi, shift) = &mut self.sources[i];
            *hi -= 1;
            let owner = self.keys[*hi];
            if *hi > *lo {
                self.heap.push((self.keys[*hi - 1] + *shift, i));
            }
            let line = (key != owner).then_some(owner);
            match &mut self.last {
                Some((k, lines)) if *k == key => {
                    if lines.contains(&line) {
                        continue;
                    }
                    lines.push(line);
                }
                _ => self.last = Some((key, vec![line])),
            }
            return Some((key, line));
        }
    }
}
