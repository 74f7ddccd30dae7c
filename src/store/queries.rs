//! Every SQL statement sessiondb runs, by name. The schema lives in `migrations/`.

/// Newest applied schema migration.
pub const SCHEMA_VERSION: &str = "SELECT max(version) FROM refinery_schema_history";

/// A session's row by path.
pub const SESSION_BY_PATH: &str = "SELECT sid, file_size, file_mtime_ns FROM sessions WHERE path = ?1";

/// Removes a session (its entries go by cascade).
pub const DELETE_SESSION: &str = "DELETE FROM sessions WHERE sid = ?1";

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

/// A session's entry lines in file order: one range of the table b-tree.
pub const ENTRY_BODIES: &str = "SELECT body FROM entry_lines WHERE key BETWEEN ?1 AND ?2 ORDER BY key";

/// Every session, for `export --all`.
pub const ALL_SESSIONS: &str = "SELECT sid FROM sessions ORDER BY sid";

/// Sessions whose header id is exactly `?1`.
pub const SESSIONS_BY_ID: &str = "SELECT sid, id, path FROM sessions WHERE id = ?1 ORDER BY sid";

/// Sessions whose header id starts with `?1` (`?2` is `?1` followed by U+10FFFF): an index
/// range, not a scan.
pub const SESSIONS_BY_ID_PREFIX: &str =
    "SELECT sid, id, path FROM sessions WHERE id >= ?1 AND id < ?2 ORDER BY id LIMIT 50";

/// Whether a session's derived entry columns can be trusted, and its entry count.
pub const SESSION_TREE_STATE: &str = "SELECT tree_ok, entry_count FROM sessions WHERE sid = ?1";

/// The last entry of a session (keys `?1..=?2`), header lines excluded.
pub const LAST_ENTRY: &str = "SELECT key, id, parent_id, type, role, ts_ms, body, parent_key, depth, \
    compaction_key, thinking_key, model_key FROM entry_lines \
    WHERE key BETWEEN ?1 AND ?2 AND type IS NOT 'session' ORDER BY key DESC LIMIT 1";

/// The entry with id `?2` in session `?1`: the later line wins for a repeated id.
pub const ENTRY_BY_ID: &str = "SELECT key, id, parent_id, type, role, ts_ms, body, parent_key, depth, \
    compaction_key, thinking_key, model_key FROM entry_lines \
    WHERE session = ?1 AND id = ?2 AND type IS NOT 'session' ORDER BY key DESC LIMIT 1";

/// The entry stored under a key.
pub const ENTRY_BY_KEY: &str = "SELECT key, id, parent_id, type, role, ts_ms, body, parent_key, depth, \
    compaction_key, thinking_key, model_key FROM entry_lines WHERE key = ?1";

/// Every entry of a session (keys `?1..=?2`) in file order, header lines excluded.
pub const ALL_ENTRIES: &str = "SELECT key, id, parent_id, type, role, ts_ms, body, parent_key, depth, \
    compaction_key, thinking_key, model_key FROM entry_lines \
    WHERE key BETWEEN ?1 AND ?2 AND type IS NOT 'session' ORDER BY key";

/// Keys and lines of the entries of a session (keys `?1..=?2`) in file order, header lines
/// excluded. (Readers stop stepping after a batch: a bound LIMIT would make SQLite prepare it
/// again on every run.)
pub const LINES_FROM: &str = "SELECT key, body FROM entry_lines \
    WHERE key BETWEEN ?1 AND ?2 AND type IS NOT 'session' ORDER BY key";

/// Label lines of a session (keys `?1..=?2`) in file order, through the partial label index.
pub const LABEL_ENTRIES: &str = "SELECT key, id, parent_id, type, role, ts_ms, body, parent_key, depth, \
    compaction_key, thinking_key, model_key FROM entry_lines \
    WHERE key BETWEEN ?1 AND ?2 AND type = 'label' ORDER BY key";

