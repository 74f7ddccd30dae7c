//! The measured figures, each a function over a database or a corpus. Every read figure opens
//! what it reads anew (a new connection or a new `SessionTree`); files stay in the page cache,
//! so all figures are warm-cache figures, as bench-pi's.

use super::corpus::Corpus;
use super::system;
use super::timing::{measure, measure_with, RunPlan, Timing};
use sessiondb::db::{self, Db};
use sessiondb::export;
use sessiondb::import::{self, ImportOptions, ImportSummary};
use sessiondb::json::Value;
use sessiondb::resolve::{self, SessionRef};
use sessiondb::tree::{Leaf, SessionTree};
use sessiondb::{Error, Result, SessionKey};
use std::path::{Path, PathBuf};

/// Import of a whole corpus into fresh databases.
#[derive(Debug)]
pub struct ImportFigures {
    /// One run per fresh database.
    pub timing: Timing,
    /// What the last run imported.
    pub summary: ImportSummary,
    /// Highest peak RSS of a run (MiB).
    pub peak_rss_mib: Option<f64>,
    /// The last run's database (kept for the read figures).
    pub db: PathBuf,
}

fn remove_db(path: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let _ = std::fs::remove_file(db::beside(path, suffix));
    }
}

/// Imports the corpus `runs` times, each into a new database under `work` (open, import, close).
pub fn import_corpus(corpus: &Corpus, runs: u32, work: &Path) -> Result<ImportFigures> {
    let mut peak: Option<f64> = None;
    let mut summary = None;
    let db_at = |i: u32| work.join(format!("import-{i}.sqlite"));
    let (timing, db) = measure_with(
        RunPlan::heavy(runs),
        |i| {
            if i > 0 {
                remove_db(&db_at(i - 1));
            }
            system::reset_peak_rss();
            Ok(db_at(i))
        },
        |path| {
            let mut conn = db::open(&path)?;
            let s = import::import_targets(&mut conn, &corpus.targets, ImportOptions::default(), |_| {})?;
            conn.close()?;
            peak = system::max_peak(peak, system::peak_rss_mib());
            summary = Some(s);
            Ok(path)
        },
    )?;
    let summary = summary.ok_or_else(|| Error::InvalidArgument("import did not run".into()))?;
    Ok(ImportFigures { timing, summary, peak_rss_mib: peak, db })
}

/// The number of messages in a projection.
fn message_count(projection: &Value) -> usize {
    match projection.as_object().and_then(|o| o.get("messages")) {
        Some(Value::Array(m)) => m.len(),
        _ => 0,
    }
}

/// Finds a session by id, falling back to its file path when the id is ambiguous.
pub fn find_session(conn: &Db, id: Option<&str>, path: &Path) -> Result<SessionRef> {
    if let Some(id) = id {
        if let Ok(s) = resolve::resolve(conn, id) {
            return Ok(s);
        }
    }
    resolve::resolve(conn, &path.to_string_lossy())
}

/// (a) take a connection (from the process's pool, as a `SessionManager` does; a cold open
/// is [`open_only`]) + resolve the session by `reference` + its projection at the last
/// entry. Returns the timing and the number of messages.
pub fn open_projection(db_path: &Path, reference: &str, runs: u32) -> Result<(Timing, usize)> {
    measure(RunPlan::fast(runs), |_| {
        let conn = sessiondb::internals::open_pooled(db_path)?;
        let s = resolve::resolve(&conn, reference)?;
        let (projection, _) = SessionTree::open(&conn, s.sid)?.projection(&Leaf::Last)?;
        Ok(message_count(&projection))
    })
}

/// Opening the database alone (connection, pragmas, schema check) and closing it: the part
/// of (a) that does not depend on the session.
pub fn open_only(db_path: &Path, runs: u32) -> Result<Timing> {
    let (timing, _) = measure(RunPlan::fast(runs), |_| db::open(db_path).map(drop))?;
    Ok(timing)
}

/// What a projection at the last entry reads.
#[derive(Debug, Clone, Copy)]
pub struct ProjectionShape {
    /// Entry rows the queries returned.
    pub rows_read: u64,
    /// Entries on the root→leaf path.
    pub path_length: Option<i64>,
    /// Whether a compaction is on that path.
    pub compacted: bool,
}

/// Counts the rows one projection at the last entry of `sid` reads (untimed: tracing is slow).
pub fn projection_shape(conn: &mut Db, sid: SessionKey) -> Result<ProjectionShape> {
    let leaf = SessionTree::open(conn, sid)?.leaf_row(&Leaf::Last)?;
    let (_, rows_read) = conn.count_entry_rows(|c| SessionTree::open(c, sid)?.projection(&Leaf::Last))?;
    Ok(ProjectionShape {
        rows_read,
        path_length: leaf.as_ref().and_then(|r| r.depth).map(|d| d + 1),
        compacted: leaf.is_some_and(|r| r.compaction_key.is_some()),
    })
}

/// The projection at the last entry of `sid` on an open connection (no database open).
pub fn context_projection(conn: &Db, sid: SessionKey, runs: u32) -> Result<Timing> {
    let (timing, _) = measure(RunPlan::fast(runs), |_| {
        let (projection, _) = SessionTree::open(conn, sid)?.projection(&Leaf::Last)?;
        Ok(message_count(&projection))
    })?;
    Ok(timing)
}

/// `export --all` into a fresh directory under `work`, `runs` times; returns the bytes written.
pub fn export_all(conn: &Db, runs: u32, work: &Path) -> Result<(Timing, u64)> {
    let dir_at = |i: u32| work.join(format!("export-{i}"));
    let result = measure_with(
        RunPlan::heavy(runs),
        |i| {
            if i > 0 {
                let _ = std::fs::remove_dir_all(dir_at(i - 1));
            }
            Ok(dir_at(i))
        },
        |dir| {
            let files = export::export_all(conn, &dir, |_| {})?;
            Ok(files.iter().map(|f| f.bytes).sum::<u64>())
        },
    );
    let _ = std::fs::remove_dir_all(dir_at(runs.max(1) - 1));
    result
}
