//! Differential test of `sessiondb rpc` against pi 1.6.0's own `SessionManager`.
//!
//! `tests/fixtures/rpc/scripts.json` holds operation scripts recorded against pi by
//! `tests/fixtures/rpc/record.mjs` (see the README next to it): each op is a request in the rpc
//! protocol (method, positional params, `{"$ref": N}` / `{"$ref": [N, key...]}` for a value an
//! earlier op returned, `<AGENT>` for pi's agent dir) with pi's `result` or `error`, and each
//! script ends with the text of every session file pi wrote.
//!
//! Each script is replayed through one `sessiondb --db <tmp>/db.sqlite rpc` process, one request
//! at a time, with refs replaced by sessiondb's own values. Responses are compared with pi's
//! exactly, modulo one consistent bijection per script for the values that cannot be equal: entry
//! ids and session ids pi generated (listed in the fixture), and times (ISO entry timestamps, file
//! name timestamps, numeric `timestamp`s at or after the script's `clockStart`), which must also
//! keep their order. Afterwards every file pi wrote is exported from sessiondb and compared line by
//! line under the same mapping; sessions pi never wrote (lazy persistence) must not export.
//! (Message timestamps in the scripts lie in 2024, so `modified` compares the same way against
//! sessiondb's real clock as against pi's recorded one, as long as the clock is past 2024.)
//!
//! `RPC_ORACLE_SCRIPTS=script-00,script-03` limits the run to some scripts. `RPC_ORACLE_BIN` runs
//! another program in place of `sessiondb` (`tests/fixtures/rpc/pi-rpc.sh` serves the protocol with
//! pi itself, which checks this test: pi replayed against its own recording gives no mismatch).

mod common;

use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

const RESPONSE_TIMEOUT: Duration = Duration::from_secs(30);
/// Details printed per script; the rest are only counted.
const MAX_REPORTED_PER_SCRIPT: usize = 40;
/// Line differences reported per exported file (one missing entry shifts all later lines).
const MAX_LINES_REPORTED_PER_FILE: usize = 3;

