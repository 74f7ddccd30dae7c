//! Importing pi session files: each file whole or not at all (several files per
//! transaction), lines stored verbatim,
//! old versions migrated exactly as pi rewrites them.

use crate::error::{Error, Result};
use crate::ingest::readahead::{FileStream, ReadAhead, Scanned};
use crate::js::json::{self, Value};
use crate::jsonl::signature::{file_signature, FileSignature};
use crate::jsonl::{classify, LineKind, LineReader};
use crate::pi::migrate;
use crate::store::entry_writer::EntryWriter;
use crate::store::handle::Db;
use crate::store::interface::sessions::SessionFile;
use crate::store::interface::sync_state::SyncStates;
use crate::store::interface::write::NewSession;
use crate::store::keys::SessionKey;
use crate::store::stats::SessionStats;
use serde::Serialize;
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

/// At most this many skipped lines are described per file (all are counted).
const MAX_SKIPPED_REPORTED: usize = 20;

/// How an import treats files already in the database.
#[derive(Debug, Clone, Copy, Default)]
pub struct ImportOptions {
    /// Re-import files even when their size and modification time are unchanged.
    pub force: bool,
    /// The file may still be written (sync): a final line without `\n` waits until it is a
    /// complete JSON object in a file left alone for [`SETTLE`].
    pub live: bool,
}

/// What happened to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileStatus {
    /// New session.
    Imported,
    /// The path was in the database; its session was replaced.
    Replaced,
    /// Same size and modification time as when it was imported: not read.
    Unchanged,
    /// Not imported (not a session, unreadable): see `reason`.
    Failed,
    /// A live file whose header line is still being written: tried again next time.
    Waiting,
}

/// A line that was not stored, and why.
#[derive(Debug, Clone, Serialize)]
pub struct SkippedLine {
    /// 1-based line number.
    pub line: u64,
    /// Why it was skipped.
    pub reason: String,
}

/// The outcome for one file.
#[derive(Debug, Clone, Serialize)]
pub struct FileReport {
    /// The file.
    pub path: PathBuf,
    /// What happened.
    pub status: FileStatus,
    /// Header id of the imported session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Entries stored.
    pub entries: u64,
    /// Blank lines ignored.
    pub blank_lines: u64,
    /// Malformed lines skipped.
    pub malformed_lines: u64,
    /// The first skipped lines with their reasons.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedLine>,
    /// Version the file had when it was migrated to 3.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub migrated_from: Option<f64>,
    /// Why the file was not imported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Size of the file as it was read (0 when it was not read).
    #[serde(skip)]
    pub size: u64,
}

impl FileReport {
    pub(crate) fn new(path: PathBuf, status: FileStatus) -> Self {
        FileReport {
            path,
            status,
            session_id: None,
            entries: 0,
            blank_lines: 0,
            malformed_lines: 0,
            skipped: Vec::new(),
            migrated_from: None,
            reason: None,
            size: 0,
        }
    }

    /// A file that could not be dealt with.
    pub fn failed(path: PathBuf, reason: String) -> Self {
        let mut r = FileReport::new(path, FileStatus::Failed);
        r.reason = Some(reason);
        r
    }

    fn skip(&mut self, line: u64, reason: String) {
        self.malformed_lines += 1;
        if self.skipped.len() < MAX_SKIPPED_REPORTED {
            self.skipped.push(SkippedLine { line, reason });
        }
    }
}

/// Totals over an import run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ImportSummary {
    /// Files looked at.
    pub files: u64,
    /// Sessions written (new or replaced).
    pub sessions: u64,
    /// Of those, sessions that replaced an earlier import of the same path.
    pub replaced: u64,
    /// Files skipped because they were unchanged.
    pub unchanged: u64,
    /// Entries written.
    pub entries: u64,
    /// Malformed lines skipped.
    pub skipped_lines: u64,
    /// Blank lines ignored.
    pub blank_lines: u64,
    /// Files that could not be imported.
    pub failures: u64,
    /// Per-file outcomes.
    pub reports: Vec<FileReport>,
}

impl ImportSummary {
    /// Adds one file's outcome.
    pub fn add(&mut self, report: FileReport) {
        self.files += 1;
        match report.status {
            FileStatus::Imported => self.sessions += 1,
            FileStatus::Replaced => {
                self.sessions += 1;
                self.replaced += 1;
            }
            FileStatus::Unchanged | FileStatus::Waiting => self.unchanged += 1,
            FileStatus::Failed => self.failures += 1,
        }
        self.entries += report.entries;
        self.skipped_lines += report.malformed_lines;
        self.blank_lines += report.blank_lines;
        self.reports.push(report);
    }
}

