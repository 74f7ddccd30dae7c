-- The entries whose `usage` or message `usage` is present in the line without their usage row
-- giving it exactly (store::extract::usage_in_line): a missing or odd value, a usage no row
-- holds (a toolResult's), a provider with a lone surrogate. pi's footer and session statistics
-- read the usage of every entry: the Node binding answers them from the usage rows and this
-- list, and reads only the lines listed here. Filled for the lines stored before by the
-- `usage-lines` maintenance task.
CREATE TABLE usage_lines (
    key     INTEGER PRIMARY KEY,               -- the entry's key
    session INTEGER NOT NULL REFERENCES sessions(sid) ON DELETE CASCADE
);
CREATE INDEX usage_lines_by_session ON usage_lines(session);
INSERT INTO maintenance(task) SELECT 'usage-lines' WHERE EXISTS (SELECT 1 FROM entries);
