-- One writer per session: the process that opened a session for writing (`sessiondb-pi`, the
-- Node binding) holds a lease on it here, and a second process continues in a fork instead of
-- appending to it (store::lease decides whether a holder still lives). Times are the server's
-- clock, so that hosts with skewed clocks agree on a lease's age; a lease goes with its session.
CREATE TABLE session_leases (
    skey     bigint      PRIMARY KEY REFERENCES sessions(skey) ON DELETE CASCADE,
    pid      bigint      NOT NULL,   -- the holder's process id
    host     text        NOT NULL,   -- the host it runs on
    start    text        NOT NULL,   -- its start time as that host tells it ('' when unknown)
    since    timestamptz NOT NULL,   -- when it took the lease
    renewed  timestamptz NOT NULL    -- when it last renewed it
);