/// A file to import, with the path it has below the directory it was found in.
#[derive(Debug, Clone)]
pub struct ImportTarget {
    /// The file.
    pub path: PathBuf,
    /// Its path relative to the imported directory (or `<parent>/<name>` for a single file).
    pub rel_path: String,
    /// Its size and time as the folder's walk saw them (a regular file found in a folder);
    /// `None`: not read yet.
    pub signature: Option<FileSignature>,
}

/// Expands files and directories (recursively, `*.jsonl` only, sorted) into import targets.
/// A path that does not exist is an error naming it.
pub fn collect_targets(paths: &[PathBuf]) -> Result<Vec<ImportTarget>> {
    let mut out = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| Error::io(p, e))?;
        if meta.is_dir() {
            let mut files = Vec::new();
            walk(p, &mut files)?;
            for (f, signature) in files {
                let rel = f.strip_prefix(p).unwrap_or(&f).to_string_lossy().into_owned();
                out.push(ImportTarget { path: f, rel_path: rel, signature });
            }
        } else {
            out.push(ImportTarget { path: p.clone(), rel_path: single_file_rel_path(p), signature: None });
        }
    }
    Ok(out)
}

/// `<parent dir name>/<file name>`: where pi's layout keeps a session file.
fn single_file_rel_path(p: &Path) -> String {
    let abs = crate::pi::layout::absolute(p);
    let name = abs.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    match abs.parent().and_then(Path::file_name) {
        Some(parent) => format!("{}/{}", parent.to_string_lossy(), name),
        None => name,
    }
}

