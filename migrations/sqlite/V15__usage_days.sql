-- Usage totals per session, UTC day, provider and model, kept as usage rows are written, so
-- that `stats` and `serve`'s usage page read a few thousand rows instead of grouping every
-- usage row to find the copies of an entry (2-5 s on 10,000 sessions).
--
-- Copies of an entry (same entry id and timestamp: forks, branched sessions, a pi fork file
-- imported) count once, for the row with the smallest key: that row is `first`. Finding it
-- needs the rows by entry id again (dropped by V6), now probed once per usage row written.
ALTER TABLE usage ADD COLUMN first INTEGER NOT NULL DEFAULT 1;
CREATE INDEX usage_by_entry ON usage(entry_id, ts) WHERE entry_id IS NOT NULL;

-- The sums of the first rows of each (session, day, provider, model). `day` is the UTC day
-- of the entry's second (ts_ms / 1000, as stats' strftime takes it), -99999999 without a
-- time; a missing provider or model is '(unknown)', as stats groups them. `cost` is summed
-- with its rounding error kept in `cost_err` (Kahan-Babuska-Neumaier, as SQLite's total()).
CREATE TABLE usage_days (
    session     INTEGER NOT NULL,
    day         INTEGER NOT NULL,
    provider    TEXT    NOT NULL,
    model       TEXT    NOT NULL,
    entries     INTEGER NOT NULL,
    input       INTEGER NOT NULL,
    output      INTEGER NOT NULL,
    cache_read  INTEGER NOT NULL,
    cache_write INTEGER NOT NULL,
    total       INTEGER NOT NULL,
    cost        REAL    NOT NULL,
    cost_err    REAL    NOT NULL,
    invalid     INTEGER NOT NULL,
    PRIMARY KEY (session, day, provider, model)
) WITHOUT ROWID;

-- Adds (sign 1) or takes out (sign -1) one usage row's values: what the triggers below insert.
CREATE VIEW usage_days_change (sign, session, ts_ms, provider, model, input, output, cache_read,
    cache_write, total, cost, invalid) AS
    SELECT 0, 0, 0, '', '', 0, 0, 0, 0, 0, 0.0, 0 WHERE 0;
CREATE TRIGGER usage_days_apply INSTEAD OF INSERT ON usage_days_change BEGIN
    INSERT INTO usage_days (session, day, provider, model, entries, input, output, cache_read,
        cache_write, total, cost, cost_err, invalid)
    SELECT new.session,
        CASE WHEN new.ts_ms IS NULL THEN -99999999
             ELSE (new.ts_ms / 1000 - ((new.ts_ms / 1000) % 86400 + 86400) % 86400) / 86400 END,
        coalesce(new.provider, '(unknown)'), coalesce(new.model, '(unknown)'), new.sign,
        new.sign * new.input, new.sign * new.output, new.sign * new.cache_read,
        new.sign * new.cache_write, new.sign * new.total, new.sign * new.cost, 0.0,
        new.sign * new.invalid
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
    DELETE FROM usage_days WHERE new.sign < 0 AND entries = 0 AND session = new.session;
END;

-- A new row is first unless an earlier copy exists; when it is, the copy that was first is not.
-- (A fork's or branched session's copies are written with first = 0, their source coming
-- before them: nothing to do for them.)
CREATE TRIGGER usage_days_ai AFTER INSERT ON usage WHEN new.first = 1 BEGIN
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

-- A first row leaving takes its values out; the next copy of it, if any, becomes first.
CREATE TRIGGER usage_days_ad AFTER DELETE ON usage WHEN old.first = 1 BEGIN
    INSERT INTO usage_days_change VALUES (-1, old.session, old.ts_ms, old.provider, old.model, old.input,
        old.output, old.cache_read, old.cache_write, old.total, old.cost, old.invalid);
    UPDATE usage SET first = 1 WHERE old.entry_id IS NOT NULL AND key = (
        SELECT min(key) FROM usage WHERE entry_id = old.entry_id AND ts IS old.ts);
    INSERT INTO usage_days_change
        SELECT 1, session, ts_ms, provider, model, input, output, cache_read, cache_write, total, cost, invalid
        FROM usage WHERE old.entry_id IS NOT NULL AND key = (
            SELECT min(key) FROM usage WHERE entry_id = old.entry_id AND ts IS old.ts);
END;

-- The rows already written.
UPDATE usage SET first = 0 WHERE entry_id IS NOT NULL AND EXISTS (
    SELECT 1 FROM usage o WHERE o.entry_id = usage.entry_id AND o.ts IS usage.ts AND o.key < usage.key);
INSERT INTO usage_days_change
    SELECT 1, session, ts_ms, provider, model, input, output, cache_read, cache_write, total, cost, invalid
    FROM usage WHERE first = 1 ORDER BY key;
