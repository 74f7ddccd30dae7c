-- No query reads usage by entry id: `stats` groups copies by (entry_id, ts) through a
-- temporary b-tree, not this index. Keyed by random ids, it was the b-tree a fork or an import
-- wrote at the most scattered places (about 30 of a small fork's 67 WAL frames).
DROP INDEX usage_by_entry;
