-- The sessions of many machines in one PostgreSQL database, filled by `sessiondb push`.
-- One row per session file of one origin (machine): two people's identical paths are two rows.
-- Text compared or sorted by sessiondb is COLLATE "C": byte order, as SQLite compares.
CREATE TABLE sessions (
    skey             bigserial PRIMARY KEY,   -- the session key (Citus: the distribution column)
    origin           text   NOT NULL,          -- the machine (or name) the session was pushed from
    path             text   COLLATE "C" NOT NULL,        -- absolute path of the session's file on the origin
    id               text   COLLATE "C" NOT NULL,        -- header id
    dir              text   COLLATE "C" NOT NULL,        -- the directory holding that file
    rel_path         text,                     -- path below the directory it was imported from
    cwd              text   COLLATE "C",        -- header cwd when it is a string
    created          text,                     -- header timestamp, as written
    parent_session   text,                     -- header parentSession
    header           bytea  NOT NULL,          -- the exact header line
    file_mtime_ns    bigint,                   -- source file modification time at import
    written_ns       bigint NOT NULL,          -- newest write on the origin
    name             bytea,                    -- latest session_info name (UTF-8; bytea holds NUL)
    message_count    bigint NOT NULL,
    first_message    bytea,                    -- UTF-8, as name
    last_activity_ms double precision,         -- newest user/assistant activity (SPEC 6)
    entry_count      bigint NOT NULL,
    last_seq         bigint NOT NULL,          -- lines stored: the push's high-water mark
    all_text         bytea  NOT NULL,          -- pi's allMessagesText (UTF-8, as name)
    lines_hash       bigint NOT NULL,          -- FNV-1a of the header and lines 1..last_seq
    local_sid        bigint NOT NULL,          -- the origin's key of the session when last pushed
    UNIQUE (origin, path)
);
CREATE INDEX sessions_by_id ON sessions(id);
CREATE INDEX sessions_by_dir ON sessions(dir, written_ns);
CREATE INDEX sessions_by_cwd ON sessions(cwd, written_ns);

-- One row per entry line, in file order; a session's lines are one range of the primary key.
CREATE TABLE entries (
    session   bigint NOT NULL REFERENCES sessions(skey) ON DELETE CASCADE,
    seq       bigint NOT NULL,                 -- 1-based position among the session's lines
    id        text,                            -- entry id (NULL when not a string)
    parent_id text,                            -- parentId
    type      text,                            -- entry type
    ts        text,                            -- entry timestamp, as written
    body      bytea  NOT NULL,                 -- the exact line, without its terminator
    PRIMARY KEY (session, seq)
);
CREATE INDEX entries_by_id ON entries(session, id);
CREATE INDEX entries_by_parent ON entries(session, parent_id);

-- Lines are compressed with lz4 where the server has it (PostgreSQL 14+ built with lz4): pglz,
-- the default, made compression the bulk of a push's server time (25 vs 33 MiB/s on c10k).
DO $$
BEGIN
    IF current_setting('server_version_num')::int >= 140000 THEN
        BEGIN
            ALTER TABLE entries ALTER COLUMN body SET COMPRESSION lz4;
        EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
            NULL;
        END;
    END IF;
END $$;
