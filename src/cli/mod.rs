//! Command-line interface: argument parsing and output only; the library does the work.

mod bench;
mod export;
mod import;
mod output;

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
    /// Write a session (or all of them) back as pi JSONL.
    Export(export::Args),
    /// Measure sessiondb on a pi sessions folder or a synthetic corpus.
    Bench(bench::Args),
}

/// Exit status: 0 success, 1 partial failure or problems found, 2 error.
pub fn run() -> i32 {
    let cli = Cli::parse();
    let db = match cli.db.clone().map_or_else(sessiondb::db::default_path, Ok) {
        Ok(p) => p,
        Err(e) => return output::fail(&e.into()),
    };
    let result = match cli.command {
        Command::Import(a) => import::run(&db, a),
        Command::Export(a) => export::run(&db, a),
        Command::Bench(a) => bench::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => output::fail(&e),
    }
}
