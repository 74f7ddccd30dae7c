//! Figures (b)–(h), search and sync: the SessionManager, discovery, search and sync APIs
//! timed on the imported corpus.

use super::corpus::Corpus;
use super::system;
use super::timing::{measure, measure_with, RunPlan, Timing};
use sessiondb::db::Db;
use sessiondb::discovery;
use sessiondb::json::{self, Value};
use sessiondb::manager::{NewSessionOptions, SessionManager};
use sessiondb::search::{self, SearchFilter};
use sessiondb::sync::{self, SyncOptions};
use sessiondb::{Error, Result};
use std::path::{Path, PathBuf};

/// pi's 1 KiB assistant message of bench-pi's `lib/messages.mjs` (`assistantMessage1k`).
pub fn assistant_message_1k() -> Value {
    let filler = "Let me read the session manager to see how entries are appended, then check how the leaf pointer moves when branching. ";
    let build = |text: &str| {
        format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":{}}},{{"type":"toolCall","id":"toolu_01AbCdEfGhIjKlMnOpQrStUv","name":"read","arguments":{{"path":"src/core/session-manager.ts"}}}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{{"input":12,"output":180,"cacheRead":48211,"cacheWrite":512,"totalTokens":48915,"cost":{{"input":0.000036,"output":0.0027,"cacheRead":0.0144633,"cacheWrite":0.00192,"total":0.0190293}}}},"stopReason":"toolUse","timestamp":1764547200000,"responseId":"msg_01AbCdEfGhIjKlMnOpQrStUv","durationMs":2875}}"#,
            json::quote(text)
        )
    };
    let base = build("").len();
    let text: String = filler.repeat(1024 / filler.len() + 1).chars().take(1024 - base).collect();
    json::parse(build(&text).as_bytes()).unwrap_or(Value::Null)
}

/// (b) find-by-id: mean µs over `ids` lookups (each in its session's folder, pi's findById).
pub fn find_by_id(conn: &sessiondb::db::Db, ids: &[(String, String)], runs: u32) -> Result<Timing> {
    let (t, _) = measure(RunPlan::fast(runs), |_| {
        for (id, dir) in ids {
            discovery::find_in_dir(conn, id, dir, None)?;
        }
        Ok(())
    })?;
    Ok(t)
}

/// (c) continue-recent in a folder: a connection (pooled, as every `SessionManager` takes
/// one), pick the session, load it.
pub fn continue_recent(db: &Path, cwd: &str, dir: &str, runs: u32) -> Result<Timing> {
    Ok(measure(RunPlan::fast(runs), |_| SessionManager::continue_recent(db, cwd, Some(dir)).map(|_| ()))?.0)
}

/// (d) list with full SessionInfo: one folder, or every session.
pub fn list(conn: &sessiondb::db::Db, dir: Option<&str>, runs: u32) -> Result<(Timing, usize)> {
    measure(RunPlan::fast(runs), |_| {
        let mut infos = match dir {
            Some(d) => discovery::list_dir(conn, d, None)?,
            None => discovery::list_everything(conn)?,
        };
        discovery::fill_all_text(conn, &mut infos)?;
        Ok(infos.len())
    })
}