/// Children of entry `?2` in session `?1` (regular trees), in file order.
pub const CHILDREN: &str = "SELECT key, id, parent_id, type, role, ts_ms, body, parent_key, depth, \
    compaction_key, thinking_key, model_key FROM entry_lines \
    WHERE session = ?1 AND parent_id = ?2 AND type IS NOT 'session' ORDER BY key";

/// Walks from entry `?1` to its root through `parent_key`, one primary-key lookup per step
/// (the CTE drives, the table is searched: never a scan). Stops after entry `?2` (when not
/// NULL) and after `?3` rows (at least one), so a parent cycle cannot run forever. Leaf first.
/// The row limit is a condition, not `LIMIT ?3`: a bound LIMIT makes SQLite prepare the
/// statement again every time it is run.
pub const WALK_UP: &str = "WITH RECURSIVE walk(n, key, id, parent_id, type, role, ts_ms, body, parent_key, depth, \
        compaction_key, thinking_key, model_key) AS ( \
        SELECT 0, key, id, parent_id, type, role, ts_ms, body, parent_key, depth, compaction_key, thinking_key, \
            model_key FROM entry_lines WHERE key = ?1 \
        UNION ALL \
        SELECT w.n + 1, e.key, e.id, e.parent_id, e.type, e.role, e.ts_ms, e.body, e.parent_key, e.depth, \
            e.compaction_key, e.thinking_key, e.model_key \
        FROM walk w CROSS JOIN entry_lines e ON e.key = w.parent_key \
        WHERE w.key IS NOT ?2 AND w.n + 1 < ?3) \
    SELECT key, id, parent_id, type, role, ts_ms, body, parent_key, depth, compaction_key, thinking_key, model_key \
    FROM walk";

/// [`WALK_UP`] without the lines: key, type and role of each entry from `?1` up, at most
/// `?2` of them, leaf first.
pub const WALK_UP_STEPS: &str = "WITH RECURSIVE walk(n, key, type, role, parent_key) AS ( \
        SELECT 1, key, type, role, parent_key FROM entries WHERE key = ?1 \
        UNION ALL \
        SELECT w.n + 1, e.key, e.type, e.role, e.parent_key FROM walk w CROSS JOIN entries e ON e.key = w.parent_key \
        WHERE w.n < ?2) \
    SELECT key, type, role FROM walk";

/// Sessions whose file is in folder `?1`, most recently written first (continue-recent).
pub const SESSIONS_IN_DIR_BY_RECENCY: &str =
    "SELECT sid, path, cwd FROM sessions WHERE dir = ?1 ORDER BY written_ns DESC";

/// Sessions with header id `?1` whose file is in folder `?2` (find-by-id).
pub const SESSIONS_WITH_ID_IN_DIR: &str = "SELECT path, cwd FROM sessions WHERE id = ?1 AND dir = ?2 ORDER BY sid";

/// Key and derived columns of entry `?2` in session `?1` (the later line for a repeated id).
pub const ENTRY_NODE: &str = "SELECT key, parent_key, depth, compaction_key, thinking_key, model_key FROM entries \
    WHERE session = ?1 AND id = ?2 AND type IS NOT 'session' ORDER BY key DESC LIMIT 1";

/// SessionInfo columns of the sessions in folder `?1`.
pub const SESSION_INFOS_IN_DIR: &str = "SELECT sid, path, id, cwd, name, created, parent_session, message_count, \
    last_activity_ms, first_message, coalesce(file_mtime_ns, written_ns), last_seq FROM sessions WHERE dir = ?1";

/// SessionInfo columns of every session.
pub const SESSION_INFOS_ALL: &str = "SELECT sid, path, id, cwd, name, created, parent_session, message_count, \
    last_activity_ms, first_message, coalesce(file_mtime_ns, written_ns), last_seq FROM sessions";

/// A session's joined `allMessagesText` and the line it is exact up to.
pub const LIST_TEXT_CACHED: &str = "SELECT upto_seq, text FROM list_texts WHERE sid = ?1";

