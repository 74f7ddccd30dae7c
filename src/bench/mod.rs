//! `sessiondb bench`: measures sessiondb in-process, through the library, on an existing pi
//! sessions folder or a deterministic synthetic corpus, with the figure names of bench-pi
//! (`../shared/bench-pi/`) so the results sit next to pi's own stores.

pub mod corpus;
pub mod figures;
pub mod pending;
pub mod report;
pub mod rows;
pub mod synth;
pub mod system;
pub mod timing;

pub use corpus::Source;
pub use report::Report;

use crate::db;
use crate::error::{Error, Result};
use crate::import::{self, ImportOptions};
use std::path::{Path, PathBuf};
use synth::SynthOptions;
use system::{max_peak, CpuSnapshot};
use timing::sig;

const MIB: f64 = 1024.0 * 1024.0;

/// What to measure and how often.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// The corpus.
    pub source: Source,
    /// Minimum timed runs of fast figures (they repeat up to 50 runs / 300 ms).
    pub runs: u32,
    /// Timed runs of passes over the whole corpus (import, export).
    pub heavy_runs: u32,
    /// Write a synthetic corpus here and keep it (default: a temporary directory).
    pub keep_corpus: Option<PathBuf>,
}

fn round(x: f64) -> Option<f64> {
    Some(sig(x, 4))
}

fn file_mib(path: &Path) -> f64 {
    let len = |p: PathBuf| std::fs::metadata(p).map_or(0, |m| m.len());
    let wal = PathBuf::from(format!("{}-wal", path.display()));
    (len(path.to_path_buf()) + len(wal)) as f64 / MIB
}

/// Runs the benchmark; `log` hears about each phase as it starts.
pub fn run(opts: &BenchOptions, log: &mut dyn FnMut(&str)) -> Result<Report> {
    let work = tempfile::Builder::new()
        .prefix("sessiondb-bench-")
        .tempdir()
        .map_err(|e| Error::io(std::env::temp_dir(), e))?;
    let work = work.path();
    log(match opts.source {
        Source::Dir(_) => "scanning the corpus",
        Source::Synthetic(_) => "generating the synthetic corpus",
    });
    let corpus = corpus::prepare(&opts.source, opts.keep_corpus.as_deref(), work)?;
    let mut r = Report {
        corpus: corpus.description.clone(),
        corpus_mib: sig(corpus.bytes as f64 / MIB, 4),
        cwds: corpus.cwds as u64,
        busiest_cwd_sessions: corpus.busiest_cwd_sessions as u64,
        largest_session_mib: corpus.largest.as_ref().map_or(0.0, |(_, b)| sig(*b as f64 / MIB, 4)),
        generation_seconds: corpus.generation_seconds.and_then(round),
        runs: opts.runs,
        heavy_runs: opts.heavy_runs,
        ..Report::default()
    };
    corpus.warm_page_cache()?;
    let cpu = CpuSnapshot::take();
    r.peak_rss_per_phase = system::reset_peak_rss();

    log("import");
    let imp = import_phase(&corpus, opts.heavy_runs, work, &mut r)?;
    let mut peak = imp.peak_rss_mib;
    let mut conn = db::open(&imp.db)?;
    // A session as long as the largest but without compactions, when the largest has one.
    let mut twin = None;
    if let Some((path, _)) = &corpus.largest {
        twin = largest_phase(path, &imp, &mut conn, opts.runs, &mut r, log)?;
        peak = max_peak(peak, system::peak_rss_mib());
    }

    log("export --all");
    system::reset_peak_rss();
    let (t, bytes) = figures::export_all(&conn, opts.heavy_runs, work)?;
    r.export_mib_per_s = round(bytes as f64 / MIB / (t.median() / 1000.0));
    peak = max_peak(peak, system::peak_rss_mib());

    // ---- PENDING FIGURES ---------------------------------------------------------------
    // b_find_by_id_us, c_continue_recent_ms, d_list_cwd_ms, d_list_all_ms, e_append_us_p50,
    // e_append_us_p99, e_appends_per_s, g_fork_largest_ms, h_branched_session_mid_ms and
    // search_ms stay `null` until their APIs exist (see `pending.rs` for what each times).
    // Measure them here, on `conn` / `imp.db`, and track `peak` like the figures above.
    // -------------------------------------------------------------------------------------

    r.peak_rss_mib = peak.and_then(round);
    // Last, so that its memory stays out of the other phases' peaks.
    if let Some(entries) = twin {
        let seed = match &opts.source {
            Source::Synthetic(o) => o.seed,
            Source::Dir(_) => 1,
        };
        log("context of a session as long, without compactions (generated, imported untimed)");
        full_path_twin(&mut r, entries, seed, opts.runs, work)?;
    }
    r.other_cpu_share = cpu.other_cpu_share().map(|s| sig(s, 3));
    Ok(r)
}

