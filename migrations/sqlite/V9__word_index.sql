-- The search index holds each entry's distinct word tokens (see src/store/tokens.rs) instead of
-- every trigram of its text: about a sixth of the tokens, no positions (detail=none), so it
-- builds in seconds rather than minutes. Words cut by a query (a substring inside a word) are
-- found through the vocabulary; every candidate is checked against the entry's text.
DROP TRIGGER texts_ad;
DROP TABLE texts_fts;
CREATE VIRTUAL TABLE search_fts USING fts5(tokens, content='', contentless_delete=1, tokenize='ascii', detail='none');
-- Every token ever indexed (tokens of deleted entries stay: they only add candidates).
CREATE TABLE search_terms (term TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TRIGGER texts_ad AFTER DELETE ON texts BEGIN
    DELETE FROM fts_pending WHERE key = old.key;
    DELETE FROM search_fts WHERE rowid = old.key;
END;
-- Everything is indexed again, the new way (by the next import, sync, search or `index`).
INSERT OR IGNORE INTO fts_pending(key) SELECT key FROM texts;
