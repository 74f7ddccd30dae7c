//! `sessiondb list`, `find`, `recent`: sessions across projects.

use super::output::outln;
use sessiondb::discovery::{self, SessionInfo};
use sessiondb::internals::layout;
use sessiondb::json::Value;
use std::io::Write;
use std::path::Path;

/// List sessions, newest first (pi's SessionInfo). Without --cwd or --session-dir: every
/// project in the database.
#[derive(clap::Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub(super) scope: Scope,
    /// Only sessions that have a name.
    #[arg(long)]
    pub(super) named: bool,
    /// Sort order.
    #[arg(long, value_parser = ["modified", "created", "name"], default_value = "modified")]
    pub(super) sort: String,
    /// Show at most N sessions.
    #[arg(long, value_name = "N")]
    pub(super) limit: Option<usize>,
    /// Print pi's SessionInfo objects as JSON (Dates as ISO strings).
    #[arg(long)]
    pub(super) json: bool,
}

/// Find a session by id (pi's findById). With --cwd or --session-dir: the exact id in that
/// project's folder; without: every session with that id in any project, or the sessions
/// whose id starts with ID (4+ characters).
#[derive(clap::Args)]
pub struct FindArgs {
    /// Session id (or id prefix without a scope).
    pub(super) id: String,
    #[command(flatten)]
    pub(super) scope: Scope,
    /// Print JSON: the path (or null) with a scope, else an array of paths.
    #[arg(long)]
    pub(super) json: bool,
}

/// Show the session continueRecent would open: the one written last in the cwd's default
/// folder (--cwd), in a folder (--session-dir), or anywhere.
#[derive(clap::Args)]
pub struct RecentArgs {
    #[command(flatten)]
    pub(super) scope: Scope,
    /// Print JSON: `{"file", "isNew", "sessionId", "leafId", "entryCount"}`.
    #[arg(long)]
    pub(super) json: bool,
}

/// Where `list`, `find` and `recent` look: one project, one session folder, or (neither)
/// every session in the database.
#[derive(clap::Args)]
pub(super) struct Scope {
    /// The project directory: `list` shows sessions whose header cwd is DIR; `find` and
    /// `recent` look in DIR's default session folder.
    #[arg(long, value_name = "DIR", conflicts_with = "session_dir")]
    pub(super) cwd: Option<String>,
    /// The session folder (pi's `sessionDir`).
    #[arg(long, value_name = "DIR")]
    pub(super) session_dir: Option<String>,
}

fn resolved(p: &str) -> String {
    layout::resolve_path(p).to_string_lossy().into_owned()
}

/// "3m ago", "5h ago", "2d ago".
fn ago(ms: Option<i64>) -> String {
    let Some(ms) = ms else { return "?".into() };
    let now = chrono::Utc::now().timestamp_millis();
    let s = (now - ms).max(0) / 1000;
    match s {
        0..=59 => format!("{s}s ago"),
        60..=3599 => format!("{}m ago", s / 60),
        3600..=86_399 => format!("{}h ago", s / 3600),
        _ => format!("{}d ago", s / 86_400),
    }
}

pub(super) fn print_table(infos: &[SessionInfo]) -> anyhow::Result<()> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    writeln!(out, "{:<9} {:>6}  {:<50}  {:<30}  ID", "MODIFIED", "MSGS", "NAME / FIRST MESSAGE", "CWD")?;
    for i in infos {
        let title = i.name.clone().unwrap_or_else(|| i.first_message.clone());
        let short: String = i.id.chars().take(8).collect();
        writeln!(
            out,
            "{:<9} {:>6}  {:<50}  {:<30}  {short}",
            ago(i.modified_ms),
            i.message_count,
            crate::cli::render::one_line(&title, 50),
            crate::cli::render::one_line(&i.cwd, 30)
        )?;
    }
    out.flush()?;
    Ok(())
}

/// What `list` shows of the sessions found: `--named`, `--sort`, `--limit`.
pub(super) fn select(infos: &mut Vec<SessionInfo>, a: &ListArgs) {
    if a.named {
        infos.retain(|i| i.name.is_some());
    }
    match a.sort.as_str() {
        "created" => infos.sort_by_key(|i| std::cmp::Reverse(i.created_ms)),
        "name" => infos.sort_by(|x, y| {
            x.name.as_deref().unwrap_or(&x.first_message).cmp(y.name.as_deref().unwrap_or(&y.first_message))
        }),
        _ => {}
    }
    if let Some(n) = a.limit {
        infos.truncate(n);
    }
}

