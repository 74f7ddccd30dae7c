-- The SessionManager on PostgreSQL: sessions made on the server (origin '') and their entries
-- carry the derived columns SQLite's entries do (see migrations/ and store::derive), so the
-- tree, paths and projection are read the same way. Keys are `session << 32 | seq`, as on
-- SQLite; they are computed, not stored, except in the derived columns that point at entries.
ALTER TABLE sessions ADD COLUMN tree_ok boolean NOT NULL DEFAULT false;  -- derived columns exact
ALTER TABLE sessions ADD COLUMN has_text boolean NOT NULL DEFAULT false; -- all_text joins a text already
ALTER TABLE entries
    ADD COLUMN role           text,     -- message.role
    ADD COLUMN ts_ms          bigint,   -- new Date(timestamp).getTime()
    ADD COLUMN parent_key     bigint,   -- key of the parent entry
    ADD COLUMN depth          bigint,   -- distance from the root
    ADD COLUMN compaction_key bigint,   -- nearest compaction on the path
    ADD COLUMN thinking_key   bigint,   -- nearest thinking-level change on the path
    ADD COLUMN model_key      bigint;   -- nearest model change or assistant message on the path
CREATE INDEX entries_labels ON entries(session, seq) WHERE type = 'label';
CREATE INDEX sessions_by_origin_dir ON sessions(origin, dir, written_ns);
