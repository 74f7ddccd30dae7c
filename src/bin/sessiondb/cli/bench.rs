//! `sessiondb bench`.

use super::output;
use crate::bench::{self, synth::SynthOptions, BenchOptions, Source};
use std::path::PathBuf;

/// Measure sessiondb in-process on a pi sessions folder or a synthetic corpus: import into a
/// fresh temporary database, then open + projection of the largest session, context with and
/// without a compaction, export --all, peak memory. Figures are medians after a warm-up, with
/// bench-pi's names. The global --db is not used (the benchmark never touches your database),
/// except a PostgreSQL URL: then the figures that compare the backends are measured on both,
/// the corpus pushed into that (empty) database.
#[derive(clap::Args)]
pub struct Args {
    /// Measure an existing corpus: a pi agent dir holding sessions/ (e.g. ~/.pi/agent) or a
    /// sessions folder. It is only read.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["sessions", "huge", "no_compaction", "keep_corpus"])]
    corpus: Option<PathBuf>,
    /// Generate N synthetic sessions (default when no corpus is given: 1000).
    #[arg(long, value_name = "N", conflicts_with = "huge")]
    sessions: Option<usize>,
    /// Mean entries per synthetic session; each gets M x U(0.5, 1.5), at least 8.
    #[arg(long, value_name = "M", default_value_t = 50, conflicts_with = "huge")]
    entries: usize,
    /// Generate one synthetic session with exactly ENTRIES entries instead.
    #[arg(long, value_name = "ENTRIES")]
    huge: Option<usize>,
    /// Generate the synthetic corpus without compactions.
    #[arg(long)]
    no_compaction: bool,
    /// Seed of the synthetic corpus (the same seed gives the same bytes).
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
    /// Write the synthetic corpus to DIR and keep it (DIR/sessions must not exist yet).
    #[arg(long, value_name = "DIR")]
    keep_corpus: Option<PathBuf>,
    /// Minimum timed runs of each fast figure (they repeat up to 50 runs or 300 ms).
    #[arg(long, value_name = "K", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
    /// Timed runs of the passes over the whole corpus (import, export).
    #[arg(long, value_name = "K", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    heavy_runs: u32,
    /// Durable appends timed on each backend with --db postgres://….
    #[arg(long, value_name = "N", default_value_t = 2000)]
    appends: usize,
    /// Print the figures as one JSON object.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args, postgres: Option<&str>) -> anyhow::Result<i32> {
    let source = match args.corpus {
        Some(dir) => Source::Dir(dir),
        None => Source::Synthetic(SynthOptions {
            sessions: if args.huge.is_some() { 0 } else { args.sessions.unwrap_or(1000) },
            entries: args.entries,
            huge: args.huge.unwrap_or(0),
            seed: args.seed,
            compactions: !args.no_compaction,
            ..SynthOptions::default()
        }),
    };
    let opts = BenchOptions { source, runs: args.runs, heavy_runs: args.heavy_runs, keep_corpus: args.keep_corpus };
    let started = std::time::Instant::now();
    let mut log = |phase: &str| eprintln!("[{:>6.1} s] {phase}", started.elapsed().as_secs_f64());
    if let Some(url) = postgres {
        let report = bench::postgres::run(&opts, url, args.appends, &mut log)?;
        print_report(args.json, &report, &report.table())?;
        return Ok(0);
    }
    let report = bench::run(&opts, &mut log)?;
    print_report(args.json, &report, &report.table())?;
    Ok(if report.import_failures > 0 || report.import_skipped_lines > 0 { 1 } else { 0 })
}

/// A report as JSON, or as its table.
fn print_report(json: bool, report: &impl serde::Serialize, table: &str) -> anyhow::Result<()> {
    if json {
        output::print_json(report)?;
    } else {
        std::io::Write::write_all(&mut std::io::stdout().lock(), table.as_bytes())?;
    }
    Ok(())
}