/// Every script on each backend from one suite: a SQLite file per script, and a fresh
/// database per script on the PostgreSQL test server when there is one (`common::pg_server`:
/// skipped with a message without it, a failure when `SESSIONDB_REQUIRE_PG` is set).
#[test]
fn rpc_replays_match_pi() {
    let mut failures = Vec::new();
    failures.extend(replay_all("SQLite", &|_| None));
    if let Some(url) = common::pg::server() {
        failures
            .extend(replay_all("PostgreSQL", &|name| Some(common::pg::fresh_db_named(&url, &format!("rpc_{name}")))));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Replays every script (or those `RPC_ORACLE_SCRIPTS` names), each in the database `db_for`
/// gives for its name (`None`: a SQLite file in the script's temporary folder); the mismatches
/// on `backend`, if any, as one report.
fn replay_all(backend: &str, db_for: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rpc/scripts.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let fixture: Value = serde_json::from_str(&text).expect("scripts.json is JSON");
    let scripts = fixture["scripts"].as_array().expect("scripts.json: `scripts` array");
    let only: Option<HashSet<String>> =
        std::env::var("RPC_ORACLE_SCRIPTS").ok().map(|s| s.split(',').map(|x| x.trim().to_string()).collect());

    let mut report = String::new();
    let mut total = 0usize;
    let mut replayed = 0usize;
    for script in scripts {
        let name = script["name"].as_str().expect("script name");
        if only.as_ref().is_some_and(|o| !o.contains(name)) {
            continue;
        }
        replayed += 1;
        let problems = Replay::run(script, db_for(name));
        eprintln!(
            "{backend}: {name}: {} ops, {} mismatches",
            script["ops"].as_array().map_or(0, Vec::len),
            problems.len()
        );
        total += problems.len();
        for p in problems.iter().take(MAX_REPORTED_PER_SCRIPT) {
            report.push_str(&format!("{name} {p}\n"));
        }
        if problems.len() > MAX_REPORTED_PER_SCRIPT {
            report.push_str(&format!("{name}: ... and {} more\n", problems.len() - MAX_REPORTED_PER_SCRIPT));
        }
    }
    assert!(replayed > 0, "no script selected");
    (total > 0).then(|| format!("{backend}: {total} mismatches between sessiondb rpc and pi 1.6.0:\n{report}"))
}

// ------------------------------------------------------------------------------------------------
// Replay
// ------------------------------------------------------------------------------------------------

struct Replay<'a> {
    script: &'a Value,
    agent: String,
    db: PathBuf,
    unifier: Unifier,
    /// sessiondb's raw result per op (absolute paths), for refs.
    ours: Vec<Option<Value>>,
    /// (pi's session path, ours) for every session path a response named.
    session_paths: Vec<(String, String)>,
    problems: Vec<String>,
}

struct Rpc {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: PathBuf,
}

impl<'a> Replay<'a> {
    fn run(script: &'a Value, db: Option<String>) -> Vec<String> {
        let tmp = tempfile::tempdir().expect("temp dir");
        let agent = tmp.path().join("agent");
        std::fs::create_dir_all(&agent).expect("create agent dir");
        let agent_str = agent.to_str().expect("temp path is UTF-8").to_string();
        let mut replay = Replay {
            script,
            agent: agent_str,
            db: db.map_or_else(|| tmp.path().join("db.sqlite"), PathBuf::from),
            unifier: Unifier::new(script),
            ours: Vec::new(),
            session_paths: Vec::new(),
            problems: Vec::new(),
        };
        replay.ops(tmp.path());
        replay.files();
        replay.problems
    }

    fn spawn(&self, home: &Path) -> Rpc {
        let stderr = home.join("rpc.stderr");
        let mut child = Command::new(bin())
            .arg("--db")
            .arg(&self.db)
            .arg("rpc")
            .env("PI_CODING_AGENT_DIR", &self.agent)
            .env("HOME", home)
            .env_remove("PI_CODING_AGENT_SESSION_DIR")
            .env_remove("SESSIONDB_PATH")
            .current_dir(&self.agent)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(std::fs::File::create(&stderr).expect("create stderr file")))
            .spawn()
            .expect("spawn sessiondb rpc");
        let stdout = child.stdout.take().expect("child stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Rpc { child, stdin, lines, stderr }
    }

    fn ops(&mut self, home: &Path) {
        let script = self.script;
        let ops = script["ops"].as_array().expect("script ops");
        let mut rpc = self.spawn(home);
        for (i, op) in ops.iter().enumerate() {
            let method = op["method"].as_str().expect("op method");
            let params = self.params(i, method, &op["params"]);
            let request = json!({"id": i, "method": method, "params": params});
            // One new timestamp per op at most: a fresh millisecond keeps sessiondb's distinct too.
            std::thread::sleep(Duration::from_millis(2));
            let sent = rpc.stdin.as_mut().map(|w| writeln!(w, "{request}").and_then(|()| w.flush()));
            if !matches!(sent, Some(Ok(()))) {
                self.problem(i, method, format!("could not write the request: {sent:?}"));
                self.ours.push(None);
                break;
            }
            let line = match rpc.lines.recv_timeout(RESPONSE_TIMEOUT) {
                Ok(line) => line,
                Err(e) => {
                    let why = match e {
                        RecvTimeoutError::Timeout => format!("no response within {RESPONSE_TIMEOUT:?}"),
                        RecvTimeoutError::Disconnected => "sessiondb closed its output".to_string(),
                    };
                    let stderr = std::fs::read_to_string(&rpc.stderr).unwrap_or_default();
                    self.problem(i, method, format!("{why}; request {request}; stderr: {}", clip(&stderr, 2000)));
                    self.ours.push(None);
                    break;
                }
            };
            self.response(i, op, method, &line);
        }
        drop(rpc.stdin.take());
        let status = wait_with_timeout(&mut rpc.child, Duration::from_secs(30));
        if !matches!(status, Some(s) if s.success()) {
            let stderr = std::fs::read_to_string(&rpc.stderr).unwrap_or_default();
            self.problems.push(format!(
                "end of input: sessiondb rpc did not exit cleanly ({status:?}); stderr: {}",
                clip(&stderr, 2000)
            ));
        }
    }

    /// The request's params: refs replaced by sessiondb's values, `<AGENT>` by its agent dir.
    fn params(&mut self, i: usize, method: &str, params: &Value) -> Value {
        match params {
            Value::Object(o) if o.contains_key("$ref") => {
                let (n, path) = ref_target(&o["$ref"]);
                let ours = self.ours.get(n).and_then(Option::as_ref).and_then(|v| lookup(v, &path)).cloned();
                // Where pi's value already has a counterpart (a mismatch at op n, e.g. a list in
                // another order, was reported there), the counterpart keeps later ops meaningful.
                let counterpart = lookup(&self.script["ops"][n]["result"], &path)
                    .and_then(Value::as_str)
                    .and_then(|s| self.unifier.map_text(s).ok())
                    .map(|m| Value::String(m.replace("<AGENT>", &self.agent)));
                match (ours, counterpart) {
                    (Some(v), Some(c)) if v != c => return c,
                    (Some(v), _) => return v,
                    _ => {}
                }
                // sessiondb failed where pi did not: pass pi's value mapped through the bijection.
                let pi = lookup(&self.script["ops"][n]["result"], &path).cloned().unwrap_or(Value::Null);
                self.problem(
                    i,
                    method,
                    format!("cannot resolve {params} in sessiondb's result of op {n}; using pi's {pi}"),
                );
                let mapped = match &pi {
                    Value::String(s) => Value::String(self.unifier.map_text(s).unwrap_or_else(|_| s.clone())),
                    v => v.clone(),
                };
                self.params(i, method, &mapped)
            }
            Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), self.params(i, method, v))).collect()),
            Value::Array(a) => Value::Array(a.iter().map(|v| self.params(i, method, v)).collect()),
            Value::String(s) => Value::String(s.replace("<AGENT>", &self.agent)),
            v => v.clone(),
        }
    }

    fn response(&mut self, i: usize, op: &Value, method: &str, line: &str) {
        let response: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                self.problem(i, method, format!("response is not JSON ({e}): {}", clip(line, 500)));
                self.ours.push(None);
                return;
            }
        };
        if response.get("id") != Some(&json!(i)) {
            self.problem(i, method, format!("response id is {:?}, expected {i}", response.get("id")));
        }
        let ours_result = response.get("result").cloned();
        let ours_error = response.get("error").map(|e| e.get("message").and_then(Value::as_str).map(str::to_string));
        self.ours.push(ours_result.clone());
        let agent = self.agent.clone();
        let pi_result = op.get("result");
        let pi_error = op.get("error").and_then(Value::as_str);
        match (pi_result, pi_error, ours_result, ours_error) {
            (Some(pi), None, Some(ours), None) => {
                let ours = replace_strings(&ours, &agent, "<AGENT>");
                let mut diffs = Vec::new();
                if matches!(method, "list" | "listAll") {
                    self.unifier.session_list(pi, &ours, &mut diffs);
                } else {
                    self.unifier.value(pi, &ours, "$", None, &mut diffs);
                }
                if !diffs.is_empty() {
                    self.mismatch(i, op, &diffs, &pi.to_string(), &ours.to_string());
                }
                self.note_paths(method, pi, &ours);
            }
            (None, Some(pi), None, Some(Some(ours))) => {
                let ours = ours.replace(&agent, "<AGENT>");
                if let Err(e) = self.unifier.string(pi, &ours) {
                    self.mismatch(i, op, &[format!("error message: {e}")], pi, &ours);
                }
            }
            (_, _, r, e) => {
                let pi = match (pi_result, pi_error) {
                    (Some(r), _) => format!("result {}", clip(&r.to_string(), 300)),
                    (_, Some(e)) => format!("error {e:?}"),
                    _ => "nothing".to_string(),
                };
                let ours = match (r, e) {
                    (Some(r), None) => format!("result {}", clip(&r.to_string().replace(&agent, "<AGENT>"), 300)),
                    (None, Some(Some(e))) => format!("error {:?}", e.replace(&agent, "<AGENT>")),
                    _ => format!("malformed response {}", clip(line, 300)),
                };
                self.problem(
                    i,
                    method,
                    format!("pi gave {pi}; sessiondb gave {ours}; params {}", clip(&op["params"].to_string(), 300)),
                );
            }
        }
    }

    /// Remembers the session paths named by constructors, createBranchedSession, getSessionFile.
    fn note_paths(&mut self, method: &str, pi: &Value, ours: &Value) {
        let (pi, ours) = match method {
            "create" | "open" | "continueRecent" | "forkFrom" | "inMemory" => {
                (&pi["sessionFile"], &ours["sessionFile"])
            }
            "createBranchedSession" | "getSessionFile" => (pi, ours),
            _ => return,
        };
        if let (Some(p), Some(o)) = (pi.as_str(), ours.as_str()) {
            self.session_paths.push((p.to_string(), o.to_string()));
        }
    }

    /// Every file pi wrote must export from sessiondb with the same lines; no other session may.
    fn files(&mut self) {
        let script = self.script;
        let files = script["files"].as_array().expect("script files");
        let mut written = HashSet::new();
        for f in files {
            let rel = f["path"].as_str().expect("file path");
            let pi_text = f["text"].as_str().expect("file text");
            let pi_path = format!("<AGENT>/{rel}");
            written.insert(pi_path.clone());
            let ours_path = match self.unifier.map_text(&pi_path) {
                Ok(p) => p,
                Err(e) => {
                    self.problems.push(format!("file {rel}: no sessiondb counterpart ({e})"));
                    continue;
                }
            };
            let (ok, out, err) = self.export(&ours_path);
            if !ok {
                self.problems.push(format!("file {rel}: `sessiondb export {ours_path}` failed: {}", clip(&err, 500)));
                continue;
            }
            let ours_text = out.replace(&self.agent, "<AGENT>");
            self.compare_file(rel, pi_text, &ours_text);
        }
        let mut checked = HashSet::new();
        for (pi, ours) in std::mem::take(&mut self.session_paths) {
            if written.contains(&pi) || !checked.insert(ours.clone()) {
                continue;
            }
            let (ok, out, _) = self.export(&ours);
            if ok {
                self.problems.push(format!(
                    "session {ours} (pi's {pi}): pi never wrote it (lazy persistence), but `sessiondb export` gives {} lines",
                    out.lines().count()
                ));
            }
        }
    }

    fn export(&self, path_with_placeholder: &str) -> (bool, String, String) {
        let path = path_with_placeholder.replace("<AGENT>", &self.agent);
        let out = Command::new(bin())
            .arg("--db")
            .arg(&self.db)
            .arg("export")
            .arg(&path)
            .env("PI_CODING_AGENT_DIR", &self.agent)
            .env_remove("PI_CODING_AGENT_SESSION_DIR")
            .env_remove("SESSIONDB_PATH")
            .current_dir(&self.agent)
            .output()
            .expect("run sessiondb export");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn compare_file(&mut self, rel: &str, pi: &str, ours: &str) {
        if !ours.ends_with('\n') && !ours.is_empty() {
            self.problems.push(format!("file {rel}: sessiondb's export does not end with a newline"));
        }
        let pi_lines: Vec<&str> = pi.lines().collect();
        let ours_lines: Vec<&str> = ours.lines().collect();
        if pi_lines.len() != ours_lines.len() {
            self.problems.push(format!(
                "file {rel}: pi wrote {} lines, sessiondb exports {}",
                pi_lines.len(),
                ours_lines.len()
            ));
        }
        let before = self.problems.len();
        for (n, (p, o)) in pi_lines.iter().zip(&ours_lines).enumerate() {
            if self.problems.len() - before >= MAX_LINES_REPORTED_PER_FILE {
                let rest = pi_lines.iter().zip(&ours_lines).skip(n).filter(|(p, o)| p != o).count();
                self.problems.push(format!("file {rel}: ... lines after {n} not compared ({rest} differ as text)"));
                break;
            }
            let (Ok(pv), Ok(ov)) = (serde_json::from_str::<Value>(p), serde_json::from_str::<Value>(o)) else {
                if p != o {
                    self.problems.push(format!(
                        "file {rel} line {}: pi {} / ours {}",
                        n + 1,
                        clip(p, 300),
                        clip(o, 300)
                    ));
                }
                continue;
            };
            let mut diffs = Vec::new();
            self.unifier.value(&pv, &ov, "$", None, &mut diffs);
            if !diffs.is_empty() {
                self.problems.push(format!(
                    "file {rel} line {}: {}\n    pi:   {}\n    ours: {}",
                    n + 1,
                    diffs.iter().take(5).cloned().collect::<Vec<_>>().join("; "),
                    clip(p, 400),
                    clip(o, 400)
                ));
                continue;
            }
            match self.unifier.map_line(p) {
                Ok(expected) if expected == *o => {}
                Ok(expected) => {
                    let (at, e, g) = first_difference(&expected, o);
                    self.problems.push(format!(
                        "file {rel} line {}: same JSON, different bytes at byte {at}\n    expected: …{e}…\n    ours:     …{g}…",
                        n + 1
                    ))
                }
                Err(e) => self.problems.push(format!("file {rel} line {}: {e}", n + 1)),
            }
        }
    }

    fn problem(&mut self, i: usize, method: &str, what: String) {
        self.problems.push(format!("op {i} {method}: {what}"));
    }

    fn mismatch(&mut self, i: usize, op: &Value, diffs: &[String], pi: &str, ours: &str) {
        let method = op["method"].as_str().unwrap_or("?");
        let shown: Vec<&str> = diffs.iter().take(6).map(String::as_str).collect();
        let more =
            if diffs.len() > shown.len() { format!(" (+{} more)", diffs.len() - shown.len()) } else { String::new() };
        self.problem(
            i,
            method,
            format!(
                "{}{more}\n    params: {}\n    pi:     {}\n    ours:   {}",
                shown.join("\n    "),
                clip(&op["params"].to_string(), 300),
                clip(pi, 600),
                clip(ours, 600)
            ),
        );
    }
}

