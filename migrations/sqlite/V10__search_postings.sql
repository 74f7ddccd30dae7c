-- The search index holds its own postings instead of FTS5's: for each word token, the keys of
-- the entries holding it, sorted and delta-encoded, one row per token and build batch. An
-- index build writes each batch's rows in token order at once (FTS5 inserted each entry's
-- tokens one by one: 30% of a build, most of the rest its page writes). A line shared by
-- forks and branched sessions is indexed once, under the key of the row holding it; its
-- copies are found at query time through `search_copies`. Deleted entries stay in the
-- postings until a rebuild: search checks every candidate against its row anyway.
DROP TRIGGER texts_ad;
DROP TABLE search_fts;
DELETE FROM search_terms;

CREATE TABLE search_postings (
    token TEXT    NOT NULL,
    batch INTEGER NOT NULL,                    -- the build batch that wrote the row
    keys  BLOB    NOT NULL,                    -- entry keys: the first, then the gaps, as varints
    PRIMARY KEY (token, batch)
) WITHOUT ROWID;

-- Runs of copies: the entries `owner_lo..=owner_hi` (one session) have copies at their key
-- plus `shift`, where those keys are copies of them (search checks each one).
CREATE TABLE search_copies (
    owner_lo INTEGER NOT NULL,
    owner_hi INTEGER NOT NULL,
    shift    INTEGER NOT NULL,
    PRIMARY KEY (owner_lo, owner_hi, shift)
) WITHOUT ROWID;

-- Counters: `batch` (the last build batch), `indexed` (entries and copies indexed since the
-- last rebuild), `deleted` (searchable entries deleted since: a rebuild is due when they are
-- half of what was indexed).
CREATE TABLE search_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO search_meta (name, value) VALUES ('batch', 0), ('indexed', 0), ('deleted', 0);

CREATE TRIGGER texts_ad AFTER DELETE ON texts BEGIN
    DELETE FROM fts_pending WHERE key = old.key;
    UPDATE search_meta SET value = value + 1 WHERE name = 'deleted';
END;

-- A copy that gets its line (the session holding it was deleted) now owns it: index it.
CREATE TRIGGER search_owned_lines AFTER UPDATE OF body_key ON entries
WHEN old.body_key IS NOT NULL AND new.body_key IS NULL BEGIN
    INSERT OR IGNORE INTO fts_pending (key) SELECT key FROM texts WHERE key = new.key;
END;

-- Everything is indexed again, the new way (by the next import, sync, search or `index`).
INSERT OR IGNORE INTO fts_pending (key) SELECT key FROM texts;
