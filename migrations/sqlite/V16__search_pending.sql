-- The queue of texts the word index has not read yet keeps the name of the full-text index it
-- was made for (FTS5, dropped by V9). Renamed for what it is; SQLite rewrites the triggers
-- that write to it (V10, V12).
ALTER TABLE fts_pending RENAME TO search_pending;
