//! Every query that runs per entry or per session is answered from an index: checked with
//! `EXPLAIN QUERY PLAN` (no full scan of `entries` or `sessions`).

mod common;

use sessiondb::internals::discovery as d;
use sessiondb::internals::entry_rows as e;
use sessiondb::internals::extract as x;
use sessiondb::internals::integrity as i;
use sessiondb::internals::search_index as si;
use sessiondb::internals::sessions as ss;
use sessiondb::internals::usage as u;
use sessiondb::internals::write as w;

fn plan(conn: &sessiondb::db::Db, sql: &str) -> String {
    let mut st = conn.sqlite().prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
    let n = st.parameter_count();
    let params: Vec<rusqlite::types::Value> = (0..n).map(|_| rusqlite::types::Value::Integer(1)).collect();
    let rows = st.query_map(rusqlite::params_from_iter(params), |r| r.get::<_, String>(3)).unwrap();
    rows.map(Result::unwrap).collect::<Vec<_>>().join(" | ")
}

/// (name, query, a fragment the plan must contain)
const HOT: &[(&str, &str, &str)] = &[
    ("SESSION_FILE_BY_PATH", ss::SESSION_FILE_BY_PATH, "USING INDEX sqlite_autoindex_sessions_1"),
    (
        "SESSION_REF_BY_PATH",
        sessiondb::internals::sessions::SESSION_REF_BY_PATH,
        "USING INDEX sqlite_autoindex_sessions_1",
    ),
    ("SESSIONS_BY_ID", d::SESSIONS_BY_ID, "USING INDEX sessions_by_id"),
    ("SESSIONS_BY_ID_PREFIX", d::SESSIONS_BY_ID_PREFIX, "USING INDEX sessions_by_id"),
    ("SESSION_HEADER", sessiondb::internals::sessions::SESSION_HEADER, "USING INTEGER PRIMARY KEY"),
    ("RELOCATE_SESSION", ss::RELOCATE_SESSION, "USING INTEGER PRIMARY KEY"),
    ("SESSION_TREE_STATE", e::SESSION_TREE_STATE, "USING INTEGER PRIMARY KEY"),
    ("ENTRY_BODIES", e::ENTRY_BODIES, "USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"),
    ("STORED_LINES", e::STORED_LINES, "USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"),
    ("LAST_ENTRY", e::LAST_ENTRY, "USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"),
    ("ALL_ENTRIES", e::ALL_ENTRIES, "USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"),
    ("LINES_FROM", e::LINES_FROM, "USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"),
    // By key, the keys sorted by SQLite: no lines between them read, no sort of the lines.
    ("LINES_AT", e::LINES_AT, "USING INTEGER PRIMARY KEY (rowid=?)"),
    ("TREE_ROWS_AT", e::TREE_ROWS_AT, "USING INTEGER PRIMARY KEY (rowid=?)"),
    ("LINKS", e::LINKS, "USING COVERING INDEX entries_links (key>? AND key<?)"),
    ("ENTRY_BY_KEY", e::ENTRY_BY_KEY, "USING INTEGER PRIMARY KEY (rowid=?)"),
    ("ENTRY_BY_ID", e::ENTRY_BY_ID, "USING INDEX entries_by_id (session=? AND id=?)"),
    ("CHILDREN", e::CHILDREN, "USING INDEX entries_by_parent (session=? AND parent_id=?)"),
    ("LABEL_ENTRIES", e::LABEL_ENTRIES, "USING INDEX entries_labels"),
    ("WALK_UP", e::WALK_UP, "SEARCH e USING INTEGER PRIMARY KEY (rowid=?)"),
    ("WALK_UP_STEPS", e::WALK_UP_STEPS, "SEARCH e USING INTEGER PRIMARY KEY (rowid=?)"),
    ("RELINK_PARENTS", w::RELINK_PARENTS, "USING INDEX entries_by_id (session=? AND id=?)"),
    ("DELETE_SESSION", ss::DELETE_SESSION, "USING INTEGER PRIMARY KEY"),
    ("LEASE", sessiondb::internals::lease::LEASE, "USING INTEGER PRIMARY KEY (rowid=?)"),
    ("REPLACE_LEASE", sessiondb::internals::lease::REPLACE_LEASE, "USING INTEGER PRIMARY KEY (rowid=?)"),
    ("RENEW_LEASE", sessiondb::internals::lease::RENEW_LEASE, "USING INTEGER PRIMARY KEY (rowid=?)"),
    ("RELEASE_LEASE", sessiondb::internals::lease::RELEASE_LEASE, "USING INTEGER PRIMARY KEY (rowid=?)"),
    ("ENTRY_NODE", w::ENTRY_NODE, "USING INDEX entries_by_id (session=? AND id=?)"),
    (
        "ENTRY_ID_EXISTS",
        sessiondb::internals::sessions::ENTRY_ID_EXISTS,
        "USING COVERING INDEX entries_by_id (session=? AND id=?)",
    ),
    ("SESSION_STATS", sessiondb::internals::write::SESSION_STATS, "USING INTEGER PRIMARY KEY"),
    ("SESSIONS_IN_DIR_BY_RECENCY", d::SESSIONS_IN_DIR_BY_RECENCY, "USING INDEX sessions_by_dir (dir=?)"),
    ("SESSIONS_WITH_ID_IN_DIR", d::SESSIONS_WITH_ID_IN_DIR, "USING INDEX sessions_by_"),
    ("SESSION_INFOS_IN_DIR", d::SESSION_INFOS_IN_DIR, "USING INDEX sessions_by_dir (dir=?)"),
    ("SESSION_INFOS_FOR_CWD", d::SESSION_INFOS_FOR_CWD, "USING INDEX sessions_by_cwd (cwd=?)"),
    ("SESSION_INFOS_UNDER", d::SESSION_INFOS_UNDER, "USING INDEX sessions_by_dir (dir>? AND dir<?)"),
    ("MOST_RECENT_SESSION", d::MOST_RECENT_SESSION, "SCAN sessions USING INDEX sessions_by_written"),
    ("LIST_TEXTS", d::LIST_TEXTS, "USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"),
    ("LIST_TEXT_CACHED", d::LIST_TEXT_CACHED, "USING INTEGER PRIMARY KEY (rowid=?)"),
    ("LIST_TEXT_STORED_OF", d::LIST_TEXT_STORED_OF, "SEARCH l USING INTEGER PRIMARY KEY (rowid=?)"),
    ("SESSION_LAST_SEQ", d::SESSION_LAST_SEQ, "USING INTEGER PRIMARY KEY (rowid=?)"),
    ("COPY_LIST_TEXT", sessiondb::internals::write::COPY_LIST_TEXT, "USING INTEGER PRIMARY KEY (rowid=?)"),
    ("DROP_LIST_TEXT", d::DROP_LIST_TEXT, "USING INTEGER PRIMARY KEY (rowid=?)"),
    ("POSTINGS_OF", si::POSTINGS_OF, "SEARCH search_postings USING INDEX search_postings_token (token=?)"),
    ("POSTINGS_OF_BATCH", si::POSTINGS_OF_BATCH, "SEARCH search_postings USING INDEX search_postings_batch (batch=?)"),
    ("POSTING_OF", si::POSTING_OF, "SEARCH search_postings USING INDEX search_postings_token (token=? AND batch=?)"),
    ("DEAD_SINCE", si::DEAD_SINCE, "SEARCH d USING COVERING INDEX search_deleted_batch (batch>?)"),
    ("TERMS_STARTING", si::TERMS_STARTING, "SEARCH search_terms USING PRIMARY KEY (term>? AND term<?)"),
    ("COPY_RUNS_IN", si::COPY_RUNS_IN, "SEARCH search_copies USING PRIMARY KEY (owner_lo>? AND owner_lo<?)"),
    ("HIT_ROW", si::HIT_ROW, "SEARCH t USING INTEGER PRIMARY KEY (rowid=?)"),
    ("COPY_ENTRIES", sessiondb::internals::write::COPY_ENTRIES, "USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"),
    ("COPY_TEXTS", w::COPY_TEXTS, "USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"),
    ("COPY_USAGE", w::COPY_USAGE, "USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"),
    ("COPY_USAGE_LINES", w::COPY_USAGE_LINES, "USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"),
    // The usages pi's footer reads, for the Node binding: a session's rows by key range.
    ("LAST_ENTRY_KEY", u::LAST_ENTRY_KEY, "SEARCH entries USING COVERING INDEX entries_links (key>? AND key<?)"),
    ("ENTRY_USAGES", u::ENTRY_USAGES, "SEARCH u USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"),
    ("USAGE_LINES", u::USAGE_LINES, "USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"),
    ("PENDING_BATCH", si::PENDING_BATCH, "SEARCH e USING INTEGER PRIMARY KEY (rowid=?)"),
    ("CHECK_ENTRIES", i::CHECK_ENTRIES, "USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"),
    ("CHECK_SESSION", i::CHECK_SESSION, "USING INTEGER PRIMARY KEY"),
    ("COPY_PATH_RUN", w::COPY_PATH_RUN, "USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"),
    ("BRANCH_SOURCE_ROWS", w::BRANCH_SOURCE_ROWS, "SEARCH t USING INTEGER PRIMARY KEY (rowid=?)"),
    ("RECORD_SHARES", w::RECORD_SHARES, "SEARCH shares USING PRIMARY KEY (copy=?)"),
    // serve: a session's tree from its two indexes, its facts by key.
    ("ENTRY_KIND", e::ENTRY_KIND, "USING INTEGER PRIMARY KEY (rowid=?)"),
    ("SESSION_INFO_BY_SID", d::SESSION_INFO_BY_SID, "USING INTEGER PRIMARY KEY (rowid=?)"),
];

