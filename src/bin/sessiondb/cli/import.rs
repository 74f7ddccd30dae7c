//! `sessiondb import`.

use super::output;
use super::output::outln;
use sessiondb::import::{self, FileStatus, ImportOptions};
use std::path::{Path, PathBuf};

/// Import pi session files and directories (recursing for *.jsonl). Each file is imported
/// whole or not at all (files are written in batches of up to 32 MiB per transaction).
/// Re-importing a path replaces its session; unchanged
/// files (same size and modification time) are skipped.
#[derive(clap::Args)]
pub struct Args {
    /// Session files or directories to import.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Re-import files even when they look unchanged.
    #[arg(long)]
    force: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
    /// Report progress on stderr as JSON lines, `{"progress":"import"|"index","done":N,"total":M}`
    /// (at most ten a second, and the last of each phase), for programs that show it.
    #[arg(long)]
    progress_json: bool,
}

pub fn run(db: &Path, args: Args) -> anyhow::Result<i32> {
    let targets = import::collect_targets(&args.paths)?;
    let url = db.to_str().filter(|t| sessiondb::pg::is_url(t));
    // On a server, the files become its own sessions (origin '').
    let mut conn = sessiondb::db::open(db)?;
    let shown = url.map_or_else(|| db.display().to_string(), sessiondb::pg::shown);
    let bar = output::progress_bar(targets.len() as u64, "importing");
    let mut json_progress = output::Progress::new("import", args.progress_json, u64::MAX);
    let (total, mut done) = (targets.len() as u64, 0);
    let opts = ImportOptions { force: args.force, live: false };
    let progress = |r: &import::FileReport| {
        bar.set_message(r.path.display().to_string());
        bar.inc(1);
        done += 1;
        json_progress.update(done, total);
    };
    let summary = import::import_targets(&mut conn, &targets, opts, progress)?;
    bar.finish_and_clear();
    // Files the database could not take (disk full, I/O error): one error for all of them.
    let db_failures: Vec<&str> = summary
        .reports
        .iter()
        .filter(|r| r.status == FileStatus::Failed)
        .filter_map(|r| r.reason.as_deref()?.strip_prefix("database: "))
        .collect();
    if args.json {
        output::print_json(&summary)?;
    } else {
        for r in &summary.reports {
            match r.status {
                FileStatus::Failed => {
                    let reason = r.reason.as_deref().unwrap_or("unknown reason");
                    if !reason.starts_with("database: ") {
                        eprintln!("{}: not imported: {reason}", r.path.display());
                    }
                }
                _ => {
                    for s in &r.skipped {
                        eprintln!("{}:{}: skipped line: {}", r.path.display(), s.line, s.reason);
                    }
                    if r.malformed_lines as usize > r.skipped.len() {
                        eprintln!(
                            "{}: … {} more skipped lines",
                            r.path.display(),
                            r.malformed_lines as usize - r.skipped.len()
                        );
                    }
                    if let Some(v) = r.migrated_from {
                        eprintln!("{}: migrated from version {v} to 3", r.path.display());
                    }
                }
            }
        }
        outln!("{:<16} {:>10}", "files", summary.files)?;
        outln!("{:<16} {:>10}", "sessions", summary.sessions)?;
        outln!("{:<16} {:>10}", "  replaced", summary.replaced)?;
        outln!("{:<16} {:>10}", "unchanged", summary.unchanged)?;
        outln!("{:<16} {:>10}", "entries", summary.entries)?;
        outln!("{:<16} {:>10}", "skipped lines", summary.skipped_lines)?;
        outln!("{:<16} {:>10}", "blank lines", summary.blank_lines)?;
        outln!("{:<16} {:>10}", "failures", summary.failures)?;
        outln!("database: {shown}")?;
    }
    if let Some(first) = db_failures.first() {
        anyhow::bail!(
            "{shown}: {} of {} files could not be written to the database (each file is whole or absent): {first}",
            db_failures.len(),
            summary.files
        );
    }
    // The search index keeps up with the import (no separate step to know about).
    super::search::catch_up(&mut conn, args.progress_json)?;
    Ok(if summary.failures > 0 { 1 } else { 0 })
}
