-- Entry lines stored as zstd frames (src/store/codec.rs, store/sqlite/lines.rs). `body` holds
-- either the line itself (TEXT) or its frame (BLOB); `body_dict` names the dictionary the frame
-- was packed with (NULL: none). A copy's row still holds '' and the key of the row holding its
-- line. Dictionaries are trained from the database's own lines and never change: their id is
-- the one zstd writes in the dictionary's header.
CREATE TABLE line_dicts (
    id         INTEGER PRIMARY KEY,
    dict       BLOB    NOT NULL,
    trained_ns INTEGER NOT NULL
);
ALTER TABLE entries ADD COLUMN body_dict INTEGER REFERENCES line_dicts(id);
-- The joined allMessagesText, packed the same way.
ALTER TABLE list_texts ADD COLUMN text_dict INTEGER REFERENCES line_dicts(id);

-- Reads of lines unpack them with sessiondb's SQL function sessiondb_line(body, body_dict),
-- which every connection sessiondb opens has.
DROP VIEW entry_lines;
CREATE VIEW entry_lines AS
    SELECT e.key, e.session, e.seq, e.id, e.parent_id, e.type, e.ts, e.ts_ms, e.role,
        CASE WHEN e.body_key IS NULL THEN sessiondb_line(e.body, e.body_dict)
             ELSE (SELECT sessiondb_line(o.body, o.body_dict) FROM entries o WHERE o.key = e.body_key) END AS body,
        e.parent_key, e.depth, e.compaction_key, e.thinking_key, e.model_key
    FROM entries e;

-- A session's rows leave with it: copies of its lines in other sessions get the line (as
-- stored, packed or not, with its dictionary) first (V7's trigger, copying body_dict too).
DROP TRIGGER sessions_keep_shared_lines;
CREATE TRIGGER sessions_keep_shared_lines BEFORE DELETE ON sessions BEGIN
    UPDATE entries SET (body, body_dict, body_key) =
        (SELECT o.body, o.body_dict, NULL FROM entries o WHERE o.key = entries.body_key)
    WHERE key IN (
        SELECT c.key FROM shares s JOIN entries c ON c.key BETWEEN s.copy << 32 AND (s.copy << 32) | 4294967295
        WHERE s.owner = old.sid AND c.body_key BETWEEN old.sid << 32 AND (old.sid << 32) | 4294967295);
    DELETE FROM shares WHERE owner = old.sid;
    DELETE FROM shares WHERE copy = old.sid;
END;

-- The lines stored before are packed by sessiondb's code, a slice at a time (resumable).
INSERT INTO maintenance(task) SELECT 'compress-lines' WHERE EXISTS (SELECT 1 FROM entries);
