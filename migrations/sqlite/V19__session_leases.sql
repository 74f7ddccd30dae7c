-- One writer per session: the process that opened a session for writing (`sessiondb-pi`, the
-- Node binding) holds a lease on it here, and a second process continues in a fork instead of
-- appending to it (store::lease decides whether a holder still lives). `since_ms` and
-- `renewed_ms` are this machine's clock (a SQLite file is one machine's); a lease goes with
-- its session.
CREATE TABLE session_leases (
    sid        INTEGER PRIMARY KEY REFERENCES sessions(sid) ON DELETE CASCADE,
    pid        INTEGER NOT NULL,   -- the holder's process id
    host       TEXT    NOT NULL,   -- the host it runs on
    start      TEXT    NOT NULL,   -- its start time as that host tells it ('' when unknown)
    since_ms   INTEGER NOT NULL,   -- when it took the lease (ms since 1970)
    renewed_ms INTEGER NOT NULL    -- when it last renewed it
);
