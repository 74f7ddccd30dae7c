-- The joined allMessagesText of each session is kept as text again, not packed (V17 packed
-- it): a listing reads every session's text, and unpacking them all doubled its time. They
-- are a few percent of a database. sessiondb's code unpacks those stored packed
-- (store/sqlite/lines.rs, unpack_list_texts).
INSERT INTO maintenance(task) SELECT 'unpack-list-texts' WHERE EXISTS (SELECT 1 FROM list_texts);