/// The `*.jsonl` files below `dir`, in path order: each folder's entries sorted by name, a
/// subfolder's files in its place, which is `Path`'s order (by components) without comparing
/// whole paths (a sort of 10,000 paths cost more than the rest of an unchanged folder's sync).
/// A regular file's signature is read through the folder's handle (`fstatat` of its name, not
/// a walk of its whole path again); a symbolic link's is left to whoever reads the file.
fn walk(dir: &Path, out: &mut Vec<(PathBuf, Option<FileSignature>)>) -> Result<()> {
    let rd = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    let mut entries = rd
        .map(|e| e.map(|e| (e.file_name(), e)))
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(|e| Error::io(dir, e))?;
    entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    for (_, entry) in entries {
        let path = entry.path();
        let ft = entry.file_type().map_err(|e| Error::io(&path, e))?;
        if ft.is_dir() {
            walk(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            if ft.is_file() {
                // No signature when it is gone since the listing: reading it reports that.
                out.push((path, entry.metadata().ok().map(|m| FileSignature::of(&m))));
            } else if path.is_file() {
                out.push((path, None));
            }
        }
    }
    Ok(())
}

/// Files imported by [`import_targets`] share a transaction until it holds this many bytes
/// of them: pages that several small sessions touch (index leaves, the sessions table) are
/// then written once per batch instead of once per file.
pub const BATCH_BYTES: u64 = 32 << 20;

/// At most this many files share one transaction.
pub const BATCH_FILES: usize = 512;

/// Imports every target, calling `progress` after each file. Files are written in batches
/// (several whole files per transaction): a crash loses whole files only. A file that fails
/// after writing part of itself, or a batch that cannot be committed (a full disk), sends the
/// batch back to be done again one file per transaction, so a failed file never undoes the
/// others and every file that fits is kept. The database leaves WAL mode for the import when
/// nothing else has it open ([`crate::store::interface::write::enter_bulk`]).
pub(crate) fn import_direct(
    conn: &mut Db,
    targets: &[ImportTarget],
    opts: ImportOptions,
    mut progress: impl FnMut(&FileReport),
) -> ImportSummary {
    conn.store().enter_bulk();
    // Files are read and parsed ahead on another thread (not live files: a sync reads what
    // is written while it reads).
    let mut reader = (!opts.live).then(|| {
        let known = if opts.force { HashMap::new() } else { known_signatures(conn) };
        // A store that packs its lines has them packed on the reading thread too.
        let packer = conn.store().line_packer().ok().flatten();
        ReadAhead::start(targets.iter().map(|t| t.path.clone()).collect(), known, packer)
    });
    let mut summary = ImportSummary::default();
    let mut rest = targets;
    while !rest.is_empty() {
        conn.store().between_bulk_transactions();
        let done = targets.len() - rest.len();
        let (batch, taken) = import_batch(conn, rest, opts, |i| reader.as_mut()?.take(done + i));
        let reports = batch.unwrap_or_else(|| {
            rest[..taken]
                .iter()
                .map(|t| {
                    conn.store().between_bulk_transactions();
                    import_file(conn, &t.path, Some(&t.rel_path), opts)
                })
                .collect()
        });
        rest = &rest[taken..];
        for r in reports {
            progress(&r);
            summary.add(r);
        }
    }
    conn.store().leave_bulk();
    summary
}

/// What the local database `tx` keeps per imported file (a server imports through a staging
/// database, `ingest::to_server`).
fn local_states(tx: &Db) -> Result<&dyn SyncStates> {
    tx.store().sync_states().ok_or_else(|| tx.unsupported("importing files straight in"))
}

/// Size and modification time of every imported file, by path: files the reading thread
/// need not read. (Empty if they cannot be read: the reader then reads every file.)
fn known_signatures(conn: &Db) -> HashMap<PathBuf, FileSignature> {
    conn.store().sync_states().and_then(|s| s.known_signatures().ok()).unwrap_or_default()
}

/// Imports targets from the front of `targets` in one transaction, up to [`BATCH_BYTES`] or
/// [`BATCH_FILES`]; returns their reports (`None` when the batch must be done again file by
/// file) and how many targets it took.
fn import_batch(
    conn: &mut Db,
    targets: &[ImportTarget],
    opts: ImportOptions,
    mut ahead: impl FnMut(usize) -> Option<FileStream>,
) -> (Option<Vec<FileReport>>, usize) {
    // No savepoint per file: a savepoint copies every page a file touches first into a
    // sub-journal, a tenth of a small-session import's time. Most failures (not a session)
    // are found before anything is written; one found after is rare, and redoes the batch.
    let Ok(tx) = conn.write() else { return (None, 1) };
    let (mut reports, mut bytes) = (Vec::new(), 0u64);
    for (i, t) in targets.iter().enumerate().take(BATCH_FILES) {
        let written = tx.total_changes();
        let r = import_file_in(&tx, &t.path, Some(&t.rel_path), opts, ahead(i));
        let failed_midway = r.status == FileStatus::Failed && tx.total_changes() != written;
        bytes += r.size; // 0 for an unchanged file
        reports.push(r);
        // (autocommit: SQLite rolled the whole transaction back, on a full disk or I/O error)
        if failed_midway || tx.is_idle() {
            return (None, reports.len());
        }
        if bytes >= BATCH_BYTES {
            break;
        }
    }
    let taken = reports.len();
    (tx.commit().is_ok().then_some(reports), taken)
}

/// Imports one file in its own transaction. Failures are reported, never raised: one bad
/// file does not stop others.
pub fn import_file(conn: &mut Db, path: &Path, rel_path: Option<&str>, opts: ImportOptions) -> FileReport {
    let failed = |e: Error| FileReport::failed(crate::pi::layout::absolute(path), e.to_string());
    let tx = match conn.write() {
        Ok(tx) => tx,
        Err(e) => return failed(e),
    };
    let r = import_file_in(&tx, path, rel_path, opts, None);
    if r.status == FileStatus::Failed {
        return r; // rolled back with the transaction
    }
    match tx.commit() {
        Ok(()) => r,
        Err(e) => failed(e),
    }
}

/// Imports one file inside the open transaction `tx`; a failure is reported, and what the file
/// wrote before it stays in the transaction (the caller rolls back).
fn import_file_in(
    tx: &Db,
    path: &Path,
    rel_path: Option<&str>,
    opts: ImportOptions,
    ahead: Option<FileStream>,
) -> FileReport {
    let abs = crate::pi::layout::absolute(path);
    let rel = rel_path.map(str::to_owned).unwrap_or_else(|| single_file_rel_path(&abs));
    match import_file_inner(tx, &abs, &rel, opts, ahead) {
        Ok(report) => report,
        Err(e) => {
            let mut r = FileReport::new(abs, FileStatus::Failed);
            r.reason = Some(match e {
                Error::NotASession { reason, .. } => format!("not a session file: {reason}"),
                Error::Io { source, .. } => source.to_string(),
                other => other.to_string(),
            });
            r
        }
    }
}

/// How long a file must be left alone before its final line without `\n` counts as
/// written (a live file may end in a half-written line).
pub const SETTLE: std::time::Duration = std::time::Duration::from_secs(1);

/// A file's lines as pi reads them, remembering how far the file has been consumed. In live
/// mode a final line without `\n` waits (is not consumed) unless it is a complete JSON object
/// and the file has settled.
pub(crate) struct Source {
    feed: Feed,
    live: bool,
    settled: bool,
    /// Bytes read and dealt with: the next sync starts here.
    pub(crate) consumed: u64,
}

/// Where a [`Source`]'s lines come from.
enum Feed {
    /// Read here.
    File(LineReader<File>),
    /// Read and parsed by an import's reading thread.
    Ahead(FileStream),
}

impl Source {
    pub(crate) fn open(path: &Path, from: u64, live: bool, mtime_ns: i64) -> Result<Self> {
        let mut file = File::open(path).map_err(|e| Error::io(path, e))?;
        if from > 0 {
            std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(from)).map_err(|e| Error::io(path, e))?;
        }
        let age_ns = crate::store::interface::write::now_ns().saturating_sub(mtime_ns);
        let settled = age_ns >= i64::try_from(SETTLE.as_nanos()).unwrap_or(i64::MAX);
        Ok(Source { feed: Feed::File(LineReader::starting_at(file, from)), live, settled, consumed: from })
    }

    /// A whole file read ahead (not live).
    fn ahead(stream: FileStream) -> Self {
        Source { feed: Feed::Ahead(stream), live: false, settled: true, consumed: 0 }
    }

    /// The next line to deal with; `None` at the end or at a line still being written.
    pub(crate) fn next(&mut self, path: &Path) -> Result<Option<crate::jsonl::Line<'_>>> {
        Ok(self.next_scanned(path)?.map(|(line, _)| line))
    }

    /// [`Source::next`], with the line already parsed when it was read ahead.
    fn next_scanned(&mut self, path: &Path) -> Result<Option<(crate::jsonl::Line<'_>, Option<Scanned>)>> {
        let (live, settled) = (self.live, self.settled);
        match &mut self.feed {
            Feed::File(reader) => {
                let Some(line) = reader.next_line().map_err(|e| Error::io(path, e))? else { return Ok(None) };
                if !line.terminated && live && !(settled && matches!(classify(&line.text), LineKind::Object(_))) {
                    return Ok(None);
                }
                self.consumed = line.end;
                Ok(Some((line, None)))
            }
            Feed::Ahead(stream) => {
                let Some(l) = stream.next_line().map_err(|e| Error::io(path, e))? else { return Ok(None) };
                self.consumed = l.end;
                let line = crate::jsonl::Line {
                    number: l.number,
                    offset: l.offset,
                    end: l.end,
                    text: std::borrow::Cow::Owned(l.text),
                    terminated: l.terminated,
                };
                Ok(Some((line, Some(l.scanned))))
            }
        }
    }
}

