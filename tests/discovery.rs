//! list / listAll / findById / continueRecent against pi 1.6.0's goldens (`_discovery.json`),
//! with PI_CODING_AGENT_DIR pointing at the corpus as when the goldens were recorded, on
//! SQLite and on PostgreSQL (skipped without `SESSIONDB_TEST_PG_URL`).

mod common;

use serde_json::Value as J;
use sessiondb::discovery::{self, SessionInfo};

fn rel(corpus: &str, path: &str) -> String {
    path.strip_prefix(&format!("{corpus}/")).unwrap_or(path).to_string()
}

fn infos_json(corpus: &str, conn: &sessiondb::db::Db, mut infos: Vec<SessionInfo>) -> J {
    discovery::fill_all_text(conn, &mut infos).unwrap();
    J::Array(
        infos
            .iter()
            .map(|i| {
                let mut v: J = serde_json::from_str(&i.to_value().to_json()).unwrap();
                v["path"] = J::String(rel(corpus, &i.path));
                v
            })
            .collect(),
    )
}

/// pi's goldens add `parentSessionPathRel`; sessiondb reports the header's path as pi does.
fn strip_rel(list: &J) -> J {
    J::Array(
        list.as_array()
            .unwrap()
            .iter()
            .map(|i| {
                let mut i = i.clone();
                i.as_object_mut().unwrap().remove("parentSessionPathRel");
                i
            })
            .collect(),
    )
}

fn check_list(name: &str, ours: &J, theirs: &J) {
    let ours_paths: Vec<&J> = ours.as_array().unwrap().iter().map(|i| &i["path"]).collect();
    let theirs_paths: Vec<&J> = theirs.as_array().unwrap().iter().map(|i| &i["path"]).collect();
    assert_eq!(ours_paths, theirs_paths, "{name}: sessions and order");
    for (o, t) in ours.as_array().unwrap().iter().zip(theirs.as_array().unwrap()) {
        assert_eq!(serde_json::to_string(o).unwrap(), serde_json::to_string(t).unwrap(), "{name}: {}", t["path"]);
    }
}

/// Compares list, findById, continueRecent and listAll on `conn` with pi's goldens.
fn check_discovery(conn: &sessiondb::db::Db) {
    let corpus_path = common::oracle();
    let corpus = corpus_path.to_string_lossy().into_owned();
    let g: J = serde_json::from_slice(&std::fs::read(corpus_path.join("goldens/_discovery.json")).unwrap()).unwrap();
    let mut checked = 0;
    for c in g["cwds"].as_array().unwrap().iter().chain(g["crossDir"].as_array().unwrap()) {
        let cwd = c["cwd"].as_str().unwrap();
        let dir_rel = c["dir"].as_str().unwrap();
        let explicit = format!("{corpus}/{dir_rel}");
        // `cwds` entries use the cwd's own folder (pi's default), `crossDir` another one.
        let dir = discovery::session_dir_for(cwd, Some(&explicit));
        let filter = discovery::cwd_filter(cwd, Some(&explicit), &dir);
        let name = format!("{cwd} in {dir_rel}");
        if let Some(list) = c.get("list") {
            let ours = infos_json(&corpus, conn, discovery::list_dir(conn, &dir, filter.as_deref()).unwrap());
            check_list(&format!("list {name}"), &ours, &strip_rel(list));
            checked += 1;
        }
        if let Some(found) = c.get("findById").and_then(J::as_object) {
            for (id, want) in found {
                let got = discovery::find_in_dir(conn, id, &dir, filter.as_deref()).unwrap().map(|p| rel(&corpus, &p));
                assert_eq!(got.map_or(J::Null, J::String), *want, "findById {id} {name}");
                checked += 1;
            }
        }
        if let Some(cr) = c.get("continueRecent").filter(|v| v.is_object()) {
            let got = discovery::recent_in_dir(conn, &dir, filter.as_deref()).unwrap();
            match cr["file"].as_str() {
                Some(file) => {
                    let (sid, path) = got.unwrap_or_else(|| panic!("continueRecent {name}: pi opened {file}"));
                    assert_eq!(rel(&corpus, &path), file, "continueRecent {name}");
                    let t = sessiondb::tree::SessionTree::open(conn, sid).unwrap();
                    let leaf = t.last_entry().unwrap().and_then(|r| r.id).map_or(J::Null, J::String);
                    // A migrated v1 file gets fresh ids on both sides; only compare unmigrated leaves.
                    if cr["fileChanged"] != true {
                        assert_eq!(leaf, cr["leafId"], "continueRecent {name}: leaf");
                    }
                    let stats = conn.store().load_stats(sid).unwrap().stats;
                    assert_eq!(J::from(stats.entry_count), cr["entryCount"], "continueRecent {name}: entries");
                }
                None => assert!(got.is_none(), "continueRecent {name}: pi started a new session, we found {got:?}"),
            }
            checked += 1;
        }
    }
    let ours = infos_json(&corpus, conn, discovery::list_all(conn).unwrap());
    check_list("listAll", &ours, &strip_rel(&g["listAll"]));
    assert!(checked > 50, "{checked}");
}

