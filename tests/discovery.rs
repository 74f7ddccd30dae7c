//! list / listAll / findById / continueRecent against pi 1.6.0's goldens (`_discovery.json`),
//! with PI_CODING_AGENT_DIR pointing at the corpus as when the goldens were recorded.

mod common;

use serde_json::Value as J;
use sessiondb::discovery::{self, SessionInfo};

fn rel(corpus: &str, path: &str) -> String {
    path.strip_prefix(&format!("{corpus}/")).unwrap_or(path).to_string()
}

fn infos_json(corpus: &str, conn: &rusqlite::Connection, mut infos: Vec<SessionInfo>) -> J {
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

#[test]
fn list_find_and_recent_equal_pi() {
    let corpus_path = common::oracle();
    let corpus = corpus_path.to_string_lossy().into_owned();
    std::env::set_var("PI_CODING_AGENT_DIR", &corpus);
    let g: J = serde_json::from_slice(&std::fs::read(corpus_path.join("goldens/_discovery.json")).unwrap()).unwrap();
    let (_d, _p, mut conn) = common::temp_db();
    let targets = sessiondb::import::collect_targets(&[corpus_path.join("sessions")]).unwrap();
    sessiondb::import::import_targets(&mut conn, &targets, Default::default(), |_| {});

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
            let ours = infos_json(&corpus, &conn, discovery::list_dir(&conn, &dir, filter.as_deref()).unwrap());
            check_list(&format!("list {name}"), &ours, &strip_rel(list));
            checked += 1;
        }
        if let Some(found) = c.get("findById").and_then(J::as_object) {
            for (id, want) in found {
                let got = discovery::find_in_dir(&conn, id, &dir, filter.as_deref()).unwrap().map(|p| rel(&corpus, &p));
                assert_eq!(got.map_or(J::Null, J::String), *want, "findById {id} {name}");
                checked += 1;
            }
        }
        if let Some(cr) = c.get("continueRecent").filter(|v| v.is_object()) {
            let got = discovery::recent_in_dir(&conn, &dir, filter.as_deref()).unwrap();
            match cr["file"].as_str() {
                Some(file) => {
                    let (sid, path) = got.unwrap_or_else(|| panic!("continueRecent {name}: pi opened {file}"));
                    assert_eq!(rel(&corpus, &path), file, "continueRecent {name}");
                    let t = sessiondb::tree::SessionTree::open(&conn, sid).unwrap();
                    let leaf = t.last_entry().unwrap().and_then(|r| r.id).map_or(J::Null, J::String);
                    // A migrated v1 file gets fresh ids on both sides; only compare unmigrated leaves.
                    if cr["fileChanged"] != true {
                        assert_eq!(leaf, cr["leafId"], "continueRecent {name}: leaf");
                    }
                    let (stats, _, _) = sessiondb::store::load_stats(&conn, sid).unwrap();
                    assert_eq!(J::from(stats.entry_count), cr["entryCount"], "continueRecent {name}: entries");
                }
                None => assert!(got.is_none(), "continueRecent {name}: pi started a new session, we found {got:?}"),
            }
            checked += 1;
        }
    }
    let ours = infos_json(&corpus, &conn, discovery::list_all(&conn).unwrap());
    check_list("listAll", &ours, &strip_rel(&g["listAll"]));
    assert!(checked > 50, "{checked}");
}
