//! `sessiondb export`: pi JSONL byte for byte, or a readable transcript of one branch as
//! Markdown or a self-contained HTML file (`crate::transcript`).

use super::output;
use super::output::outln;
use crate::transcript;
use anyhow::{bail, Context};
use sessiondb::tree::{Leaf, SessionTree};
use std::io::Write;
use std::path::{Path, PathBuf};

/// What `export` writes.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// pi's JSONL, byte for byte (every entry of every branch).
    Jsonl,
    /// A readable transcript of one branch (root to leaf).
    Markdown,
    /// One self-contained HTML file of one branch: no script, nothing loaded from elsewhere.
    Html,
}

/// Write a session as pi JSONL (stdout by default), or every session under a directory in
/// pi's layout; or one branch of a session as a readable Markdown or HTML transcript. SESSION
/// is a session id, a unique id prefix (4+ characters) or the file path the session was
/// imported from.
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
    /// jsonl (default: the file, byte for byte), markdown or html (the branch to --leaf as a
    /// transcript). markdown and html take one SESSION, not --all.
    #[arg(long, value_enum, default_value = "jsonl")]
    pub(super) format: Format,
    /// markdown/html: the branch to this entry instead of the last one (an unknown id falls
    /// back to the last, as `context --leaf` does).
    #[arg(long, value_name = "ID")]
    pub(super) leaf: Option<String>,
    /// markdown/html: include the assistant's thinking blocks (left out by default).
    #[arg(long)]
    pub(super) thinking: bool,
}

pub fn run(db: &Path, args: Args) -> anyhow::Result<i32> {
    if args.format != Format::Jsonl && args.all {
        bail!("--format markdown and --format html write one session's branch: give a SESSION, not --all");
    }
    if args.format == Format::Jsonl && (args.leaf.is_some() || args.thinking) {
        bail!("--leaf and --thinking apply to --format markdown or html (jsonl is the whole file)");
    }
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
    let reference = args.session.clone().context("a SESSION or --all is required")?;
    let session = sessiondb::resolve::resolve(&conn, &reference)?;
    if args.format != Format::Jsonl {
        let text = transcript_of(&conn, &session, &args)?;
        match &args.output {
            Some(path) => {
                write_atomically(path, text.as_bytes()).with_context(|| format!("writing {}", path.display()))?;
                if args.json {
                    output::print_json(
                        &serde_json::json!({"sessionId": session.id, "path": path, "bytes": text.len()}),
                    )?;
                }
            }
            None => {
                // A closed pipe (`| head`) is not an error: `cli::run` tells it apart.
                let mut out = std::io::stdout().lock();
                out.write_all(text.as_bytes())?;
                out.flush()?;
            }
        }
        return Ok(0);
    }
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

/// The Markdown or HTML of the branch to `--leaf` (root first).
fn transcript_of(
    conn: &sessiondb::db::Db,
    session: &sessiondb::resolve::SessionRef,
    args: &Args,
) -> anyhow::Result<String> {
    let info = sessiondb::discovery::info(conn, session.sid)?.context("the session went away while exporting")?;
    let t = SessionTree::open(conn, session.sid)?;
    let leaf = match &args.leaf {
        Some(id) => Leaf::Id(id.clone()),
        None => Leaf::Last,
    };
    let path = match t.leaf_row(&leaf)? {
        Some(row) => t.path_to(&row)?,
        None => sessiondb::tree::Path { entries: Vec::new(), cycle: None },
    };
    super::warn_cycle(path.cycle.as_deref());
    Ok(match args.format {
        Format::Html => transcript::document::page(&info, &path.entries, args.thinking),
        _ => transcript::markdown::document(&info, &path.entries, args.thinking),
    })
}

/// `bytes` to `path` as the JSONL export writes it: a file beside it, renamed over it once
/// whole (a reader never sees half a transcript).
fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path)?;
    Ok(())
}
