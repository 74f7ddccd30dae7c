-- A forked session's entries share the lines of the session they were copied from: the copy's
-- row holds '' and the key of the row that holds the line (never itself a copy), so a fork
-- writes its small rows only. Only copies are in this index.
ALTER TABLE entries ADD COLUMN body_key INTEGER;
CREATE INDEX entries_shared ON entries(body_key) WHERE body_key IS NOT NULL;

-- Every entry with its line, wherever the line is stored: what reads of lines go through.
CREATE VIEW entry_lines AS
    SELECT e.key, e.session, e.seq, e.id, e.parent_id, e.type, e.ts, e.ts_ms, e.role,
        CASE WHEN e.body_key IS NULL THEN e.body
             ELSE (SELECT o.body FROM entries o WHERE o.key = e.body_key) END AS body,
        e.parent_key, e.depth, e.compaction_key, e.thinking_key, e.model_key
    FROM entries e;

-- A session's rows leave with it: copies of its lines in other sessions get the line first.
CREATE TRIGGER sessions_keep_shared_lines BEFORE DELETE ON sessions BEGIN
    UPDATE entries SET body = (SELECT o.body FROM entries o WHERE o.key = entries.body_key), body_key = NULL
    WHERE body_key BETWEEN old.sid << 32 AND (old.sid << 32) | 4294967295;
END;
