//! Search: the word index and what a query reads of it, in files of one job each:
//! [`tokens`] (how text splits into word tokens and a query term into the tokens it needs),
//! [`codec`] (posting lists as delta-encoded varints), [`vocab`] (a tokenizing thread's token
//! ids), [`build`] (the pipeline both backends run: tokenize on every core, gather, hand over
//! to write), [`merge`] (the merge policy of the postings batches), [`query`] (candidates,
//! filters, hit rows), and [`SearchIndex`], what a backend stores and reads
//! (`store::sqlite::search`, `store::postgres::search`).
//!
//! For each word token, the keys of the entries holding it: sorted, delta-encoded, one row per
//! token and build batch (small batches merged as they accumulate, [`merge`]), plus a
//! vocabulary of tokens for words a query cuts. A line shared by
//! forks and branched sessions is indexed once, under its owner's key; the copies are recorded
//! as runs and added to the candidates at query time. Deleted entries stay in the postings
//! (their rows are gone, so [`hit_row`] finds nothing) until a merge drops them, or
//! deletions reach half of what was indexed: then the next catch-up rebuilds.

pub mod build;
pub mod codec;
pub mod merge;
pub mod query;
pub mod tokens;
pub mod vocab;

use crate::error::Result;
use crate::store::handle::Db;
use crate::store::keys::EntryKey;

pub(crate) use crate::store::interface::search::SearchIndex;
pub(crate) use build::{FLUSH_BYTES, READ_BATCH};
pub use codec::keys_upto;
pub use query::{Candidates, HitRow, RowFilter};

/// Number of entries waiting to be indexed.
pub fn pending(db: &Db) -> Result<i64> {
    db.store().pending()
}

/// Number of searchable entries.
pub fn text_count(db: &Db) -> Result<i64> {
    db.store().text_count()
}

/// Empties the index and queues every searchable entry again.
pub fn reset(db: &mut Db) -> Result<()> {
    db.store_mut().reset_index()
}

/// Indexes every queued entry; `progress(done, total)` after each batch read. Rebuilds the
/// whole index first when deletions reached half of what it holds.
pub fn catch_up(db: &mut Db, progress: impl FnMut(i64, i64)) -> Result<i64> {
    catch_up_in(db, READ_BATCH, FLUSH_BYTES, progress)
}

/// [`catch_up`] reading `read_batch` entries at a time and writing the postings whenever
/// they take `flush_bytes` (tests make both small).
pub fn catch_up_in(
    db: &mut Db,
    read_batch_of: i64,
    flush_bytes: usize,
    mut progress: impl FnMut(i64, i64),
) -> Result<i64> {
    db.store_mut().catch_up_in(read_batch_of, flush_bytes, &mut progress)
}

/// Rows of the postings, and build batches holding them (what the merge policy bounds).
pub fn posting_shape(db: &Db) -> Result<(i64, i64)> {
    db.store().posting_shape()
}

/// The keys of the entries holding `token`, ascending.
pub fn postings(db: &Db, token: &str) -> Result<Vec<EntryKey>> {
    let blobs = db.store().posting_blobs(token)?;
    let mut out = Vec::new();
    for b in &blobs {
        codec::decode_into(b, &mut out);
    }
    if blobs.len() > 1 {
        // One sorted run per batch.
        out.sort_unstable();
        out.dedup();
    }
    Ok(out)
}

/// The lines of up to `n` searchable entries spread evenly over the stored keys (what the
/// benchmark picks a rare word from).
pub fn sample_lines(db: &Db, n: i64) -> Result<Vec<String>> {
    db.store().sample_lines(n)
}

/// The key blobs of `token` (one per build batch), undecoded: a query decodes only the part
/// it needs ([`keys_upto`]).
pub fn posting_blobs(db: &Db, token: &str) -> Result<Vec<Vec<u8>>> {
    db.store().posting_blobs(token)
}

/// The key blobs of every token of `tokens` (on a server in one round trip).
pub fn posting_blobs_of(db: &Db, tokens: &[&str]) -> Result<Vec<Vec<u8>>> {
    db.store().posting_blobs_of(tokens)
}

/// Vocabulary tokens starting with `part` (at most `n`).
pub fn terms_starting(db: &Db, part: &str, n: usize) -> Result<Vec<String>> {
    db.store().terms_starting(part, n)
}

/// For each of `parts`, the vocabulary tokens containing it (at most `n` each), in one scan.
pub fn terms_containing(db: &Db, parts: &[&str], n: usize) -> Result<Vec<Vec<String>>> {
    db.store().terms_containing(parts, n)
}

/// Entry `key` if it is searchable, passes `f` and holds its own line (`owner` None) or a
/// copy of `owner`'s; with its line when `with_line`.
pub fn hit_row(
    db: &Db,
    key: EntryKey,
    owner: Option<EntryKey>,
    f: &RowFilter<'_>,
    with_line: bool,
) -> Result<Option<HitRow>> {
    db.store().hit_row(key, owner, f, with_line)
}

/// [`hit_row`] of each `(key, owner, with_line)`, in one round trip on a server.
pub fn hit_rows(
    db: &Db,
    wanted: &[(EntryKey, Option<EntryKey>, bool)],
    f: &RowFilter<'_>,
) -> Result<Vec<Option<HitRow>>> {
    db.store().hit_rows(wanted, f)
}

/// How many candidates' hit rows a query on `db` asks for at once: the first batch and the
/// most (one by one where a row costs no round trip).
pub fn hit_batch(db: &Db) -> (usize, usize) {
    db.store().hit_batch()
}

/// Calls `take(key, line key, row)` with every searchable entry passing `f`, newest stored
/// first, until it returns false.
pub fn scan(db: &Db, f: &RowFilter<'_>, mut take: impl FnMut(EntryKey, EntryKey, HitRow) -> bool) -> Result<()> {
    db.store().scan_hits(f, &mut take)
}
