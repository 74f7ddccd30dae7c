//! Every query that runs per entry or per session is answered from an index: checked with
//! `EXPLAIN QUERY PLAN` (no full scan of `entries` or `sessions`).

mod common;

use sessiondb::queries as q;

fn plan(conn: &rusqlite::Connection, sql: &str) -> String {
    let mut st = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
    let n = st.parameter_count();
    let params: Vec<rusqlite::types::Value> = (0..n).map(|_| rusqlite::types::Value::Integer(1)).collect();
    let rows = st.query_map(rusqlite::params_from_iter(params), |r| r.get::<_, String>(3)).unwrap();
    rows.map(Result::unwrap).collect::<Vec<_>>().join(" | ")
}

#[test]
fn hot_queries_use_indexes() {
    let (_d, _p, conn) = common::temp_db();
    // (name, query, a fragment the plan must contain)
    let cases: &[(&str, &str, &str)] = &[
        ("SESSION_BY_PATH", q::SESSION_BY_PATH, "USING INDEX sqlite_autoindex_sessions_1"),
        ("SESSION_REF_BY_PATH", q::SESSION_REF_BY_PATH, "USING INDEX sqlite_autoindex_sessions_1"),
        ("SESSIONS_BY_ID", q::SESSIONS_BY_ID, "USING INDEX sessions_by_id"),
        ("SESSIONS_BY_ID_PREFIX", q::SESSIONS_BY_ID_PREFIX, "USING INDEX sessions_by_id"),
        ("SESSION_HEADER", q::SESSION_HEADER, "USING INTEGER PRIMARY KEY"),
        ("SESSION_TREE_STATE", q::SESSION_TREE_STATE, "USING INTEGER PRIMARY KEY"),
        ("ENTRY_BODIES", q::ENTRY_BODIES, "USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"),
        ("LAST_ENTRY", q::LAST_ENTRY, "USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"),
        ("ALL_ENTRIES", q::ALL_ENTRIES, "USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"),
        ("ENTRY_BY_KEY", q::ENTRY_BY_KEY, "USING INTEGER PRIMARY KEY (rowid=?)"),
        ("ENTRY_BY_ID", q::ENTRY_BY_ID, "USING INDEX entries_by_id (session=? AND id=?)"),
        ("CHILDREN", q::CHILDREN, "USING INDEX entries_by_parent (session=? AND parent_id=?)"),
        ("LABEL_ENTRIES", q::LABEL_ENTRIES, "USING INDEX entries_labels"),
        ("WALK_UP", q::WALK_UP, "SEARCH e USING INTEGER PRIMARY KEY (rowid=?)"),
        ("RELINK_PARENTS", q::RELINK_PARENTS, "USING INDEX entries_by_id (session=? AND id=?)"),
        ("DELETE_SESSION", q::DELETE_SESSION, "USING INTEGER PRIMARY KEY"),
    ];
    for (name, sql, must) in cases {
        let p = plan(&conn, sql);
        assert!(p.contains(must), "{name}: plan lacks {must:?}: {p}");
        for table in ["entries", "sessions", "e", "p"] {
            for bad in [format!("SCAN {table} "), format!("SCAN {table}")] {
                let full_scan = p
                    .split(" | ")
                    .any(|step| step == bad.trim() || (step.starts_with(&bad) && !step.contains("USING")));
                assert!(!full_scan, "{name}: full scan of {table}: {p}");
            }
        }
    }
    // The cascade that deletes a session's entries finds them by index too.
    let p = plan(&conn, "DELETE FROM entries WHERE session = 1");
    assert!(p.contains("INDEX entries_by_") && p.contains("(session=?)"), "{p}");
}