/// Imports one file inside the caller's write transaction: deciding there whether to write
/// means two imports or syncs of one file cannot both act.
fn import_file_inner(
    tx: &Db,
    path: &Path,
    rel: &str,
    opts: ImportOptions,
    ahead: Option<FileStream>,
) -> Result<FileReport> {
    // Read ahead: the signature the reader took before reading the lines it hands over.
    let sig = match &ahead {
        Some(a) => a.signature,
        None => file_signature(path)?,
    };
    let (size, mtime) = (sig.size, sig.mtime_ns);
    let path_text = path.to_string_lossy().into_owned();
    let states = local_states(tx)?;
    let existing: Option<SessionFile> = states.file_at(&path_text)?;
    if let Some((_, Some(s), Some(m))) = existing {
        if !opts.force && s == size && m == mtime {
            return Ok(FileReport::new(path.to_path_buf(), FileStatus::Unchanged));
        }
    }
    let status = if existing.is_some() { FileStatus::Replaced } else { FileStatus::Imported };
    let mut report = FileReport::new(path.to_path_buf(), status);
    report.size = u64::try_from(size).unwrap_or(0);
    if size == 0 {
        return Err(not_session(path, "empty file (no header)"));
    }
    let mut source = match ahead {
        Some(stream) => Source::ahead(stream),
        None => Source::open(path, 0, opts.live, mtime)?,
    };

    // The header is the first line that parses as a JSON object.
    let header_line = loop {
        let Some(line) = source.next(path)? else {
            if opts.live && source.consumed < size as u64 {
                report.status = FileStatus::Waiting;
                return Ok(report);
            }
            return Err(not_session(path, "no JSON object in the file"));
        };
        match classify(&line.text) {
            LineKind::Blank => report.blank_lines += 1,
            LineKind::Malformed(reason) => report.skip(line.number, reason),
            LineKind::Object(obj) => {
                if obj.get_str("type").as_deref() != Some("session") || !matches!(obj.get("id"), Some(Value::String(_)))
                {
                    return Err(not_session(
                        path,
                        &format!("line {}: the first JSON object is not a session header", line.number),
                    ));
                }
                break line.text.into_owned();
            }
        }
    };
    let header = match json::parse(header_line.as_bytes()) {
        Ok(Value::Object(h)) => h,
        Ok(_) | Err(_) => return Err(not_session(path, "session header is nested too deeply")),
    };

    report.session_id = header.get("id").map(|v| match v {
        Value::String(s) => s.to_str().into_owned(),
        _ => String::new(),
    });
    if let Some((sid, _, _)) = existing {
        tx.store().delete_session(sid)?;
    }
    let source_version = migrate::header_version(&header);
    let (sid, stats) = if migrate::needs_migration(&header) {
        report.migrated_from = Some(source_version);
        import_migrated(tx, path, rel, sig, header, &mut source, &mut report)?
    } else {
        let sid =
            tx.store().insert_session(&NewSession::imported(path, rel, &header, &header_line, source_version, sig))?;
        let mut writer = EntryWriter::new(tx, sid)?;
        while let Some((line, scanned)) = source.next_scanned(path)? {
            match scanned.unwrap_or_else(|| Scanned::of(&line.text)) {
                Scanned::Blank => report.blank_lines += 1,
                Scanned::Malformed(reason) => report.skip(line.number, reason),
                Scanned::Entry(parsed) => writer.write_parsed(&line.text, parsed)?,
            }
        }
        (sid, writer.finish()?)
    };
    let tail = crate::jsonl::signature::tail_hash(path, source.consumed)?;
    local_states(tx)?.set_position(sid, source.consumed as i64, tail)?;
    report.entries = u64::try_from(stats.entry_count).unwrap_or(0);
    Ok(report)
}

