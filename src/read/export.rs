//! Writing sessions back as JSONL, exactly as imported: the header line, then every stored entry line in
//! file order, each followed by `\n`.

use crate::error::{Error, Result};
use crate::pi::layout;
use crate::store::handle::Db;
use crate::store::keys::SessionKey;
use crate::store::{entries, sessions};
use serde::Serialize;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

/// Writes session `sid` as JSONL to `out`. Returns the bytes written. The header and the
/// lines are read in one snapshot: a write landing meanwhile is seen whole or not at all.
pub fn write_session(db: &Db, sid: SessionKey, out: &mut (impl Write + ?Sized)) -> Result<u64> {
    db.reading(|| {
        let header = sessions::session_row(db, sid)?.header;
        let io = |e: std::io::Error| Error::io("<output>", e);
        let mut bytes = header.len() as u64 + 1;
        out.write_all(header.as_bytes()).map_err(io)?;
        out.write_all(b"\n").map_err(io)?;
        entries::write_lines(db, sid, |lines| {
            out.write_all(lines).map_err(io)?;
            bytes += lines.len() as u64;
            Ok(())
        })?;
        Ok(bytes)
    })
}

/// Writes session `sid` to the file `path` atomically (temporary file, then rename).
pub fn write_session_file(db: &Db, sid: SessionKey, path: &Path) -> Result<u64> {
    write_file_atomically(path, |w| write_session(db, sid, w))
}

/// Writes `path` through `write` into a new temporary file beside it, synced, then renamed
/// over `path`: a reader sees the old file or the whole new one. (Also the export from a
/// PostgreSQL server.)
pub(crate) fn write_file_atomically(path: &Path, write: impl FnOnce(&mut dyn Write) -> Result<u64>) -> Result<u64> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    let tmp = path.with_extension("jsonl.sessiondb-tmp");
    let result = (|| {
        // A new file, never one a stale name points to (a symbolic link left in its place).
        match std::fs::remove_file(&tmp) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(Error::io(&tmp, e)),
            _ => {}
        }
        let file =
            std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp).map_err(|e| Error::io(&tmp, e))?;
        let n = std::thread::scope(|scope| -> Result<u64> {
            let mut w = EarlySync {
                scope,
                file: &file,
                out: std::io::BufWriter::with_capacity(WRITE_BUFFER, &file),
                written: 0,
                kick: None,
            };
            let n = write(&mut w).map_err(|e| retarget(e, path))?;
            w.out.flush().map_err(|e| Error::io(path, e))?;
            Ok(n)
        })?;
        file.sync_all().map_err(|e| Error::io(path, e))?;
        std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))?;
        Ok(n)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// A write this large or larger goes to the file without being copied into the buffer: the
/// lines a store hands over in pieces of several hundred KiB (a slice of a large session) are
/// written where they are; lines handed over one by one (a server's) are gathered.
const WRITE_BUFFER: usize = 64 << 10;

/// Bytes written between two requests that the disk take what the file holds so far.
const SYNC_EVERY: u64 = 16 << 20;

/// A file being written whose pages go to the disk while it grows: past every [`SYNC_EVERY`]
/// bytes a thread (started with the first) syncs what is written, so the final sync waits for
/// the tail only and a large export's reading (and unpacking) overlaps the disk's writing.
struct EarlySync<'scope, 'env> {
    scope: &'scope std::thread::Scope<'scope, 'env>,
    file: &'env std::fs::File,
    out: std::io::BufWriter<&'env std::fs::File>,
    written: u64,
    kick: Option<std::sync::mpsc::SyncSender<()>>,
}

