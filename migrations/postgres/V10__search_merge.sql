-- Postings that stay merged (issue 29), as on SQLite (V12): the merge policy of
-- src/store/search/merge.rs merges the small build batches into the tail token by token,
-- reading the small batches' rows (the index below) and the tail's rows of their tokens, and
-- dropping the keys of lines deleted or rewritten since that no line holds now.

CREATE INDEX search_postings_batch ON search_postings (batch);

-- Every build batch holding postings, with the bytes of its key lists.
CREATE TABLE search_batches (
    batch bigint PRIMARY KEY,
    bytes bigint NOT NULL,
    first bigint NOT NULL                      -- the oldest build batch whose keys it holds
);
INSERT INTO search_batches (batch, bytes, first) SELECT batch, sum(length(keys)), batch FROM search_postings GROUP BY batch;

-- Lines whose search rows a catch-up dropped (session gone or sent again), with the last
-- build batch written then (a session sent again is indexed again under the same keys, which
-- merges keep). A rebuild empties the table.
CREATE TABLE search_deleted (
    session bigint NOT NULL,
    seq     bigint NOT NULL,
    batch   bigint NOT NULL,
    PRIMARY KEY (session, seq)
);
CREATE INDEX search_deleted_batch ON search_deleted (batch);
