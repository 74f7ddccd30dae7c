-- The linking columns of every entry in file order, without the lines: a long session's path
-- (sessiondb-pi's getBranch, the outline of `serve`) is read from this index (~55 bytes an
-- entry) instead of the table's pages, which hold the lines. It leads with the key, not the
-- session, so that no query looking entries up by (session, id) or (session, parent_id) takes
-- it for a scan of the whole session; the one query reading it names it (INDEXED BY).
CREATE INDEX entries_links ON entries(key, id, parent_id, type, role);
