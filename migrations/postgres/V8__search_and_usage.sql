-- What search and stats read on a server, extracted from the stored lines by sessiondb itself
-- (store::extract, the code SQLite's import runs) in a catch-up before each search, stats or
-- index: push's COPY and the manager's appends write lines only. No foreign keys: a check per
-- row would slow the catch-up's COPY; rows of sessions deleted since are swept by the next one.

-- Per session: lines 1..upto are extracted, from the session row version `row_xmin` (an
-- unchanged row means nothing to do) and line `upto` version `line_xmin` (a session sent
-- again whole has new lines: its rows are extracted again from line 1).
CREATE TABLE search_progress (
    session   bigint PRIMARY KEY,
    upto      bigint NOT NULL,
    row_xmin  bigint NOT NULL,
    line_xmin bigint
);

-- Entries with searchable text (SQLite's `texts`): role (or entry type) and time, for hits.
CREATE TABLE search_texts (
    session bigint NOT NULL,
    seq     bigint NOT NULL,
    role    text COLLATE "C" NOT NULL,
    ts_ms   bigint,
    PRIMARY KEY (session, seq)
);

-- Token usage (SQLite's `usage`, V2 and V8).
CREATE TABLE search_usage (
    session     bigint NOT NULL,
    seq         bigint NOT NULL,
    entry_id    text COLLATE "C",
    ts          text COLLATE "C",
    ts_ms       bigint,
    provider    text COLLATE "C",
    model       text COLLATE "C",
    input       bigint NOT NULL,
    output      bigint NOT NULL,
    cache_read  bigint NOT NULL,
    cache_write bigint NOT NULL,
    total       bigint NOT NULL,
    cost        double precision NOT NULL,
    invalid     bigint NOT NULL,
    PRIMARY KEY (session, seq)
);

-- The word index as on SQLite (V10): per token and build batch, the keys (session << 32 | seq)
-- of the entries holding it, delta-encoded varints; the vocabulary; counters. Keys of lines
-- deleted or rewritten stay until a rebuild: search checks every candidate's line.
CREATE TABLE search_postings (
    token text COLLATE "C" NOT NULL,
    batch bigint NOT NULL,
    keys  bytea NOT NULL,
    PRIMARY KEY (token, batch)
);
CREATE TABLE search_terms (term text COLLATE "C" PRIMARY KEY);
CREATE TABLE search_meta (name text PRIMARY KEY, value bigint NOT NULL);
INSERT INTO search_meta (name, value) VALUES ('batch', 0), ('indexed', 0), ('deleted', 0);

-- A word a query cuts (a substring inside words) is looked up in the vocabulary by a trigram
-- index (pg_trgm: trusted since PostgreSQL 13, so the database owner may create it). Without
-- it the lookup scans the vocabulary: slower, same answers.
DO $$
BEGIN
    BEGIN
        CREATE EXTENSION IF NOT EXISTS pg_trgm;
    EXCEPTION WHEN OTHERS THEN
        RAISE NOTICE 'sessiondb: pg_trgm cannot be created (%): search scans the vocabulary instead', SQLERRM;
    END;
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
        EXECUTE 'CREATE INDEX search_terms_trgm ON search_terms USING gin (term gin_trgm_ops)';
    END IF;
END $$;
