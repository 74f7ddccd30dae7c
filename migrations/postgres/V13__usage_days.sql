-- Usage totals per session, UTC day, provider and model, kept as the catch-up writes usage
-- rows (SQLite's migration 15, the same rules): `stats` and `serve`'s usage page read a few
-- thousand rows instead of grouping every usage row to find the copies of an entry.
--
-- Copies of an entry (same entry id and timestamp) count once, for the row with the smallest
-- (session, seq): that row is `first`.
ALTER TABLE search_usage ADD COLUMN first boolean NOT NULL DEFAULT true;
CREATE INDEX search_usage_by_entry ON search_usage(entry_id) WHERE entry_id IS NOT NULL;

-- `day` is the UTC day of the entry's second (ts_ms / 1000), -99999999 without a time; a
-- missing provider or model is '(unknown)'; `cost` is summed with its rounding error kept in
-- `cost_err` (Kahan-Babuska-Neumaier).
CREATE TABLE search_usage_days (
    session     bigint NOT NULL,
    day         bigint NOT NULL,
    provider    text COLLATE "C" NOT NULL,
    model       text COLLATE "C" NOT NULL,
    entries     bigint NOT NULL,
    input       bigint NOT NULL,
    output      bigint NOT NULL,
    cache_read  bigint NOT NULL,
    cache_write bigint NOT NULL,
    total       bigint NOT NULL,
    cost        double precision NOT NULL,
    cost_err    double precision NOT NULL,
    invalid     bigint NOT NULL,
    PRIMARY KEY (session, day, provider, model)
);

-- Adds (sign 1) or takes out (sign -1) one usage row's values.
CREATE FUNCTION search_usage_days_change(sign integer, r search_usage) RETURNS void LANGUAGE plpgsql AS $$
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
    DELETE FROM search_usage_days WHERE session = r.session AND entries = 0;
END $$;

-- A new row is first unless an earlier copy exists; when it is, the copy that was first is not.
CREATE FUNCTION search_usage_days_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE later search_usage;
BEGIN
    IF NEW.entry_id IS NOT NULL THEN
        IF EXISTS (SELECT 1 FROM search_usage o WHERE o.entry_id = NEW.entry_id
                AND o.ts IS NOT DISTINCT FROM NEW.ts AND (o.session, o.seq) < (NEW.session, NEW.seq)) THEN
            NEW.first := false;
            RETURN NEW;
        END IF;
        FOR later IN UPDATE search_usage o SET first = false WHERE o.entry_id = NEW.entry_id
                AND o.ts IS NOT DISTINCT FROM NEW.ts AND (o.session, o.seq) > (NEW.session, NEW.seq) AND o.first
                RETURNING o.* LOOP
            PERFORM search_usage_days_change(-1, later);
        END LOOP;
    END IF;
    NEW.first := true;
    PERFORM search_usage_days_change(1, NEW);
    RETURN NEW;
END $$;
CREATE TRIGGER search_usage_days_bi BEFORE INSERT ON search_usage
    FOR EACH ROW EXECUTE FUNCTION search_usage_days_insert();

-- A first row leaving takes its values out; the next copy of it, if any, becomes first.
CREATE FUNCTION search_usage_days_delete() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE next search_usage;
BEGIN
    PERFORM search_usage_days_change(-1, OLD);
    IF OLD.entry_id IS NOT NULL THEN
        UPDATE search_usage o SET first = true WHERE (o.session, o.seq) = (
            SELECT n.session, n.seq FROM search_usage n WHERE n.entry_id = OLD.entry_id
                AND n.ts IS NOT DISTINCT FROM OLD.ts ORDER BY n.session, n.seq LIMIT 1)
            RETURNING o.* INTO next;
        IF FOUND THEN
            PERFORM search_usage_days_change(1, next);
        END IF;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER search_usage_days_ad AFTER DELETE ON search_usage
    FOR EACH ROW WHEN (OLD.first) EXECUTE FUNCTION search_usage_days_delete();

CREATE FUNCTION search_usage_days_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE search_usage_days;
    RETURN NULL;
END $$;
CREATE TRIGGER search_usage_days_at AFTER TRUNCATE ON search_usage
    FOR EACH STATEMENT EXECUTE FUNCTION search_usage_days_truncate();

-- The rows already extracted.
UPDATE search_usage u SET first = false WHERE entry_id IS NOT NULL AND EXISTS (
    SELECT 1 FROM search_usage o WHERE o.entry_id = u.entry_id AND o.ts IS NOT DISTINCT FROM u.ts
        AND (o.session, o.seq) < (u.session, u.seq));
DO $$
DECLARE r search_usage;
BEGIN
    FOR r IN SELECT * FROM search_usage WHERE first ORDER BY session, seq LOOP
        PERFORM search_usage_days_change(1, r);
    END LOOP;
END $$;
