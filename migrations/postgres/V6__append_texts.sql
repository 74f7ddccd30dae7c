-- An append keeps its message text in its entry row (`list_text`) instead of rewriting the
-- session's joined `all_text`, which made an append's cost grow with the session (1.1 ms after
-- 2,000 appends of 1 KiB, 1.5 ms after 3,000, with fsync off). `all_text` joins the texts of
-- lines up to `text_seq`; readers add the later lines' texts, and appends fold them in every
-- 256 lines. Rows written before this migration were exact up to their last line.
ALTER TABLE entries ADD COLUMN list_text bytea;
ALTER TABLE sessions ADD COLUMN text_seq bigint NOT NULL DEFAULT 0;
UPDATE sessions SET text_seq = last_seq;
