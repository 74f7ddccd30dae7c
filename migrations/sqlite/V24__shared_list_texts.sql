-- The search row of a copied line (a fork's or a branched session's row whose line another row
-- holds, entries.body_key) no longer repeats the line's list text: it stores '' (a list text
-- is never empty) and `text_parts` gives the holder's. A fork of the bench's 100,000-entry
-- session wrote 12.6 MB of list texts the database already held, about a third of its
-- writes. When the session holding a line goes, each copy takes the list text with the line
-- (sessions_keep_shared_lines gives copies their lines).
CREATE VIEW text_parts AS
    SELECT t.key, t.session,
        CASE WHEN t.list_text = '' THEN
            (SELECT o.list_text FROM entries e JOIN texts o ON o.key = e.body_key WHERE e.key = t.key)
        ELSE t.list_text END AS list_text
    FROM texts t;

CREATE TRIGGER texts_owned_lines AFTER UPDATE OF body_key ON entries
WHEN old.body_key IS NOT NULL AND new.body_key IS NULL BEGIN
    UPDATE texts SET list_text = (SELECT o.list_text FROM texts o WHERE o.key = old.body_key)
    WHERE key = new.key AND list_text = '';
END;
