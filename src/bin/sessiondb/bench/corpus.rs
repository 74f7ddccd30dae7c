//! The corpus a benchmark runs on: an existing pi sessions folder, or a synthetic one written
//! to a temporary (or kept) directory; plus the facts reported about it.

use super::synth::{self, SynthOptions};
use sessiondb::import::{collect_targets, ImportTarget};
use sessiondb::{Error, Result};
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Where the sessions come from.
#[derive(Debug, Clone)]
pub enum Source {
    /// A pi agent dir (holding `sessions/`) or a sessions folder.
    Dir(PathBuf),
    /// Generated.
    Synthetic(SynthOptions),
}

/// A corpus ready to import.
#[derive(Debug)]
pub struct Corpus {
    /// What it is, for the report.
    pub description: String,
    /// The files, sorted.
    pub targets: Vec<ImportTarget>,
    /// Total bytes of the files.
    pub bytes: u64,
    /// The largest file (pi's "largest session") and its size.
    pub largest: Option<(PathBuf, u64)>,
    /// Number of project folders, and sessions in the busiest one.
    pub cwds: usize,
    /// Sessions in the folder holding the most.
    pub busiest_cwd_sessions: usize,
    /// Seconds spent generating (synthetic corpora).
    pub generation_seconds: Option<f64>,
    /// The sessions folder (holding the `--<cwd>--` folders).
    pub root: PathBuf,
    /// The folder holding the most sessions.
    pub busiest_dir: Option<PathBuf>,
    /// Keeps a generated corpus alive until the benchmark ends.
    _temp: Option<tempfile::TempDir>,
}

/// Generates (when synthetic) and scans the corpus. A synthetic corpus goes to `keep` when
/// given (and stays), else to a temporary directory under `work`.
pub fn prepare(source: &Source, keep: Option<&Path>, work: &Path) -> Result<Corpus> {
    let (root, description, temp, generation_seconds) = match source {
        Source::Dir(dir) => {
            let dir = std::path::absolute(dir).map_err(|e| Error::io(dir, e))?;
            let sessions = dir.join("sessions");
            let root = if sessions.is_dir() { sessions } else { dir };
            (root.clone(), root.display().to_string(), None, None)
        }
        Source::Synthetic(opts) => {
            let (dir, temp) = match keep {
                Some(k) => (std::path::absolute(k).map_err(|e| Error::io(k, e))?, None),
                None => {
                    let t =
                        tempfile::Builder::new().prefix("corpus-").tempdir_in(work).map_err(|e| Error::io(work, e))?;
                    (t.path().to_path_buf(), Some(t))
                }
            };
            let t0 = std::time::Instant::now();
            let generated = synth::generate(&dir, opts)?;
            let secs = t0.elapsed().as_secs_f64();
            (generated.sessions_dir, describe(opts), temp, Some(secs))
        }
    };
    let targets = collect_targets(std::slice::from_ref(&root))?;
    if targets.is_empty() {
        return Err(Error::NotFound(format!("{}: no .jsonl session files", root.display())));
    }
    let mut bytes = 0;
    let mut largest: Option<(PathBuf, u64)> = None;
    let mut per_dir: HashMap<PathBuf, usize> = HashMap::new();
    for t in &targets {
        let len = std::fs::metadata(&t.path).map_err(|e| Error::io(&t.path, e))?.len();
        bytes += len;
        if largest.as_ref().is_none_or(|(_, l)| len > *l) {
            largest = Some((t.path.clone(), len));
        }
        *per_dir.entry(t.path.parent().map(Path::to_path_buf).unwrap_or_default()).or_default() += 1;
    }
    Ok(Corpus {
        description,
        targets,
        bytes,
        largest,
        cwds: per_dir.len(),
        busiest_cwd_sessions: per_dir.values().copied().max().unwrap_or(0),
        busiest_dir: per_dir.iter().max_by_key(|(_, n)| **n).map(|(d, _)| d.clone()),
        root,
        generation_seconds,
        _temp: temp,
    })
}

/// How a synthetic corpus is described in reports.
pub fn describe(o: &SynthOptions) -> String {
    let mut parts = Vec::new();
    if o.sessions > 0 {
        parts.push(format!("{} sessions x ~{} entries", o.sessions, o.entries));
    }
    if o.huge > 0 {
        parts.push(format!("one session of {} entries", o.huge));
    }
    let comp = if o.compactions { "" } else { ", no compactions" };
    format!("synthetic: {} (seed {}{comp})", parts.join(" + "), o.seed)
}

impl Corpus {
    /// Reads every file once so that all figures run on a warm page cache (as bench-pi's).
    pub fn warm_page_cache(&self) -> Result<()> {
        let mut buf = vec![0u8; 1 << 20];
        for t in &self.targets {
            let mut f = std::fs::File::open(&t.path).map_err(|e| Error::io(&t.path, e))?;
            while f.read(&mut buf).map_err(|e| Error::io(&t.path, e))? > 0 {}
        }
        Ok(())
    }
}
