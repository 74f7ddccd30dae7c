//! Shared printing helpers.

use std::io::{IsTerminal, Write};

/// `println!` that returns the write error instead of panicking (output to a closed pipe
/// ends the command quietly, see [`is_closed_pipe`]).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
    }};
}
pub(crate) use outln;

/// Whether the error is a write to a closed pipe (`sessiondb show X | head -1`): the reader
/// has all it wanted, so the command ends quietly with status 0, as `ls | head` does.
pub fn is_closed_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || c.downcast_ref::<serde_json::Error>()
                .is_some_and(|j| j.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe))
            || matches!(c.downcast_ref::<sessiondb::Error>(),
                Some(sessiondb::Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Runs `write` on buffered stdout and flushes it; a reader that closed the pipe ends it
/// quietly (the export of one session to stdout, from SQLite or from a server).
pub fn to_stdout<T>(
    write: impl FnOnce(&mut std::io::BufWriter<std::io::StdoutLock<'static>>) -> sessiondb::Result<T>,
) -> anyhow::Result<()> {
    let mut w = std::io::BufWriter::new(std::io::stdout().lock());
    match write(&mut w) {
        Err(sessiondb::Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
        r => {
            r?;
        }
    }
    match w.flush() {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

/// Prints an error (with its causes) on one line to stderr; returns exit status 2.
pub fn fail(e: &anyhow::Error) -> i32 {
    let mut msg = format!("sessiondb: error: {e}");
    // Beneath a database failure its driver's error is shown where it adds to the message;
    // what the driver's error wraps in turn (SQLite's bare result code) only repeats it.
    let mut driver_at = None;
    for (i, cause) in e.chain().enumerate() {
        if driver_at.is_some_and(|d| i > d) {
            continue;
        }
        if cause.downcast_ref::<sessiondb::Error>().and_then(sessiondb::Error::driver_error).is_some() {
            driver_at = Some(i + 1);
        }
        if i == 0 {
            continue;
        }
        let c = cause.to_string();
        if !msg.contains(&c) {
            msg.push_str(": ");
            msg.push_str(&c);
        }
    }
    eprintln!("{msg}");
    2
}

/// `--json` comes in two forms. What pi itself returns (entries, SessionInfo, projections) is
/// printed as pi's `JSON.stringify` would print it, on one line, with [`print_pi_json`];
/// sessiondb's own reports (import summaries, search hits, statistics) are printed pretty with
/// [`print_json`].
pub fn print_pi_json(value: &sessiondb::json::Value) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", value.to_json())?;
    out.flush()?;
    Ok(())
}

/// Prints a value as pretty JSON on stdout (see [`print_pi_json`]).
pub fn print_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

/// A progress bar on stderr when it is a terminal, hidden otherwise.
pub fn progress_bar(len: u64, what: &str) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() || len < 2 {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len);
    let style = indicatif::ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {wide_msg}")
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> ");
    bar.set_style(style);
    bar.set_prefix(what.to_string());
    bar
}

/// Progress of long work: a bar on a terminal stderr (from `bar_from` items on), and with
/// `--progress-json` one JSON line on stderr per step, `{"progress":PHASE,"done":N,"total":M}`
/// (at most ten a second, and always the last), for programs that run sessiondb and show
/// their own progress (the pi package says "importing 3,120 of 9,800 files").
pub struct Progress {
    /// Made once there are more than `bar_from` items (a short sync shows none).
    bar: Option<indicatif::ProgressBar>,
    bar_from: u64,
    phase: &'static str,
    json: bool,
    printed: Option<std::time::Instant>,
}

impl Progress {
    pub fn new(phase: &'static str, json: bool, bar_from: u64) -> Self {
        Progress { bar: None, bar_from, phase, json, printed: None }
    }

    /// `done` of `total` items are through.
    pub fn update(&mut self, done: u64, total: u64) {
        if total > self.bar_from {
            self.bar.get_or_insert_with(|| progress_bar(total, self.phase)).set_position(done);
        }
        if !self.json {
            return;
        }
        let due = self.printed.is_none_or(|t| t.elapsed() >= std::time::Duration::from_millis(100));
        if due || done >= total {
            self.printed = Some(std::time::Instant::now());
            let line = serde_json::json!({"progress": self.phase, "done": done, "total": total});
            let mut err = std::io::stderr().lock();
            let _ = writeln!(err, "{line}");
            let _ = err.flush();
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
