//! The merge policy of the postings: which build batches to merge after a catch-up, and how
//! a token's rows become one, with the keys of deleted entries dropped. Both backends run it
//! (after [`SearchIndex::catch_up_in`](crate::store::search::SearchIndex) writes).
//!
//! Every catch-up writes its postings as one build batch (a segment, in Lucene's and
//! Tantivy's words), and a query reads one row per batch holding its token: unmerged, after a
//! year of per-turn syncs, tens of thousands. A log-structured policy (Lucene's
//! `LogMergePolicy`: up to `factor - 1` batches per level) keeps the batch count logarithmic,
//! but not the rows: a per-turn batch holds mostly the same common words, so every batch of
//! every level repeats them (measured on c10k after 2,900 per-turn syncs: 2 import batches of
//! 21,000 rows each, then 20 merged batches adding 19,600 rows). So the policy is leveled, as
//! LSM stores' leveled compaction (RocksDB, LevelDB) where a level is merged into the next one
//! key range by key range:
//!
//! - batches of [`FREEZE_BYTES`] or more (an import's, a rebuild's, a full tail) are frozen:
//!   never merged, until deletions reach half of the index and it is rebuilt, as before;
//! - of the others, the largest is the tail; the rest are small (a catch-up's batch each);
//! - when there are [`MERGE_FACTOR`] small batches, they are merged into the tail token by
//!   token: the small batches' rows are read, and the tail's rows of their tokens only
//!   (rewritten under the tail's number), so a token has at most one row per frozen batch,
//!   one in the tail and one per small batch;
//! - a merge reads at most [`MAX_MERGE_BYTES`] of small batches (and the tail's rows of their
//!   tokens, under [`FREEZE_BYTES`]): the work a catch-up adds is bounded.
//!
//! Deletions are recorded with the last build batch written when they happened. A merge
//! drops the keys of entries deleted since the oldest batch it reads was written that no
//! entry holds now (a key given again to a new entry stays: search checks every candidate).

use crate::store::keys::EntryKey;
use crate::store::search::codec::{decode_into, put_varint};
use std::collections::{BTreeMap, HashSet};

/// Small batches merged into the tail at once.
pub(in crate::store) const MERGE_FACTOR: usize = 10;

/// Batches this large (bytes of key lists) are never merged.
pub(in crate::store) const FREEZE_BYTES: i64 = 8 << 20;

/// The most bytes of small batches a merge reads.
pub(in crate::store) const MAX_MERGE_BYTES: i64 = 8 << 20;

/// A build batch holding postings: its number, the bytes of its key lists and the oldest
/// build batch whose keys it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::store) struct Batch {
    pub(in crate::store) batch: i64,
    pub(in crate::store) bytes: i64,
    pub(in crate::store) first: i64,
}

/// A merge: small batches (ascending) into the tail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::store) struct Plan {
    pub(in crate::store) tail: Batch,
    pub(in crate::store) small: Vec<Batch>,
}

impl Plan {
    /// The oldest build batch whose keys the merge reads: deletions since then may be in it.
    pub(in crate::store) fn since(&self) -> i64 {
        self.small.iter().map(|b| b.first).fold(self.tail.first, i64::min)
    }
}

/// The tail: the largest batch not frozen (the oldest of equals).
fn tail(batches: &[Batch]) -> Option<Batch> {
    batches.iter().filter(|b| b.bytes < FREEZE_BYTES).max_by_key(|b| (b.bytes, -b.batch)).copied()
}

/// The merge due, if any: [`MERGE_FACTOR`] small batches or more, the oldest first, as many
/// as [`MAX_MERGE_BYTES`] allows (at least one).
pub(in crate::store) fn plan(batches: &[Batch]) -> Option<Plan> {
    let tail = tail(batches)?;
    let mut small: Vec<Batch> =
        batches.iter().filter(|b| b.bytes < FREEZE_BYTES && b.batch != tail.batch).copied().collect();
    if small.len() < MERGE_FACTOR {
        return None;
    }
    small.sort_unstable_by_key(|b| b.batch);
    let mut total = 0;
    let mut n = 0;
    for b in &small {
        total += b.bytes;
        if n > 0 && total > MAX_MERGE_BYTES {
            break;
        }
        n += 1;
    }
    small.truncate(n);
    Some(Plan { tail, small })
}

