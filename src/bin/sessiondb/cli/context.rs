//! `sessiondb context` and `show`: what the model sees, and the active branch as a transcript.

use super::{open_session, warn_cycle};
use crate::cli::render;
use sessiondb::json::Value;
use sessiondb::tree::{Leaf, SessionTree};
use std::io::Write;
use std::path::Path;

/// Print the model context at the session's leaf (pi's buildSessionProjection): compaction
/// applied, context edits applied, thinking level and model in force. `--json` prints exactly
/// pi's projection object.
#[derive(clap::Args)]
pub struct ContextArgs {
    /// Session id, unique id prefix (4+ characters) or file path.
    session: String,
    /// Project at this entry instead of the last one (an unknown id falls back to the last, as pi's does).
    #[arg(long, value_name = "ID", conflicts_with = "no_leaf")]
    leaf: Option<String>,
    /// Project at a null leaf (an empty context).
    #[arg(long)]
    no_leaf: bool,
    /// Print pi's JSON.
    #[arg(long)]
    json: bool,
}

/// Print the active branch (root to last entry) as a readable transcript.
#[derive(clap::Args)]
pub struct ShowArgs {
    /// Session id, unique id prefix (4+ characters) or file path.
    session: String,
}

pub fn run_context(db: &Path, a: ContextArgs) -> anyhow::Result<i32> {
    let (conn, s) = open_session(db, &a.session)?;
    let t = SessionTree::open(&conn, s.sid)?;
    let leaf = match (a.no_leaf, a.leaf) {
        (true, _) => Leaf::Null,
        (false, Some(id)) => Leaf::Id(id),
        (false, None) => Leaf::Last,
    };
    let (p, cycle) = t.projection(&leaf)?;
    warn_cycle(cycle.as_deref());
    if a.json {
        super::output::print_pi_json(&p)?;
        return Ok(0);
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let o = p.as_object();
    let get = |k: &str| o.and_then(|o| o.get(k));
    let model = get("model")
        .and_then(Value::as_object)
        .map(|m| format!("{}/{}", render_str(m.get("provider")), render_str(m.get("modelId"))))
        .unwrap_or_else(|| "(none)".into());
    writeln!(out, "session {}  model {model}  thinking {}", s.id, render_str(get("thinkingLevel")))?;
    if let Some(Value::Array(messages)) = get("messages") {
        for m in messages {
            writeln!(out, "\n{}", render::message_block(m))?;
        }
        writeln!(out, "\n({} messages)", messages.len())?;
    }
    out.flush()?;
    Ok(0)
}

fn render_str(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.to_str().into_owned(),
        Some(other) => other.to_json(),
        None => "-".into(),
    }
}

pub fn run_show(db: &Path, a: ShowArgs) -> anyhow::Result<i32> {
    let (conn, s) = open_session(db, &a.session)?;
    let t = SessionTree::open(&conn, s.sid)?;
    let path = t.branch(None)?;
    warn_cycle(path.cycle.as_deref());
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    writeln!(out, "session {}  ({})", s.id, s.path)?;
    for r in &path.entries {
        let e = r.parse();
        let ts = r.parse().get("timestamp").map(|v| render_str(Some(v))).unwrap_or_default();
        match e.kind() {
            Some("message") => {
                let m = e.get("message").cloned().unwrap_or(Value::Null);
                writeln!(out, "\n{ts}  {}", render::message_block(&m))?;
            }
            _ => writeln!(out, "\n{ts}  ({}) {}", render::entry_kind(&e), render::entry_preview(&e, 200))?,
        }
    }
    out.flush()?;
    Ok(0)
}
