//! `sessiondb export`.

use super::output;
use super::output::outln;
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};

/// Write a session as pi JSONL (stdout by default), or every session under a directory in
/// pi's layout. SESSION is a session id, a unique id prefix (4+ characters) or the file path
/// the session was imported from.
#[derive(clap::Args)]
pub struct Args {
    /// The session to export.
    #[arg(value_name = "SESSION", required_unless_present = "all", conflicts_with = "all")]
    pub(super) session: Option<String>,
    /// Write to this file instead of stdout.
    #[arg(short, long, value_name = "FILE", conflicts_with = "all")]
    pub(super) output: Option<PathBuf>,
    /// Export every session.
    #[arg(long, requires = "out")]
    pub(super) all: bool,
    /// Directory for --all.
    #[arg(long, value_name = "DIR")]
    pub(super) out: Option<PathBuf>,
    /// Print what was written as JSON (with --all or -o).
    #[arg(long)]
    pub(super) json: bool,
}

pub fn run(db: &Path, args: Args) -> anyhow::Result<i32> {
    let conn = sessiondb::db::open_existing(db)?;
    if args.all {
        let Some(out) = args.out else { bail!("--all needs --out DIR") };
        let bar = output::progress_bar(0, "exporting");
        let files = sessiondb::export::export_all(&conn, &out, |f| {
            bar.set_message(f.path.display().to_string());
            bar.inc(1);
        })?;
        bar.finish_and_clear();
        if args.json {
            output::print_json(&files)?;
        } else {
            let bytes: u64 = files.iter().map(|f| f.bytes).sum();
            outln!("exported {} sessions ({} bytes) to {}", files.len(), bytes, out.display())?;
        }
        return Ok(0);
    }
    let reference = args.session.context("a SESSION or --all is required")?;
    let session = sessiondb::resolve::resolve(&conn, &reference)?;
    match args.output {
        Some(path) => {
            let bytes = sessiondb::export::write_session_file(&conn, session.sid, &path)?;
            if args.json {
                output::print_json(&serde_json::json!({"sessionId": session.id, "path": path, "bytes": bytes}))?;
            }
        }
        None => output::to_stdout(|w| sessiondb::export::write_session(&conn, session.sid, w))?,
    }
    Ok(0)
}
