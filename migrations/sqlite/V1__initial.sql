-- One row per session file. `sid` is internal; the header id is not unique across projects.
CREATE TABLE sessions (
    sid            INTEGER PRIMARY KEY,
    id             TEXT    NOT NULL,           -- header id
    path           TEXT    NOT NULL UNIQUE,    -- absolute path of the session's file
    dir            TEXT    NOT NULL,           -- the directory holding that file
    rel_path       TEXT,                       -- path below the directory it was imported from
    cwd            TEXT,                       -- header cwd when it is a string
    version        INTEGER,                    -- header version after migration
    source_version INTEGER,                    -- header version in the file (1 when absent)
    created        TEXT,                       -- header timestamp, as written
    parent_session TEXT,                       -- header parentSession
    header         TEXT    NOT NULL,           -- the exact header line
    file_size      INTEGER,                    -- source file size at import
    file_mtime_ns  INTEGER,                    -- source file modification time at import
    name           TEXT,                       -- latest session_info name, trimmed; NULL when none
    message_count  INTEGER NOT NULL DEFAULT 0, -- message entries of any role, all branches
    first_message  TEXT,                       -- text of the first user message with text
    last_activity_ms INTEGER,                  -- newest user/assistant activity (SPEC 6)
    entry_count    INTEGER NOT NULL DEFAULT 0, -- entries (header excluded)
    last_seq       INTEGER NOT NULL DEFAULT 0, -- seq of the last stored line
    written_ns     INTEGER NOT NULL,           -- newest write: file mtime at import, or last append
    tree_ok        INTEGER NOT NULL DEFAULT 1  -- 1: every parent precedes its child and ids are unique,
                                               -- so the derived entry columns below are exact
);
CREATE INDEX sessions_by_id ON sessions(id);
CREATE INDEX sessions_by_cwd ON sessions(cwd, written_ns);
CREATE INDEX sessions_by_written ON sessions(written_ns);
CREATE INDEX sessions_by_dir ON sessions(dir, written_ns);

-- One row per entry line, in file order. The rowid packs (session, seq) so that a session's
-- lines are one contiguous range of the table's own b-tree: no extra index for file order.
CREATE TABLE entries (
    key       INTEGER PRIMARY KEY,             -- (session << 32) | seq
    session   INTEGER NOT NULL REFERENCES sessions(sid) ON DELETE CASCADE,
    seq       INTEGER NOT NULL,                -- 1-based position among the session's stored lines
    id        TEXT,                            -- entry id (NULL when not a string)
    parent_id TEXT,                            -- parentId (NULL when null, missing or not a string)
    type      TEXT,                            -- entry type (NULL when not a string)
    ts        TEXT,                            -- entry timestamp, as written
    ts_ms     INTEGER,                         -- new Date(timestamp).getTime(); NULL for NaN
    role      TEXT,                            -- message.role of a message entry
    body      TEXT    NOT NULL,                -- the exact line, without its terminator
    -- Derived once at insert from the parent, so that reads cost what they return:
    parent_key     INTEGER,                    -- key of the parent entry (the later line for a repeated id)
    depth          INTEGER,                    -- distance from the root
    compaction_key INTEGER,                    -- nearest compaction on the path (itself included)
    thinking_key   INTEGER,                    -- nearest thinking_level_change on the path
    model_key      INTEGER                     -- nearest model_change or assistant message on the path
);
CREATE INDEX entries_by_id ON entries(session, id);
CREATE INDEX entries_by_parent ON entries(session, parent_id);
-- Labels are resolved over the whole file; this partial index holds only label lines.
CREATE INDEX entries_labels ON entries(key) WHERE type = 'label';
