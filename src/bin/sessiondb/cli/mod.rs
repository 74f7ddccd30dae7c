//! Command-line interface: argument parsing and output only; the library does the work.

mod bench;
mod check;
mod context;
mod discover;
mod export;
mod import;
mod r#move;
mod output;
mod paths;
mod push;
pub(crate) mod render;
mod rpc;
mod search;
mod stats;
mod sync;
mod tree;

use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// Keep pi coding-agent sessions in SQLite: import, export, query.
#[derive(Parser)]
#[command(name = "sessiondb", version, about, long_about = None)]
pub struct Cli {
    /// Database file (default: $SESSIONDB_PATH, else ~/.pi/agent/sessiondb.sqlite).
    #[arg(long, global = true, value_name = "PATH")]
    db: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Import pi session files (.jsonl) and directories of them into the database.
    Import(import::Args),
    /// Write a session (or all of them) back as pi JSONL, or a branch as Markdown or HTML.
    Export(export::Args),
    /// Print the model context at a leaf (pi's buildSessionProjection).
    Context(context::ContextArgs),
    /// Print the path from the root to an entry (pi's getBranch).
    Branch(tree::BranchArgs),
    /// Print the session tree (pi's getTree).
    Tree(tree::TreeArgs),
    /// Print the children of an entry (pi's getChildren).
    Children(tree::ChildrenArgs),
    /// Print the active branch as a readable transcript.
    Show(context::ShowArgs),
    /// Serve pi's SessionManager methods as JSON lines on stdin/stdout.
    Rpc(rpc::Args),
    /// List sessions across projects (pi's SessionInfo).
    List(discover::ListArgs),
    /// Find sessions by id (pi's findById).
    Find(discover::FindArgs),
    /// Show the session continueRecent would open.
    Recent(discover::RecentArgs),
    /// Full-text search over every session.
    Search(search::SearchArgs),
    /// Bring the search index up to date.
    Index(search::IndexArgs),
    /// Token and cost totals.
    Stats(stats::StatsArgs),
    /// Keep the database in step with pi's sessions directory.
    Sync(sync::Args),
    /// Move a session to another project folder (its cwd, its file and its row).
    ///
    /// The header's cwd becomes DIR (as pi writes a header), the file moves into pi's folder
    /// for DIR under the sessions folder (`--<DIR with / as ->--/<timestamp>_<id>.jsonl`), and
    /// the database follows: `pi -c` and `/resume` in DIR, `list --cwd DIR`, search and stats
    /// find it there. SESSION is a session id, a unique id prefix (4+ characters) or its file's
    /// path. Refuses, changing nothing, when the new file exists and when a live process holds
    /// the session (`sessiondb-pi` writing it). A session already there is left as it is. A
    /// move killed midway is finished or undone by the next `move` or `sync`. A session kept in
    /// the database only moves in the database alone.
    Move(r#move::Args),
    /// Replicate the local database into a PostgreSQL server.
    Push(push::Args),
    /// Measure sessiondb on a pi sessions folder or a synthetic corpus.
    Bench(bench::Args),
    /// Check the database and its sessions for problems (exit 1 when some are found).
    Check(check::Args),
    /// Print the database and pi's folders as this binary finds them (nothing is opened).
    ///
    /// The database: --db, else $SESSIONDB_PATH, else ~/.pi/agent/sessiondb.sqlite; a
    /// `postgres://` or `postgresql://` URL (the scheme in any case) is a server. pi's agent
    /// dir: $PI_CODING_AGENT_DIR, else ~/.pi/agent; the sessions root, which holds a folder per
    /// project (pi's getSessionsDir): <agent dir>/sessions, where `move` puts files; the
    /// sessions dir `sync` reads by default: $PI_CODING_AGENT_SESSION_DIR, else the root.
    Paths(paths::Args),
    /// Serve every session, search and usage in the browser (read-only).
    #[cfg(feature = "serve")]
    Serve(crate::serve::Args),
}

/// Exit status: 0 success, 1 partial failure or problems found, 2 error.
pub fn run() -> i32 {
    let cli = Cli::parse();
    let db = match cli.db.clone().map_or_else(sessiondb::db::default_path, Ok) {
        Ok(p) => p,
        Err(e) => return output::fail(&e.into()),
    };
    let url = db.to_str().filter(|t| sessiondb::pg::is_url(t)).map(str::to_owned);
    let result = match (cli.command, url) {
        (Command::Bench(a), url) => bench::run(a, url.as_deref()),
        // Every other command runs the same code on either backend: each takes a `Db`, whose
        // store functions read and write the server (push refuses a server as its source).
        (command, _) => run_local(&db, command),
    };
    match result {
        Ok(code) => code,
        Err(e) if output::is_closed_pipe(&e) => 0,
        Err(e) => output::fail(&name_the_database(e, &db)),
    }
}

/// The commands on a database of either backend: a SQLite file or a PostgreSQL server.
fn run_local(db: &std::path::Path, command: Command) -> anyhow::Result<i32> {
    match command {
        Command::Import(a) => import::run(db, a),
        Command::Export(a) => export::run(db, a),
        Command::Context(a) => context::run_context(db, a),
        Command::Branch(a) => tree::run_branch(db, a),
        Command::Tree(a) => tree::run_tree(db, a),
        Command::Children(a) => tree::run_children(db, a),
        Command::Show(a) => context::run_show(db, a),
        Command::Rpc(a) => rpc::run(db, a),
        Command::List(a) => discover::run_list(db, a),
        Command::Find(a) => discover::run_find(db, a),
        Command::Recent(a) => discover::run_recent(db, a),
        Command::Search(a) => search::run_search(db, a),
        Command::Index(a) => search::run_index(db, a),
        Command::Stats(a) => stats::run(db, a),
        Command::Sync(a) => sync::run(db, a),
        Command::Move(a) => r#move::run(db, a),
        Command::Push(a) => push::run(db, a),
        Command::Bench(a) => bench::run(a, None),
        Command::Check(a) => check::run(db, a),
        Command::Paths(a) => paths::run(db, a),
        #[cfg(feature = "serve")]
        Command::Serve(a) => crate::serve::run(db, a),
    }
}

/// A database failure that does not say which database failed (a SQLite file's statements)
/// is about the database file: say which one.
fn name_the_database(e: anyhow::Error, db: &std::path::Path) -> anyhow::Error {
    let shown = db.display().to_string();
    let unnamed =
        e.chain().any(|c| c.downcast_ref::<sessiondb::Error>().is_some_and(sessiondb::Error::names_no_database));
    if !unnamed || e.to_string().contains(&shown) {
        return e;
    }
    e.context(shown)
}

/// Opens an existing database and finds the session a reference names.
fn open_session(
    db: &std::path::Path,
    reference: &str,
) -> anyhow::Result<(sessiondb::db::Db, sessiondb::resolve::SessionRef)> {
    let conn = sessiondb::db::open_existing(db)?;
    let s = sessiondb::resolve::resolve(&conn, reference)?;
    Ok((conn, s))
}

/// Tells the user a parent cycle cut a path (the rest of the output is still valid).
fn warn_cycle(repeated: Option<&str>) {
    if let Some(id) = repeated {
        eprintln!("sessiondb: warning: parent cycle: entry {id} is its own ancestor; the path stops before it (run `sessiondb check`)");
    }
}