/// Every session's joined `allMessagesText` (for listing most of the sessions at once).
pub const LIST_TEXT_CACHED_ALL: &str = "SELECT sid, upto_seq, text FROM list_texts";

/// Number of sessions.
pub const SESSION_COUNT: &str = "SELECT count(*) FROM sessions";

/// Stores a session's joined `allMessagesText`, exact up to line `?2`.
pub const SAVE_LIST_TEXT: &str = "INSERT OR REPLACE INTO list_texts (sid, upto_seq, text) VALUES (?1, ?2, ?3)";

/// Rebuilds the joined `allMessagesText` of every session from the texts table.
pub const REBUILD_LIST_TEXTS: &str = "INSERT OR REPLACE INTO list_texts (sid, upto_seq, text) \
    SELECT s.sid, s.last_seq, coalesce((SELECT group_concat(t.list_text, ' ' ORDER BY t.key) FROM texts t \
        WHERE t.key BETWEEN s.sid << 32 AND (s.sid << 32) | 4294967295 AND t.list_text IS NOT NULL), '') \
    FROM sessions s";

/// Sessions whose joined `allMessagesText` misses lines appended since (`index` folds them in).
pub const STALE_LIST_TEXTS: &str =
    "SELECT s.sid FROM sessions s JOIN list_texts l ON l.sid = s.sid WHERE l.upto_seq < s.last_seq";

/// Starts a write transaction at once (on a shared connection, without rusqlite's `&mut`).
pub const BEGIN_IMMEDIATE: &str = "BEGIN IMMEDIATE";

/// Ends a transaction started with [`BEGIN_IMMEDIATE`].
pub const COMMIT: &str = "COMMIT";

/// Abandons a transaction started with [`BEGIN_IMMEDIATE`].
pub const ROLLBACK: &str = "ROLLBACK";

/// Forgets a session's joined `allMessagesText` (it outgrew the limit).
pub const DROP_LIST_TEXT: &str = "DELETE FROM list_texts WHERE sid = ?1";

/// A session's last line number.
pub const SESSION_LAST_SEQ: &str = "SELECT last_seq FROM sessions WHERE sid = ?1";

/// The user/assistant message texts of a session (keys `?1..=?2`) in file order.
pub const LIST_TEXTS: &str =
    "SELECT list_text FROM texts WHERE key BETWEEN ?1 AND ?2 AND list_text IS NOT NULL ORDER BY key";

/// SessionInfo columns of sessions whose folder sorts in `[?1, ?2)` (below one root).
pub const SESSION_INFOS_UNDER: &str = "SELECT sid, path, id, cwd, name, created, parent_session, message_count, \
    last_activity_ms, first_message, coalesce(file_mtime_ns, written_ns), last_seq FROM sessions WHERE dir >= ?1 AND dir < ?2";

/// SessionInfo columns of sessions with header cwd `?1`.
pub const SESSION_INFOS_FOR_CWD: &str = "SELECT sid, path, id, cwd, name, created, parent_session, message_count, \
    last_activity_ms, first_message, coalesce(file_mtime_ns, written_ns), last_seq FROM sessions WHERE cwd = ?1";

/// The session written last.
pub const MOST_RECENT_SESSION: &str = "SELECT sid, path FROM sessions ORDER BY written_ns DESC LIMIT 1";

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

/// Path rows `?1..=?2` of a session to branch from: columns, the line wherever it is stored,
/// derived columns and the search row's list text.
pub const BRANCH_SOURCE_ROWS: &str = "SELECT e.key, e.id, e.parent_id, e.type, e.ts, e.ts_ms, e.role, \
        CASE WHEN e.body_key IS NULL THEN e.body ELSE (SELECT o.body FROM entries o WHERE o.key = e.body_key) END, \
        e.parent_key, e.depth, e.compaction_key, e.thinking_key, e.model_key, t.list_text \
    FROM entries e LEFT JOIN texts t ON t.key = e.key WHERE e.key BETWEEN ?1 AND ?2 ORDER BY e.key";