/// The program under test: `sessiondb`, or `RPC_ORACLE_BIN`.
fn bin() -> PathBuf {
    match std::env::var_os("RPC_ORACLE_BIN") {
        Some(p) => std::fs::canonicalize(&p).unwrap_or_else(|e| panic!("RPC_ORACLE_BIN {p:?}: {e}")),
        None => PathBuf::from(env!("CARGO_BIN_EXE_sessiondb")),
    }
}

fn ref_target(r: &Value) -> (usize, Vec<Value>) {
    match r {
        Value::Array(a) => {
            let n = a.first().and_then(Value::as_u64).expect("$ref op index");
            (n as usize, a[1..].to_vec())
        }
        v => (v.as_u64().expect("$ref op index") as usize, Vec::new()),
    }
}

fn lookup<'v>(v: &'v Value, path: &[Value]) -> Option<&'v Value> {
    path.iter().try_fold(v, |v, k| match k {
        Value::String(k) => v.get(k.as_str()),
        Value::Number(n) => v.get(n.as_u64()? as usize),
        _ => None,
    })
}

fn replace_strings(v: &Value, from: &str, to: &str) -> Value {
    match v {
        Value::String(s) => Value::String(s.replace(from, to)),
        Value::Array(a) => Value::Array(a.iter().map(|x| replace_strings(x, from, to)).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, x)| (k.clone(), replace_strings(x, from, to))).collect()),
        v => v.clone(),
    }
}

