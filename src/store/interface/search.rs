//! What a backend stores and reads of the search index, and the rows a query gets.

use crate::error::Result;
use crate::store::keys::EntryKey;

/// Filters of a search.
#[derive(Debug, Clone, Copy, Default)]
pub struct RowFilter<'a> {
    /// Only sessions with this header cwd.
    pub cwd: Option<&'a str>,
    /// Only this role or entry type.
    pub role: Option<&'a str>,
    /// Only entries at or after this time (ms).
    pub since_ms: Option<i64>,
}

/// What a hit shows of an entry.
#[derive(Debug, Clone)]
pub struct HitRow {
    /// Header id of the session.
    pub session_id: String,
    /// The session's file path.
    pub session_file: String,
    /// Header cwd.
    pub cwd: Option<String>,
    /// The entry's id.
    pub entry_id: Option<String>,
    /// Role or entry type.
    pub role: String,
    /// Entry time (ms).
    pub ts_ms: Option<i64>,
    /// The entry's line, when asked for.
    pub line: Option<String>,
}

/// What a backend stores and reads of the search index.
pub trait SearchIndex {
    /// Number of entries waiting to be indexed.
    fn pending(&self) -> Result<i64>;
    /// Number of searchable entries.
    fn text_count(&self) -> Result<i64>;
    /// Empties the index; everything is indexed again by the next catch-up.
    fn reset_index(&mut self) -> Result<()>;
    /// Indexes every entry waiting, `read_batch_of` at a time, writing the postings whenever
    /// they take `flush_bytes`, then merges batches as `search::merge`'s policy says;
    /// `progress(done, total)` after each batch.
    fn catch_up_in(
        &mut self,
        read_batch_of: i64,
        flush_bytes: usize,
        progress: &mut dyn FnMut(i64, i64),
    ) -> Result<i64>;
    /// Rows of the postings, and build batches holding them.
    fn posting_shape(&self) -> Result<(i64, i64)>;
    /// The key blobs of `token` (one per build batch), undecoded.
    fn posting_blobs(&self, token: &str) -> Result<Vec<Vec<u8>>>;
    /// The key blobs of every token of `tokens`.
    fn posting_blobs_of(&self, tokens: &[&str]) -> Result<Vec<Vec<u8>>>;
    /// Vocabulary tokens starting with `part` (at most `n`).
    fn terms_starting(&self, part: &str, n: usize) -> Result<Vec<String>>;
    /// For each of `parts`, the vocabulary tokens containing it (at most `n` each).
    fn terms_containing(&self, parts: &[&str], n: usize) -> Result<Vec<Vec<String>>>;
    /// The runs of copies `(lo, hi, shift)` of the lines of entries `keys` (ascending): owner
    /// keys `lo..=hi` have copies at key + shift.
    fn copy_runs(&self, keys: &[EntryKey]) -> Result<Vec<(EntryKey, EntryKey, i64)>>;
    /// Entry `key` if it is searchable, passes `f` and holds its own line (`owner` None) or a
    /// copy of `owner`'s; with its line when `with_line`.
    fn hit_row(
        &self,
        key: EntryKey,
        owner: Option<EntryKey>,
        f: &RowFilter<'_>,
        with_line: bool,
    ) -> Result<Option<HitRow>>;
    /// [`SearchIndex::hit_row`] of each `(key, owner, with_line)`.
    fn hit_rows(&self, wanted: &[(EntryKey, Option<EntryKey>, bool)], f: &RowFilter<'_>)
        -> Result<Vec<Option<HitRow>>>;
    /// How many candidates' hit rows a query asks for at once: the first batch and the most
    /// (growing between them), where a round trip costs more than a row.
    fn hit_batch(&self) -> (usize, usize);
    /// The lines of up to `n` searchable entries spread evenly over the stored keys (what a
    /// benchmark picks a rare word from).
    fn sample_lines(&self, n: i64) -> Result<Vec<String>>;
    /// Calls `take(key, line key, row)` with every searchable entry passing `f`, newest stored
    /// first, until it returns false.
    fn scan_hits(&self, f: &RowFilter<'_>, take: &mut dyn FnMut(EntryKey, EntryKey, HitRow) -> bool) -> Result<()>;
}
