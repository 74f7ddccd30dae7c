//! Full-text search and usage statistics across sessions.

mod backends;
mod common;

use sessiondb::manager::{NewSessionOptions, SessionManager};
use sessiondb::search::{self, SearchFilter};
use sessiondb::usage_stats::{self, GroupBy, StatsFilter};

const A: &str = concat!(
    r#"{"type":"session","version":3,"id":"sess-a","timestamp":"2025-03-01T10:00:00.000Z","cwd":"/p/a"}"#,
    "\n",
    r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2025-03-01T10:00:01.000Z","message":{"role":"user","content":"please finish the refactoring of parseHeaderLine","timestamp":1740823201000}}"#,
    "\n",
    r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2025-03-01T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"consider the zebra stripes"},{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"grep -rn needleInHaystack src"}}],"provider":"anthropic","model":"claude-a","usage":{"input":100,"output":50,"cacheRead":10,"cacheWrite":5,"totalTokens":165,"cost":{"input":0.001,"output":0.002,"cacheRead":0,"cacheWrite":0,"total":0.003}},"timestamp":1740823202000}}"#,
    "\n",
    r#"{"type":"message","id":"a3","parentId":"a2","timestamp":"2025-03-02T10:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"src/x.rs:42: ERROR: connection refused by upstream"}],"isError":false,"timestamp":1740909603000}}"#,
    "\n",
    r#"{"type":"message","id":"a4","parentId":"a3","timestamp":"2025-03-02T10:00:04.000Z","message":{"role":"user","content":[{"type":"text","text":"请帮我重构会话管理器"}],"timestamp":1740909604000}}"#,
    "\n",
    r#"{"type":"usage","id":"a5","parentId":"a4","timestamp":"2025-03-02T10:00:05.000Z","kind":"summary","provider":"openai","model":"gpt-x","usage":{"input":7,"output":3,"cacheRead":0,"cacheWrite":0,"totalTokens":10,"cost":{"total":0.5}}}"#,
    "\n",
    r#"{"type":"compaction","id":"a6","parentId":"a5","timestamp":"2025-03-03T10:00:06.000Z","summary":"we discussed the quux migration","firstKeptEntryId":"a4","tokensBefore":999,"usage":{"input":20,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":30,"cost":{"total":0.25}}}"#,
    "\n",
    r#"{"type":"session_info","id":"a7","parentId":"a6","timestamp":"2025-03-03T10:00:07.000Z","name":"Parser cleanup"}"#,
    "\n",
);

const B: &str = concat!(
    r#"{"type":"session","version":3,"id":"sess-b","timestamp":"2025-04-01T10:00:00.000Z","cwd":"/p/b"}"#,
    "\n",
    r#"{"type":"message","id":"b1","parentId":null,"timestamp":"2025-04-01T10:00:01.000Z","message":{"role":"user","content":"zebra crossing question","timestamp":1743501601000}}"#,
    "\n",
    r#"{"type":"message","id":"b2","parentId":"b1","timestamp":"2025-04-01T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"answer"}],"provider":"anthropic","model":"claude-b","usage":{"input":1000,"output":500,"cacheRead":0,"cacheWrite":0,"totalTokens":1500,"cost":{"total":1.5}},"timestamp":1743501602000}}"#,
    "\n",
    r#"{"type":"custom_message","customType":"note","content":"a custom reminder about flamingos","display":true,"id":"b3","parentId":"b2","timestamp":"2025-04-01T10:00:03.000Z"}"#,
    "\n",
);

fn setup() -> (tempfile::TempDir, std::path::PathBuf, sessiondb::db::Db) {
    let (dir, db, mut conn) = common::temp_db();
    for (name, text) in [("a.jsonl", A), ("b.jsonl", B)] {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        let r = sessiondb::import::import_file(&mut conn, &p, None, Default::default());
        assert_eq!(r.status, sessiondb::import::FileStatus::Imported);
    }
    search::catch_up(&mut conn, |_, _| {}).unwrap();
    (dir, db, conn)
}