fn wait_with_timeout(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let start = std::time::Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if start.elapsed() < limit => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

/// The byte offset where `a` and `b` first differ, and both texts around it.
fn first_difference(a: &str, b: &str) -> (usize, String, String) {
    let at = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    let window = |s: &str| {
        let mut start = at.saturating_sub(60).min(s.len());
        while !s.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = (at + 60).min(s.len());
        while !s.is_char_boundary(end) {
            end += 1;
        }
        s[start..end].to_string()
    };
    (at, window(a), window(b))
}

fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…[{} bytes]", &s[..end], s.len())
}

// ------------------------------------------------------------------------------------------------
// Unifier: JSON equality modulo one consistent bijection of volatile values
// ------------------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Tok {
    /// An entry id pi generated (8 hex characters).
    Entry,
    /// A session id pi generated (UUIDv7).
    Session,
    /// `2025-09-01T04:57:15.921Z`, at or after the script's clock start.
    Iso,
    /// `2025-09-01T04-57-15-921Z` (session file names).
    FileTime,
}

impl Tok {
    fn len(self) -> usize {
        match self {
            Tok::Entry => 8,
            Tok::Session => 36,
            Tok::Iso | Tok::FileTime => 24,
        }
    }
}

struct Unifier {
    clock_start: i64,
    entry_ids: HashSet<String>,
    session_ids: HashSet<String>,
    /// (kind, pi value) -> sessiondb value, and back.
    ids: HashMap<(Tok, String), String>,
    ids_back: HashMap<(Tok, String), String>,
    /// pi's milliseconds -> sessiondb's, and back. Times must keep their order.
    times: BTreeMap<i64, i64>,
    times_back: HashMap<i64, i64>,
}

