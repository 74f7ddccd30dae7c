//! `sessiondb push`: replicate the local database into a PostgreSQL server.

use super::output;
use super::output::outln;
use anyhow::{bail, Context};
use sessiondb::pg::{PushOptions, PushSummary};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Replicate the local database (--db) into a sessiondb database on a PostgreSQL server,
/// incrementally: sessions the server holds unchanged are not read, appended lines are sent
/// alone, sessions rewritten locally are sent again whole. Sessions are kept under an origin
/// (default: this machine's name), so identical paths from two machines stay apart.
#[derive(clap::Args)]
pub struct Args {
    /// The server: postgres://USER:PASSWORD@HOST:PORT/DATABASE (the schema is created there).
    #[arg(long, value_name = "URL")]
    to: String,
    /// Push this SQLite database instead of --db, or sync this sessions folder into the --db
    /// database first (new, grown and rewritten files).
    #[arg(long, value_name = "DIR|DB")]
    from: Option<PathBuf>,
    /// The name the sessions are kept under on the server (default: this machine's host name).
    #[arg(long, value_name = "NAME")]
    origin: Option<String>,
    /// Remove this origin's sessions from the server when they are no longer in the local database.
    #[arg(long)]
    prune: bool,
    /// Stay running: push again within a second of a change, until Ctrl-C.
    #[arg(long)]
    watch: bool,
    /// Print each push's summary as JSON (one line each).
    #[arg(long)]
    json: bool,
}

fn report(s: &PushSummary, server: &str, json: bool) -> anyhow::Result<()> {
    if json {
        return output::print_json(s);
    }
    let mib = s.bytes as f64 / (1 << 20) as f64;
    outln!(
        "pushed {} sessions to {server} as {}: {} new, {} appended, {} resent, {} unchanged, {} pruned; \
         {} lines ({mib:.1} MiB) in {:.2} s ({:.1} MiB/s)",
        s.sessions,
        s.origin,
        s.new,
        s.appended,
        s.resent,
        s.unchanged,
        s.pruned,
        s.lines,
        s.seconds,
        if s.seconds > 0.0 { mib / s.seconds } else { 0.0 }
    )?;
    Ok(())
}

/// Size and modification time of the files a change to the local database touches.
fn fingerprint(db: &Path) -> Vec<Option<(u64, std::time::SystemTime)>> {
    ["", "-wal", "-appends"]
        .iter()
        .map(|suffix| {
            let mut p = db.as_os_str().to_owned();
            p.push(suffix);
            let m = std::fs::metadata(PathBuf::from(p)).ok()?;
            Some((m.len(), m.modified().ok()?))
        })
        .collect()
}

pub fn run(db: &Path, a: Args) -> anyhow::Result<i32> {
    if !sessiondb::pg::is_url(&a.to) {
        bail!("--to {}: not a PostgreSQL URL (postgres://USER@HOST:PORT/DATABASE)", sessiondb::pg::shown(&a.to));
    }
    let folder = a.from.as_deref().filter(|p| p.is_dir());
    let local: PathBuf = match (&a.from, folder) {
        (Some(f), None) => f.clone(),
        _ => db.to_path_buf(),
    };
    if sessiondb::pg::is_url(&local.to_string_lossy()) {
        bail!("push reads a local SQLite database: give it with --db PATH or --from PATH, and the server with --to");
    }
    let server = sessiondb::db::open(a.to.as_str())?;
    let opts = PushOptions {
        prune: a.prune,
        ..PushOptions::new(a.origin.clone().unwrap_or_else(sessiondb::pg::default_origin))
    };
    let stop = Arc::new(AtomicBool::new(false));
    if a.watch {
        let stop = stop.clone();
        ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst))?;
        eprintln!("watching {} (Ctrl-C to stop)", folder.unwrap_or(&local).display());
    }
    let mut seen = None;
    let mut rounds = 0u64;
    while !stop.load(Ordering::SeqCst) {
        if let Some(dir) = folder {
            let mut conn = sessiondb::db::open(&local)?;
            let synced =
                sessiondb::sync::sync_dir(&mut conn, dir, sessiondb::sync::SyncOptions { prune: a.prune }, |_, _| {})
                    .with_context(|| format!("syncing {}", dir.display()))?;
            for f in &synced.failed {
                eprintln!("{}: not imported: {}", f.path.display(), f.reason.as_deref().unwrap_or("unknown reason"));
            }
        }
        let now = fingerprint(&local);
        if rounds == 0 || seen.as_ref() != Some(&now) {
            let conn = sessiondb::db::open_existing(&local)?;
            let bar = output::progress_bar(2, "pushing");
            let summary = sessiondb::pg::push(&conn, &server, &opts, |done, total| {
                bar.set_length(total);
                bar.set_position(done);
            })?;
            bar.finish_and_clear();
            drop(conn);
            if rounds == 0 || summary.wrote() {
                report(&summary, &sessiondb::pg::shown(&a.to), a.json)?;
            }
            // Opening the database may settle its append journal: look again after the push.
            seen = Some(fingerprint(&local));
        }
        rounds += 1;
        if !a.watch {
            break;
        }
        for _ in 0..(if folder.is_some() { 10 } else { 5 }) {
            if stop.load(Ordering::SeqCst) {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    if a.watch {
        eprintln!("stopped");
    }
    Ok(0)
}