/// Imports the corpus into fresh databases and fills the import figures.
fn import_phase(corpus: &corpus::Corpus, runs: u32, work: &Path, r: &mut Report) -> Result<figures::ImportFigures> {
    let imp = figures::import_corpus(corpus, runs, work)?;
    let secs = imp.timing.median() / 1000.0;
    r.sessions = imp.summary.sessions;
    r.entries = imp.summary.entries;
    r.import_seconds = round(secs);
    r.import_mib_per_s = round(corpus.bytes as f64 / MIB / secs);
    r.import_entries_per_s = round(imp.summary.entries as f64 / secs);
    r.import_peak_rss_mib = imp.peak_rss_mib.and_then(round);
    r.import_skipped_lines = imp.summary.skipped_lines;
    r.import_failures = imp.summary.failures;
    r.db_mib = round(file_mib(&imp.db));
    Ok(imp)
}

/// (a) and the context figures on the largest session (the file at `path`). Returns the
/// entry count of a no-compaction twin to measure when the largest session is compacted.
fn largest_phase(
    path: &Path,
    imp: &figures::ImportFigures,
    conn: &mut rusqlite::Connection,
    runs: u32,
    r: &mut Report,
    log: &mut dyn FnMut(&str),
) -> Result<Option<usize>> {
    let abs = std::path::absolute(path).map_err(|e| Error::io(path, e))?;
    let file = imp.summary.reports.iter().find(|f| f.path == abs);
    r.largest_session_entries = file.map_or(0, |f| f.entries);
    let session = figures::find_session(conn, file.and_then(|f| f.session_id.as_deref()), &abs)?;
    // Resolve by id as a user would, unless another session shares it.
    let unique = crate::resolve::resolve(conn, &session.id).is_ok_and(|s| s.sid == session.sid);
    let reference = if unique { session.id.clone() } else { session.path.clone() };

    log("(a) open + projection of the largest session");
    system::reset_peak_rss();
    let (t, messages) = figures::open_projection(&imp.db, &reference, runs)?;
    let shape = figures::projection_shape(conn, session.sid)?;
    r.a_open_projection_largest_ms = round(t.median());
    r.a_open_only_ms = round(figures::open_only(&imp.db, runs)?.median());
    r.a_projection_rows_read = Some(shape.rows_read);
    r.a_projection_path_length = shape.path_length.map(|d| d as u64);
    r.a_projection_messages = Some(messages as u64);

    log("context of the largest session (database already open)");
    let ms = round(figures::context_projection(conn, session.sid, runs)?.median());
    if shape.compacted {
        r.context_compacted_ms = ms;
        r.context_compacted_rows_read = Some(shape.rows_read);
        r.context_compacted_path_length = r.a_projection_path_length;
        Ok(Some(r.largest_session_entries as usize))
    } else {
        r.context_full_path_ms = ms;
        r.context_full_path_rows_read = Some(shape.rows_read);
        r.context_full_path_length = r.a_projection_path_length;
        r.context_full_path_session = Some("the largest session".into());
        Ok(None)
    }
}

/// Measures the projection of a session as long as the largest but without compactions: a
/// synthetic one, generated and imported into its own database (untimed).
fn full_path_twin(r: &mut Report, entries: usize, seed: u64, runs: u32, work: &Path) -> Result<()> {
    let opts = SynthOptions { huge: entries, seed, compactions: false, ..SynthOptions::default() };
    let dir = work.join("twin");
    let twin = synth::generate(&dir, &opts)?;
    let db_path = work.join("twin.sqlite");
    let mut conn = db::open(&db_path)?;
    let targets = import::collect_targets(std::slice::from_ref(&twin.sessions_dir))?;
    let summary = import::import_targets(&mut conn, &targets, ImportOptions::default(), |_| {});
    let file = summary.reports.first().filter(|f| f.status != import::FileStatus::Failed);
    let Some(file) = file else {
        return Err(Error::InvalidArgument("the synthetic no-compaction session did not import".into()));
    };
    let session = figures::find_session(&conn, file.session_id.as_deref(), &file.path)?;
    system::reset_peak_rss();
    r.context_full_path_ms = round(figures::context_projection(&conn, session.sid, runs)?.median());
    r.context_full_path_peak_rss_mib = system::peak_rss_mib().and_then(round);
    let shape = figures::projection_shape(&mut conn, session.sid)?;
    r.context_full_path_rows_read = Some(shape.rows_read);
    r.context_full_path_length = shape.path_length.map(|d| d as u64);
    r.context_full_path_session = Some(format!("synthetic, {entries} entries, no compactions"));
    drop(conn);
    let _ = std::fs::remove_dir_all(dir);
    Ok(())
}