impl Unifier {
    fn new(script: &Value) -> Self {
        let set = |key: &str| -> HashSet<String> {
            script["volatile"][key]
                .as_array()
                .unwrap_or_else(|| panic!("script volatile.{key}"))
                .iter()
                .map(|v| v.as_str().expect("volatile id").to_string())
                .collect()
        };
        Unifier {
            clock_start: script["clockStart"].as_i64().expect("script clockStart"),
            entry_ids: set("entryIds"),
            session_ids: set("sessionIds"),
            ids: HashMap::new(),
            ids_back: HashMap::new(),
            times: BTreeMap::new(),
            times_back: HashMap::new(),
        }
    }

    /// Compares pi's value with ours; differences go to `out` with their JSON path.
    fn value(&mut self, pi: &Value, ours: &Value, at: &str, key: Option<&str>, out: &mut Vec<String>) {
        match (pi, ours) {
            (Value::Null, Value::Null) => {}
            (Value::Bool(a), Value::Bool(b)) if a == b => {}
            (Value::Number(a), Value::Number(b)) => {
                if key == Some("timestamp") {
                    if let (Some(a), Some(b)) = (a.as_i64(), b.as_i64()) {
                        if a >= self.clock_start {
                            if let Err(e) = self.time(a, b) {
                                out.push(format!("{at}: {e}"));
                            }
                            return;
                        }
                    }
                }
                let same = a == b || matches!((a.as_f64(), b.as_f64()), (Some(x), Some(y)) if x == y);
                if !same {
                    out.push(format!("{at}: pi {a} / ours {b}"));
                }
            }
            (Value::String(a), Value::String(b)) => {
                if let Err(e) = self.string(a, b) {
                    out.push(format!("{at}: {e}"));
                }
            }
            (Value::Array(a), Value::Array(b)) => {
                if a.len() != b.len() {
                    out.push(format!("{at}: pi has {} items, ours {}", a.len(), b.len()));
                }
                for (n, (x, y)) in a.iter().zip(b).enumerate() {
                    self.value(x, y, &format!("{at}[{n}]"), None, out);
                }
            }
            (Value::Object(a), Value::Object(b)) => {
                for (k, x) in a {
                    match b.get(k) {
                        Some(y) => self.value(x, y, &format!("{at}.{k}"), Some(k), out),
                        None => out.push(format!("{at}.{k}: missing in ours (pi: {})", clip(&x.to_string(), 120))),
                    }
                }
                for (k, y) in b {
                    if !a.contains_key(k) {
                        out.push(format!("{at}.{k}: not in pi (ours: {})", clip(&y.to_string(), 120)))
                    }
                }
                let ka: Vec<&String> = a.keys().collect();
                let kb: Vec<&String> = b.keys().collect();
                if ka.len() == kb.len() && ka != kb && a.keys().all(|k| b.contains_key(k)) {
                    out.push(format!("{at}: key order differs: pi {ka:?} / ours {kb:?}"));
                }
            }
            (a, b) => out.push(format!("{at}: pi {} / ours {}", clip(&a.to_string(), 200), clip(&b.to_string(), 200))),
        }
    }