pub fn run_list(db: &Path, a: ListArgs) -> anyhow::Result<i32> {
    let conn = sessiondb::db::open_existing(db)?;
    let mut infos = match (&a.scope.cwd, &a.scope.session_dir) {
        (Some(cwd), _) => discovery::list_cwd(&conn, &resolved(cwd))?,
        (None, Some(dir)) => discovery::list_folder(&conn, &resolved(dir))?,
        (None, None) => discovery::list_everything(&conn)?,
    };
    select(&mut infos, &a);
    if a.json {
        discovery::fill_all_text(&conn, &mut infos)?;
        super::output::print_pi_json(&Value::Array(infos.iter().map(SessionInfo::to_value).collect()))?;
    } else {
        print_table(&infos)?;
    }
    Ok(0)
}

pub fn run_find(db: &Path, a: FindArgs) -> anyhow::Result<i32> {
    let conn = sessiondb::db::open_existing(db)?;
    let scoped = match (&a.scope.cwd, &a.scope.session_dir) {
        (Some(cwd), _) => Some(discovery::find_in_dir(&conn, &a.id, &discovery::session_dir_for(cwd, None), None)?),
        (None, Some(dir)) => Some(discovery::find_in_dir(&conn, &a.id, &resolved(dir), None)?),
        (None, None) => None,
    };
    let paths: Vec<String> = match scoped {
        Some(found) => {
            if a.json {
                outln!("{}", found.as_deref().map_or_else(|| "null".into(), sessiondb::json::quote))?;
            } else if let Some(p) = &found {
                outln!("{p}")?;
            }
            return Ok(if found.is_some() { 0 } else { 1 });
        }
        None => {
            let exact = discovery::find_everywhere(&conn, &a.id)?;
            if exact.is_empty() && a.id.chars().count() >= sessiondb::resolve::MIN_PREFIX {
                discovery::find_prefix(&conn, &a.id)?
            } else {
                exact
            }
        }
    };
    if a.json {
        super::output::print_pi_json(&Value::Array(paths.iter().map(|p| Value::String(p.as_str().into())).collect()))?;
    } else {
        for p in &paths {
            outln!("{p}")?;
        }
    }
    Ok(if paths.is_empty() { 1 } else { 0 })
}

pub fn run_recent(db: &Path, a: RecentArgs) -> anyhow::Result<i32> {
    let conn = sessiondb::db::open_existing(db)?;
    let found = match (&a.scope.cwd, &a.scope.session_dir) {
        (Some(cwd), _) => discovery::recent_in_dir(&conn, &discovery::session_dir_for(cwd, None), None)?,
        (None, Some(dir)) => discovery::recent_in_dir(&conn, &resolved(dir), None)?,
        (None, None) => discovery::recent_anywhere(&conn)?,
    };
    let Some((sid, path)) = found else {
        if a.json {
            outln!("{{\"file\":null,\"isNew\":true}}")?;
        } else {
            eprintln!("no session there: continueRecent would start a new one");
        }
        return Ok(1);
    };
    let t = sessiondb::tree::SessionTree::open(&conn, sid)?;
    let leaf = t.last_entry()?;
    let stats = conn.store().load_stats(sid)?.stats;
    let id = conn.store().session_row(sid)?.id;
    if a.json {
        let mut o = sessiondb::json::Object::new();
        o.set("file", Value::String(path.as_str().into()));
        o.set("isNew", Value::Bool(false));
        o.set("sessionId", Value::String(id.as_str().into()));
        o.set("leafId", leaf.and_then(|r| r.id).map_or(Value::Null, |l| Value::String(l.as_str().into())));
        o.set("entryCount", Value::Number(stats.entry_count as f64));
        super::output::print_pi_json(&Value::Object(o))?;
    } else {
        outln!("{path}")?;
        outln!("session {id}, {} entries", stats.entry_count)?;
    }
    Ok(0)
}