impl Write for EarlySync<'_, '_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        let before = self.written;
        self.written += n as u64;
        if self.written / SYNC_EVERY > before / SYNC_EVERY {
            self.out.flush()?;
            let file = self.file;
            let kick = self.kick.get_or_insert_with(|| {
                let (kick, kicks) = std::sync::mpsc::sync_channel::<()>(1);
                self.scope.spawn(move || {
                    for () in kicks {
                        // Only a head start: the final sync_all reports any error.
                        let _ = file.sync_data();
                    }
                });
                kick
            });
            // The syncer still busy with the last request: it takes this data with the next.
            let _ = kick.try_send(());
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

fn retarget(e: Error, path: &Path) -> Error {
    match e {
        Error::Io { source, .. } => Error::io(path, source),
        other => other,
    }
}

/// One file written by [`export_all`].
#[derive(Debug, Clone, Serialize)]
pub struct ExportedFile {
    /// Header id.
    pub session_id: String,
    /// Where it was written.
    pub path: PathBuf,
    /// Bytes written.
    pub bytes: u64,
}

/// Writes every session under `out_dir`: imported sessions at the path they had below the
/// directory they were imported from, others in pi's layout (`--<cwd>--/<time>_<id>.jsonl`);
/// on a server, the sessions pushed from another machine under a folder named after their
/// origin. Refuses any path that would leave `out_dir`.
pub fn export_all(db: &Db, out_dir: &Path, mut progress: impl FnMut(&ExportedFile)) -> Result<Vec<ExportedFile>> {
    std::fs::create_dir_all(out_dir).map_err(|e| Error::io(out_dir, e))?;
    let canonical_out = out_dir.canonicalize().map_err(|e| Error::io(out_dir, e))?;
    let sids = entries::all_sessions(db)?;
    let mut written = Vec::with_capacity(sids.len());
    let mut used = std::collections::HashSet::new();
    for sid in sids {
        let sessions::SessionRow { rel_path: rel, id, cwd, created, origin, .. } = sessions::session_row(db, sid)?;
        if !origin.is_empty() && (!safe_relative(&origin) || origin.contains('/')) {
            return Err(Error::InvalidArgument(format!("origin {origin:?}: not usable as a folder name")));
        }
        let cwd = cwd.as_deref().unwrap_or("");
        let layout_rel = || layout::relative_session_path(cwd, created.as_deref().unwrap_or(""), &id);
        let candidates = [
            rel.filter(|r| safe_relative(r)).unwrap_or_else(layout_rel),
            // Two sessions claim one file, or the name is unsafe: an id-keyed name.
            format!("{}/{}", layout::encode_cwd_dir(cwd), layout::safe_file_stem(&id, sid)),
            // The cwd cannot name a folder either (a NUL byte, ...): a folder no cwd maps to.
            format!("sessiondb-unnamed/session-{sid}.jsonl"),
        ];
        let Some(rel) = candidates
            .into_iter()
            .map(|r| if origin.is_empty() { r } else { format!("{origin}/{r}") })
            .find(|r| safe_relative(r) && used.insert(r.clone()))
        else {
            return Err(Error::InvalidArgument(format!("session {id}: no safe file name under {}", out_dir.display())));
        };
        let path = out_dir.join(&rel);
        ensure_inside(out_dir, &rel, &canonical_out)?;
        let bytes = write_session_file(db, sid, &path)?;
        let f = ExportedFile { session_id: id, path, bytes };
        progress(&f);
        written.push(f);
    }
    Ok(written)
}

/// Creates the folders of `rel` below `out_dir` one by one, refusing any that resolves outside
/// `root` (`out_dir` resolved): a symbolic link already in the output directory leads nowhere
/// and nothing is created through it.
fn ensure_inside(out_dir: &Path, rel: &str, root: &Path) -> Result<()> {
    let mut dir = out_dir.to_path_buf();
    let Some(folders) = Path::new(rel).parent() else { return Ok(()) };
    for part in folders.components() {
        dir.push(part);
        match std::fs::create_dir(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::io(&dir, e)),
        }
        let real = dir.canonicalize().map_err(|e| Error::io(&dir, e))?;
        if !real.starts_with(root) {
            return Err(Error::InvalidArgument(format!(
                "{}: refusing to write outside {} (the folder leads to {})",
                dir.display(),
                root.display(),
                real.display()
            )));
        }
    }
    Ok(())
}

/// True when `rel` is a relative path made only of normal components.
pub fn safe_relative(rel: &str) -> bool {
    let p = Path::new(rel);
    !rel.is_empty() && !rel.contains('\0') && p.components().all(|c| matches!(c, Component::Normal(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_cannot_escape() {
        assert!(safe_relative("--a--/x.jsonl"));
        for bad in ["", "/etc/passwd", "../x", "a/../../x", "./x", "a\0b"] {
            assert!(!safe_relative(bad), "{bad:?}");
        }
    }
}
