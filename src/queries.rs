//! Every SQL statement sessiondb runs, by name. The schema lives in `migrations/`.

/// Newest applied schema migration.
pub const SCHEMA_VERSION: &str = "SELECT max(version) FROM refinery_schema_history";

/// A session's row by path.
pub const SESSION_BY_PATH: &str = "SELECT sid, file_size, file_mtime_ns FROM sessions WHERE path = ?1";

/// Removes a session (its entries go by cascade).
pub const DELETE_SESSION: &str = "DELETE FROM sessions WHERE sid = ?1";

/// Adds a session row; statistics are filled in by [`UPDATE_SESSION_STATS`].
pub const INSERT_SESSION: &str = "INSERT INTO sessions \
    (id, path, rel_path, cwd, version, source_version, created, parent_session, header, \
     file_size, file_mtime_ns, written_ns) \
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)";

/// Sets a session's discovery fields and counters after its entries were written.
pub const UPDATE_SESSION_STATS: &str = "UPDATE sessions SET name = ?2, message_count = ?3, \
    first_message = ?4, last_activity_ms = ?5, entry_count = ?6, last_seq = ?7 WHERE sid = ?1";

/// Adds one entry line.
pub const INSERT_ENTRY: &str = "INSERT INTO entries (key, session, seq, id, parent_id, type, ts, body) \
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";

/// A session's entry lines in file order: one range of the table b-tree.
pub const ENTRY_BODIES: &str = "SELECT body FROM entries WHERE key BETWEEN ?1 AND ?2 ORDER BY key";

/// Header line and storage fields of a session.
pub const SESSION_HEADER: &str = "SELECT header, path, rel_path, cwd, id, created FROM sessions WHERE sid = ?1";

/// Every session, for `export --all`.
pub const ALL_SESSIONS: &str = "SELECT sid FROM sessions ORDER BY sid";

/// Sessions whose header id is exactly `?1`.
pub const SESSIONS_BY_ID: &str = "SELECT sid, id, path FROM sessions WHERE id = ?1 ORDER BY sid";

/// Sessions whose header id starts with `?1` (`?2` is `?1` followed by U+10FFFF): an index
/// range, not a scan.
pub const SESSIONS_BY_ID_PREFIX: &str =
    "SELECT sid, id, path FROM sessions WHERE id >= ?1 AND id < ?2 ORDER BY id LIMIT 50";

/// Totals for the summary line.
pub const COUNT_SESSIONS_AND_ENTRIES: &str = "SELECT count(*), coalesce(sum(entry_count), 0) FROM sessions";

/// The session recorded at a path.
pub const SESSION_REF_BY_PATH: &str = "SELECT sid, id, path FROM sessions WHERE path = ?1";
