//! The storage interface's conformance suite: every operation the layers above `store/` call
//! (sessions, entries, discovery, integrity, usage, writes and appends, forks, search, sync
//! state and replication), run on a SQLite database and on a PostgreSQL one holding the same
//! sessions, and the answers compared. A capability one backend has is an optional role of its
//! store, present there and absent on the other, never a method that fails.
//!
//! Both databases are filled the same way (`sessiondb import` of the oracle corpus), so
//! session keys may differ between them: answers are compared with keys written as
//! `header id:line`.

mod common;

use sessiondb::db::Db;
use sessiondb::discovery::Origins;
use sessiondb::internals::keys::{EntryKey, SessionKey};
use sessiondb::internals::{entry_rows, search_index, sessions, write};
use sessiondb::Error;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One backend's database with the corpus imported, and its session keys by header id.
struct Side {
    name: &'static str,
    db: Db,
    by_id: HashMap<String, SessionKey>,
    ids: HashMap<SessionKey, String>,
}

impl Side {
    fn open(name: &'static str, location: &Path) -> Side {
        let (code, _, err) = common::run(location, &["import", corpus().to_str().unwrap()]);
        // 1: some files of the corpus are not sessions (they are there to be refused).
        assert!(code <= 1, "{name}: import failed: {err}");
        let mut db = sessiondb::db::open(location).unwrap();
        search_index::catch_up(&mut db, |_, _| {}).unwrap();
        let mut by_id = HashMap::new();
        let mut ids = HashMap::new();
        for info in db.store().infos_all(Origins::Every).unwrap() {
            by_id.insert(info.id.clone(), info.sid);
            ids.insert(info.sid, info.id);
        }
        Side { name, db, by_id, ids }
    }

    /// `key` as `header id:line`.
    fn key(&self, key: EntryKey) -> String {
        let sid = key.session();
        let seq = key - sid.entry(0);
        format!("{}:{seq}", self.ids.get(&sid).map_or("?", String::as_str))
    }

    fn opt_key(&self, key: Option<EntryKey>) -> String {
        key.map_or_else(|| "-".into(), |k| self.key(k))
    }

    fn row(&self, r: &entry_rows::EntryRow) -> String {
        format!(
            "{} {:?} {:?} {:?} {:?} {:?} {} parent={} depth={:?} c={} t={} m={}",
            self.key(r.key),
            r.id,
            r.parent_id,
            r.kind,
            r.role,
            r.ts_ms,
            r.body,
            self.opt_key(r.parent_key),
            r.depth,
            self.opt_key(r.compaction_key),
            self.opt_key(r.thinking_key),
            self.opt_key(r.model_key)
        )
    }

    fn rows(&self, rows: &[entry_rows::EntryRow]) -> Vec<String> {
        rows.iter().map(|r| self.row(r)).collect()
    }
}

/// The oracle corpus's version-3 session files (older ones get fresh entry ids when they are
/// migrated at import, different on each side), in a folder of their own.
fn corpus() -> &'static Path {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let from = common::oracle().join("sessions");
        let mut stack = vec![from.clone()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                    continue;
                }
                let text = std::fs::read_to_string(&p).unwrap_or_default();
                if text.lines().next().is_some_and(|h| h.contains(r#""version":3"#)) {
                    let to = dir.path().join(p.strip_prefix(&from).unwrap());
                    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                    std::fs::copy(&p, &to).unwrap();
                }
            }
        }
        dir
    })
    .path()
}

/// The two sides, or only SQLite when no test server is given.
fn sides(dir: &Path) -> Vec<Side> {
    common::backends(dir, "conformance").into_iter().map(|b| Side::open(b.name, &b.db)).collect()
}

/// Runs `f` on every side and checks the answers agree.
fn same<T: PartialEq + std::fmt::Debug>(what: &str, sides: &[Side], f: impl Fn(&Side) -> T) -> T {
    let mut answers = sides.iter().map(|s| (s.name, f(s)));
    let (first, want) = answers.next().unwrap();
    for (name, got) in answers {
        if got != want {
            let (g, w) = (format!("{got:?}"), format!("{want:?}"));
            let at = g.chars().zip(w.chars()).take_while(|(a, b)| a == b).count();
            let tail = |t: &str| t.chars().skip(at.saturating_sub(60)).take(240).collect::<String>();
            panic!("{what}: {name} differs from {first} at char {at}:\n{name}: {}\n{first}: {}", tail(&g), tail(&w));
        }
    }
    want
}

