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
}

/// Full rescan interval while watching.
const RESCAN: Duration = Duration::from_secs(30);

fn report(s: &SyncSummary, json: bool) -> anyhow::Result<()> {
    for f in &s.failed {
        eprintln!("{}: not imported: {}", f.path.display(), f.reason.as_deref().unwrap_or("unknown reason"));
    }
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

/// `sync FILE...`: the named files only, each of which must be a `.jsonl` below `dir`.
fn sync_files(to: &mut Target, dir: &Path, files: &[PathBuf], a: &Args) -> anyhow::Result<i32> {
    let started = Instant::now();
    let dir = std::path::absolute(dir).with_context(|| format!("{}", dir.display()))?;
    let mut paths = Vec::with_capacity(files.len());
    for f in files {
        let p = std::path::absolute(f).with_context(|| format!("{}", f.display()))?;
        if p.extension().is_none_or(|e| e != "jsonl") || !p.starts_with(&dir) {
            anyhow::bail!("{}: not a .jsonl file below the sessions directory {}", p.display(), dir.display());
        }
        paths.push(p);
    }
    let mut s = SyncSummary::default();
    to.sync_paths(&dir, &paths, &mut s)?;
    to.catch_up(a.progress_json)?;
    s.seconds = started.elapsed().as_secs_f64();
    report(&s, a.json)?;
    Ok(if s.failures > 0 { 1 } else { 0 })
}

pub fn run(db: &Path, a: Args) -> anyhow::Result<i32> {
    let dir = a.sessions_dir.clone().unwrap_or_else(sessiondb::internals::layout::sessions_dir);
    let mut to = Target(sessiondb::db::open(db)?);
    if !a.files.is_empty() {
        return sync_files(&mut to, &dir, &a.files, &a);
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
