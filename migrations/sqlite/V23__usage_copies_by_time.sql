-- usage_by_entry finds the copies of an entry's usage (same id and timestamp). Keyed by the
-- timestamp first: a session's rows are written in time order, so the rows a fork or a
-- branched session copies, and the rows an import writes, land on a few neighbouring pages.
-- Keyed by the random entry id, each row landed on a page of its own: 43 of the 84 pages a
-- fork of a 76-line session wrote to the WAL were this index's.
DROP INDEX usage_by_entry;
CREATE INDEX usage_by_entry ON usage(ts, entry_id) WHERE entry_id IS NOT NULL;
