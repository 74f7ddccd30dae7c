//! A deterministic synthetic corpus in pi's exact format and layout:
//! `<dir>/sessions/--<cwd>--/<timestamp>_<uuidv7>.jsonl`, one header line then entries with
//! pi's key order. The same options give byte-identical files.

mod agent;
mod line;
pub mod rng;
mod session;
mod text;

use rng::Rng;
use session::{Plan, SessionWriter, Stop};
use sessiondb::internals::jstime::iso_from_ms;
use sessiondb::internals::layout;
use sessiondb::{Error, Result};
use std::collections::HashMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

/// What to generate.
#[derive(Debug, Clone)]
pub struct SynthOptions {
    /// Ordinary sessions.
    pub sessions: usize,
    /// Mean entries per ordinary session (each gets `round(M × U(0.5, 1.5))`, at least 8).
    pub entries: usize,
    /// Also one session with exactly this many entries (0: none).
    pub huge: usize,
    /// PRNG seed.
    pub seed: u64,
    /// Number of project directories (Zipf-weighted, s = 0.9).
    pub cwds: usize,
    /// Ordinary sessions start within this many days before `end_ms`.
    pub days: u32,
    /// Virtual "now" at the end of the corpus (Unix ms).
    pub end_ms: i64,
    /// Append a compaction about every 200 entries (pi's auto-compaction).
    pub compactions: bool,
}

impl Default for SynthOptions {
    fn default() -> Self {
        SynthOptions {
            sessions: 0,
            entries: 50,
            huge: 0,
            seed: 1,
            cwds: 20,
            days: 60,
            end_ms: 1_796_061_600_000, // 2026-11-30T18:00:00.000Z, as bench-pi's make-corpus
            compactions: true,
        }
    }
}

/// A generated corpus.
#[derive(Debug, Clone, Default)]
pub struct SynthCorpus {
    /// The sessions folder (`<dir>/sessions`).
    pub sessions_dir: PathBuf,
    /// Every file written, in generation order.
    pub files: Vec<PathBuf>,
    /// Entries written (headers excluded).
    pub entries: u64,
    /// Bytes written.
    pub bytes: u64,
}

const PROJECTS: &[&str] = &[
    "pi-mono",
    "sessiondb",
    "webapp",
    "infra",
    "dotfiles",
    "blog",
    "api-server",
    "ml-experiments",
    "cli-tools",
    "docs-site",
    "game-engine",
    "compiler",
    "mobile-app",
    "data-pipeline",
    "auth-service",
    "design-system",
    "scraper",
    "notebook",
    "k8s-config",
    "homelab",
];

/// The project directories: `n` paths in four styles.
fn cwds(n: usize) -> Vec<String> {
    (0..n.max(1))
        .map(|i| {
            let mut name = PROJECTS[i % PROJECTS.len()].to_string();
            if i >= PROJECTS.len() {
                name.push_str(&format!("-{}", i / PROJECTS.len() + 1));
            }
            match i % 4 {
                0 => format!("/home/dev/work/{name}"),
                1 => format!("/home/dev/src/github.com/acme/{name}"),
                2 => format!("/Users/dev/projects/{name}"),
                _ => format!("/home/dev/work/clients/{name}/repo"),
            }
        })
        .collect()
}

/// Session plans in start order.
fn plans(opts: &SynthOptions, rng: &mut Rng) -> Vec<Plan> {
    let dirs = cwds(opts.cwds);
    let mut cum = Vec::with_capacity(dirs.len());
    let mut acc = 0.0;
    for i in 0..dirs.len() {
        acc += 1.0 / ((i + 1) as f64).powf(0.9);
        cum.push(acc);
    }
    let mut out = Vec::with_capacity(opts.sessions + 1);
    for _ in 0..opts.sessions {
        let cwd = dirs[rng.weighted(&cum)].clone();
        let start_ms = opts.end_ms - (rng.float() * f64::from(opts.days) * 86_400_000.0) as i64 - 3_600_000;
        let entries = ((opts.entries as f64 * (0.5 + rng.float())).round() as usize).max(8);
        out.push(Plan { cwd, start_ms, entries, compactions: opts.compactions });
    }
    if opts.huge > 0 {
        // About 30 s of virtual time per entry: start early enough to end near `end_ms`.
        let start_ms = opts.end_ms - opts.huge as i64 * 30_000 - 86_400_000;
        out.push(Plan { cwd: dirs[0].clone(), start_ms, entries: opts.huge, compactions: opts.compactions });
    }
    out.sort_by_key(|p| p.start_ms);
    out
}

/// Writes the corpus under `dir` (which must not hold a `sessions` folder yet).
pub fn generate(dir: &Path, opts: &SynthOptions) -> Result<SynthCorpus> {
    let sessions_dir = dir.join("sessions");
    if sessions_dir.exists() {
        return Err(Error::InvalidArgument(format!("{} already exists", sessions_dir.display())));
    }
    let mut rng = Rng::new(opts.seed);
    let text = text::Text::new(&mut Rng::new(opts.seed.wrapping_mul(31).wrapping_add(5)));
    let mut sections: HashMap<String, String> = HashMap::new();
    let mut corpus = SynthCorpus { sessions_dir: sessions_dir.clone(), ..SynthCorpus::default() };
    for plan in plans(opts, &mut rng) {
        let id = rng.uuid_v7(plan.start_ms);
        let rel = layout::relative_session_path(&plan.cwd, &iso_from_ms(plan.start_ms), &id);
        let path = sessions_dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        let file = File::options().write(true).create_new(true).open(&path).map_err(|e| Error::io(&path, e))?;
        let sys =
            sections.entry(plan.cwd.clone()).or_insert_with(|| agent::system_sections(&plan.cwd, opts.seed, &text));
        let mut w = SessionWriter::new(BufWriter::with_capacity(1 << 20, file), &mut rng, &text, sys, &plan, &id);
        match w.run(&plan) {
            Ok(()) | Err(Stop::Done) => {}
            Err(Stop::Io(e)) => return Err(Error::io(&path, e)),
        }
        let last_ms = w.now;
        let file = w.into_inner().into_inner().map_err(|e| Error::io(&path, e.into_error()))?;
        // As if written live: the file's modification time is its last entry's time.
        let mtime = std::time::UNIX_EPOCH + std::time::Duration::from_millis(last_ms.max(0) as u64);
        file.set_modified(mtime).map_err(|e| Error::io(&path, e))?;
        let len = file.metadata().map_err(|e| Error::io(&path, e))?.len();
        corpus.bytes += len;
        corpus.entries += plan.entries as u64;
        corpus.files.push(path);
    }
    Ok(corpus)
}