/// `result` is the answer, or `Unsupported` naming an operation.
fn or_unsupported<T>(result: sessiondb::Result<T>) -> Option<T> {
    match result {
        Ok(v) => Some(v),
        Err(Error::Unsupported { what, .. }) => {
            assert!(!what.is_empty());
            None
        }
        Err(e) => panic!("{e}"),
    }
}

/// Whether every entry of session `sid` has the id its line gives (lines of older versions get
/// fresh ids when they are migrated at import, different on each side).
fn stable(s: &Side, sid: SessionKey) -> bool {
    s.db.store()
        .all_entries(sid)
        .unwrap()
        .iter()
        .all(|e| e.id.as_ref().is_none_or(|id| e.body.contains(&format!("\"id\":\"{id}\""))))
}

/// The header ids of the sessions whose entry ids are the same on every side.
fn session_ids(sides: &[Side]) -> Vec<String> {
    let s = &sides[0];
    let mut ids: Vec<String> = s.by_id.iter().filter(|(_, &sid)| stable(s, sid)).map(|(id, _)| id.clone()).collect();
    ids.sort();
    ids
}

#[test]
fn sessions_entries_and_paths_agree() {
    let dir = tempfile::tempdir().unwrap();
    let sides = sides(dir.path());
    for id in session_ids(&sides) {
        let sid = |s: &Side| s.by_id[&id];
        same("session row", &sides, |s| {
            let r = s.db.store().session_row(sid(s)).unwrap();
            (r.header, r.rel_path, r.cwd, r.id, r.created)
        });
        same("distinct ids", &sides, |s| s.db.store().distinct_entry_ids(sid(s)).unwrap());
        same("tree state", &sides, |s| s.db.store().tree_state(sid(s)).unwrap());
        let all = same("all entries", &sides, |s| s.rows(&s.db.store().all_entries(sid(s)).unwrap()));
        same("labels", &sides, |s| s.rows(&s.db.store().label_entries(sid(s)).unwrap()));
        same("last entry", &sides, |s| s.db.store().last_entry(sid(s)).unwrap().map(|r| s.row(&r)));
        same("lines from", &sides, |s| {
            let mut out = Vec::new();
            s.db.store()
                .lines_from(sid(s), EntryKey(i64::MIN), 5, &mut |k, b| {
                    out.push((s.key(k), String::from_utf8_lossy(b).into_owned()))
                })
                .unwrap();
            out
        });
        same("written lines", &sides, |s| {
            let mut out = Vec::new();
            or_unsupported(s.db.store().write_lines(sid(s), &mut |l| {
                out.extend_from_slice(l);
                l.clear();
                Ok(())
            }))
            .map(|_| String::from_utf8_lossy(&out).into_owned())
        });
        same("stats", &sides, |s| {
            let st = s.db.store().load_stats(sid(s)).unwrap();
            (format!("{:?}", st.stats), st.last_seq, st.tree_ok)
        });
        let entries = (sides[0].db).store().all_entries(sides[0].by_id[&id]).unwrap();
        for e in entries.iter().take(40) {
            let Some(eid) = e.id.clone() else { continue };
            same("entry by id", &sides, |s| s.db.store().entry_by_id(sid(s), &eid).unwrap().map(|r| s.row(&r)));
            same("id exists", &sides, |s| s.db.store().entry_id_exists(sid(s), &eid).unwrap());
            same("children", &sides, |s| s.rows(&s.db.store().children(sid(s), &eid).unwrap()));
            same("entry node", &sides, |s| {
                s.db.store()
                    .entry_node(sid(s), &eid)
                    .unwrap()
                    .map(|(k, d)| (s.key(k), s.opt_key(d.parent_key), d.depth))
            });
            // The same entry by key and the walks from it, found by id on each side.
            let key_of = |s: &Side| s.db.store().entry_by_id(sid(s), &eid).unwrap().unwrap().key;
            same("entry by key", &sides, |s| s.db.store().entry_by_key(key_of(s)).unwrap().map(|r| s.row(&r)));
            same("walk up", &sides, |s| s.rows(&s.db.store().walk_up(key_of(s), None, 1000).unwrap()));
            same("walk up steps", &sides, |s| {
                s.db.store()
                    .walk_up_steps(key_of(s), 1000)
                    .unwrap()
                    .into_iter()
                    .map(|p| (s.key(p.key), p.kind, p.role))
                    .collect::<Vec<_>>()
            });
            same("branch source rows", &sides, |s| {
                s.db.store()
                    .branch_source_rows(&[key_of(s)], true)
                    .unwrap()
                    .into_iter()
                    .map(|(l, body)| (s.key(l.key), l.fields.id, body))
                    .collect::<Vec<_>>()
            });
        }
        assert_eq!(all.len(), entries.len());
    }
}

