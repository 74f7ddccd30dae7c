-- The probes for an entry's copies run for every usage row written. With an index on entry_id
-- alone, the planner may walk search_usage's primary key instead (the rows before or after the
-- new one, or all of them in order for the first copy), reading every earlier row for each row
-- written: an `index --rebuild` of c10k after a few hundred per-turn syncs ran for more than
-- half an hour. An index on (entry_id, session, seq) answers each probe as one short range.
DROP INDEX search_usage_by_entry;
CREATE INDEX search_usage_by_entry ON search_usage(entry_id, session, seq) WHERE entry_id IS NOT NULL;

-- A day's row can only fall to zero entries when a row's values are taken out (sign -1), as on
-- SQLite; adding no longer looks for empty rows.
CREATE OR REPLACE FUNCTION search_usage_days_change(sign integer, r search_usage) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO search_usage_days AS d VALUES (r.session,
        CASE WHEN r.ts_ms IS NULL THEN -99999999
             ELSE (r.ts_ms / 1000 - ((r.ts_ms / 1000) % 86400 + 86400) % 86400) / 86400 END,
        coalesce(r.provider, '(unknown)'), coalesce(r.model, '(unknown)'), sign,
        sign * r.input, sign * r.output, sign * r.cache_read, sign * r.cache_write, sign * r.total,
        sign * r.cost, 0.0, sign * r.invalid)
    ON CONFLICT (session, day, provider, model) DO UPDATE SET
        entries = d.entries + excluded.entries, input = d.input + excluded.input,
        output = d.output + excluded.output, cache_read = d.cache_read + excluded.cache_read,
        cache_write = d.cache_write + excluded.cache_write, total = d.total + excluded.total,
        cost = d.cost + excluded.cost,
        cost_err = d.cost_err + CASE WHEN abs(d.cost) >= abs(excluded.cost)
            THEN (d.cost - (d.cost + excluded.cost)) + excluded.cost
            ELSE (excluded.cost - (d.cost + excluded.cost)) + d.cost END,
        invalid = d.invalid + excluded.invalid;
    IF sign < 0 THEN
        DELETE FROM search_usage_days WHERE session = r.session AND entries = 0;
    END IF;
END $$;
