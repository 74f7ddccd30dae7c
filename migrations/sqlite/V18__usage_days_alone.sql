-- A usage row written with no copy of its entry anywhere (by far the most common: every row
-- of an import of distinct sessions) only adds its values to its day. V15's trigger ran five
-- statements for each row to find and settle copies, and made an import 1.2-1.4x slower;
-- that trigger now runs only when a copy exists, and this one (one probe of usage_by_entry in
-- its WHEN, then usage_days_apply with sign 1, as V15's last statement did) for the rest.
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
    INSERT INTO usage_days_change VALUES (1, new.session, new.ts_ms, new.provider, new.model, new.input,
        new.output, new.cache_read, new.cache_write, new.total, new.cost, new.invalid);
END;