#[test]
fn discovery_and_references_agree() {
    let dir = tempfile::tempdir().unwrap();
    let sides = sides(dir.path());
    let info = |s: &Side, rows: Vec<sessiondb::internals::discovery::InfoRow>| {
        let mut out: Vec<String> = rows
            .into_iter()
            .map(|i| {
                format!(
                    "{} {} {:?} {:?} {:?} {:?} {} {:?} {:?} {}",
                    i.id,
                    i.path,
                    i.cwd,
                    i.name,
                    i.created,
                    i.parent_session,
                    i.message_count,
                    i.last_activity_ms,
                    i.first_message,
                    i.last_seq
                )
            })
            .collect();
        let _ = s;
        out.sort();
        out
    };
    // The corpus is imported, so every session is the database's own: both scopes agree.
    for o in [Origins::Own, Origins::Every] {
        same("infos all", &sides, |s| info(s, s.db.store().infos_all(o).unwrap()));
    }
    same("session count", &sides, |s| s.db.store().session_count().unwrap());
    let all = (sides[0].db).store().infos_all(Origins::Own).unwrap();
    for i in all.iter().take(20) {
        let dir_of = Path::new(&i.path).parent().unwrap().to_string_lossy().into_owned();
        for o in [Origins::Own, Origins::Every] {
            same("infos in dir", &sides, |s| info(s, s.db.store().infos_in_dir(&dir_of, o).unwrap()));
        }
        same("infos under", &sides, |s| info(s, s.db.store().infos_under("/").unwrap()));
        if let Some(cwd) = &i.cwd {
            for o in [Origins::Own, Origins::Every] {
                same("infos for cwd", &sides, |s| info(s, s.db.store().infos_for_cwd(cwd, o).unwrap()));
            }
        }
        same("refs by id", &sides, |s| {
            s.db.store().refs_by_id(&i.id).unwrap().into_iter().map(|r| (r.id, r.path)).collect::<Vec<_>>()
        });
        same("refs by id prefix", &sides, |s| {
            s.db.store().refs_by_id_prefix(&i.id[..6]).unwrap().into_iter().map(|r| (r.id, r.path)).collect::<Vec<_>>()
        });
        same("refs by path", &sides, |s| {
            s.db.store().refs_by_path(&i.path).unwrap().into_iter().map(|r| (r.id, r.path)).collect::<Vec<_>>()
        });
        same("path with id in dir", &sides, |s| {
            s.db.store().path_with_id_in_dir(&i.id, &dir_of, &mut |_| true).unwrap()
        });
        same("most recent in dir", &sides, |s| {
            s.db.store().most_recent_in_dir(&dir_of, &mut |_| true).unwrap().map(|(_, p)| p)
        });
        same("joined text", &sides, |s| {
            let sid = s.by_id[&i.id];
            s.db.store().list_text(sid).unwrap().map(|(_, t)| t)
        });
        same("joined texts of", &sides, |s| {
            let sid = s.by_id[&i.id];
            s.db.store().list_texts_of(&[sid]).unwrap().into_iter().map(|t| t.map(|(_, t)| t)).collect::<Vec<_>>()
        });
        same("sid by path", &sides, |s| {
            or_unsupported(s.db.store().sid_by_path(&i.path)).map(|k| k.map(|k| s.ids[&k].clone()))
        });
    }
}

