-- What pi's tree selector reads of an assistant message (src/pi/tree_row.rs: whether it has
-- text, its stopReason, its tool calls), stored with the line when it is written: `/tree` on a
-- long session read and unpacked every assistant's line for it (83 MB on the bench's
-- 100,000-entry session, 0.8 s). NULL for other entries, for lines the row cannot answer, and
-- for rows written before this column: the reader then scans the line.
ALTER TABLE entries ADD COLUMN tree_row TEXT;