/// The lowest and highest keys of search rows.
pub const TEXT_KEY_RANGE: &str = "SELECT min(key), max(key) FROM texts";

/// The first search row at or after key `?1`, with its entry's line.
pub const TEXT_LINE_FROM: &str = "SELECT e.body FROM texts t JOIN entry_lines e ON e.key = t.key \
    WHERE t.key >= ?1 ORDER BY t.key LIMIT 1";

/// Usage totals grouped by `?1` (`day`, `week`, `month`, `model`, `provider`, `project`,
/// `session` or `all`), filtered by `?2` since (ms), `?3` until (ms), `?4` cwd. Copies of an
/// entry (same id and timestamp, made by forks) count once, for the first session holding it.
pub const USAGE_TOTALS: &str = "WITH firsts AS ( \
        SELECT min(u.key) AS key FROM usage u JOIN sessions s ON s.sid = u.session \
        WHERE (?2 IS NULL OR u.ts_ms >= ?2) AND (?3 IS NULL OR u.ts_ms < ?3) AND (?4 IS NULL OR s.cwd = ?4) \
        GROUP BY coalesce(u.entry_id, u.key), u.ts) \
    SELECT CASE ?1 \
            WHEN 'day' THEN strftime('%Y-%m-%d', u.ts_ms / 1000, 'unixepoch') \
            WHEN 'week' THEN strftime('%Y-W%W', u.ts_ms / 1000, 'unixepoch') \
            WHEN 'month' THEN strftime('%Y-%m', u.ts_ms / 1000, 'unixepoch') \
            WHEN 'model' THEN coalesce(u.model, '(unknown)') \
            WHEN 'provider' THEN coalesce(u.provider, '(unknown)') \
            WHEN 'project' THEN coalesce(s.cwd, '') \
            WHEN 'session' THEN s.id \
            ELSE 'all' END AS grp, \
        count(*), total(u.input), total(u.output), total(u.cache_read), total(u.cache_write), total(u.total), total(u.cost), \
        sum(u.invalid) \
    FROM firsts f JOIN usage u ON u.key = f.key JOIN sessions s ON s.sid = u.session \
    GROUP BY grp ORDER BY grp";

/// SQLite's check of the database file (at most 100 problems).
pub const INTEGRITY_CHECK: &str = "PRAGMA integrity_check(100)";

/// Rows whose foreign key points at a missing row.
pub const FOREIGN_KEY_CHECK: &str = "PRAGMA foreign_key_check";

/// Copies whose line is not where they point (`missing` = 1), or whose session is not recorded
/// as sharing lines of the session holding it (so deleting that session would lose the line).
pub const CHECK_SHARED_LINES: &str = "SELECT c.key, c.body_key, (o.key IS NULL OR o.body_key IS NOT NULL) AS missing \
    FROM entries c LEFT JOIN entries o ON o.key = c.body_key \
    WHERE c.body_key IS NOT NULL AND (o.key IS NULL OR o.body_key IS NOT NULL \
        OR NOT EXISTS (SELECT 1 FROM shares s WHERE s.copy = c.key >> 32 AND s.owner = c.body_key >> 32)) \
    ORDER BY c.key";

/// Every session with what `check` compares its lines against.
pub const CHECK_SESSIONS: &str = "SELECT sid, id, path, cwd, entry_count, last_seq, tree_ok FROM sessions ORDER BY sid";

/// One session with what `check` compares its lines against.
pub const CHECK_SESSION: &str =
    "SELECT sid, id, path, cwd, entry_count, last_seq, tree_ok FROM sessions WHERE sid = ?1";

/// A session's lines (keys `?1..=?2`) in file order for `check`: the bodies only of the
/// entries whose targets it checks.
pub const CHECK_ENTRIES: &str = "SELECT seq, id, parent_id, type, \
        CASE WHEN type IN ('label', 'context_edit', 'compaction') THEN body END \
    FROM entry_lines WHERE key BETWEEN ?1 AND ?2 ORDER BY key";