#[test]
fn integrity_usage_and_search_agree() {
    let dir = tempfile::tempdir().unwrap();
    let sides = sides(dir.path());
    same("checked sessions", &sides, |s| {
        let mut out: Vec<_> =
            s.db.store()
                .checked_sessions()
                .unwrap()
                .into_iter()
                .map(|c| (c.id, c.path, c.cwd, c.entry_count, c.last_seq, c.tree_ok))
                .collect();
        out.sort();
        out
    });
    for id in session_ids(&sides).into_iter().take(20) {
        same("checked entries", &sides, |s| {
            s.db.store()
                .checked_entries(s.by_id[&id])
                .unwrap()
                .into_iter()
                .map(|e| (e.seq, e.id, e.parent_id, e.kind, e.body))
                .collect::<Vec<_>>()
        });
        same("checked session", &sides, |s| {
            s.db.store().checked_session(s.by_id[&id]).unwrap().map(|c| (c.id, c.entry_count, c.tree_ok))
        });
    }
    for group in ["all", "day", "week", "month", "model", "provider", "project", "session"] {
        same(group, &sides, |s| s.db.store().usage_totals(group, None, None, None).unwrap());
    }
    same("text count", &sides, |s| search_index::text_count(&s.db).unwrap());
    same("pending", &sides, |s| search_index::pending(&s.db).unwrap());
    let terms = same("terms starting", &sides, |s| search_index::terms_starting(&s.db, "a", 50).unwrap());
    assert!(!terms.is_empty());
    // Lines spread over the searchable entries: each one an entry line.
    same("sampled lines", &sides, |s| {
        let lines = search_index::sample_lines(&s.db, 40).unwrap();
        assert!(!lines.is_empty() && lines.len() <= 40, "{}: {} lines", s.name, lines.len());
        assert!(lines.iter().all(|l| l.starts_with("{\"type\":")), "{}: {lines:?}", s.name);
        true
    });
    // At most `n` terms holding each part, any of them: the same ones when fewer match.
    same("terms containing", &sides, |s| {
        let parts = ["e", "on", "conform", "qqqq"];
        let found = search_index::terms_containing(&s.db, &parts, 20).unwrap();
        parts
            .iter()
            .zip(found)
            .map(|(part, mut terms)| {
                assert!(terms.len() <= 20 && terms.iter().all(|t| t.contains(part)), "{terms:?}");
                terms.sort();
                if terms.len() == 20 {
                    terms.clear();
                }
                terms
            })
            .collect::<Vec<_>>()
    });
    let filter = search_index::RowFilter::default();
    let stable_ids: std::collections::HashSet<String> = session_ids(&sides).into_iter().collect();
    for term in terms.iter().take(10) {
        same("postings", &sides, |s| {
            let keys = search_index::postings(&s.db, term).unwrap();
            let mut hits: Vec<String> = keys
                .iter()
                .filter(|&&k| stable_ids.contains(&s.ids[&k.session()]))
                .filter_map(|&k| search_index::hit_row(&s.db, k, None, &filter, true).unwrap())
                .map(|h| format!("{} {:?} {} {:?} {:?}", h.session_id, h.entry_id, h.role, h.ts_ms, h.line))
                .collect();
            hits.sort();
            hits
        });
        same("posting blobs", &sides, |s| {
            let one = search_index::posting_blobs(&s.db, term).unwrap().len();
            let of = search_index::posting_blobs_of(&s.db, &[term.as_str()]).unwrap().len();
            (one > 0, one == of)
        });
        same("candidates and hit rows", &sides, |s| {
            let keys = search_index::postings(&s.db, term).unwrap();
            let wanted: Vec<(EntryKey, Option<EntryKey>, bool)> =
                search_index::Candidates::new(&s.db, keys).unwrap().map(|(k, o)| (k, o, false)).collect();
            let mut rows: Vec<String> = search_index::hit_rows(&s.db, &wanted, &filter)
                .unwrap()
                .into_iter()
                .flatten()
                .filter(|h| stable_ids.contains(&h.session_id))
                .map(|h| format!("{} {:?}", h.session_id, h.entry_id))
                .collect();
            rows.sort();
            rows
        });
    }
    same("scan", &sides, |s| {
        let mut n = 0;
        search_index::scan(&s.db, &filter, |_, _, _| {
            n += 1;
            true
        })
        .unwrap();
        n
    });
}