fn hits(conn: &sessiondb::db::Db, q: &str, f: SearchFilter) -> Vec<(String, String, String)> {
    search::search(conn, q, &f)
        .unwrap()
        .into_iter()
        .map(|h| (h.session_id, h.entry_id.unwrap_or_default(), h.role))
        .collect()
}

#[test]
fn search_finds_substrings_cjk_and_tool_output() {
    let (_d, _db, conn) = setup();
    let any = SearchFilter::default;
    assert_eq!(hits(&conn, "factorin", any()), [("sess-a".into(), "a1".into(), "user".into())], "inside a word");
    assert_eq!(hits(&conn, "PARSEHEADER", any()), [("sess-a".into(), "a1".into(), "user".into())], "any case");
    assert_eq!(hits(&conn, "会话管", any()), [("sess-a".into(), "a4".into(), "user".into())], "CJK");
    assert_eq!(hits(&conn, "connection refused", any()), [("sess-a".into(), "a3".into(), "toolResult".into())]);
    assert_eq!(
        hits(&conn, "needleInHay", any()),
        [("sess-a".into(), "a2".into(), "assistant".into())],
        "tool-call arguments"
    );
    assert_eq!(hits(&conn, "quux migr", any()), [("sess-a".into(), "a6".into(), "compaction".into())]);
    assert_eq!(hits(&conn, "Parser clean", any()), [("sess-a".into(), "a7".into(), "session_info".into())]);
    assert_eq!(hits(&conn, "flamingo", any()), [("sess-b".into(), "b3".into(), "custom".into())]);
    assert_eq!(hits(&conn, "zebra", any()).len(), 2, "thinking and user text");
    let only_b = SearchFilter { cwd: Some("/p/b".into()), ..any() };
    assert_eq!(hits(&conn, "zebra", only_b), [("sess-b".into(), "b1".into(), "user".into())]);
    let thinking = SearchFilter { role: Some("assistant".into()), ..any() };
    assert_eq!(hits(&conn, "zebra", thinking), [("sess-a".into(), "a2".into(), "assistant".into())]);
    let later = SearchFilter { since_ms: Some(1_743_000_000_000), ..any() };
    assert_eq!(hits(&conn, "zebra", later).len(), 1);
    assert_eq!(hits(&conn, "42", any()), [("sess-a".into(), "a3".into(), "toolResult".into())], "short queries scan");
    assert!(hits(&conn, "\"; DROP TABLE entries; --", any()).is_empty(), "queries are text, not FTS syntax");
    let snippet = &search::search(&conn, "refused", &any()).unwrap()[0].snippet;
    assert!(snippet.contains("[refused]"), "{snippet}");
}

#[test]
fn search_cli_indexes_what_import_queued() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    let f = dir.path().join("a.jsonl");
    std::fs::write(&f, A).unwrap();
    assert_eq!(common::run(&db, &["import", f.to_str().unwrap()]).0, 0);
    let (code, out, err) = common::run(&db, &["search", "--json", "connection refused"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["entryId"], "a3");
    assert_eq!(v[0]["sessionId"], "sess-a");
    let (code, _, _) = common::run(&db, &["search", "nothing-like-this"]);
    assert_eq!(code, 1);
}

/// Sums usage straight from the JSONL text, independently of sessiondb.
fn independent_totals(files: &[&str]) -> (i64, i64, i64, i64, i64, f64, i64) {
    let mut t = (0, 0, 0, 0, 0, 0.0, 0);
    for text in files {
        for line in text.lines().skip(1) {
            let e: serde_json::Value = serde_json::from_str(line).unwrap();
            let usage = match e["type"].as_str() {
                Some("message") if e["message"]["role"] == "assistant" => &e["message"]["usage"],
                Some("usage" | "compaction" | "branch_summary") => &e["usage"],
                _ => continue,
            };
            if usage.is_null() {
                continue;
            }
            t.0 += usage["input"].as_i64().unwrap_or(0);
            t.1 += usage["output"].as_i64().unwrap_or(0);
            t.2 += usage["cacheRead"].as_i64().unwrap_or(0);
            t.3 += usage["cacheWrite"].as_i64().unwrap_or(0);
            t.4 += usage["totalTokens"].as_i64().unwrap_or(0);
            t.5 += usage["cost"]["total"].as_f64().unwrap_or(0.0);
            t.6 += 1;
        }
    }
    t
}