    /// Compares two `SessionInfo` lists: items are matched by (mapped) path, so a different order
    /// is reported as such, then each pair is compared.
    fn session_list(&mut self, pi: &Value, ours: &Value, out: &mut Vec<String>) {
        let (Some(a), Some(b)) = (pi.as_array(), ours.as_array()) else {
            return self.value(pi, ours, "$", None, out);
        };
        let path_of = |v: &Value| v.get("path").and_then(Value::as_str).map(str::to_string);
        let ours_paths: Vec<Option<String>> = b.iter().map(path_of).collect();
        let mut matched = vec![false; b.len()];
        let mut pairs = Vec::new();
        for (k, item) in a.iter().enumerate() {
            let mapped = path_of(item).and_then(|p| self.map_text(&p).ok());
            let j = mapped.and_then(|m| (0..b.len()).find(|&j| !matched[j] && ours_paths[j].as_deref() == Some(&m)));
            match j {
                Some(j) => {
                    matched[j] = true;
                    pairs.push((k, j));
                }
                None => out.push(format!("$[{k}]: pi lists {}, ours does not", describe(item))),
            }
        }
        for (j, item) in b.iter().enumerate() {
            if !matched[j] {
                out.push(format!("$[{j}]: ours lists {}, pi does not", describe(item)));
            }
        }
        if pairs.is_empty() {
            return self.value(pi, ours, "$", None, out);
        }
        if pairs.windows(2).any(|w| w[0].1 > w[1].1) {
            let show = |list: &[Value], idx: &mut dyn Iterator<Item = usize>| {
                idx.map(|i| describe(&list[i])).collect::<Vec<_>>().join(", ")
            };
            let mut by_ours = pairs.clone();
            by_ours.sort_by_key(|&(_, j)| j);
            out.push(format!(
                "order differs:\n      pi:   {}\n      ours: {} (pi's items in ours' order)",
                show(a, &mut pairs.iter().map(|&(k, _)| k)),
                show(a, &mut by_ours.iter().map(|&(k, _)| k)),
            ));
        }
        for (k, j) in pairs {
            self.value(&a[k], &b[j], &format!("$[{k}]"), None, out);
        }
    }

    /// Compares strings: pi's volatile tokens must match same-shaped tokens of ours under the
    /// bijection; everything between them must be equal.
    fn string(&mut self, pi: &str, ours: &str) -> Result<(), String> {
        let toks = self.scan(pi);
        let differ = || format!("pi {} / ours {}", clip(&format!("{pi:?}"), 300), clip(&format!("{ours:?}"), 300));
        if toks.is_empty() {
            return if pi == ours { Ok(()) } else { Err(differ()) };
        }
        let (mut p, mut o) = (0, 0);
        for (start, tok) in toks {
            let lit = &pi[p..start];
            if !ours[o..].starts_with(lit) {
                return Err(differ());
            }
            o += lit.len();
            let theirs = ours.get(o..o + tok.len()).ok_or_else(differ)?;
            self.token(tok, &pi[start..start + tok.len()], theirs).map_err(|e| format!("{e} (in {})", differ()))?;
            p = start + tok.len();
            o += tok.len();
        }
        if pi[p..] == ours[o..] {
            Ok(())
        } else {
            Err(differ())
        }
    }

