-- The probes for an entry's copies run for every usage row written. The planner could walk
-- search_usage's primary key for them (the rows before or after the new one by the row
-- comparison, or all rows in order for the first copy), reading every earlier row for each row
-- written: an `index --rebuild` of c10k after a few hundred per-turn syncs ran for more than
-- half an hour, with statistics gathered before the tables were emptied. The probes below give
-- the primary key nothing to use (the row comparison and the order are not indexable as
-- written), so each reads the entry's own rows through search_usage_by_entry, now ordered by
-- (entry_id, session, seq).
DROP INDEX search_usage_by_entry;
CREATE INDEX search_usage_by_entry ON search_usage(entry_id, session, seq) WHERE entry_id IS NOT NULL;

CREATE OR REPLACE FUNCTION search_usage_days_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE later search_usage;
BEGIN
    IF NEW.entry_id IS NOT NULL THEN
        IF EXISTS (SELECT 1 FROM search_usage o WHERE o.entry_id = NEW.entry_id
                AND o.ts IS NOT DISTINCT FROM NEW.ts AND ((o.session, o.seq) < (NEW.session, NEW.seq)) IS TRUE) THEN
            NEW.first := false;
            RETURN NEW;
        END IF;
        FOR later IN UPDATE search_usage o SET first = false WHERE o.entry_id = NEW.entry_id
                AND o.ts IS NOT DISTINCT FROM NEW.ts AND ((o.session, o.seq) > (NEW.session, NEW.seq)) IS TRUE AND o.first
                RETURNING o.* LOOP
            PERFORM search_usage_days_change(-1, later);
        END LOOP;
    END IF;
    NEW.first := true;
    PERFORM search_usage_days_change(1, NEW);
    RETURN NEW;
END $$;

CREATE OR REPLACE FUNCTION search_usage_days_delete() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE next search_usage;
BEGIN
    PERFORM search_usage_days_change(-1, OLD);
    IF OLD.entry_id IS NOT NULL THEN
        UPDATE search_usage o SET first = true WHERE (o.session, o.seq) = (
            SELECT n.session, n.seq FROM search_usage n WHERE n.entry_id = OLD.entry_id
                AND n.ts IS NOT DISTINCT FROM OLD.ts ORDER BY n.session + 0, n.seq + 0 LIMIT 1)
            RETURNING o.* INTO next;
        IF FOUND THEN
            PERFORM search_usage_days_change(1, next);
        END IF;
    END IF;
    RETURN NULL;
END $$;

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
