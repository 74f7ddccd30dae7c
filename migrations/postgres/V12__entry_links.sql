-- The linking columns of every entry, in file order per session, without the lines (SQLite's
-- migration 14): a long session's path is read by an index-only scan.
CREATE INDEX entries_links ON entries(session, seq) INCLUDE (id, parent_id, type, role);
