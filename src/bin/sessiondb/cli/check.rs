//! `sessiondb check`.

use super::output;
use sessiondb::check::{self, Finding, Report};
use std::io::Write;
use std::path::Path;

/// Check the database file (SQLite's integrity and foreign-key checks) and every session (or
/// one) for problems a session file can carry: orphan entries, self parents, parent cycles,
/// repeated ids, compactions keeping entries off their path, labels and context edits whose
/// target does not exist, headers without a cwd. Exit status 0 when clean, 1 when problems
/// were found, 2 on error.
#[derive(clap::Args)]
pub struct Args {
    /// Check only this session (id, unique id prefix of 4+ characters, or file path).
    #[arg(value_name = "SESSION")]
    session: Option<String>,
    /// Print the report as JSON: `{"integrityOk", "sessions", "entries", "problems": [...]}`.
    #[arg(long)]
    json: bool,
}

pub fn run(db: &Path, args: Args) -> anyhow::Result<i32> {
    let conn = sessiondb::db::open_existing(db)?;
    let report = match &args.session {
        Some(reference) => {
            let s = sessiondb::resolve::resolve(&conn, reference)?;
            check::check_session_and_database(&conn, s.sid)?
        }
        None => {
            let bar = output::progress_bar(0, "checking");
            let r = check::check_all(&conn, |_| bar.inc(1))?;
            bar.finish_and_clear();
            r
        }
    };
    if args.json {
        output::print_json(&report)?;
    } else {
        print_text(&report)?;
    }
    Ok(if report.is_clean() { 0 } else { 1 })
}

fn print_text(report: &Report) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for f in &report.problems {
        writeln!(out, "{}", finding_line(f))?;
    }
    let integrity = if report.integrity_ok { "database integrity ok" } else { "database integrity FAILED" };
    let problems = match report.problems.len() {
        0 => "no problems".to_string(),
        1 => "1 problem".to_string(),
        n => format!("{n} problems"),
    };
    let sessions = if report.sessions == 1 { "1 session".to_string() } else { format!("{} sessions", report.sessions) };
    writeln!(out, "checked {sessions}, {} lines: {integrity}; {problems}", report.entries)?;
    out.flush()
}

/// `<path> (session <id>): entry <id>, line <n>: <kind>: <message>`, control characters shown
/// escaped so that one finding is one line.
fn finding_line(f: &Finding) -> String {
    let mut s = String::new();
    match (&f.session_path, &f.session_id) {
        (Some(p), Some(id)) => s.push_str(&format!("{} (session {}): ", printable(p), printable(id))),
        (Some(p), None) => s.push_str(&format!("{}: ", printable(p))),
        _ => s.push_str("database: "),
    }
    match (&f.entry_id, f.line) {
        (Some(e), Some(l)) => s.push_str(&format!("entry {}, line {l}: ", printable(e))),
        (None, Some(l)) => s.push_str(&format!("line {l}: ")),
        (Some(e), None) => s.push_str(&format!("entry {}: ", printable(e))),
        (None, None) => {}
    }
    s.push_str(f.kind.code());
    s.push_str(": ");
    s.push_str(&printable(&f.message));
    s
}

/// Text with control characters escaped (ids and paths come from files).
fn printable(s: &str) -> String {
    if !s.chars().any(char::is_control) {
        return s.to_string();
    }
    s.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect()
}
