//! `sessiondb bench`: measures sessiondb in-process, through the library, on an existing pi
//! sessions folder or a deterministic synthetic corpus, with the figure names of bench-pi
//! (`../shared/bench-pi/`) so the results sit next to pi's own stores.

pub mod api_figures;
pub mod corpus;
pub mod figures;
pub mod pending;
pub mod postgres;
pub mod report;
pub mod synth;
pub mod system;
pub mod timing;

#[cfg(test)]
mod synth_tests;

pub use corpus::Source;
pub use report::Report;

use sessiondb::db;
use sessiondb::import::{self, ImportOptions};
use sessiondb::{Error, Result};
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

/// Logs the peak RSS of the phase that just ended and returns the highest so far.
fn phase_peak(peak: Option<f64>, log: &mut dyn FnMut(&str)) -> Option<f64> {
    let now = system::peak_rss_mib();
    if let Some(mib) = now {
        log(&format!("  peak RSS of the phase: {mib:.0} MiB"));
    }
    max_peak(peak, now)
}

/// Runs the benchmark; `log` hears about each phase as it starts, and its peak RSS.
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
    log("disk: 64 MiB written and synced");
    r.disk_write_mib_per_s = system::disk_write_mib_per_s(work).ok().and_then(round);
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
        peak = phase_peak(peak, log);
    }

    log("export --all");
    system::reset_peak_rss();
    let (t, bytes) = figures::export_all(&conn, opts.heavy_runs, work)?;
    r.export_mib_per_s = round(bytes as f64 / MIB / (t.median() / 1000.0));
    peak = phase_peak(peak, log);

    log("(b)-(d): find by id, continue recent, list");
    system::reset_peak_rss();
    api_phase(&corpus, &imp.db, &conn, opts.runs, &mut r)?;
    peak = phase_peak(peak, log);

    if let Some((path, _)) = &corpus.largest {
        let source = std::path::absolute(path).map_err(|e| Error::io(path, e))?.to_string_lossy().into_owned();
        log("(g) forkFrom and (h) createBranchedSession of the largest session");
        system::reset_peak_rss();
        let scratch = work.join("forks");
        r.g_fork_largest_ms = round(api_figures::fork(&imp.db, &source, &scratch, opts.runs)?.median());
        r.h_branched_session_mid_ms = round(api_figures::branched_mid(&imp.db, &source, opts.runs)?.median());
        peak = phase_peak(peak, log);
    }

    log("(e) 10,000 durable appends of a 1 KiB message");
    system::reset_peak_rss();
    let (samples, secs) = api_figures::appends(&imp.db, 10_000, &work.join("appends"))?;
    r.e_append_us_p50 = round(api_figures::quantile(&samples, 0.5));
    r.e_append_us_p99 = round(api_figures::quantile(&samples, 0.99));
    r.e_appends_per_s = round(samples.len() as f64 / secs);
    peak = phase_peak(peak, log);

    log("search: building the index, then a rare word");
    let (secs, texts, index_peak) = api_figures::build_search_index(&mut conn)?;
    r.search_index_seconds = round(secs);
    r.search_index_texts = Some(texts as u64);
    r.search_index_peak_rss_mib = index_peak.and_then(round);
    if let Some((word, hits)) = api_figures::rare_word(&conn)? {
        let (t, _) = api_figures::search_word(&conn, &word, opts.runs)?;
        r.search_ms = round(t.median());
        r.search_word = Some(word);
        r.search_word_texts = Some(hits.unsigned_abs());
    }
    // A term in every session and in each of (e)'s appended messages.
    let (t, _) = api_figures::search_word(&conn, "session-manager.ts", opts.runs)?;
    r.search_common_ms = round(t.median());
    let (t, _) = api_figures::search_word(&conn, "original file", opts.runs)?;
    r.search_two_words_ms = round(t.median());
    let (t, _) = api_figures::search_word(&conn, "日本語", opts.runs)?;
    r.search_cjk_ms = round(t.median());
    let (t, _) = api_figures::search_sessions(&conn, "session-manager.ts", opts.runs)?;
    r.search_sessions_ms = round(t.median());

    log("sync: first sync, no-change re-sync, one appended line");
    system::reset_peak_rss();
    if let Some(mib) = system::rss_mib() {
        // What the phases before left resident counts in this phase's peak.
        log(&format!("  resident at the phase's start: {mib:.0} MiB"));
    }
    let sf = api_figures::sync_figures(&corpus, work)?;
    r.sync_first_mib_per_s = round(corpus.bytes as f64 / MIB / sf.first_s);
    r.sync_no_change_ms = round(sf.resync_ms);
    r.sync_one_line_rescan_ms = round(sf.one_line_rescan_ms);
    r.sync_one_line_watch_ms = round(sf.one_line_watch_ms);
    peak = phase_peak(peak, log);

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

/// The sessions find-by-id looks up: 50 spread over the list (id, folder).
pub(crate) fn find_sample(all: &[sessiondb::discovery::SessionInfo]) -> Vec<(String, String)> {
    let step = (all.len() / 50).max(1);
    all.iter()
        .step_by(step)
        .take(50)
        .map(|i| {
            (i.id.clone(), Path::new(&i.path).parent().map(|p| p.to_string_lossy().into_owned()).unwrap_or_default())
        })
        .collect()
}

/// (b) find-by-id over 50 random sessions, (c) continue-recent and (d) list for the busiest
/// folder, (d) list of everything.
fn api_phase(corpus: &corpus::Corpus, db: &Path, conn: &sessiondb::db::Db, runs: u32, r: &mut Report) -> Result<()> {
    let all = sessiondb::discovery::list_everything(conn)?;
    let ids = find_sample(&all);
    let t = api_figures::find_by_id(conn, &ids, runs)?;
    r.b_find_by_id_us = round(t.median() * 1000.0 / ids.len().max(1) as f64);
    if let Some(dir) = &corpus.busiest_dir {
        let dir = dir.to_string_lossy().into_owned();
        let cwd = all.iter().find(|i| i.path.starts_with(&dir)).map(|i| i.cwd.clone()).unwrap_or_default();
        r.c_continue_recent_ms = round(api_figures::continue_recent(db, &cwd, &dir, runs)?.median());
        r.d_list_cwd_ms = round(api_figures::list(conn, Some(&dir), runs)?.0.median());
    }
    r.d_list_all_ms = round(api_figures::list(conn, None, runs)?.0.median());
    Ok(())
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
    conn: &mut sessiondb::db::Db,
    runs: u32,
    r: &mut Report,
    log: &mut dyn FnMut(&str),
) -> Result<Option<usize>> {
    let abs = std::path::absolute(path).map_err(|e| Error::io(path, e))?;
    let file = imp.summary.reports.iter().find(|f| f.path == abs);
    r.largest_session_entries = file.map_or(0, |f| f.entries);
    let session = figures::find_session(conn, file.and_then(|f| f.session_id.as_deref()), &abs)?;
    // Resolve by id as a user would, unless another session shares it.
    let unique = sessiondb::resolve::resolve(conn, &session.id).is_ok_and(|s| s.sid == session.sid);
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
    let summary = import::import_targets(&mut conn, &targets, ImportOptions::default(), |_| {})?;
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
