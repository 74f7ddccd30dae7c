-- What search and statistics read, extracted from each entry when it is written (never from
-- bodies at query time).

-- Entries with searchable text (user/assistant text, thinking, tool calls and results, custom
-- messages, summaries, session names) and, for user/assistant messages, the text pi's
-- SessionInfo.allMessagesText joins. The searchable text itself is not stored twice: the
-- index is built from the entry lines.
CREATE TABLE texts (
    key       INTEGER PRIMARY KEY,             -- the entry's key
    session   INTEGER NOT NULL REFERENCES sessions(sid) ON DELETE CASCADE,
    role      TEXT    NOT NULL,                -- message role, or the entry type
    ts_ms     INTEGER,                         -- entry time
    list_text TEXT                             -- pi's extractTextContent for user/assistant messages
);
CREATE INDEX texts_by_session ON texts(session);

-- Trigram full-text index (substrings inside words, CJK), contentless: snippets are cut from
-- the entry line. Trigram indexing costs ~4 s per 100 MB of text, far more than storing
-- entries, so new entries are queued in fts_pending and indexed in batches (before a
-- search, by `sessiondb index`) instead of slowing every import and append.
CREATE VIRTUAL TABLE texts_fts USING fts5(text, content='', contentless_delete=1, tokenize='trigram');
CREATE TABLE fts_pending (key INTEGER PRIMARY KEY);
CREATE TRIGGER texts_ai AFTER INSERT ON texts BEGIN
    INSERT INTO fts_pending(key) VALUES (new.key);
END;
-- An entry leaves the queue or the index with its row.
CREATE TRIGGER texts_ad AFTER DELETE ON texts BEGIN
    DELETE FROM fts_pending WHERE key = old.key;
    DELETE FROM texts_fts WHERE rowid = old.key;
END;

-- Token usage of assistant messages, usage entries, compactions and branch summaries.
CREATE TABLE usage (
    key         INTEGER PRIMARY KEY,           -- the entry's key
    session     INTEGER NOT NULL REFERENCES sessions(sid) ON DELETE CASCADE,
    entry_id    TEXT,                          -- with ts: copies made by forks count once
    ts          TEXT,
    ts_ms       INTEGER,
    provider    TEXT,
    model       TEXT,
    input       INTEGER NOT NULL DEFAULT 0,
    output      INTEGER NOT NULL DEFAULT 0,
    cache_read  INTEGER NOT NULL DEFAULT 0,
    cache_write INTEGER NOT NULL DEFAULT 0,
    total       INTEGER NOT NULL DEFAULT 0,
    cost        REAL    NOT NULL DEFAULT 0
);
CREATE INDEX usage_by_session ON usage(session);
CREATE INDEX usage_by_time ON usage(ts_ms);
CREATE INDEX usage_by_entry ON usage(entry_id, ts);

-- Work a migration leaves for sessiondb's own code (run when the database is next opened).
CREATE TABLE maintenance (task TEXT PRIMARY KEY);
INSERT INTO maintenance(task) SELECT 'reindex' WHERE EXISTS (SELECT 1 FROM entries);
