//! Tree and context commands end to end: pi's JSON, parent cycles, very deep chains.

mod common;

use serde_json::Value as J;
use sessiondb::import::{import_file, ImportOptions};
use sessiondb::tree::{Leaf, SessionTree};

fn import_all(db: &std::path::Path) {
    let c = common::oracle();
    let (code, _, _) =
        common::run(db, &["import", c.join("sessions").to_str().unwrap(), c.join("cycles").to_str().unwrap()]);
    assert_eq!(code, 1, "the corpus holds files pi refuses");
}

#[test]
fn context_branch_children_and_tree_print_pis_json() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    import_all(&db);
    let (file, g) = common::golden("x-context-edit-oddities.jsonl");
    let f = file.to_str().unwrap();
    let (code, out, err) = common::run(&db, &["context", "--json", f]);
    assert_eq!(code, 0, "{err}");
    let ours: J = serde_json::from_str(&out).unwrap();
    assert_eq!(serde_json::to_string(&ours).unwrap(), serde_json::to_string(&g["projection"]).unwrap());
    for at in g["projectionsAt"].as_array().unwrap() {
        let args: Vec<&str> = match at["leaf"].as_str() {
            Some(leaf) => vec!["context", "--json", "--leaf", leaf, f],
            None => vec!["context", "--json", "--no-leaf", f],
        };
        let (code, out, _) = common::run(&db, &args);
        assert_eq!(code, 0);
        let ours: J = serde_json::from_str(&out).unwrap();
        assert_eq!(
            serde_json::to_string(&ours).unwrap(),
            serde_json::to_string(&at["projection"]).unwrap(),
            "{args:?}"
        );
    }
    let (_, out, _) = common::run(&db, &["branch", "--json", f]);
    assert_eq!(serde_json::from_str::<J>(&out).unwrap(), g["branch"]);
    let c = &g["children"][0];
    let (_, out, _) = common::run(&db, &["children", "--json", f, c["parent"].as_str().unwrap()]);
    let ids: Vec<J> = serde_json::from_str::<Vec<J>>(&out).unwrap().iter().map(|e| e["id"].clone()).collect();
    assert_eq!(J::Array(ids), c["children"]);
    let (_, out, _) = common::run(&db, &["tree", "--json", f]);
    let nodes: Vec<J> = serde_json::from_str(&out).unwrap();
    assert_eq!(nodes.len(), g["tree"].as_array().unwrap().len());
    for (n, want) in nodes.iter().zip(g["tree"].as_array().unwrap()) {
        assert_eq!(n["entry"]["id"], want["id"]);
        assert_eq!((&n["depth"], &n["childCount"], &n["label"]), (&want["depth"], &want["childCount"], &want["label"]));
    }
    // Text forms render without error.
    for cmd in ["context", "branch", "tree", "show"] {
        let (code, out, err) = common::run(&db, &[cmd, f]);
        assert_eq!(code, 0, "{cmd}: {err}");
        assert!(!out.is_empty(), "{cmd}");
    }
}

