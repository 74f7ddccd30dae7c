-- Following files pi is still writing: how far each file was read, a hash of the bytes just
-- before that point (an append leaves them alone, a rewrite does not), and whether the file
-- has disappeared.
ALTER TABLE sessions ADD COLUMN sync_offset INTEGER;
ALTER TABLE sessions ADD COLUMN tail_hash INTEGER;
ALTER TABLE sessions ADD COLUMN missing INTEGER NOT NULL DEFAULT 0;
