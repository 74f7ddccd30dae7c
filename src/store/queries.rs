//! Every SQL statement sessiondb runs, by name. The schema lives in `migrations/`.

/// Newest applied schema migration.
pub const SCHEMA_VERSION: &str = "SELECT max(version) FROM refinery_schema_history";

/// Adds a session row; statistics are filled in by [`UPDATE_SESSION_STATS`].
pub const INSERT_SESSION: &str = "INSERT INTO sessions \
    (id, path, dir, rel_path, cwd, version, source_version, created, parent_session, header, \
     file_size, file_mtime_ns, written_ns) \
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)";

/// Sets a session's discovery fields and counters after its entries were written.
pub const UPDATE_SESSION_STATS: &str = "UPDATE sessions SET name = ?2, message_count = ?3, \
    first_message = ?4, last_activity_ms = ?5, entry_count = ?6, last_seq = ?7 WHERE sid = ?1";

/// Sets a session's statistics after an append, and records the write time (`?8`, what
/// continue-recent orders by).
pub const APPEND_SESSION_STATS: &str = "UPDATE sessions SET name = ?2, message_count = ?3, first_message = ?4, \
    last_activity_ms = ?5, entry_count = ?6, last_seq = ?7, written_ns = ?8 WHERE sid = ?1";

/// Adds one entry line.
pub const INSERT_ENTRY: &str = "INSERT INTO entries (key, session, seq, id, parent_id, type, ts, ts_ms, role, \
    body, parent_key, depth, compaction_key, thinking_key, model_key, body_key) \
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)";

/// Re-links every entry of a session (keys `?1..=?2`) to its parent as pi resolves it: the
/// last line with the parent's id wins; header lines and `""` are no parents.
pub const RELINK_PARENTS: &str = "UPDATE entries SET parent_key = ( \
        SELECT max(p.key) FROM entries p \
        WHERE p.session = entries.session AND p.id = entries.parent_id AND p.type IS NOT 'session') \
    WHERE key BETWEEN ?1 AND ?2 AND parent_id <> '' AND type IS NOT 'session'";

/// Marks a session whose derived entry columns must not be trusted.
pub const MARK_TREE_IRREGULAR: &str = "UPDATE sessions SET tree_ok = 0 WHERE sid = ?1";

/// Rebuilds the joined `allMessagesText` of every session from the texts table.
pub const REBUILD_LIST_TEXTS: &str = "INSERT OR REPLACE INTO list_texts (sid, upto_seq, text) \
    SELECT s.sid, s.last_seq, coalesce((SELECT group_concat(t.list_text, ' ' ORDER BY t.key) FROM texts t \
        WHERE t.key BETWEEN s.sid << 32 AND (s.sid << 32) | 4294967295 AND t.list_text IS NOT NULL), '') \
    FROM sessions s";

/// Starts a write transaction at once (on a shared connection, without rusqlite's `&mut`).
pub const BEGIN_IMMEDIATE: &str = "BEGIN IMMEDIATE";

/// Ends a transaction started with [`BEGIN_IMMEDIATE`].
pub const COMMIT: &str = "COMMIT";

/// Abandons a transaction started with [`BEGIN_IMMEDIATE`].
pub const ROLLBACK: &str = "ROLLBACK";

/// Marks an entry as searchable (queued for the index by trigger).
pub const INSERT_TEXT: &str = "INSERT INTO texts (key, session, role, ts_ms, list_text) VALUES (?1, ?2, ?3, ?4, ?5)";

/// Adds an entry's token usage.
pub const INSERT_USAGE: &str = "INSERT INTO usage (key, session, entry_id, ts, ts_ms, provider, model, input, output, \
    cache_read, cache_write, total, cost, invalid) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)";

/// Every stored entry line (for rebuilding derived tables).
pub const ALL_ENTRY_BODIES: &str = "SELECT key, session, body FROM entry_lines ORDER BY key";

/// The key and session of every usage row.
pub const ALL_USAGE_KEYS: &str = "SELECT key, session FROM usage ORDER BY key";

/// Removes every usage row (before extracting them again).
pub const DELETE_ALL_USAGE: &str = "DELETE FROM usage";

/// The line of entry `?1`, wherever it is stored.
pub const ENTRY_LINE_BY_KEY: &str = "SELECT body FROM entry_lines WHERE key = ?1";

/// Work left by a migration.
pub const PENDING_MAINTENANCE: &str = "SELECT task FROM maintenance";

/// Marks maintenance work done.
pub const MAINTENANCE_DONE: &str = "DELETE FROM maintenance WHERE task = ?1";

/// Copies search rows along with `write::COPY_ENTRIES` (same parameters).
pub const COPY_TEXTS: &str = "INSERT INTO texts (key, session, role, ts_ms, list_text) \
    SELECT key - ?1 + ?2, ?3, role, ts_ms, list_text FROM texts WHERE key BETWEEN ?4 AND ?5";

/// Copies usage rows along with `write::COPY_ENTRIES` (same parameters).
pub const COPY_USAGE: &str = "INSERT INTO usage (key, session, entry_id, ts, ts_ms, provider, model, input, output, \
        cache_read, cache_write, total, cost, invalid) \
    SELECT key - ?1 + ?2, ?3, entry_id, ts, ts_ms, provider, model, input, output, cache_read, cache_write, total, cost, \
        invalid \
    FROM usage WHERE key BETWEEN ?4 AND ?5";

/// Records that session `?1` may share lines held by session `?2` or by the sessions `?2`
/// shares lines of (a copy points at the row holding a line, never at another copy).
pub const RECORD_SHARES: &str = "INSERT OR IGNORE INTO shares (copy, owner) \
    SELECT ?1, ?2 UNION ALL SELECT ?1, owner FROM shares WHERE copy = ?2";

/// Copies the source rows `?1..=?2` (consecutive lines of a path) as the rows `?3` keys further
/// on in session `?4`, sharing their lines: the first row gets the derived columns `?5..=?9`,
/// the others the source's shifted by `?3` (depth by `?10`), except references to entries
/// before the run, which become `?11..=?13` (see `store::CopyRun`).
pub const COPY_PATH_RUN: &str = "INSERT INTO entries (key, session, seq, id, parent_id, type, ts, ts_ms, role, body, \
        body_key, parent_key, depth, compaction_key, thinking_key, model_key) \
    SELECT key + ?3, ?4, (key + ?3) & 4294967295, id, parent_id, type, ts, ts_ms, role, '', coalesce(body_key, key), \
        CASE WHEN key = ?1 THEN ?5 ELSE parent_key + ?3 END, \
        CASE WHEN key = ?1 THEN ?6 ELSE depth + ?10 END, \
        CASE WHEN key = ?1 THEN ?7 WHEN compaction_key >= ?1 THEN compaction_key + ?3 ELSE ?11 END, \
        CASE WHEN key = ?1 THEN ?8 WHEN thinking_key >= ?1 THEN thinking_key + ?3 ELSE ?12 END, \
        CASE WHEN key = ?1 THEN ?9 WHEN model_key >= ?1 THEN model_key + ?3 ELSE ?13 END \
    FROM entries WHERE key BETWEEN ?1 AND ?2";

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