#[test]
fn writes_forks_and_appends_agree() {
    let dir = tempfile::tempdir().unwrap();
    let mut sides = sides(dir.path());
    let source = session_ids(&sides).into_iter().next().unwrap();
    let header = sessiondb::json::parse(
        br#"{"type":"session","version":3,"id":"conformance-copy","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/c"}"#,
    )
    .unwrap();
    let header = header.as_object().unwrap().clone();
    let header_line = sessiondb::json::Value::Object(header.clone()).to_json();
    for s in &mut sides {
        let src = s.by_id[&source];
        let tx = s.db.write().unwrap();
        let path = PathBuf::from("/c/copy.jsonl");
        let copy = tx.store().insert_session(&write::NewSession::made_now(&path, &header, &header_line)).unwrap();
        tx.store().copy_session(src, copy).unwrap();
        let last = tx.store().last_entry(copy).unwrap().unwrap();
        let line = format!(
            r#"{{"type":"message","id":"conf0001","parentId":{},"timestamp":"2025-01-01T00:00:01.000Z","message":{{"role":"user","content":"conformance words","timestamp":1}}}}"#,
            last.id.as_deref().map_or("null".into(), |i| format!("{i:?}"))
        );
        let node = tx.store().entry_node(copy, last.id.as_deref().unwrap()).unwrap();
        tx.store().append_entry(copy, &line, node).unwrap();
        tx.commit().unwrap();
        s.by_id.insert("conformance-copy".into(), copy);
        s.ids.insert(copy, "conformance-copy".into());
        // A second session written line by line, as the manager writes a staged session.
        let tx = s.db.write().unwrap();
        let path = PathBuf::from("/c/lines.jsonl");
        let mut h2 = header.clone();
        h2.set("id", sessiondb::json::Value::String("conformance-lines".into()));
        let h2_line = sessiondb::json::Value::Object(h2.clone()).to_json();
        let sid = tx.store().insert_session(&write::NewSession::made_now(&path, &h2, &h2_line)).unwrap();
        let mut w = write::EntryWriter::new(&tx, sid).unwrap();
        for (i, text) in ["first words", "second words"].iter().enumerate() {
            let parent = if i == 0 { "null".to_string() } else { format!("\"line{i:04}\"") };
            let line = format!(
                r#"{{"type":"message","id":"line{:04}","parentId":{parent},"timestamp":"2025-01-01T00:00:0{i}.000Z","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#,
                i + 1
            );
            let obj = write::scan(&line).unwrap();
            w.write_parsed(&line, write::ParsedLine::of(&obj)).unwrap();
        }
        w.finish().unwrap();
        tx.commit().unwrap();
        s.by_id.insert("conformance-lines".into(), sid);
        s.ids.insert(sid, "conformance-lines".into());
        search_index::catch_up(&mut s.db, |_, _| {}).unwrap();
    }
    // A path walk from the appended line down the copied ones.
    same("copy", &sides, |s| s.rows(&s.db.store().all_entries(s.by_id["conformance-copy"]).unwrap()));
    same("copy stats", &sides, |s| {
        let st = s.db.store().load_stats(s.by_id["conformance-copy"]).unwrap();
        (format!("{:?}", st.stats), st.last_seq, st.tree_ok)
    });
    same("lines", &sides, |s| s.rows(&s.db.store().all_entries(s.by_id["conformance-lines"]).unwrap()));
    // The joined text as discovery completes it: the part kept joined, then the lines after.
    same("joined text of the copy", &sides, |s| {
        let sid = s.by_id["conformance-copy"];
        let (upto, text) = s.db.store().list_texts_of(&[sid]).unwrap()[0].clone().unwrap_or_default();
        if upto < s.db.store().load_stats(sid).unwrap().last_seq {
            let cache = s.db.store().list_text_cache().expect("a joined text falls behind only in a cache");
            cache.append_list_texts(sid, upto + 1, text).unwrap()
        } else {
            text
        }
    });
    same("the appended words are found", &sides, |s| {
        let keys = search_index::postings(&s.db, "conformance").unwrap();
        keys.into_iter().map(|k| s.key(k)).collect::<Vec<_>>()
    });
    // A new entry of a manager: the id it drew is checked, by the store or before.
    same("append new entry", &sides, |s| {
        let sid = s.by_id["conformance-lines"];
        let node = s.db.store().entry_node(sid, "line0002").unwrap();
        let line = r#"{"type":"label","id":"line0003","parentId":"line0002","timestamp":"2025-01-01T00:00:03.000Z","targetId":"line0001","label":"x"}"#;
        let mut state = write::AppendState::default();
        let appended = s.db.store().append_new_entry(sid, line, node, &mut state).unwrap();
        matches!(appended, write::Appended::Key(_))
    });
    same("labels after", &sides, |s| s.rows(&s.db.store().label_entries(s.by_id["conformance-lines"]).unwrap()));
}

