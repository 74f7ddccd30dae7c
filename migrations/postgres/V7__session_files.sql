-- `import` and `sync` on the server (origin ''): the signature of the file each session was
-- imported from, so that an unchanged file is not read again and a sync tells files gone from
-- the sessions folder. Sessions the SessionManager made on the server have no row here, so a
-- sync never marks or prunes them.
CREATE TABLE session_files (
    skey      bigint  PRIMARY KEY REFERENCES sessions(skey) ON DELETE CASCADE,
    size      bigint  NOT NULL,                -- the file's size when it was read
    mtime_ns  bigint  NOT NULL,                -- its modification time then
    missing   boolean NOT NULL DEFAULT false   -- gone at the last sync (kept unless --prune)
);
