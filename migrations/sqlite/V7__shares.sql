-- Which sessions share lines held by which: a fork or a branched session records each session
-- it may share lines from once, instead of one index row per shared line. The index rows of
-- the copies of one line sat together, so each new copy of a much-copied session wrote one
-- index page per line (43 of a small branch's 87 WAL frames after 400 branches of it).
CREATE TABLE shares (
    copy  INTEGER NOT NULL,                    -- sid of the session holding copies
    owner INTEGER NOT NULL,                    -- sid of a session that may hold their lines
    PRIMARY KEY (copy, owner)
) WITHOUT ROWID;
CREATE INDEX shares_by_owner ON shares(owner);
INSERT INTO shares (copy, owner) SELECT DISTINCT key >> 32, body_key >> 32 FROM entries WHERE body_key IS NOT NULL;

DROP TRIGGER sessions_keep_shared_lines;
DROP INDEX entries_shared;

-- A session's rows leave with it: copies of its lines in other sessions get the line first
-- (each copying session's rows are one key range).
CREATE TRIGGER sessions_keep_shared_lines BEFORE DELETE ON sessions BEGIN
    UPDATE entries SET body = (SELECT o.body FROM entries o WHERE o.key = entries.body_key), body_key = NULL
    WHERE key IN (
        SELECT c.key FROM shares s JOIN entries c ON c.key BETWEEN s.copy << 32 AND (s.copy << 32) | 4294967295
        WHERE s.owner = old.sid AND c.body_key BETWEEN old.sid << 32 AND (old.sid << 32) | 4294967295);
    DELETE FROM shares WHERE owner = old.sid;
    DELETE FROM shares WHERE copy = old.sid;
END;