/// The oracle corpus imported into a new SQLite database, with PI_CODING_AGENT_DIR pointing at
/// it as when the goldens were recorded.
fn imported_corpus() -> (tempfile::TempDir, sessiondb::db::Db) {
    let corpus_path = common::oracle();
    std::env::set_var("PI_CODING_AGENT_DIR", corpus_path);
    let (d, _p, mut conn) = common::temp_db();
    let targets = sessiondb::import::collect_targets(&[corpus_path.join("sessions")]).unwrap();
    sessiondb::import::import_targets(&mut conn, &targets, Default::default(), |_| {}).unwrap();
    (d, conn)
}

#[test]
fn list_find_and_recent_equal_pi() {
    let (_d, conn) = imported_corpus();
    check_discovery(&conn);
}

/// The same on PostgreSQL: the corpus pushed into a server as its own sessions (origin '').
#[test]
fn list_find_and_recent_equal_pi_on_postgresql() {
    let Some(url) = common::pg::server() else { return };
    let (_d, local) = imported_corpus();
    check_discovery(&common::pg::open(&common::pg::pushed(&local, &url)));
}

/// `allMessagesText` as read from every message row: what the joined copy must equal.
fn reference_texts(conn: &sessiondb::db::Db, infos: &[SessionInfo]) -> Vec<String> {
    infos.iter().map(|i| discovery::all_messages_text(conn, i.sid).unwrap()).collect()
}

fn listed_texts(conn: &sessiondb::db::Db, mut infos: Vec<SessionInfo>) -> Vec<String> {
    discovery::fill_all_text(conn, &mut infos).unwrap();
    infos.into_iter().map(|i| i.all_messages_text).collect()
}

fn count(conn: &sessiondb::db::Db, sql: &str) -> i64 {
    conn.sqlite().query_row(sql, [], |r| r.get(0)).unwrap()
}

