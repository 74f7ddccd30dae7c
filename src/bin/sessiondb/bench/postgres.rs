//! `sessiondb bench --db postgres://…`: the figures that compare the two backends, measured on
//! both in one sitting. The corpus is imported into a temporary SQLite database (timed, as
//! SQLite's import), pushed into the server under origin `''` (timed: the server's import,
//! binary `COPY`), then find by id, list of the busiest folder, projection of the largest
//! session and durable appends run against each.

use super::corpus;
use super::timing::sig;
use super::{api_figures, figures, BenchOptions};
use sessiondb::db::Db;
use sessiondb::{Error, Result};
use std::path::Path;

/// One backend's figures.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct BackendFigures {
    /// Import of the corpus, MiB/s (SQLite: `import`; PostgreSQL: `push` of that import).
    pub import_mib_per_s: Option<f64>,
    /// Find by id, µs per lookup (50 sessions).
    pub find_by_id_us: Option<f64>,
    /// List with full SessionInfo of the busiest folder, ms.
    pub list_busiest_ms: Option<f64>,
    /// Projection at the last entry of the largest session (connection open), ms.
    pub projection_largest_ms: Option<f64>,
    /// Durable appends of a 1 KiB message: p50 and p99 µs, and per second.
    pub append_us_p50: Option<f64>,
    pub append_us_p99: Option<f64>,
    pub appends_per_s: Option<f64>,
}

/// Both backends' figures.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct PgReport {
    pub corpus: String,
    pub corpus_mib: f64,
    pub sessions: u64,
    pub busiest_folder_sessions: u64,
    pub largest_session_entries: u64,
    pub appends: usize,
    pub sqlite: BackendFigures,
    pub postgres: BackendFigures,
}

const MIB: f64 = 1024.0 * 1024.0;

fn round(v: f64) -> Option<f64> {
    v.is_finite().then(|| sig(v, 4))
}

/// Runs the comparison against the (empty) database `url`.
pub fn run(opts: &BenchOptions, url: &str, appends: usize, log: &mut dyn FnMut(&str)) -> Result<PgReport> {
    let work = tempfile::Builder::new()
        .prefix("sessiondb-bench-pg-")
        .tempdir()
        .map_err(|e| Error::io(std::env::temp_dir(), e))?;
    let work = work.path();
    let pg_path = Path::new(url);
    let pg = sessiondb::db::open(pg_path)?;
    if pg.store().session_count()? > 0 {
        return Err(Error::InvalidArgument(format!(
            "{}: the benchmark needs a database without sessions of its own (origin '')",
            sessiondb::pg::shown(url)
        )));
    }
    log("scanning the corpus");
    let corpus = corpus::prepare(&opts.source, opts.keep_corpus.as_deref(), work)?;
    corpus.warm_page_cache()?;
    let mut r = PgReport {
        corpus: corpus.description.clone(),
        corpus_mib: sig(corpus.bytes as f64 / MIB, 4),
        busiest_folder_sessions: corpus.busiest_cwd_sessions as u64,
        appends,
        ..PgReport::default()
    };

    log("import into SQLite");
    let imp = figures::import_corpus(&corpus, opts.heavy_runs, work)?;
    r.sessions = imp.summary.sessions;
    r.sqlite.import_mib_per_s = round(corpus.bytes as f64 / MIB / (imp.timing.median() / 1000.0));
    let local = sessiondb::db::open(&imp.db)?;

    log("push into PostgreSQL (binary COPY)");
    let server = sessiondb::db::open(url)?;
    let push = sessiondb::pg::PushOptions::new("");
    let started = std::time::Instant::now();
    sessiondb::pg::push(&local, &server, &push, |_, _| {})?;
    r.postgres.import_mib_per_s = round(corpus.bytes as f64 / MIB / started.elapsed().as_secs_f64());
    drop(server);

    let all = sessiondb::discovery::list_everything(&local)?;
    let ids = super::find_sample(&all);
    let largest = corpus
        .largest
        .as_ref()
        .map(|(p, _)| std::path::absolute(p).map_err(|e| Error::io(p, e)))
        .transpose()?
        .map(|p| p.to_string_lossy().into_owned());
    for (name, db, at, f) in
        [("SQLite", &local, imp.db.as_path(), &mut r.sqlite), ("PostgreSQL", &pg, pg_path, &mut r.postgres)]
    {
        log(&format!("{name}: find by id, list of the busiest folder, projection of the largest session"));
        figures_on(db, &ids, corpus.busiest_dir.as_deref(), largest.as_deref(), opts.runs, f)?;
        log(&format!("{name}: {appends} durable appends of a 1 KiB message"));
        let (samples, secs) = api_figures::appends(at, appends, &work.join(format!("appends-{name}")))?;
        f.append_us_p50 = round(api_figures::quantile(&samples, 0.5));
        f.append_us_p99 = round(api_figures::quantile(&samples, 0.99));
        f.appends_per_s = round(samples.len() as f64 / secs);
    }
    if let Some(path) = &largest {
        let sid = local.store().sid_by_path(path)?;
        r.largest_session_entries = match sid {
            Some(s) => local.store().load_stats(s)?.stats.entry_count as u64,
            None => 0,
        };
    }
    Ok(r)
}

fn figures_on(
    db: &Db,
    ids: &[(String, String)],
    busiest: Option<&Path>,
    largest: Option<&str>,
    runs: u32,
    f: &mut BackendFigures,
) -> Result<()> {
    let t = api_figures::find_by_id(db, ids, runs)?;
    f.find_by_id_us = round(t.median() * 1000.0 / ids.len().max(1) as f64);
    if let Some(dir) = busiest {
        f.list_busiest_ms = round(api_figures::list(db, Some(&dir.to_string_lossy()), runs)?.0.median());
    }
    if let Some(path) = largest {
        if let Some(sid) = db.store().sid_by_path(path)? {
            f.projection_largest_ms = round(figures::context_projection(db, sid, runs)?.median());
        }
    }
    Ok(())
}

impl PgReport {
    /// The figures side by side.
    pub fn table(&self) -> String {
        let v = |x: Option<f64>| x.map_or("-".to_string(), |x| x.to_string());
        let rows = [
            ("import MiB/s", self.sqlite.import_mib_per_s, self.postgres.import_mib_per_s),
            ("find by id µs", self.sqlite.find_by_id_us, self.postgres.find_by_id_us),
            ("list busiest folder ms", self.sqlite.list_busiest_ms, self.postgres.list_busiest_ms),
            ("projection of the largest ms", self.sqlite.projection_largest_ms, self.postgres.projection_largest_ms),
            ("append p50 µs", self.sqlite.append_us_p50, self.postgres.append_us_p50),
            ("append p99 µs", self.sqlite.append_us_p99, self.postgres.append_us_p99),
            ("appends/s", self.sqlite.appends_per_s, self.postgres.appends_per_s),
        ];
        let mut out = format!(
            "corpus: {} ({} MiB, {} sessions; busiest folder {} sessions; largest session {} entries)\n\n",
            self.corpus, self.corpus_mib, self.sessions, self.busiest_folder_sessions, self.largest_session_entries
        );
        out.push_str(&format!("{:<32} {:>12} {:>12}\n", "", "SQLite", "PostgreSQL"));
        for (name, a, b) in rows {
            out.push_str(&format!("{name:<32} {:>12} {:>12}\n", v(a), v(b)));
        }
        out
    }
}
