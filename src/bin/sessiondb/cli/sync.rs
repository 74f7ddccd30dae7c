//! `sessiondb sync`: follow pi's sessions directory.

use super::output;
use super::output::outln;
use anyhow::Context;
use notify::{RecursiveMode, Watcher};
use sessiondb::sync::{self, SyncOptions, SyncSummary};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Keep the database in step with a directory of pi session files (which pi may still be
/// writing): new files are imported, grown files have only their new lines read, rewritten
/// files are imported again, deleted files' sessions are marked missing (removed with
/// --prune). Unchanged files are not opened.
#[derive(clap::Args)]
pub struct Args {
    /// The sessions directory (default: $PI_CODING_AGENT_SESSION_DIR, else
    /// $PI_CODING_AGENT_DIR/sessions, else ~/.pi/agent/sessions).
    #[arg(long, value_name = "DIR")]
    sessions_dir: Option<PathBuf>,
    /// Stay running: sync changed files within a second (file-system notifications, with a
    /// rescan every 30 s as a fallback) until Ctrl-C.
    #[arg(long)]
    watch: bool,
    /// Remove sessions whose file was deleted.
    #[arg(long)]
    prune: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
    /// Report progress on stderr as JSON lines, `{"progress":"sync"|"index","done":N,"total":M}`
    /// (at most ten a second, and the last of each phase), for programs that show it.
    #[arg(long)]
    progress_json: bool,
    /// Sync only these session files (below the sessions directory) instead of scanning it:
    /// a host that knows which file it just wrote (pi's extension after each turn) skips the
    /// walk.
    #[arg(value_name = "FILE", conflicts_with_all = ["watch", "prune"])]
    files: Vec<PathBuf>,
    /// Stay running and sync the files named on standard input, one request per line: a JSON
    /// array of session files (below the sessions directory), answered by one line of JSON on
    /// standard output (the summary `--json` prints, or `{"error":"..."}`), until the input
    /// ends. A host that syncs after every turn (pi's extension) starts and connects once.
    #[arg(long, conflicts_with_all = ["watch", "prune", "files"])]
    stdin: bool,
}

/// Full rescan interval while watching.
const RESCAN: Duration = Duration::from_secs(30);

/// The files a sync could not import, on stderr.
fn report_failures(s: &SyncSummary) {
    for f in &s.failed {
        eprintln!("{}: not imported: {}", f.path.display(), f.reason.as_deref().unwrap_or("unknown reason"));
    }
}

fn report(s: &SyncSummary, json: bool) -> anyhow::Result<()> {
    report_failures(s);
    if json {
        output::print_json(s)?;
    } else {
        outln!(
            "scanned {} files: {} new, {} grown, {} rewritten, {} unchanged, {} waiting, {} missing, {} pruned, {} failed; \
             {} entries added, {} lines skipped in {:.2} s",
            s.files_scanned,
            s.new,
            s.grown,
            s.rewritten,
            s.unchanged,
            s.waiting,
            s.missing,
            s.pruned,
            s.failures,
            s.entries_added,
            s.lines_skipped,
            s.seconds
        )?;
    }
    Ok(())
}

/// Where the files go: a local database, or a PostgreSQL server's own sessions (origin '').
struct Target(sessiondb::db::Db);

impl Target {
    fn sync_dir(
        &mut self,
        dir: &Path,
        opts: SyncOptions,
        progress: impl FnMut(usize, usize),
    ) -> anyhow::Result<SyncSummary> {
        Ok(sync::sync_dir(&mut self.0, dir, opts, progress)?)
    }

    fn sync_paths(&mut self, dir: &Path, paths: &[PathBuf], s: &mut SyncSummary) -> anyhow::Result<()> {
        Ok(sync::sync_paths(&mut self.0, dir, paths, s)?)
    }

    /// The search index keeps up with the sync (no separate step to know about).
    fn catch_up(&mut self, progress_json: bool) -> anyhow::Result<()> {
        super::search::catch_up(&mut self.0, progress_json)?;
        Ok(())
    }
}

/// The named files as absolute paths, each of which must be a `.jsonl` below `dir`.
fn named_paths(dir: &Path, files: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut paths = Vec::with_capacity(files.len());
    for f in files {
        let p = std::path::absolute(f).with_context(|| format!("{}", f.display()))?;
        if p.extension().is_none_or(|e| e != "jsonl") || !p.starts_with(dir) {
            anyhow::bail!("{}: not a .jsonl file below the sessions directory {}", p.display(), dir.display());
        }
        paths.push(p);
    }
    Ok(paths)
}

/// Syncs `paths` (checked by [`named_paths`]) and catches the index up.
fn sync_named(to: &mut Target, dir: &Path, paths: &[PathBuf], progress_json: bool) -> anyhow::Result<SyncSummary> {
    let started = Instant::now();
    let mut s = SyncSummary::default();
    to.sync_paths(dir, paths, &mut s)?;
    to.catch_up(progress_json)?;
    s.seconds = started.elapsed().as_secs_f64();
    Ok(s)
}

/// `sync FILE...`: the named files only.
fn sync_files(to: &mut Target, dir: &Path, files: &[PathBuf], a: &Args) -> anyhow::Result<i32> {
    let paths = named_paths(dir, files)?;
    let s = sync_named(to, dir, &paths, a.progress_json)?;
    report(&s, a.json)?;
    Ok(if s.failures > 0 { 1 } else { 0 })
}

/// One `--stdin` request: a JSON array of file paths.
fn request(line: &str) -> anyhow::Result<Vec<PathBuf>> {
    let files: Vec<PathBuf> = serde_json::from_str(line).context("expected a JSON array of session file paths")?;
    Ok(files)
}

/// `sync --stdin`: a request per line, an answer per line. The database is opened at the first
/// request and kept open. A sync that fails on a connection kept from an earlier request is
/// tried once more on a new one (a server restarted, a connection dropped: a sync is safe to
/// repeat), so a long-lived host never has to restart this process.
fn sync_requests(db: &Path, dir: &Path, a: &Args) -> anyhow::Result<i32> {
    use std::io::{BufRead, Write};
    let mut to: Option<Target> = None;
    let mut out = std::io::stdout().lock();
    for (n, line) in std::io::stdin().lock().lines().enumerate() {
        let line = line.context("reading standard input")?;
        if line.trim().is_empty() {
            continue;
        }
        let answer = match request(&line).and_then(|files| named_paths(dir, &files)) {
            Err(e) => Err(e.context(format!("standard input line {}", n + 1))),
            Ok(paths) => {
                let kept = to.as_mut().map(|t| sync_named(t, dir, &paths, a.progress_json));
                let synced = match kept {
                    Some(Ok(s)) => Ok(s),
                    Some(Err(_)) | None => {
                        to = None;
                        sessiondb::db::open(db)
                            .map_err(anyhow::Error::from)
                            .and_then(|conn| sync_named(to.insert(Target(conn)), dir, &paths, a.progress_json))
                    }
                };
                if synced.is_err() {
                    to = None;
                }
                synced
            }
        };
        let json = match answer {
            Ok(s) => {
                report_failures(&s);
                serde_json::to_string(&s)?
            }
            Err(e) => serde_json::to_string(&serde_json::json!({ "error": format!("{e:#}") }))?,
        };
        writeln!(out, "{json}")?;
        out.flush()?;
    }
    Ok(0)
}

pub fn run(db: &Path, a: Args) -> anyhow::Result<i32> {
    let dir = a.sessions_dir.clone().unwrap_or_else(sessiondb::internals::layout::sessions_dir);
    // Named files are checked against it as absolute paths.
    let absolute_dir = || std::path::absolute(&dir).with_context(|| format!("{}", dir.display()));
    if a.stdin {
        return sync_requests(db, &absolute_dir()?, &a);
    }
    let mut to = Target(sessiondb::db::open(db)?);
    if !a.files.is_empty() {
        return sync_files(&mut to, &absolute_dir()?, &a.files, &a);
    }
    let opts = SyncOptions { prune: a.prune };
    let mut progress = output::Progress::new("sync", a.progress_json, 200);
    let first = to.sync_dir(&dir, opts, |done, total| progress.update(done as u64, total as u64))?;
    progress.finish();
    to.catch_up(a.progress_json)?;
    if !a.watch {
        report(&first, a.json)?;
        return Ok(if first.failures > 0 { 1 } else { 0 });
    }
    if !a.json {
        report(&first, false)?;
        eprintln!("watching {} (Ctrl-C to stop)", dir.display());
    }
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst))?;
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let mut watcher = notify::recommended_watcher(move |ev: notify::Result<notify::Event>| {
        if let Ok(ev) = ev {
            for p in ev.paths {
                let _ = tx.send(p);
            }
        }
    })?;
    watcher.watch(&dir, RecursiveMode::Recursive)?;
    let mut total = SyncSummary::default();
    let mut last_scan = Instant::now();
    while !stop.load(Ordering::SeqCst) {
        let mut changed: Vec<PathBuf> = Vec::new();
        if let Ok(p) = rx.recv_timeout(Duration::from_millis(250)) {
            changed.push(p);
            // Gather what arrives with it: pi writes a line at a time.
            let until = Instant::now() + Duration::from_millis(100);
            while let Ok(p) = rx.recv_timeout(until.saturating_duration_since(Instant::now())) {
                changed.push(p);
            }
        }
        changed.sort();
        changed.dedup();
        let mut s = SyncSummary::default();
        if !changed.is_empty() {
            to.sync_paths(&dir, &changed, &mut s)?;
        }
        if last_scan.elapsed() >= RESCAN {
            s = to.sync_dir(&dir, opts, |_, _| {})?;
            last_scan = Instant::now();
        }
        if s.entries_added + s.new + s.rewritten > 0 {
            to.catch_up(false)?;
        }
        if s.entries_added + s.new + s.rewritten + s.missing + s.failures > 0 && !a.json {
            report(&s, false)?;
        }
        total.entries_added += s.entries_added;
        total.new += s.new;
        total.grown += s.grown;
        total.rewritten += s.rewritten;
        total.failures += s.failures;
    }
    if a.json {
        output::print_json(&total)?;
    } else {
        eprintln!("stopped");
    }
    Ok(0)
}
