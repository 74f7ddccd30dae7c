-- The joined allMessagesText of a long session is tens of MB: lz4 decompresses it several times
-- faster than pglz when `list` reads it (as for entries.body in V1). Measured on the
-- 100,000-entry session: list 96.9 -> 68.3 ms. Rows written before keep their compression.
DO $$
BEGIN
    IF current_setting('server_version_num')::int >= 140000 THEN
        BEGIN
            ALTER TABLE sessions ALTER COLUMN all_text SET COMPRESSION lz4;
        EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
            NULL;
        END;
    END IF;
END $$;
