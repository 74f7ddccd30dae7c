-- A usage row written with no copy of its entry anywhere (by far the most common: every row
-- of an import of distinct sessions) only adds its values to its day. V15's trigger ran five
-- statements for each row to find and settle copies, and made an import 1.2-1.4x slower;
-- that trigger now runs only when a copy exists, and this one (one probe of usage_by_entry in
-- its WHEN, one upsert) for the rest. The upsert is usage_days_apply's with sign 1, the same
-- arithmetic in the same order: the sums stay exactly as before.
DROP TRIGGER usage_days_ai;

CREATE TRIGGER usage_days_ai AFTER INSERT ON usage WHEN new.first = 1 AND EXISTS (
    SELECT 1 FROM usage o WHERE o.entry_id = new.entry_id AND o.ts IS new.ts AND o.key <> new.key) BEGIN
    UPDATE usage SET first = 0 WHERE key = new.key AND new.entry_id IS NOT NULL AND EXISTS (
        SELECT 1 FROM usage o WHERE o.entry_id = new.entry_id AND o.ts IS new.ts AND o.key < new.key);
    INSERT INTO usage_days_change
        SELECT -1, session, ts_ms, provider, model, input, output, cache_read, cache_write, total, cost, invalid
        FROM usage WHERE entry_id = new.entry_id AND ts IS new.ts AND key > new.key AND first = 1
            AND (SELECT first FROM usage WHERE key = new.key) = 1;
    UPDATE usage SET first = 0 WHERE entry_id = new.entry_id AND ts IS new.ts AND key > new.key AND first = 1
        AND (SELECT first FROM usage WHERE key = new.key) = 1;
    INSERT INTO usage_days_change
        SELECT 1, session, ts_ms, provider, model, input, output, cache_read, cache_write, total, cost, invalid
        FROM usage WHERE key = new.key AND first = 1;
END;

CREATE TRIGGER usage_days_ai_alone AFTER INSERT ON usage WHEN new.first = 1 AND NOT EXISTS (
    SELECT 1 FROM usage o WHERE o.entry_id = new.entry_id AND o.ts IS new.ts AND o.key <> new.key) BEGIN
    INSERT INTO usage_days (session, day, provider, model, entries, input, output, cache_read,
        cache_write, total, cost, cost_err, invalid)
    SELECT new.session,
        CASE WHEN new.ts_ms IS NULL THEN -99999999
             ELSE (new.ts_ms / 1000 - ((new.ts_ms / 1000) % 86400 + 86400) % 86400) / 86400 END,
        coalesce(new.provider, '(unknown)'), coalesce(new.model, '(unknown)'), 1,
        new.input, new.output, new.cache_read, new.cache_write, new.total, new.cost, 0.0, new.invalid
    WHERE true
    ON CONFLICT (session, day, provider, model) DO UPDATE SET
        entries = entries + excluded.entries, input = input + excluded.input,
        output = output + excluded.output, cache_read = cache_read + excluded.cache_read,
        cache_write = cache_write + excluded.cache_write, total = total + excluded.total,
        cost = cost + excluded.cost,
        cost_err = cost_err + CASE WHEN abs(cost) >= abs(excluded.cost)
            THEN (cost - (cost + excluded.cost)) + excluded.cost
            ELSE (excluded.cost - (cost + excluded.cost)) + cost END,
        invalid = invalid + excluded.invalid;
END;