#[test]
fn stats_equal_independent_sums_and_count_forked_copies_once() {
    let (dir, db, conn) = setup();
    let want = independent_totals(&[A, B]);
    let check = |conn: &sessiondb::db::Db| {
        let rows = usage_stats::totals(conn, None, &StatsFilter::default()).unwrap();
        let t = usage_stats::sum(&rows);
        assert_eq!(
            (t.input, t.output, t.cache_read, t.cache_write, t.total_tokens, t.entries),
            (want.0, want.1, want.2, want.3, want.4, want.6)
        );
        assert!((t.cost - want.5).abs() < 1e-9, "{} vs {}", t.cost, want.5);
    };
    check(&conn);
    // A fork and a branched session copy entries (same id and timestamp): still counted once.
    let a_path = dir.path().join("a.jsonl");
    let mut f = SessionManager::fork_from(
        &db,
        a_path.to_str().unwrap(),
        "/p/c",
        Some(dir.path().to_str().unwrap()),
        NewSessionOptions::default(),
    )
    .unwrap();
    f.create_branched_session(Some("a6")).unwrap().unwrap();
    assert_eq!(common::run(&db, &["list", "--json"]).1.matches("\"id\":").count(), 4);
    check(&conn);
    let by_model = usage_stats::totals(&conn, Some(GroupBy::Model), &StatsFilter::default()).unwrap();
    let names: Vec<&str> = by_model.iter().map(|r| r.group.as_str()).collect();
    assert_eq!(names, ["(unknown)", "claude-a", "claude-b", "gpt-x"]);
    assert_eq!(by_model[1].total_tokens, 165);
    let by_day = usage_stats::totals(&conn, Some(GroupBy::Day), &StatsFilter::default()).unwrap();
    let days: Vec<(&str, i64)> = by_day.iter().map(|r| (r.group.as_str(), r.total_tokens)).collect();
    assert_eq!(days, [("2025-03-01", 165), ("2025-03-02", 10), ("2025-03-03", 30), ("2025-04-01", 1500)]);
    let since = StatsFilter { since_ms: Some(1_743_000_000_000), ..Default::default() };
    assert_eq!(usage_stats::sum(&usage_stats::totals(&conn, None, &since).unwrap()).total_tokens, 1500);
    let project = StatsFilter { cwd: Some("/p/a".into()), ..Default::default() };
    assert_eq!(usage_stats::sum(&usage_stats::totals(&conn, None, &project).unwrap()).total_tokens, 205);
    let (code, out, err) = common::run(&db, &["stats", "--by", "provider", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["total"]["totalTokens"], want.4);
    let (code, _, err) = common::run(&db, &["stats", "--by", "planet"]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot group by"), "{err}");
    // The same answers on a server, forks and branched sessions pushed as sessions of their own.
    if let Some(server) = backends::server() {
        let url = backends::fresh_db(&server);
        backends::push(&db, &url, &[]);
        same_answers(&db, &url, &["zebra", "needleInHaystack", "quux"]);
    }
}

/// A usage value as the stats rule reads it: `Ok(Some)` a plausible value for one entry (tokens
/// a whole number in `[0, 10^9]`, a cost in `[0, 10^6]`), `Ok(None)` absent, `Err` anything else
/// (counted as invalid).
fn usage_value(v: Option<&serde_json::Value>, tokens: bool) -> Result<Option<f64>, ()> {
    let max = if tokens { 1e9 } else { 1e6 };
    match v {
        None => Ok(None),
        Some(v) => v.as_f64().filter(|n| (0.0..=max).contains(n) && (!tokens || n.fract() == 0.0)).map(Some).ok_or(()),
    }
}

/// Usage totals summed independently of sessiondb over the files at `paths`, by the rule of
/// [`usage_value`], an entry copied by a fork (same id and timestamp) counted once.
struct Reference {
    tokens: [f64; 4],
    total: f64,
    cost: f64,
    invalid: i64,
    entries: i64,
}

fn reference_totals(paths: &[String]) -> Reference {
    // Independent sums over the imported files, an entry copied by a fork (same id and
    // timestamp) counted once.
    let mut seen = std::collections::HashSet::new();
    let (mut tokens, mut total, mut cost, mut invalid, mut entries) = ([0f64; 4], 0f64, 0f64, 0i64, 0i64);
    for p in paths {
        for line in String::from_utf8_lossy(&std::fs::read(p).unwrap()).lines() {
            let Ok(e) = serde_json::from_str::<serde_json::Value>(line) else { continue };
            let usage = match e["type"].as_str() {
                Some("message") if e["message"]["role"] == "assistant" => &e["message"]["usage"],
                Some("usage" | "compaction" | "branch_summary") => &e["usage"],
                _ => continue,
            };
            let Some(u) = usage.as_object() else { continue };
            if let (Some(id), Some(ts)) = (e["id"].as_str(), e["timestamp"].as_str()) {
                if !seen.insert((id.to_string(), ts.to_string())) {
                    continue;
                }
            }
            entries += 1;
            let mut take = |v: Option<&serde_json::Value>, tokens: bool| {
                usage_value(v, tokens).unwrap_or_else(|()| {
                    invalid += 1;
                    None
                })
            };
            let parts = ["input", "output", "cacheRead", "cacheWrite"].map(|k| take(u.get(k), true).unwrap_or(0.0));
            total += match u.get("totalTokens") {
                None => parts.iter().map(|p| p.trunc()).sum(),
                t => take(t, true).unwrap_or(0.0).trunc(),
            };
            cost += match u.get("cost") {
                Some(serde_json::Value::Object(c)) => take(c.get("total"), false),
                c => take(c, false),
            }
            .unwrap_or(0.0);
            for (sum, part) in tokens.iter_mut().zip(parts) {
                *sum += part.trunc();
            }
        }
    }
    Reference { tokens, total, cost, invalid, entries }
}

/// The totals of `stats --json` equal [`reference_totals`] of the files at `paths`.
fn assert_stats_equal_reference(db: &std::path::Path, paths: &[String]) -> Reference {
    let r = reference_totals(paths);
    let (code, out, err) = common::run(db, &["stats", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let t = &v["total"];
    assert_eq!(t["invalidUsageValues"], r.invalid);
    assert_eq!(t["entries"], r.entries);
    let close = |got: f64, want: f64| (got - want).abs() <= 1e-9 * want.abs().max(1.0);
    for (k, want) in ["input", "output", "cacheRead", "cacheWrite"].iter().zip(r.tokens) {
        assert!(close(t[k].as_f64().unwrap(), want), "{k}: {} vs {want}", t[k]);
    }
    assert!(close(t["totalTokens"].as_f64().unwrap(), r.total), "{} vs {}", t["totalTokens"], r.total);
    assert!(close(t["cost"].as_f64().unwrap(), r.cost), "{} vs {}", t["cost"], r.cost);
    r
}

#[test]
fn stats_on_the_readme_sample_sessions_leave_out_values_of_2_pow_53() {
    let (_dir, db, _conn) = common::temp_db();
    let samples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sessions");
    let (code, _, err) = common::run(&db, &["import", samples.to_str().unwrap()]);
    assert!(code == 0 || code == 1, "{err}");
    let mut paths = Vec::new();
    let mut dirs = vec![samples];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(d).unwrap().map(Result::unwrap) {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                paths.push(p.to_string_lossy().into_owned());
            }
        }
    }
    let r = assert_stats_equal_reference(&db, &paths);
    // The files hold 2^53 eleven times (and 1e21, fractions of a token, 1.8e308): each is
    // counted as invalid, none is summed. Before the rule, output summed to 9,007,199,257,705,964.
    assert!(r.invalid >= 11, "{}", r.invalid);
    assert!(r.tokens.iter().all(|&t| t < 1e9 * r.entries as f64) && r.cost < 1e6 * r.entries as f64);
    let (_, out, _) = common::run(&db, &["stats", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["total"]["output"].as_f64().unwrap() < 1e8, "{}", v["total"]["output"]);
}

#[test]
fn stats_leave_out_and_count_implausible_usage_values_on_the_oracle_corpus() {
    let (_dir, db, conn) = common::temp_db();
    let (code, _, err) = common::run(&db, &["import", common::oracle().join("sessions").to_str().unwrap()]);
    assert!(code == 0 || code == 1, "{err}"); // 1: the corpus holds deliberately broken files
    let paths: Vec<String> = conn
        .sqlite()
        .prepare("SELECT path FROM sessions")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let Reference { tokens, total, cost, invalid, entries } = reference_totals(&paths);
    assert!(invalid > 10, "the oracle corpus holds corrupt usage values ({invalid})");
    let (code, out, err) = common::run(&db, &["stats", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let t = &v["total"];
    assert_eq!(t["invalidUsageValues"], invalid);
    assert_eq!(t["entries"], entries);
    // Sums of doubles added in another order: equal up to rounding.
    let close = |got: f64, want: f64| (got - want).abs() <= 1e-9 * want.abs().max(1.0);
    for (k, want) in ["input", "output", "cacheRead", "cacheWrite"].iter().zip(tokens) {
        assert!(close(t[k].as_f64().unwrap(), want), "{k}: {} vs {want}", t[k]);
    }
    let got_total = t["totalTokens"].as_f64().unwrap();
    assert!(close(got_total, total), "{got_total} vs {total}");
    assert!(got_total < 9e18, "no saturated total: {got_total}");
    let got_cost = t["cost"].as_f64().unwrap();
    assert!(got_cost.is_finite() && close(got_cost, cost), "{got_cost} vs {cost}");
    let (code, table, _) = common::run(&db, &["stats"]);
    assert_eq!(code, 0);
    assert!(table.contains(&format!("{invalid} usage value(s) left out")), "{table}");
    assert!(!table.contains("inf") && !table.contains("9223372036854775807"), "{table}");
    // The same totals, groups and footnote on a server.
    if let Some(server) = backends::server() {
        let url = backends::fresh_db(&server);
        backends::push(&db, &url, &[]);
        same_answers(&db, &url, &[]);
    }
}

/// Every `stats` answer (each grouping, with and without filters, the table) and a few
/// searches give the same output on the SQLite database `local` and on the server `url`.
fn same_answers(local: &std::path::Path, url: &str, queries: &[&str]) {
    let filters: [&[&str]; 4] =
        [&[], &["--since", "2025-03-02"], &["--until", "2025-03-02T12:00:00Z"], &["--cwd", "/p/a"]];
    for by in [
        None,
        Some("day"),
        Some("week"),
        Some("month"),
        Some("model"),
        Some("provider"),
        Some("project"),
        Some("session"),
    ] {
        for f in filters {
            let mut args = vec!["stats", "--json"];
            if let Some(by) = by {
                args.extend(["--by", by]);
            }
            args.extend_from_slice(f);
            backends::same_cli(local, url, &args);
        }
    }
    backends::same_cli(local, url, &["stats"]);
    for q in queries {
        backends::same_cli(local, url, &["search", "--json", q]);
        backends::same_cli(local, url, &["search", "--sessions", "--json", q]);
        backends::same_cli(local, url, &["search", q]);
    }
}

fn entry_ids(out: &str) -> std::collections::BTreeSet<String> {
    let v: serde_json::Value = serde_json::from_str(out).unwrap_or_else(|e| panic!("{e}: {out}"));
    v.as_array().unwrap().iter().map(|h| h["entryId"].as_str().unwrap().to_string()).collect()
}

/// On a server, search and stats follow what push and the SessionManager write: a session
/// sent again whole (its file rewritten) leaves no stale hit or usage row, a pruned one
/// leaves nothing, and entries appended through `sessiondb --db URL rpc` are found and counted
/// by the next command.
#[test]
fn search_and_stats_on_postgresql_follow_resent_pruned_and_appended_sessions() {
    let Some(server) = backends::server() else { return };
    let (dir, db, conn) = setup();
    let url = backends::fresh_db(&server);
    backends::push(&db, &url, &[]);
    let queries = ["zebra", "needleInHaystack", "会话", "flamingos", "refactoring", "e", "-"];
    same_answers(&db, &url, &queries);

    // a.jsonl rewritten and imported again: push sends it again whole.
    let a = dir.path().join("a.jsonl");
    let rewritten = A.replace("zebra stripes", "okapi stripes").replace(r#""input":100,"#, r#""input":400,"#);
    std::fs::write(&a, rewritten).unwrap();
    assert_eq!(common::run(&db, &["import", a.to_str().unwrap()]).0, 0);
    let summary = backends::push(&db, &url, &[]);
    assert_eq!(summary["resent"], 1, "{summary}");
    let (_, out, _) = backends::sdb(&url, &["search", "--json", "zebra"]);
    assert_eq!(entry_ids(&out), ["b1".to_string()].into(), "no stale hit of the old line");
    same_answers(&db, &url, &["zebra", "okapi", "stripes", "needleInHaystack"]);

    // b deleted locally and pruned from the server.
    let b = dir.path().join("b.jsonl");
    conn.sqlite().execute("DELETE FROM sessions WHERE path = ?1", [b.to_str().unwrap()]).unwrap();
    let summary = backends::push(&db, &url, &["--prune"]);
    assert_eq!(summary["pruned"], 1, "{summary}");
    let (code, _, _) = backends::sdb(&url, &["search", "flamingos"]);
    assert_eq!(code, 1, "a pruned session's text is gone");
    same_answers(&db, &url, &["zebra", "flamingos", "answer"]);

    // Appends through the SessionManager on the server.
    let home = dir.path().join("home");
    let usage = serde_json::json!({"input": 11, "output": 22, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 33, "cost": {"total": 0.25}});
    let r = backends::rpc(
        &url,
        &[
            ("create", serde_json::json!([home.to_str().unwrap()])),
            (
                "appendMessage",
                serde_json::json!([{"role": "user", "content": "where is the xylophoneQuartz", "timestamp": 1_750_000_000_000u64}]),
            ),
            (
                "appendMessage",
                serde_json::json!([{"role": "assistant", "content": [{"type": "text", "text": "in the XylophoneQuartz drawer"}], "provider": "p-rpc", "model": "m-rpc", "usage": usage, "stopReason": "stop", "timestamp": 1_750_000_001_000u64}]),
            ),
        ],
    );
    let ids: std::collections::BTreeSet<String> = r[1..].iter().map(|v| v.as_str().unwrap().to_string()).collect();
    let (code, out, err) = backends::sdb(&url, &["search", "--json", "xylophonequartz"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(entry_ids(&out), ids);
    let (_, out, _) = backends::sdb(&url, &["stats", "--by", "model", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let m = v["groups"].as_array().unwrap().iter().find(|g| g["group"] == "m-rpc").expect("the appended usage");
    assert_eq!((m["entries"].as_i64(), m["totalTokens"].as_i64(), m["cost"].as_f64()), (Some(1), Some(33), Some(0.25)));
    // More appends to that session: only they are read by the next catch-up, and found.
    let file = r[0]["sessionFile"].as_str().unwrap().to_string();
    let more = backends::rpc(
        &url,
        &[
            ("open", serde_json::json!([file])),
            (
                "appendMessage",
                serde_json::json!([{"role": "user", "content": "and the xylophoneQuartz key?", "timestamp": 1_750_000_002_000u64}]),
            ),
        ],
    );
    let mut ids = ids;
    ids.insert(more[1].as_str().unwrap().to_string());
    let (_, out, _) = backends::sdb(&url, &["search", "--json", "xylophoneQuartz"]);
    assert_eq!(entry_ids(&out), ids);
    let (_, out, _) = backends::sdb(&url, &["index", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["indexed"], 0, "nothing left to index: {out}");
}

/// The statements a search runs per token, per entry or per session on a server can be
/// answered from an index (checked with sequential scans disabled).
#[test]
fn postgresql_search_statements_use_an_index() {
    use sessiondb::internals::search_index as si;
    let Some(server) = backends::server() else { return };
    let (_dir, db, _conn) = setup();
    let url = backends::fresh_db(&server);
    backends::push(&db, &url, &[]);
    assert_eq!(backends::sdb(&url, &["index"]).0, 0);
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    c.batch_execute("ANALYZE; SET enable_seqscan = off").unwrap();
    type P<'a> = &'a (dyn postgres::types::ToSql + Sync);
    let (text, key, n, yes, none_text, none_key): (P, P, P, P, P, P) =
        (&"zebra", &1i64, &10i64, &true, &None::<String>, &None::<i64>);
    let like: P = &"%ebr%";
    let keys: P = &vec![1i64, 2];
    let bools: P = &vec![true, false];
    let texts: P = &vec!["zebra", "quux"];
    let cases: Vec<(&str, &str, Vec<P>)> = vec![
        ("postings", si::PG_POSTINGS_OF, vec![text]),
        ("postings of several", si::PG_POSTINGS_OF_ALL, vec![texts]),
        ("terms starting", si::PG_TERMS_STARTING, vec![text, n]),
        ("terms containing", si::PG_TERMS_LIKE, vec![like, n]),
        ("hit row", si::PG_HIT_ROW, vec![key, key, none_text, none_text, none_key, yes]),
        ("hit rows", si::PG_HIT_ROWS, vec![keys, keys, bools, none_text, none_text, none_key]),
        ("line versions", si::PG_LINE_XMINS, vec![keys, keys]),
        ("lines after", si::PG_LINES_AFTER, vec![keys, keys]),
    ];
    for (what, sql, params) in cases {
        let plan: Vec<String> =
            c.query(&format!("EXPLAIN {sql}"), &params).unwrap().iter().map(|r| r.get::<_, String>(0)).collect();
        let plan = plan.join("\n");
        assert!(plan.contains("Index") && !plan.contains("Seq Scan"), "{what}: {plan}");
    }
}

/// Two processes catching up at once on a server take turns: every line is extracted once,
/// and the answers are SQLite's.
#[test]
fn two_catch_ups_at_once_on_postgresql_extract_each_line_once() {
    let Some(server) = backends::server() else { return };
    let (_dir, db, _conn) = common::temp_db();
    let (code, _, err) = common::run(&db, &["import", common::oracle().join("sessions").to_str().unwrap()]);
    assert!(code == 0 || code == 1, "{err}");
    let url = backends::fresh_db(&server);
    backends::push(&db, &url, &[]);
    let counts: Vec<i64> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let mut pg = sessiondb::db::open(std::path::Path::new(&url)).unwrap();
                    search::catch_up(&mut pg, |_, _| {}).unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(counts.iter().filter(|&&n| n > 0).count(), 1, "one of them extracted everything: {counts:?}");
    let sqlite = sessiondb::db::open(&db).unwrap();
    let pg = sessiondb::db::open(std::path::Path::new(&url)).unwrap();
    use sessiondb::internals::search_index::text_count;
    assert_eq!(text_count(&pg).unwrap(), text_count(&sqlite).unwrap());
    same_answers(&db, &url, &["the", "session-manager.ts", "中文"]);
}

/// Every grouping of the totals kept per day (no filter) and of the usage rows themselves (a
/// period starting 1 ms after 1970, which the kept totals cannot answer), side by side.
fn kept_and_regrouped(conn: &sessiondb::db::Db) -> Vec<(Vec<usage_stats::Totals>, Vec<usage_stats::Totals>)> {
    let rows = StatsFilter { since_ms: Some(1), ..Default::default() };
    let groups = [None, Some(GroupBy::Day), Some(GroupBy::Week), Some(GroupBy::Month), Some(GroupBy::Model)];
    let groups = groups.into_iter().chain([Some(GroupBy::Provider), Some(GroupBy::Project), Some(GroupBy::Session)]);
    groups
        .map(|by| {
            let kept = usage_stats::totals(conn, by, &StatsFilter::default()).unwrap();
            let regrouped = usage_stats::totals(conn, by, &rows).unwrap();
            (kept, regrouped)
        })
        .collect()
}

#[test]
fn usage_kept_per_day_follows_copies_appends_and_replaced_sessions() {
    let (dir, db, mut conn) = common::temp_db();
    let sessions = dir.path().join("sessions");
    let folder = sessions.join("--p-a--");
    std::fs::create_dir_all(&folder).unwrap();
    // A pi fork file: A's entries (same ids and timestamps) under another header, and one
    // entry more that A itself gets later.
    let extra = r#"{"type":"message","id":"a8","parentId":"a7","timestamp":"2025-03-04T10:00:08.000Z","message":{"role":"assistant","content":[{"type":"text","text":"late"}],"provider":"p","model":"late-model","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"total":0.1}},"timestamp":1741082408000}}"#;
    let fork = A.replacen("\"id\":\"sess-a\"", "\"id\":\"sess-c\"", 1) + extra + "\n";
    let (a, c) =
        (folder.join("2025-03-01T10-00-00-000Z_sess-a.jsonl"), folder.join("2025-03-05T10-00-00-000Z_sess-c.jsonl"));
    std::fs::write(&a, A).unwrap();
    let sync = |conn: &mut sessiondb::db::Db| {
        let (code, _, err) = common::run(&db, &["sync", "--sessions-dir", sessions.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        *conn = sessiondb::db::open(&db).unwrap();
    };
    sync(&mut conn);
    std::fs::write(&c, &fork).unwrap();
    sync(&mut conn);
    let session_of = |conn: &sessiondb::db::Db, model: &str| {
        let by_session = usage_stats::totals(conn, Some(GroupBy::Session), &StatsFilter::default()).unwrap();
        let by_model = usage_stats::totals(conn, Some(GroupBy::Model), &StatsFilter::default()).unwrap();
        assert_eq!(by_model.iter().filter(|t| t.group == model).count(), 1, "{by_model:?}");
        by_session.into_iter().map(|t| (t.group, t.entries)).collect::<Vec<_>>()
    };
    // The copies count once, for sess-a; the entry only sess-c has, for sess-c.
    assert_eq!(session_of(&conn, "late-model"), [("sess-a".to_string(), 3), ("sess-c".to_string(), 1)]);
    for (kept, regrouped) in kept_and_regrouped(&conn) {
        assert_eq!(kept, regrouped);
    }
    // sess-a grows by the entry sess-c holds a copy of (appended to the earlier session): it
    // counts for sess-a now.
    std::fs::write(&a, format!("{A}{extra}\n")).unwrap();
    sync(&mut conn);
    assert_eq!(session_of(&conn, "late-model"), [("sess-a".to_string(), 4)]);
    for (kept, regrouped) in kept_and_regrouped(&conn) {
        assert_eq!(kept, regrouped);
    }
    // sess-a rewritten (replaced: its rows leave, its new ones come after sess-c's): sess-c's
    // copies count now.
    std::fs::write(&a, A.replace("parseHeaderLine", "parseHeader")).unwrap();
    sync(&mut conn);
    assert_eq!(session_of(&conn, "late-model"), [("sess-c".to_string(), 4)]);
    for (kept, regrouped) in kept_and_regrouped(&conn) {
        assert_eq!(kept, regrouped);
    }
    let all = usage_stats::sum(&usage_stats::totals(&conn, None, &StatsFilter::default()).unwrap());
    let want = independent_totals(&[&format!("{A}{extra}\n")]);
    assert_eq!((all.entries, all.total_tokens), (want.6, want.4));
    // The same on a server the database is pushed to.
    if let Some(server) = backends::server() {
        let url = backends::fresh_db(&server);
        backends::push(&db, &url, &[]);
        same_answers(&db, &url, &["zebra"]);
    }
}
