//! `sessiondb move`.

use super::output;
use super::output::outln;
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};

/// The arguments of `sessiondb move` (its help is on `Command::Move`).
#[derive(clap::Args)]
pub struct Args {
    /// The session to move.
    #[arg(value_name = "SESSION")]
    session: String,
    /// The project folder the session belongs to from now on (an existing directory).
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// The sessions folder (default: $PI_CODING_AGENT_DIR/sessions, else ~/.pi/agent/sessions).
    #[arg(long, value_name = "DIR")]
    sessions_dir: Option<PathBuf>,
    /// Print what moved as JSON: `{"sessionId","from","to","cwd","fileMoved"}`.
    #[arg(long)]
    json: bool,
}

pub fn run(db: &Path, args: Args) -> anyhow::Result<i32> {
    let Some(dir) = args.dir.to_str() else { bail!("{}: not a UTF-8 path", args.dir.display()) };
    if !args.dir.is_dir() {
        bail!("{}: not a directory", shown(dir));
    }
    let sessions_dir = args.sessions_dir.unwrap_or_else(sessiondb::internals::layout::sessions_root);
    let mut conn = sessiondb::db::open_existing(db)?;
    sessiondb::relocate::finish_interrupted_moves(&mut conn, &sessions_dir)
        .with_context(|| format!("finishing an interrupted move in {}", sessions_dir.display()))?;
    let session = sessiondb::resolve::resolve(&conn, &args.session)?;
    let moved = sessiondb::relocate::move_session(&mut conn, &session, dir, &sessions_dir)?;
    if args.json {
        output::print_json(&moved)?;
    } else {
        let (from, to) = (moved.from.to_string_lossy(), moved.to.to_string_lossy());
        if moved.from == moved.to {
            outln!("session {} is already in {} (at {})", shown(&moved.session_id), shown(&moved.cwd), shown(&to))?;
            return Ok(0);
        }
        let what = if moved.file_moved { "" } else { " (in the database only: it has no file)" };
        outln!("moved session {}{what}\n  from {}\n  to   {}", shown(&moved.session_id), shown(&from), shown(&to))?;
    }
    Ok(0)
}

/// A value from a session (its id, a path) as it can be shown on a terminal: control
/// characters escaped.
fn shown(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect()
}