fn not_session(path: &Path, reason: &str) -> Error {
    Error::NotASession { path: path.to_path_buf(), reason: reason.to_string() }
}

/// Reads the rest of a v1/v2 file, migrates it as pi does and stores the rewritten lines.
fn import_migrated(
    tx: &Db,
    path: &Path,
    rel: &str,
    sig: FileSignature,
    header: json::Object,
    source: &mut Source,
    report: &mut FileReport,
) -> Result<(SessionKey, SessionStats)> {
    // Migration needs every entry (a compaction may point at any index), as in pi; only old
    // files take this path.
    let mut entries = vec![Value::Object(header)];
    while let Some(line) = source.next(path)? {
        match classify(&line.text) {
            LineKind::Blank => report.blank_lines += 1,
            LineKind::Malformed(reason) => report.skip(line.number, reason),
            LineKind::Object(_) => match json::parse(line.text.as_bytes()) {
                Ok(v) => entries.push(v),
                Err(e) => report.skip(line.number, format!("cannot migrate: {e}")),
            },
        }
    }
    let source_version = entries[0].as_object().map_or(1.0, migrate::header_version);
    migrate::migrate(&mut entries);
    let mut iter = entries.into_iter();
    let header = iter.next().and_then(|h| match h {
        Value::Object(o) => Some(o),
        _ => None,
    });
    let header = header.ok_or_else(|| not_session(path, "header lost in migration"))?;
    let header_line = Value::Object(header.clone()).to_json();
    let sid =
        tx.store().insert_session(&NewSession::imported(path, rel, &header, &header_line, source_version, sig))?;
    let mut writer = EntryWriter::new(tx, sid)?;
    for entry in iter {
        let text = entry.to_json();
        if let Ok(Some(obj)) = json::scan_object(text.as_bytes()) {
            writer.write(&obj, &text)?;
        }
    }
    Ok((sid, writer.finish()?))
}