#[test]
fn deleting_a_session_agrees() {
    let dir = tempfile::tempdir().unwrap();
    let mut sides = sides(dir.path());
    let id = same("a session to delete", &sides, |s| {
        let mut ids: Vec<&String> = s.by_id.keys().collect();
        ids.sort();
        ids[0].clone()
    });
    for s in sides.iter_mut() {
        let sid = s.by_id[&id];
        let tx = s.db.write().unwrap();
        tx.store().delete_session(sid).unwrap();
        tx.commit().unwrap();
    }
    same("deleted", &sides, |s| {
        let sid = s.by_id[&id];
        let left = s.db.store().infos_all(Origins::Every).unwrap();
        (s.db.store().info_by_sid(sid).unwrap().is_none(), left.iter().any(|i| i.id == id), left.len())
    });
}

#[test]
fn moving_a_session_agrees() {
    let dir = tempfile::tempdir().unwrap();
    let mut sides = sides(dir.path());
    let id = same("a session to move", &sides, |s| {
        let mut ids: Vec<&String> = s.by_id.keys().collect();
        ids.sort();
        ids[0].clone()
    });
    let header = r#"{"type":"session","version":3,"id":"moved","cwd":"/elsewhere"}"#;
    let place = sessions::SessionPlace {
        path: "/sessions/--elsewhere--/moved.jsonl",
        dir: "/sessions/--elsewhere--",
        rel_path: "--elsewhere--/moved.jsonl",
        cwd: "/elsewhere",
        header,
    };
    for s in sides.iter_mut() {
        let tx = s.db.write().unwrap();
        tx.store().relocate_session(s.by_id[&id], &place).unwrap();
        tx.commit().unwrap();
    }
    let moved = same("moved", &sides, |s| {
        let sid = s.by_id[&id];
        let row = s.db.store().session_row(sid).unwrap();
        let at: Vec<String> = s.db.store().refs_by_path(place.path).unwrap().into_iter().map(|r| r.id).collect();
        let in_dir = s.db.store().infos_in_dir(place.dir, Origins::Every).unwrap().len();
        let for_cwd = s.db.store().infos_for_cwd(place.cwd, Origins::Every).unwrap().len();
        (row.header, row.rel_path, row.cwd, at, in_dir, for_cwd)
    });
    let expected = (header.to_string(), Some(place.rel_path.to_string()), Some(place.cwd.to_string()), vec![id], 1, 1);
    assert_eq!(moved, expected);
}