/// (e) `n` durable appends of the 1 KiB message to a new session: per-append samples (µs)
/// and the wall time (s), settling included.
pub fn appends(db: &Path, n: usize, scratch: &Path) -> Result<(Vec<f64>, f64)> {
    let mut m =
        SessionManager::create(db, "/bench/append", Some(&scratch.to_string_lossy()), NewSessionOptions::default())?;
    m.append_message(json::parse(br#"{"role":"user","content":[{"type":"text","text":"Please add a benchmark for appending to a session."}],"timestamp":1764547199000}"#).unwrap_or(Value::Null))?;
    let msg = assistant_message_1k();
    let mut samples = Vec::with_capacity(n);
    let start = std::time::Instant::now();
    for _ in 0..n {
        let t = std::time::Instant::now();
        m.append_message(msg.clone())?;
        samples.push(t.elapsed().as_secs_f64() * 1e6);
    }
    // The wall time includes moving the last journaled appends into the tables.
    m.settle()?;
    Ok((samples, start.elapsed().as_secs_f64()))
}

/// The `q`-quantile of samples.
pub fn quantile(samples: &[f64], q: f64) -> f64 {
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    s.get(((s.len() as f64 - 1.0) * q).round() as usize).copied().unwrap_or(0.0)
}

/// (g) forkFrom of a session into another cwd (planned as bench-pi's single-session figures:
/// a warm-up, then at least `runs` runs, repeated up to 300 ms or 50 runs).
pub fn fork(db: &Path, source: &str, scratch: &Path, runs: u32) -> Result<Timing> {
    let dir = scratch.to_string_lossy().into_owned();
    Ok(measure(RunPlan::fast(runs), |_| {
        SessionManager::fork_from(db, source, "/bench/fork-target", Some(&dir), NewSessionOptions::default())
            .map(|_| ())
    })?
    .0)
}

/// (h) createBranchedSession at the middle of the session's active path (opened untimed;
/// the middle found from keys alone, so that finding it does not inflate the phase's peak),
/// planned as [`fork`].
pub fn branched_mid(db: &Path, source: &str, runs: u32) -> Result<Timing> {
    let no_path = || Error::InvalidArgument("largest session has no path".into());
    let mid = {
        let conn = sessiondb::internals::open_pooled(db)?;
        let sid = conn
            .store()
            .sid_by_path(source)?
            .ok_or_else(|| sessiondb::Error::InvalidArgument(format!("{source} is not imported")))?;
        let t = sessiondb::tree::SessionTree::open(&conn, sid)?;
        let leaf = t.last_entry()?.and_then(|r| r.id).ok_or_else(no_path)?;
        let steps = t.branch_keys(&leaf)?;
        let key = steps.get(steps.len() / 2).map(|s| s.key).ok_or_else(no_path)?;
        t.entry_at(key)?.and_then(|r| r.id).ok_or_else(no_path)?
    };
    Ok(measure_with(
        RunPlan::fast(runs),
        |_| SessionManager::open(db, source, None, None),
        |mut m| m.create_branched_session(Some(&mid)).map(|_| ()),
    )?
    .0)
}

/// Builds the search index (first time: everything imported is queued). Returns
/// (seconds, texts indexed, peak RSS MiB).
pub fn build_search_index(conn: &mut Db) -> Result<(f64, i64, Option<f64>)> {
    system::reset_peak_rss();
    let t = std::time::Instant::now();
    let n = search::catch_up(conn, |_, _| {})?;
    Ok((t.elapsed().as_secs_f64(), n, system::peak_rss_mib()))
}

/// A word of the corpus that few texts contain: the words of 8 or more characters in texts
/// spread over the corpus, with the fewest texts holding it as a whole word (at least one). Returns it with its
/// match count.
pub fn rare_word(db: &Db) -> Result<Option<(String, i64)>> {
    const SAMPLES: i64 = 40;
    const MAX_CANDIDATES: usize = 400;
    let lines = sessiondb::internals::search_index::sample_lines(db, SAMPLES)?;
    if lines.is_empty() {
        return Ok(None);
    }
    let mut candidates: Vec<String> = Vec::new();
    for body in lines {
        let text = sessiondb::internals::extract::text_of_line(&body).unwrap_or_default();
        for w in text.split(|c: char| !c.is_alphanumeric()).filter(|w| w.chars().count() >= 8) {
            if candidates.len() < MAX_CANDIDATES && !candidates.iter().any(|c| c == w) {
                candidates.push(w.to_string());
            }
        }
    }
    let mut best: Option<(String, i64)> = None;
    for w in candidates {
        let n = search::whole_word_count(db, &w)?;
        if n > 0 && best.as_ref().is_none_or(|(_, m)| n < *m) {
            best = Some((w, n));
        }
    }
    Ok(best)
}

/// A search for `word` (top 20 hits, snippets included).
pub fn search_word(conn: &Db, word: &str, runs: u32) -> Result<(Timing, usize)> {
    measure(RunPlan::fast(runs), |_| {
        Ok(search::search(conn, word, &SearchFilter { limit: 20, ..SearchFilter::default() })?.len())
    })
}

/// `search --sessions` for `word` (top 20 sessions).
pub fn search_sessions(conn: &Db, word: &str, runs: u32) -> Result<(Timing, usize)> {
    measure(RunPlan::fast(runs), |_| {
        Ok(search::search_sessions(conn, word, &SearchFilter { limit: 20, ..SearchFilter::default() })?.len())
    })
}

/// Sync figures: first sync of the corpus into a fresh database (s), a second sync with
/// nothing changed (ms), and picking up one line appended to one file, by a full rescan and
/// by the file's notification (ms).
pub struct SyncFigures {
    /// First sync (s).
    pub first_s: f64,
    /// No-change re-sync (ms).
    pub resync_ms: f64,
    /// One appended line, full rescan (ms).
    pub one_line_rescan_ms: f64,
    /// One appended line, that file only (ms, what --watch does).
    pub one_line_watch_ms: f64,
}

/// Runs the sync figures on a copy of the corpus folder (one file gets a line appended).
pub fn sync_figures(corpus: &Corpus, work: &Path) -> Result<SyncFigures> {
    let copy = work.join("sync-corpus");
    copy_tree(&corpus.root, &copy)?;
    let db = work.join("sync.sqlite");
    let mut conn = sessiondb::db::open(&db)?;
    let t = std::time::Instant::now();
    sync::sync_dir(&mut conn, &copy, SyncOptions::default(), |_, _| {})?;
    let first_s = t.elapsed().as_secs_f64();
    let t = std::time::Instant::now();
    sync::sync_dir(&mut conn, &copy, SyncOptions::default(), |_, _| {})?;
    let resync_ms = t.elapsed().as_secs_f64() * 1000.0;
    let victim = first_file(&copy)?;
    let line = |i: usize| {
        format!(
            "{{\"type\":\"custom\",\"customType\":\"bench\",\"data\":{{\"n\":{i}}},\"id\":\"bench{i:03}\",\"parentId\":null,\"timestamp\":\"2026-12-01T00:00:00.000Z\"}}\n"
        )
    };
    append(&victim, &line(1))?;
    let t = std::time::Instant::now();
    sync::sync_dir(&mut conn, &copy, SyncOptions::default(), |_, _| {})?;
    let one_line_rescan_ms = t.elapsed().as_secs_f64() * 1000.0;
    append(&victim, &line(2))?;
    let t = std::time::Instant::now();
    let mut s = sync::SyncSummary::default();
    sync::sync_paths(&mut conn, &copy, std::slice::from_ref(&victim), &mut s)?;
    let one_line_watch_ms = t.elapsed().as_secs_f64() * 1000.0;
    drop(conn);
    let _ = std::fs::remove_dir_all(&copy);
    Ok(SyncFigures { first_s, resync_ms, one_line_rescan_ms, one_line_watch_ms })
}

fn append(path: &Path, text: &str) -> Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().append(true).open(path).map_err(|e| Error::io(path, e))?;
    f.write_all(text.as_bytes()).map_err(|e| Error::io(path, e))
}

fn first_file(dir: &Path) -> Result<PathBuf> {
    let t = sessiondb::import::collect_targets(&[dir.to_path_buf()])?;
    t.into_iter().map(|t| t.path).next().ok_or_else(|| Error::NotFound(format!("{}: no session file", dir.display())))
}

/// Copies a directory tree (hard links would share the appended file; copy for real).
fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).map_err(|e| Error::io(to, e))?;
    for e in std::fs::read_dir(from).map_err(|e| Error::io(from, e))? {
        let e = e.map_err(|err| Error::io(from, err))?;
        let p = e.path();
        let dest = to.join(e.file_name());
        if p.is_dir() {
            copy_tree(&p, &dest)?;
        } else {
            std::fs::copy(&p, &dest).map_err(|err| Error::io(&p, err))?;
            let mtime = std::fs::metadata(&p).and_then(|m| m.modified()).map_err(|err| Error::io(&p, err))?;
            std::fs::File::options()
                .write(true)
                .open(&dest)
                .and_then(|f| f.set_modified(mtime))
                .map_err(|err| Error::io(&dest, err))?;
        }
    }
    Ok(())
}
