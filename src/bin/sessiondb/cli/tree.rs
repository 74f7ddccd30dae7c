//! `sessiondb tree`, `branch`, `children`: the session tree.

use super::{open_session, warn_cycle};
use crate::cli::render;
use sessiondb::json::{Object, Value};
use sessiondb::tree::Row;
use sessiondb::EntryKey;
use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

/// Print the whole tree (pi's getTree). Text: one line per entry, indented at branch points,
/// the active path (to the last entry) marked with `*`. `--json`: the tree flattened in
/// pre-order, one object per node `{"entry", "depth", "childCount", "label"?, "labelTimestamp"?}`.
#[derive(clap::Args)]
pub struct TreeArgs {
    /// Session id, unique id prefix (4+ characters) or file path.
    session: String,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// Print the path from the root to an entry (pi's getBranch).
#[derive(clap::Args)]
pub struct BranchArgs {
    /// Session id, unique id prefix (4+ characters) or file path.
    session: String,
    /// End the path at this entry instead of the last one (an unknown id gives an empty path).
    #[arg(long, value_name = "ID")]
    from: Option<String>,
    /// Print pi's JSON (an array of entries).
    #[arg(long)]
    json: bool,
}

/// Print the direct children of an entry (pi's getChildren).
#[derive(clap::Args)]
pub struct ChildrenArgs {
    /// Session id, unique id prefix (4+ characters) or file path.
    session: String,
    /// The parent entry's id.
    id: String,
    /// Print pi's JSON (an array of entries).
    #[arg(long)]
    json: bool,
}

fn print_entries(rows: &[Row]) -> anyhow::Result<()> {
    super::output::print_pi_json(&Value::Array(rows.iter().map(|r| r.parse().value).collect()))
}

fn entry_line(row: &Row, width: usize) -> String {
    let e = row.parse();
    let id = row.id.as_deref().unwrap_or("-");
    format!("{id}  {}: {}", render::entry_kind(&e), render::entry_preview(&e, width))
}

pub fn run_branch(db: &Path, a: BranchArgs) -> anyhow::Result<i32> {
    let (conn, s) = open_session(db, &a.session)?;
    let t = sessiondb::tree::SessionTree::open(&conn, s.sid)?;
    let path = t.branch(a.from.as_deref())?;
    warn_cycle(path.cycle.as_deref());
    if a.json {
        print_entries(&path.entries)?;
    } else {
        let mut out = std::io::stdout().lock();
        for r in &path.entries {
            writeln!(out, "{}", entry_line(r, 100))?;
        }
    }
    Ok(0)
}

pub fn run_children(db: &Path, a: ChildrenArgs) -> anyhow::Result<i32> {
    let (conn, s) = open_session(db, &a.session)?;
    let t = sessiondb::tree::SessionTree::open(&conn, s.sid)?;
    let rows = t.children(&a.id)?;
    if a.json {
        print_entries(&rows)?;
    } else {
        let mut out = std::io::stdout().lock();
        for r in &rows {
            writeln!(out, "{}", entry_line(r, 100))?;
        }
    }
    Ok(0)
}

pub fn run_tree(db: &Path, a: TreeArgs) -> anyhow::Result<i32> {
    let (conn, s) = open_session(db, &a.session)?;
    let t = sessiondb::tree::SessionTree::open(&conn, s.sid)?;
    let nodes = t.tree()?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if a.json {
        // Written node by node: a deep tree never becomes one nested value.
        write!(out, "[")?;
        for (i, n) in nodes.iter().enumerate() {
            let mut o = Object::new();
            o.set("entry", n.row.parse().value);
            o.set("depth", Value::Number(n.depth as f64));
            o.set("childCount", Value::Number(n.child_count as f64));
            if let Some((label, ts)) = &n.label {
                o.set("label", label.clone());
                if let Some(ts) = ts {
                    o.set("labelTimestamp", ts.clone());
                }
            }
            if i > 0 {
                write!(out, ",")?;
            }
            write!(out, "{}", Value::Object(o).to_json())?;
        }
        writeln!(out, "]")?;
        out.flush()?;
        return Ok(0);
    }
    let active: HashSet<EntryKey> = t.branch(None)?.entries.iter().map(|r| r.key).collect();
    // Indent only where the tree branches, as pi's /tree does: chains thousands deep stay readable.
    let mut levels: Vec<(usize, usize)> = Vec::new(); // per depth: (indent level, child count)
    for n in &nodes {
        levels.truncate(n.depth);
        let level = match levels.last() {
            Some(&(lvl, siblings)) => lvl + usize::from(siblings > 1),
            None => 0,
        };
        levels.push((level, n.child_count));
        let indent = if level > 24 { format!("{}…{level} ", "  ".repeat(24)) } else { "  ".repeat(level) };
        let mark = if active.contains(&n.row.key) { '*' } else { ' ' };
        let label =
            n.label.as_ref().map(|(l, _)| format!("  [{}]", l.as_str().unwrap_or(&l.to_json()))).unwrap_or_default();
        writeln!(out, "{mark} {indent}{}{label}", entry_line(&n.row, 80))?;
    }
    out.flush()?;
    Ok(0)
}
