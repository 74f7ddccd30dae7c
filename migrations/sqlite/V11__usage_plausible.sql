-- A usage value counts only when it is plausible for one entry: tokens a whole number up to
-- 10^9, a cost up to 10^6 (store::extract). Rows written before hold values up to 2^53 (the
-- README's sample sessions summed 9e15 output tokens): extract them again from the lines.
INSERT INTO maintenance(task) SELECT 'usage' WHERE EXISTS (SELECT 1 FROM usage);
