//! The word index's statements, still positional and apart from the code that runs them
//! (`read::search`; the fts branch moves them). Every other statement sits beside its typed
//! function in `store/`. The schema lives in `migrations/`.

/// The lowest and highest keys of search rows.
pub const TEXT_KEY_RANGE: &str = "SELECT min(key), max(key) FROM texts";

/// The first search row at or after key `?1`, with its entry's line.
pub const TEXT_LINE_FROM: &str = "SELECT e.body FROM texts t JOIN entry_lines e ON e.key = t.key \
    WHERE t.key >= ?1 ORDER BY t.key LIMIT 1";

/// Texts waiting for the full-text index.
pub const FTS_PENDING_COUNT: &str = "SELECT count(*) FROM fts_pending";

/// The next `?1` queued entries with their lines, to index.
pub const FTS_PENDING_BATCH: &str = "SELECT p.key, e.body FROM (SELECT key FROM fts_pending ORDER BY key LIMIT ?1) p \
    JOIN entry_lines e ON e.key = p.key";

/// Adds one entry's tokens (space-separated) to the index.
pub const FTS_INSERT: &str = "INSERT INTO search_fts(rowid, tokens) VALUES (?1, ?2)";

/// Empties the index (before indexing everything again).
pub const FTS_DELETE_ALL: &str = "INSERT INTO search_fts(search_fts) VALUES ('delete-all')";

/// Merges the index into one segment.
pub const FTS_OPTIMIZE: &str = "INSERT INTO search_fts(search_fts) VALUES ('optimize')";

/// Number of searchable entries.
pub const TEXT_COUNT: &str = "SELECT count(*) FROM texts";

/// Empties the vocabulary.
pub const TERMS_DELETE_ALL: &str = "DELETE FROM search_terms";

/// Queues every searchable entry for indexing.
pub const FTS_QUEUE_ALL: &str = "INSERT OR IGNORE INTO fts_pending(key) SELECT key FROM texts";

/// Adds a token to the vocabulary (if new).
pub const TERM_INSERT: &str = "INSERT OR IGNORE INTO search_terms(term) VALUES (?1)";

/// Removes the batch [`FTS_PENDING_BATCH`] indexed from the queue.
pub const FTS_DEQUEUE_BATCH: &str =
    "DELETE FROM fts_pending WHERE key IN (SELECT key FROM fts_pending ORDER BY key LIMIT ?1)";

/// Vocabulary tokens containing `?1` (at most `?2`): a scan of the vocabulary, done for
/// query words that may be cut at their start.
pub const TERMS_CONTAINING: &str = "SELECT term FROM search_terms WHERE instr(term, ?1) > 0 LIMIT ?2";

/// Vocabulary tokens starting with `?1` (at most `?2`): a range of the vocabulary's key.
pub const TERMS_STARTING: &str =
    "SELECT term FROM search_terms WHERE term >= ?1 AND term < ?1 || char(1114111) LIMIT ?2";

/// Entries whose tokens match the FTS5 expression `?1`, newest stored first (the index
/// streams them in this order: the first hits come without reading every match).
pub const SEARCH_CANDIDATES: &str = "SELECT rowid FROM search_fts WHERE search_fts MATCH ?1 ORDER BY rowid DESC";

/// How many entries' tokens match the FTS5 expression `?1`.
pub const SEARCH_CANDIDATE_COUNT: &str = "SELECT count(*) FROM search_fts WHERE search_fts MATCH ?1";

/// A searchable entry `?1` with what a hit shows, if it passes the filters `?2` cwd, `?3`
/// role, `?4` since (ms).
pub const SEARCH_ROW: &str = "SELECT s.id, s.path, s.cwd, e.id, t.role, t.ts_ms, e.body \
    FROM texts t JOIN sessions s ON s.sid = t.session JOIN entry_lines e ON e.key = t.key \
    WHERE t.key = ?1 AND (?2 IS NULL OR s.cwd = ?2) AND (?3 IS NULL OR t.role = ?3) AND (?4 IS NULL OR t.ts_ms >= ?4)";

/// Every searchable entry passing the filters `?1` cwd, `?2` role, `?3` since (ms), newest stored first: the
/// scan for queries the index cannot narrow (punctuation only, one or two letters found in
/// too many words).
pub const SEARCH_SCAN: &str = "SELECT s.id, s.path, s.cwd, e.id, t.role, t.ts_ms, e.body, t.key \
    FROM texts t JOIN sessions s ON s.sid = t.session JOIN entry_lines e ON e.key = t.key \
    WHERE (?1 IS NULL OR s.cwd = ?1) AND (?2 IS NULL OR t.role = ?2) AND (?3 IS NULL OR t.ts_ms >= ?3) \
    ORDER BY t.key DESC";
