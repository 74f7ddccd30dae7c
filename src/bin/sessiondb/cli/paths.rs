//! `sessiondb paths`: where sessiondb and pi keep things, as this binary decides it. Hosts in
//! other languages (the pi package) ask it rather than restate the rules.

use super::output;
use super::output::outln;
use serde::Serialize;
use sessiondb::internals::layout;
use std::path::Path;

/// The arguments of `sessiondb paths` (its help is on `Command::Paths`).
#[derive(clap::Args)]
pub struct Args {
    /// Print them as JSON: `{"database","server","exists","agentDir","sessionsRoot","sessionsDir"}`.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Paths {
    /// The database `--db` names, else the default one (a URL without its password).
    database: String,
    /// Whether it is a PostgreSQL URL (`sessiondb::pg::is_url`).
    server: bool,
    /// Whether the database file exists (a server: true, not asked).
    exists: bool,
    agent_dir: String,
    sessions_root: String,
    sessions_dir: String,
}

pub fn run(db: &Path, args: Args) -> anyhow::Result<i32> {
    let text = db.to_string_lossy();
    let server = sessiondb::pg::is_url(&text);
    let lossy = |p: &Path| p.to_string_lossy().into_owned();
    let paths = Paths {
        database: if server { sessiondb::pg::shown(&text) } else { text.into_owned() },
        server,
        exists: server || db.exists(),
        agent_dir: lossy(&layout::agent_dir()),
        sessions_root: lossy(&layout::sessions_root()),
        sessions_dir: lossy(&layout::sessions_dir()),
    };
    if args.json {
        output::print_json(&paths)?;
        return Ok(0);
    }
    let kind = if server {
        "PostgreSQL server"
    } else if paths.exists {
        "SQLite file"
    } else {
        "SQLite file, not created yet"
    };
    outln!("database:      {} ({kind})", paths.database)?;
    outln!("agent dir:     {}", paths.agent_dir)?;
    outln!("sessions root: {}", paths.sessions_root)?;
    outln!("sessions dir:  {}", paths.sessions_dir)?;
    Ok(0)
}
