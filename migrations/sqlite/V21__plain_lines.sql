-- What a branched session needs to share a line without reading it, noted when the line is
-- written: `plain` is NULL when the line is not known to be exactly what JSON.stringify writes
-- for it (rows written before this migration, lines pi would write otherwise), 1 when it is,
-- 2 when it is and it is a user or assistant message with content: activity as pi counts it,
-- at `activity_ms` (message.timestamp when it is a number that differs from the entry's time),
-- else at `ts_ms`. Rows written before stay NULL: a branch reads and checks their lines.
ALTER TABLE entries ADD COLUMN plain INTEGER;
ALTER TABLE entries ADD COLUMN activity_ms REAL;