/// Deletions older than this can no longer be in a batch a merge reads: the oldest build
/// batch whose keys a batch not frozen holds (`next`, the number the next batch gets, when
/// all are frozen).
pub(in crate::store) fn deletions_needed_since(batches: &[Batch], next: i64) -> i64 {
    batches.iter().filter(|b| b.bytes < FREEZE_BYTES).map(|b| b.first).fold(next, i64::min)
}

/// The rows being merged, by token.
#[derive(Default)]
pub(in crate::store) struct Merging {
    rows: BTreeMap<String, Vec<Vec<u8>>>,
}

impl Merging {
    /// Takes a row of `token`.
    pub(in crate::store) fn add(&mut self, token: String, keys: Vec<u8>) {
        self.rows.entry(token).or_default().push(keys);
    }

    /// The tokens taken, in order.
    pub(in crate::store) fn tokens(&self) -> Vec<&str> {
        self.rows.keys().map(String::as_str).collect()
    }

    /// Each token's rows as one key list, in token order, without the keys of `dead` (an
    /// empty list when none is left).
    pub(in crate::store) fn finish(self, dead: &HashSet<EntryKey>) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::with_capacity(self.rows.len());
        let mut keys = Vec::new();
        for (token, rows) in self.rows {
            keys.clear();
            for blob in &rows {
                decode_into(blob, &mut keys);
            }
            if !dead.is_empty() {
                keys.retain(|k| !dead.contains(k));
            }
            if rows.len() > 1 {
                keys.sort_unstable();
                keys.dedup();
            }
            let mut blob = Vec::with_capacity(keys.len() * 2);
            let mut last = 0u64;
            for &k in &keys {
                put_varint(&mut blob, (k.0 as u64).wrapping_sub(last));
                last = k.0 as u64;
            }
            out.push((token, blob));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blob(keys: &[i64]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut last = 0u64;
        for &k in keys {
            put_varint(&mut out, (k as u64).wrapping_sub(last));
            last = k as u64;
        }
        out
    }

    fn batches(sizes: &[i64]) -> Vec<Batch> {
        sizes.iter().enumerate().map(|(i, &bytes)| Batch { batch: i as i64 + 1, bytes, first: i as i64 + 1 }).collect()
    }

    #[test]
    fn small_batches_go_into_the_tail_when_they_are_the_factor() {
        let mut sizes = vec![FREEZE_BYTES * 4, 40 << 10];
        sizes.extend(vec![300; MERGE_FACTOR - 1]);
        assert_eq!(plan(&batches(&sizes)), None);
        sizes.push(300);
        sizes.push(50 << 10);
        let got = plan(&batches(&sizes)).unwrap();
        // The largest batch not frozen is the tail; every other one not frozen goes into it.
        assert_eq!(got.tail.batch, sizes.len() as i64);
        let mut want: Vec<i64> = (2..=MERGE_FACTOR as i64 + 2).collect();
        want.retain(|&b| b != got.tail.batch);
        assert_eq!(got.small.iter().map(|b| b.batch).collect::<Vec<_>>(), want);
        assert_eq!(got.since(), 2);
        assert_eq!(deletions_needed_since(&batches(&sizes), 99), 2);
    }

    #[test]
    fn frozen_batches_stay_and_a_merge_reads_a_bounded_amount() {
        let sizes = vec![FREEZE_BYTES; MERGE_FACTOR * 2];
        assert_eq!(plan(&batches(&sizes)), None);
        assert_eq!(deletions_needed_since(&batches(&sizes), 99), 99);
        let mut sizes = vec![MAX_MERGE_BYTES / 3; MERGE_FACTOR];
        sizes.push(FREEZE_BYTES - 1);
        assert_eq!(plan(&batches(&sizes)).map(|p| p.small.len()), Some(3));
    }

    #[test]
    fn merged_rows_drop_dead_keys_only() {
        let mut m = Merging::default();
        m.add("a".into(), blob(&[1, 5, 9]));
        m.add("a".into(), blob(&[2, 5, 11]));
        m.add("b".into(), blob(&[9]));
        assert_eq!(m.tokens(), ["a", "b"]);
        let dead: HashSet<EntryKey> = [EntryKey(9), EntryKey(11)].into();
        let got = m.finish(&dead);
        let mut keys = Vec::new();
        decode_into(&got[0].1, &mut keys);
        assert_eq!((got.len(), got[0].0.as_str(), keys), (2, "a", vec![EntryKey(1), EntryKey(2), EntryKey(5)]));
        assert!(got[1].1.is_empty());
    }
}
