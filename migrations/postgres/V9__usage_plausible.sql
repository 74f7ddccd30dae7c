-- A usage value counts only when it is plausible for one entry: tokens a whole number up to
-- 10^9, a cost up to 10^6 (store::extract; SQLite's migration 11). The usage rows extracted
-- before hold values up to 2^53: empty what the catch-up extracted (as `index --rebuild`
-- does), so that the next search, stats or index extracts every line again.
TRUNCATE search_progress, search_texts, search_usage, search_postings, search_terms;
UPDATE search_meta SET value = 0;
