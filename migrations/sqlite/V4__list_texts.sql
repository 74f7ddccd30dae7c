-- pi's allMessagesText of each session, joined once when the session is written whole, so
-- that listing reads one row per session instead of one per message. It is exact up to line
-- upto_seq; lines appended after that are read from texts (and folded in by `index`).
CREATE TABLE list_texts (
    sid      INTEGER PRIMARY KEY REFERENCES sessions(sid) ON DELETE CASCADE,
    upto_seq INTEGER NOT NULL,
    text     TEXT    NOT NULL
);
INSERT INTO maintenance(task) SELECT 'list-texts' WHERE EXISTS (SELECT 1 FROM entries);