    /// Volatile tokens of a pi string: (byte offset, kind), left to right.
    fn scan(&self, s: &str) -> Vec<(usize, Tok)> {
        let b = s.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            if i > 0 && b[i - 1].is_ascii_alphanumeric() {
                i += 1;
                continue;
            }
            let fits = |len: usize| !matches!(b.get(i + len), Some(c) if c.is_ascii_alphanumeric());
            let at = |len: usize| s.get(i..i + len).filter(|_| fits(len));
            let tok = if at(36).is_some_and(|t| self.session_ids.contains(t)) {
                Some(Tok::Session)
            } else if let Some((ms, kind)) = at(24).and_then(parse_time) {
                (ms >= self.clock_start).then_some(kind)
            } else if at(8).is_some_and(|t| self.entry_ids.contains(t)) {
                Some(Tok::Entry)
            } else {
                None
            };
            match tok {
                Some(t) => {
                    out.push((i, t));
                    i += t.len();
                }
                None => i += 1,
            }
        }
        out
    }

    fn token(&mut self, tok: Tok, pi: &str, ours: &str) -> Result<(), String> {
        match tok {
            Tok::Iso | Tok::FileTime => {
                let a = parse_time(pi).map(|(ms, _)| ms).ok_or("bad pi time")?;
                match parse_time(ours) {
                    Some((b, kind)) if kind == tok => self.time(a, b),
                    _ => Err(format!("pi time {pi} / ours {ours:?} is not a time of the same form")),
                }
            }
            Tok::Entry | Tok::Session => {
                let shaped = match tok {
                    Tok::Entry => ours.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')),
                    _ => is_uuid(ours),
                };
                if !shaped {
                    return Err(format!("pi {tok:?} id {pi} / ours {ours:?} is not shaped like one"));
                }
                self.pair(tok, pi, ours)
            }
        }
    }

    fn pair(&mut self, tok: Tok, pi: &str, ours: &str) -> Result<(), String> {
        let key = (tok, pi.to_string());
        if let Some(prev) = self.ids.get(&key) {
            return if prev == ours {
                Ok(())
            } else {
                Err(format!("pi's {tok:?} id {pi} was ours {prev} before, now {ours}"))
            };
        }
        if let Some(prev) = self.ids_back.get(&(tok, ours.to_string())) {
            return Err(format!("ours {tok:?} id {ours} stood for pi's {prev} before, now for {pi}"));
        }
        self.ids.insert(key, ours.to_string());
        self.ids_back.insert((tok, ours.to_string()), pi.to_string());
        Ok(())
    }

    fn time(&mut self, pi: i64, ours: i64) -> Result<(), String> {
        let show = |ms: i64| iso(ms);
        if let Some(&prev) = self.times.get(&pi) {
            return if prev == ours {
                Ok(())
            } else {
                Err(format!("pi time {} was ours {} before, now {}", show(pi), show(prev), show(ours)))
            };
        }
        if let Some(&prev) = self.times_back.get(&ours) {
            return Err(format!("ours time {} stood for pi's {} before, now for {}", show(ours), show(prev), show(pi)));
        }
        if let Some((&p, &o)) = self.times.range(..pi).next_back() {
            if o >= ours {
                return Err(format!(
                    "time order: pi {} < {} but ours {} >= {}",
                    show(p),
                    show(pi),
                    show(o),
                    show(ours)
                ));
            }
        }
        if let Some((&p, &o)) = self.times.range(pi + 1..).next() {
            if o <= ours {
                return Err(format!(
                    "time order: pi {} > {} but ours {} <= {}",
                    show(p),
                    show(pi),
                    show(o),
                    show(ours)
                ));
            }
        }
        self.times.insert(pi, ours);
        self.times_back.insert(ours, pi);
        Ok(())
    }

    /// pi's text with each volatile token replaced by its sessiondb counterpart.
    fn map_text(&self, pi: &str) -> Result<String, String> {
        let mut out = String::new();
        let mut p = 0;
        for (start, tok) in self.scan(pi) {
            out.push_str(&pi[p..start]);
            let t = &pi[start..start + tok.len()];
            out.push_str(&self.mapped(tok, t).ok_or_else(|| format!("sessiondb never showed a counterpart of {t}"))?);
            p = start + tok.len();
        }
        out.push_str(&pi[p..]);
        Ok(out)
    }

    fn mapped(&self, tok: Tok, t: &str) -> Option<String> {
        match tok {
            Tok::Entry | Tok::Session => self.ids.get(&(tok, t.to_string())).cloned(),
            Tok::Iso | Tok::FileTime => {
                let ours = *self.times.get(&parse_time(t)?.0)?;
                let s = iso(ours);
                Some(if tok == Tok::FileTime { s.replace([':', '.'], "-") } else { s })
            }
        }
    }

    /// A JSON line of pi's file as sessiondb should have written it: tokens mapped, and
    /// `"timestamp":<ms>` numbers at or after the clock start mapped.
    fn map_line(&self, pi: &str) -> Result<String, String> {
        let text = self.map_text(pi)?;
        const KEY: &str = "\"timestamp\":";
        let mut out = String::new();
        let mut rest = text.as_str();
        while let Some(k) = rest.find(KEY) {
            let after = k + KEY.len();
            out.push_str(&rest[..after]);
            rest = &rest[after..];
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            let ms = rest[..digits].parse::<i64>().ok().filter(|&ms| ms >= self.clock_start && digits > 0);
            let followed = rest[digits..].starts_with([',', '}']);
            match ms {
                Some(ms) if followed => {
                    let ours = self.times.get(&ms).ok_or_else(|| format!("no counterpart for time {ms}"))?;
                    out.push_str(&ours.to_string());
                }
                _ => out.push_str(&rest[..digits]),
            }
            rest = &rest[digits..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// A `SessionInfo` in a few words: file name, modified, message count.
fn describe(info: &Value) -> String {
    let path = info.get("path").and_then(Value::as_str).unwrap_or("?");
    let name = path.rsplit('/').next().unwrap_or(path);
    format!("{name} (modified {}, {} messages)", info["modified"], info["messageCount"])
}

fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.bytes().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` or `YYYY-MM-DDTHH-MM-SS-mmmZ` -> (Unix ms, form).
fn parse_time(s: &str) -> Option<(i64, Tok)> {
    let b = s.as_bytes();
    if b.len() != 24 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[23] != b'Z' {
        return None;
    }
    let kind = match (b[13], b[16], b[19]) {
        (b':', b':', b'.') => Tok::Iso,
        (b'-', b'-', b'-') => Tok::FileTime,
        _ => return None,
    };
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        t.bytes().all(|c| c.is_ascii_digit()).then(|| t.parse().ok()).flatten()
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec, ms) = (num(11..13)?, num(14..16)?, num(17..19)?, num(20..23)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 59 {
        return None;
    }
    Some((((days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60_000 + sec * 1000 + ms, kind))
}

/// Days since 1970-01-01 (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn iso(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    // civil_from_days
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}

#[test]
fn unifier_self_check() {
    assert_eq!(iso(0), "1970-01-01T00:00:00.000Z");
    assert_eq!(
        parse_time("2025-09-01T04:57:15.921Z").map(|(ms, _)| iso(ms)).as_deref(),
        Some("2025-09-01T04:57:15.921Z")
    );
    assert_eq!(
        parse_time("2024-02-29T23-59-59-999Z").map(|(ms, k)| (iso(ms), k)),
        Some(("2024-02-29T23:59:59.999Z".into(), Tok::FileTime))
    );
    let script = json!({"clockStart": 1_756_684_800_000i64, "volatile": {"entryIds": ["aaaa1111", "bbbb2222"], "sessionIds": ["0199aaaa-0000-7000-8000-000000000001"]}});
    let mut u = Unifier::new(&script);
    let mut out = Vec::new();
    let pi = json!({"id": "aaaa1111", "parentId": null, "timestamp": "2025-09-01T00:00:01.000Z",
        "file": "<AGENT>/s/2025-09-01T00-00-01-000Z_0199aaaa-0000-7000-8000-000000000001.jsonl",
        "m": {"timestamp": 1_756_684_801_000i64}, "old": "2024-01-01T00:00:00.000Z", "e": "Entry aaaa1111 not found"});
    let ours = json!({"id": "12345678", "parentId": null, "timestamp": "2026-01-01T00:00:00.005Z",
        "file": "<AGENT>/s/2026-01-01T00-00-00-005Z_019b0000-0000-7000-8000-00000000000f.jsonl",
        "m": {"timestamp": 1_767_225_600_005i64}, "old": "2024-01-01T00:00:00.000Z", "e": "Entry 12345678 not found"});
    u.value(&pi, &ours, "$", None, &mut out);
    assert!(out.is_empty(), "{out:?}");
    // The bijection is consistent: another pi id cannot map to the same ours id, and back.
    assert!(u.string("bbbb2222", "12345678").is_err());
    assert!(u.string("aaaa1111", "87654321").is_err());
    // Times keep their order.
    assert!(u.time(1_756_684_802_000, 1_767_225_600_001).is_err());
    assert!(u.time(1_756_684_802_000, 1_767_225_600_009).is_ok());
    // Non-volatile values compare as they are; key order counts.
    let mut out = Vec::new();
    u.value(
        &json!({"a": 1, "b": "2024-01-01T00:00:00.000Z"}),
        &json!({"b": "2024-01-01T00:00:00.001Z", "a": 1}),
        "$",
        None,
        &mut out,
    );
    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!(
        u.map_line(r#"{"id":"aaaa1111","timestamp":"2025-09-01T00:00:01.000Z","m":{"timestamp":1756684801000}}"#)
            .as_deref(),
        Ok(r#"{"id":"12345678","timestamp":"2026-01-01T00:00:00.005Z","m":{"timestamp":1767225600005}}"#)
    );
}
