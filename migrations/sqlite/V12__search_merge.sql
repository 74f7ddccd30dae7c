-- Postings that stay merged (issue 29): each catch-up writes its postings as one build batch,
-- and the merge policy of src/store/search/merge.rs merges the small batches, as they
-- accumulate, into the tail (the largest batch not frozen), token by token: it reads the small
-- batches' rows (by batch: the index below) and the tail's rows of their tokens, and drops the
-- keys of entries deleted since that no entry holds now.

-- The postings become a rowid table with its key as a unique index: a WITHOUT ROWID table
-- keeps each row in its key's b-tree, and a seek there reads every overflowing row it compares
-- against whole (SQLite assembles an overflowing cell to compare it), so writing a per-turn
-- batch's rows next to the common words' import rows (100 KiB and more each) read megabytes.
-- Copied in key order: a token's rows stay together in the table.
CREATE TABLE search_postings_v12 (
    token TEXT    NOT NULL,
    batch INTEGER NOT NULL,                    -- the build batch that wrote the row (or merged into)
    keys  BLOB    NOT NULL                     -- entry keys: the first, then the gaps, as varints
);
INSERT INTO search_postings_v12 (token, batch, keys) SELECT token, batch, keys FROM search_postings ORDER BY token, batch;
DROP TABLE search_postings;
ALTER TABLE search_postings_v12 RENAME TO search_postings;
CREATE UNIQUE INDEX search_postings_token ON search_postings (token, batch);
CREATE INDEX search_postings_batch ON search_postings (batch);

-- Every build batch holding postings, with the bytes of its key lists (the merge policy's
-- measure of a batch's size).
CREATE TABLE search_batches (
    batch INTEGER PRIMARY KEY,
    bytes INTEGER NOT NULL,
    first INTEGER NOT NULL                     -- the oldest build batch whose keys it holds
);
INSERT INTO search_batches (batch, bytes, first) SELECT batch, sum(length(keys)), batch FROM search_postings GROUP BY batch;

-- Entries deleted since the index was built, with the last build batch written when they
-- were: a merge reading batches holding keys that old drops those no entry holds now.
-- Deletions older than every batch a merge may read are forgotten; a rebuild empties the table.
CREATE TABLE search_deleted (
    key   INTEGER PRIMARY KEY,
    batch INTEGER NOT NULL
);
CREATE INDEX search_deleted_batch ON search_deleted (batch);

DROP TRIGGER texts_ad;
CREATE TRIGGER texts_ad AFTER DELETE ON texts BEGIN
    DELETE FROM fts_pending WHERE key = old.key;
    UPDATE search_meta SET value = value + 1 WHERE name = 'deleted';
    INSERT INTO search_deleted (key, batch) VALUES (old.key, (SELECT value FROM search_meta WHERE name = 'batch'))
        ON CONFLICT (key) DO UPDATE SET batch = excluded.batch;
END;
