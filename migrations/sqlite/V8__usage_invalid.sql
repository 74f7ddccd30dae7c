-- Usage values that are not finite numbers in [0, 2^53] (1e400, -1, 1e20 tokens in old, forked
-- or hand-edited files) are left out of every sum; each usage row counts the values it left
-- out, so that stats can say how many there were.
ALTER TABLE usage ADD COLUMN invalid INTEGER NOT NULL DEFAULT 0;
-- Rows written before this migration hold those values: extract them again from the lines.
INSERT INTO maintenance(task) SELECT 'usage' WHERE EXISTS (SELECT 1 FROM usage);