#[test]
fn hot_queries_use_indexes() {
    let (_d, _p, conn) = common::temp_db();
    for (name, sql, must) in HOT {
        let p = plan(&conn, sql);
        assert!(p.contains(must), "{name}: plan lacks {must:?}: {p}");
        // Subqueries (co-routines) may be scanned: they hold what an index already chose.
        let coroutines: Vec<&str> = p.split(" | ").filter_map(|step| step.strip_prefix("CO-ROUTINE ")).collect();
        for table in ["entries", "sessions", "texts", "usage", "usage_lines", "e", "o", "p", "s", "t", "u", "l"] {
            if coroutines.contains(&table) {
                continue;
            }
            let full_scan = p.split(" | ").any(|step| {
                step == format!("SCAN {table}")
                    || (step.starts_with(&format!("SCAN {table} ")) && !step.contains("USING"))
            });
            assert!(!full_scan, "{name}: full scan of {table}: {p}");
        }
    }
    assert!(!plan(&conn, e::LINES_AT).contains("TEMP B-TREE"), "LINES_AT sorts its lines");
    assert!(!plan(&conn, e::TREE_ROWS_AT).contains("TEMP B-TREE"), "TREE_ROWS_AT sorts its rows");
    // Passes over every session (maintenance, `index`) read each session's rows by key.
    for sql in [x::REBUILD_LIST_TEXTS, d::STALE_LIST_TEXTS] {
        let p = plan(&conn, sql);
        assert!(p.contains("SCAN s") && p.contains("USING INTEGER PRIMARY KEY (rowid"), "{p}");
        assert!(!p.contains("SCAN t") && !p.contains("SCAN l"), "{p}");
    }
    // A usage row's copies, probed by the usage triggers (V15, V18) for every row written, and
    // the first of them, found when a first row goes (V15): by timestamp, then id (V23).
    let p = plan(&conn, "SELECT 1 FROM usage o WHERE o.entry_id = ?1 AND o.ts IS ?2 AND o.key <> ?3");
    assert!(p.contains("INDEX usage_by_entry (ts=? AND entry_id=?)"), "{p}");
    let p = plan(&conn, "SELECT min(key) FROM usage WHERE entry_id = ?1 AND ts IS ?2");
    assert!(p.contains("INDEX usage_by_entry (ts=? AND entry_id=?)"), "{p}");
    // Deleting a session drops its joined list text by primary key.
    let p = plan(&conn, "DELETE FROM list_texts WHERE sid = 1");
    assert!(p.contains("USING INTEGER PRIMARY KEY"), "{p}");
    // Lines read through `entry_lines` come from the copy's source row by key.
    let p = plan(&conn, e::ENTRY_BODIES);
    assert!(p.contains("SEARCH o USING INTEGER PRIMARY KEY (rowid=?)"), "{p}");
    // Before a session goes, the trigger finds the sessions sharing its lines by index, and
    // their copies by key range.
    let trigger: String = conn
        .sqlite()
        .query_row("SELECT sql FROM sqlite_schema WHERE name = 'sessions_keep_shared_lines'", [], |r| r.get(0))
        .unwrap();
    let body = trigger.split_once("BEGIN").unwrap().1.rsplit_once("END").unwrap().0.replace("old.sid", "1");
    let plans: Vec<String> = body.split(';').map(str::trim).filter(|s| !s.is_empty()).map(|s| plan(&conn, s)).collect();
    assert_eq!(plans.len(), 3, "{plans:?}");
    assert!(plans[0].contains("SEARCH s USING COVERING INDEX shares_by_owner (owner=?)"), "{}", plans[0]);
    assert!(plans[0].contains("SEARCH c USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"), "{}", plans[0]);
    assert!(plans[1].contains("USING COVERING INDEX shares_by_owner (owner=?)"), "{}", plans[1]);
    assert!(plans[2].contains("USING PRIMARY KEY (copy=?)"), "{}", plans[2]);
    // The cascade that deletes a session's entries finds them by index too.
    let p = plan(&conn, "DELETE FROM entries WHERE session = 1");
    assert!(p.contains("INDEX entries_by_") && p.contains("(session=?)"), "{p}");
}

#[test]
fn hot_queries_are_not_prepared_again_when_run_again() {
    // A parameter the planner looks at (a bound LIMIT, say) makes SQLite prepare the statement
    // again each time it is bound: a parse per path walk, per branched session, per lookup.
    let (_d, _p, conn) = common::temp_db();
    for (name, sql, _) in HOT {
        // A batch of the indexer's queue (thousands of texts) and a query word's vocabulary
        // range (once per word of a search) may.
        if matches!(*name, "PENDING_BATCH" | "TERMS_STARTING") {
            continue;
        }
        let mut st = conn.sqlite().prepare(sql).unwrap();
        // Text, as ids and paths are bound (an integer compared with a text column is
        // prepared again too); integer columns take it by their affinity.
        for value in ["1", "2", "3"] {
            let params: Vec<&str> = vec![value; st.parameter_count()];
            let mut rows = st.query(rusqlite::params_from_iter(params)).unwrap();
            while rows.next().unwrap().is_some() {}
        }
        assert_eq!(st.get_status(rusqlite::StatementStatus::RePrepare), 0, "{name}");
    }
}
