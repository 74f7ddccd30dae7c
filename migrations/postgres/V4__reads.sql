-- Every command on PostgreSQL (issue 20): session references by path on any origin, and the
-- session written last (recent), each answered from an index as on SQLite.
CREATE INDEX sessions_by_path ON sessions(path);
CREATE INDEX sessions_by_origin_written ON sessions(origin, written_ns);
-- `list --json` reads every listed session's allMessagesText. Out of line (the default past
-- ~2 kB a row) each value is fetched chunk by chunk from the TOAST table: a third of `list`'s
-- time for the busiest folder of c1k (212 sessions, 1.2 MB of text, 765 kB compressed). Rows
-- up to a page keep it inline, compressed; longer texts still go out of line.
ALTER TABLE sessions SET (toast_tuple_target = 8160);
-- Rows written before: rewrite those whose text now fits (the concatenation is a new value,
-- compressed and placed again).
UPDATE sessions SET all_text = all_text || ''::bytea WHERE pg_column_size(all_text) < 7000;