/// The joined `allMessagesText` kept per session equals the text read from the message rows
/// after an import, appends, `index`, a fork, a rebuild by migration, and for a session whose
/// text is too long to keep joined.
#[test]
fn joined_list_texts_stay_exact() {
    use sessiondb::json::parse;
    use sessiondb::manager::{NewSessionOptions, SessionManager};
    let (dir, db, mut conn) = common::temp_db();
    // A session whose messages outgrow the joined copy's limit.
    let big = dir.path().join("big.jsonl");
    let word = "x".repeat(3 << 20);
    let mut lines = vec![
        r#"{"type":"session","version":3,"id":"0199a000-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/big"}"#.to_string(),
    ];
    for i in 0..4 {
        let parent = if i == 0 { "null".to_string() } else { format!("\"e{}\"", i - 1) };
        lines.push(format!(
            r#"{{"type":"message","id":"e{i}","parentId":{parent},"timestamp":"2026-01-01T00:00:0{i}.000Z","message":{{"role":"user","content":"{i}{word}","timestamp":1}}}}"#
        ));
    }
    std::fs::write(&big, lines.join("\n") + "\n").unwrap();
    let targets = sessiondb::import::collect_targets(&[common::oracle().join("sessions"), big.clone()]).unwrap();
    sessiondb::import::import_targets(&mut conn, &targets, Default::default(), |_| {}).unwrap();
    let sessions = count(&conn, "SELECT count(*) FROM sessions");
    assert!(sessions > 10, "{sessions}");
    // Every session but the big one has its text joined, exact up to its last line.
    assert_eq!(count(&conn, "SELECT count(*) FROM list_texts"), sessions - 1);
    assert_eq!(
        count(&conn, "SELECT count(*) FROM list_texts l JOIN sessions s USING (sid) WHERE upto_seq != last_seq"),
        0
    );

    let check = |conn: &sessiondb::db::Db, what: &str| {
        let all = discovery::list_everything(conn).unwrap();
        let want = reference_texts(conn, &all);
        assert!(want.iter().any(|t| t.len() > 12 << 20), "{what}: the big session is listed");
        assert_eq!(listed_texts(conn, all.clone()), want, "{what}: every session (one pass)");
        for info in &all {
            // One session at a time: the lookup path.
            assert_eq!(
                listed_texts(conn, vec![info.clone()]),
                reference_texts(conn, std::slice::from_ref(info)),
                "{what}"
            );
        }
    };
    check(&conn, "after import");

    // Appends leave the joined text behind; listing adds the new messages.
    let source = discovery::list_everything(&conn).unwrap().into_iter().find(|i| i.message_count > 2).unwrap();
    let mut m = SessionManager::open(&db, &source.path, None, None).unwrap();
    m.append_message(parse(br#"{"role":"user","content":"appended question zebra","timestamp":1}"#).unwrap()).unwrap();
    m.append_message(
        parse(br#"{"role":"assistant","content":[{"type":"text","text":"appended answer"}],"timestamp":2}"#).unwrap(),
    )
    .unwrap();
    drop(m);
    assert_eq!(
        count(&conn, "SELECT count(*) FROM list_texts l JOIN sessions s USING (sid) WHERE upto_seq < last_seq"),
        1
    );
    let listed = listed_texts(
        &conn,
        vec![discovery::list_everything(&conn).unwrap().into_iter().find(|i| i.sid == source.sid).unwrap()],
    );
    assert!(listed[0].ends_with("appended question zebra appended answer"), "{}", listed[0]);
    check(&conn, "after appends");

    // `index` folds them in.
    assert_eq!(discovery::refresh_list_texts(&mut conn).unwrap(), 1);
    assert_eq!(
        count(&conn, "SELECT count(*) FROM list_texts l JOIN sessions s USING (sid) WHERE upto_seq != last_seq"),
        0
    );
    check(&conn, "after index");

    // A fork starts with the source's joined text.
    let f = SessionManager::fork_from(
        &db,
        &source.path,
        "/fork/target",
        Some(&dir.path().join("forks").to_string_lossy()),
        NewSessionOptions::default(),
    )
    .unwrap();
    let fork_path = f.session_file().unwrap().to_string();
    drop(f);
    let forked: i64 =
        conn.sqlite().query_row("SELECT sid FROM sessions WHERE path = ?1", [&fork_path], |r| r.get(0)).unwrap();
    assert_eq!(count(&conn, &format!("SELECT count(*) FROM list_texts WHERE sid = {forked}")), 1);
    check(&conn, "after a fork");

    // A database from before the joined texts: the migration's maintenance task rebuilds them.
    conn.sqlite()
        .execute_batch("DELETE FROM list_texts; INSERT INTO maintenance(task) VALUES ('list-texts');")
        .unwrap();
    drop(conn);
    let conn = sessiondb::db::open(&db).unwrap();
    assert_eq!(count(&conn, "SELECT count(*) FROM maintenance"), 0);
    assert_eq!(count(&conn, "SELECT count(*) FROM list_texts"), count(&conn, "SELECT count(*) FROM sessions"));
    check(&conn, "after the rebuild");
}