#[test]
fn a_parent_cycle_ends_the_path_with_a_warning_and_the_session_stays_usable() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    import_all(&db);
    let cycles = common::oracle().join("cycles");
    let leaf_in_cycle = cycles.join("cycle-2-leaf-in-cycle.jsonl");
    let f = leaf_in_cycle.to_str().unwrap();
    let (code, out, err) = common::run(&db, &["branch", "--json", f]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("parent cycle") && err.contains("cccc000b"), "{err}");
    let ids: Vec<String> =
        serde_json::from_str::<Vec<J>>(&out).unwrap().iter().map(|e| e["id"].as_str().unwrap().to_string()).collect();
    assert_eq!(ids, ["cccc000a", "cccc000b"], "stops before the first repeated entry");
    let (code, out, err) = common::run(&db, &["context", "--json", f]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("parent cycle"));
    let p: J = serde_json::from_str(&out).unwrap();
    assert_eq!(p["messages"].as_array().unwrap().len(), 2);
    // The tree drops the cycle's entries, like pi's getTree; children still answer.
    let (code, out, _) = common::run(&db, &["tree", "--json", f]);
    assert_eq!(code, 0);
    let tree: Vec<J> = serde_json::from_str(&out).unwrap();
    assert!(tree.iter().all(|n| !n["entry"]["id"].as_str().unwrap().starts_with("cccc")));
    assert_eq!(common::run(&db, &["children", f, "cccc000a"]).0, 0);

    let off_path = cycles.join("cycle-3-off-path.jsonl");
    let f = off_path.to_str().unwrap();
    let (code, out, err) = common::run(&db, &["context", "--json", f]);
    assert_eq!(code, 0);
    assert!(err.is_empty(), "the default leaf is not in the cycle: {err}");
    assert_eq!(serde_json::from_str::<J>(&out).unwrap()["messages"].as_array().unwrap().len(), 3);
    // D hangs off the cycle A -> C -> B -> A: its path ends before B comes round again.
    let (code, out, err) = common::run(&db, &["branch", "--json", "--from", "cccc000d", f]);
    assert_eq!(code, 0);
    assert!(err.contains("entry cccc000b"), "{err}");
    let ids: Vec<String> =
        serde_json::from_str::<Vec<J>>(&out).unwrap().iter().map(|e| e["id"].as_str().unwrap().to_string()).collect();
    assert_eq!(ids, ["cccc000c", "cccc000a", "cccc000b", "cccc000d"]);
}

/// A chain 100,000 entries deep: building, walking, serializing and dropping must not recurse
/// per level (test threads have a 2 MiB stack).
#[test]
fn a_chain_100000_deep_works_without_deep_recursion() {
    const N: usize = 100_000;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("deep.jsonl");
    let mut text =
        String::from(r#"{"type":"session","version":3,"id":"deep","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/d"}"#);
    text.push('\n');
    for i in 0..N {
        let parent = if i == 0 { "null".to_string() } else { format!("\"{:08x}\"", i - 1) };
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        text.push_str(&format!(
            r#"{{"type":"message","id":"{i:08x}","parentId":{parent},"timestamp":"2025-01-01T00:00:00.000Z","message":{{"role":"{role}","content":"m{i}","timestamp":1}}}}"#
        ));
        text.push('\n');
    }
    std::fs::write(&file, &text).unwrap();
    let (_d, db, mut conn) = common::temp_db();
    let r = import_file(&mut conn, &file, None, ImportOptions::default());
    assert_eq!(r.entries as usize, N);
    let s = sessiondb::resolve::resolve(&conn, "deep").unwrap();
    let t = SessionTree::open(&conn, s.sid).unwrap();
    let nodes = t.tree().unwrap();
    assert_eq!(nodes.len(), N);
    assert_eq!(nodes.last().unwrap().depth, N - 1);
    assert_eq!(t.branch(None).unwrap().entries.len(), N);
    let (p, cycle) = t.projection(&Leaf::Last).unwrap();
    assert!(cycle.is_none());
    assert!(p.to_json().len() > N * 20);
    assert_eq!(
        t.without_shortcuts()
            .projection(&Leaf::Id(format!("{:08x}", N / 2)))
            .unwrap()
            .0
            .as_object()
            .unwrap()
            .get("messages")
            .map(|m| match m {
                sessiondb::json::Value::Array(a) => a.len(),
                _ => 0,
            }),
        Some(N / 2 + 1)
    );
    let (code, out, err) = common::run(&db, &["tree", "--json", "deep"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.matches("\"childCount\":").count(), N);
    let (code, out, _) = common::run(&db, &["tree", "deep"]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), N);
    assert!(out.lines().all(|l| l.starts_with("* ") && !l.starts_with("*  ")), "a chain is not indented");
}