/// A capability only one backend has is an optional role of its store, never a method that
/// fails: a local database (SQLite) is pushed from, keeps its imported files' sync states, a
/// joined-text cache and counts entry rows; a server (PostgreSQL) receives pushes. Each role is
/// present on exactly that backend, and answers there.
#[test]
fn what_one_backend_has_is_a_role() {
    let dir = tempfile::tempdir().unwrap();
    let mut sides = sides(dir.path());
    for s in &mut sides {
        // A session with entries (some of the corpus have none), the same one on every run.
        let mut ids: Vec<&String> = s.by_id.keys().collect();
        ids.sort();
        let sid = ids
            .iter()
            .map(|id| s.by_id[*id])
            .find(|&sid| s.db.store().all_entries(sid).is_ok_and(|rows| !rows.is_empty()))
            .unwrap_or(s.by_id[ids[0]]);
        // Each either answers or is `Unsupported` naming the operation.
        if let Some((rows, read)) = or_unsupported(s.db.count_entry_rows(|d| d.store().all_entries(sid))) {
            assert!(read >= rows.len() as u64 && !rows.is_empty(), "{}: {read} rows read for {}", s.name, rows.len());
        }
        let _ = or_unsupported(s.db.store().all_sessions());
        let local = s.name == "SQLite";
        let store = s.db.store();
        assert_eq!(store.replica().is_some(), local, "{}: pushed from", s.name);
        assert_eq!(store.sync_states().is_some(), local, "{}: keeps sync states", s.name);
        assert_eq!(store.list_text_cache().is_some(), local, "{}: caches joined texts", s.name);
        assert_eq!(store.receiver().is_some(), !local, "{}: receives pushes", s.name);
        if let Some(states) = store.sync_states() {
            assert_eq!(states.file_at("/nowhere.jsonl").unwrap(), None);
            let under = states.states_under(corpus()).unwrap();
            assert!(under.len() > 2, "{}", s.name);
            assert!(states.position(sid).unwrap().is_some(), "{}", s.name);
            assert_eq!(states.known_signatures().unwrap().len(), under.len(), "{}", s.name);
        }
        if let Some(replica) = store.replica() {
            assert_eq!(replica.local_sessions().unwrap().len(), s.by_id.len(), "{}", s.name);
        }
        if let Some(cache) = store.list_text_cache() {
            let _ = cache.stale_list_texts().unwrap();
            assert!(cache.last_seq(sid).unwrap() > 0, "{}", s.name);
        }
        if let Some(receiver) = store.receiver() {
            assert!(receiver.origin_sessions("elsewhere", None).unwrap().is_empty(), "{}", s.name);
            // The server's own sessions (origin ''), all of them or those at some paths only.
            let all = receiver.origin_sessions("", None).unwrap();
            let files = receiver.origin_files("", None).unwrap();
            assert!(all.len() > 2 && files.len() == all.len(), "{}", s.name);
            let mut some: Vec<String> = all.keys().take(2).cloned().collect();
            some.push("/nowhere.jsonl".into());
            let at = receiver.origin_sessions("", Some(&some)).unwrap();
            let mut got: Vec<&String> = at.keys().collect();
            got.sort();
            let mut want: Vec<&String> = some[..2].iter().collect();
            want.sort();
            assert_eq!(got, want);
            assert!(at.iter().all(|(p, r)| r.skey == all[p].skey && r.last_seq == all[p].last_seq));
            let files_at = receiver.origin_files("", Some(&some)).unwrap();
            assert_eq!(files_at.len(), 2);
            assert!(files_at.iter().all(|(p, f)| f.skey == files[p].skey && f.signature == files[p].signature));
        }
        let mut problems = 0;
        s.db.store()
            .integrity_check(&mut |l| {
                problems += usize::from(l != "ok");
                true
            })
            .unwrap();
        s.db.store()
            .foreign_key_check(&mut |_| {
                problems += 1;
                true
            })
            .unwrap();
        s.db.store()
            .shared_line_check(&mut |_| {
                problems += 1;
                true
            })
            .unwrap();
        assert_eq!(problems, 0, "{}", s.name);
        let _: SessionKey = sid;
    }
}

/// Leases on both backends: taking one, refusing it to another live process, renewing and
/// releasing only one's own, taking it over from a process gone (dead pid, a recycled pid with
/// another start time, a lease not renewed for longer than the TTL), and going with its session.
#[test]
fn leases_agree() {
    use sessiondb::internals::lease::{self, Acquired, Claimant};
    let dir = tempfile::tempdir().unwrap();
    let backends = common::backends(dir.path(), "leases");
    let locations: Vec<PathBuf> = backends.iter().map(|b| b.db.clone()).collect();
    let mut sides: Vec<Side> = backends.into_iter().map(|b| Side::open(b.name, &b.db)).collect();
    let me = lease::me();
    let a = Claimant { pid: 1, host: "host-a".into(), start: "boot-a:100".into() };
    let b = Claimant { pid: 2, host: "host-b".into(), start: "boot-b:200".into() };
    let same_host = |pid: i64, start: &str| Claimant { pid, host: me.host.clone(), start: start.into() };
    let shown = |h: Option<lease::Holder>| h.map(|h| (h.pid, h.host, h.live, h.mine));
    let got = |r: sessiondb::Result<Acquired>| match r.unwrap() {
        Acquired::Held => "held".to_string(),
        Acquired::HeldBy(h) => format!("held by {} on {} live={} mine={}", h.pid, h.host, h.live, h.mine),
    };
    let ids = same("sessions for leases", &sides, |s| {
        let mut ids: Vec<String> = s.by_id.keys().cloned().collect();
        ids.sort();
        ids.truncate(5);
        ids
    });
    for (s, location) in sides.iter_mut().zip(&locations) {
        let sid = |i: usize| s.by_id[&ids[i]];
        let (s0, s1, s2, s3, s4) = (sid(0), sid(1), sid(2), sid(3), sid(4));
        let db = &s.db;
        let mut log: Vec<String> = Vec::new();
        log.push(format!("{:?}", shown(lease::holder(db, s0).unwrap())));
        // A on another host takes s0; B (a third host) cannot while A renews it.
        log.push(got(lease::acquire_as(db, s0, &a)));
        log.push(got(lease::acquire_as(db, s0, &b)));
        log.push(got(lease::acquire(db, s0)));
        log.push(format!("{:?}", shown(lease::live_holder(db, s0).unwrap())));
        log.push(format!(
            "renew b {} a {}",
            lease::renew_as(db, s0, &b).unwrap(),
            lease::renew_as(db, s0, &a).unwrap()
        ));
        lease::release_as(db, s0, &b).unwrap();
        log.push(format!("{:?}", shown(lease::holder(db, s0).unwrap())));
        let h = lease::holder(db, s0).unwrap().unwrap();
        assert!(h.age_ms >= 0 && h.age_ms < 10_000, "{}: age {}", s.name, h.age_ms);
        assert!(h.describe().starts_with("process 1 on host-a (since 20"), "{}", h.describe());
        // A stops renewing: past the TTL its lease is taken over.
        let sql_age = |sid: SessionKey| {
            if s.name == "SQLite" {
                let c = rusqlite::Connection::open(location).unwrap();
                c.execute("UPDATE session_leases SET renewed_ms = renewed_ms - 100000 WHERE sid = ?1", [sid.0])
                    .unwrap();
            } else {
                common::pg::execute(
                    location.to_str().unwrap(),
                    &format!(
                        "UPDATE session_leases SET renewed = renewed - interval '100 seconds' WHERE skey = {}",
                        sid.0
                    ),
                );
            }
        };
        sql_age(s0);
        log.push(format!("{:?}", shown(lease::live_holder(db, s0).unwrap())));
        log.push(got(lease::acquire_as(db, s0, &b)));
        log.push(format!("{:?}", shown(lease::holder(db, s0).unwrap())));
        // This host: a pid that runs no process, and this process's pid with another start
        // time (a recycled pid), have lost their leases; a live process (pid 1) keeps its own,
        // however long since it renewed it.
        log.push(got(lease::acquire_as(db, s1, &same_host(i64::from(u32::MAX), "boot:1"))));
        log.push(got(lease::acquire(db, s1)));
        log.push(got(lease::acquire_as(db, s2, &same_host(me.pid, "another start"))));
        log.push(got(lease::acquire(db, s2)));
        log.push(format!("{:?}", shown(lease::holder(db, s2).unwrap())));
        let init = same_host(1, &lease::start_of(1).unwrap());
        log.push(got(lease::acquire_as(db, s3, &init)));
        sql_age(s3);
        log.push(got(lease::acquire(db, s3)));
        // Released: free for the next one; this process asking again keeps what it holds.
        lease::release(db, s1).unwrap();
        log.push(format!("{:?}", shown(lease::holder(db, s1).unwrap())));
        log.push(got(lease::acquire(db, s2)));
        // A lease goes with its session.
        log.push(got(lease::acquire_as(db, s4, &a)));
        let tx = s.db.write().unwrap();
        tx.store().delete_session(s4).unwrap();
        tx.commit().unwrap();
        log.push(format!("{:?}", shown(lease::holder(&s.db, s4).unwrap())));
        let want = [
            "None".to_string(),
            "held".into(),
            "held by 1 on host-a live=true mine=false".into(),
            "held by 1 on host-a live=true mine=false".into(),
            "Some((1, \"host-a\", true, false))".into(),
            "renew b false a true".into(),
            "Some((1, \"host-a\", true, false))".into(),
            "None".into(),
            "held".into(),
            "Some((2, \"host-b\", true, false))".into(),
            "held".into(),
            "held".into(),
            "held".into(),
            "held".into(),
            format!("Some(({}, {:?}, true, true))", me.pid, me.host),
            "held".into(),
            format!("held by 1 on {} live=true mine=false", me.host),
            "None".into(),
            "held".into(),
            "held".into(),
            "None".into(),
        ];
        assert_eq!(log, want, "{}", s.name);
    }
}
