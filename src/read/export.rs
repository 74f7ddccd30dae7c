//! Writing sessions back as JSONL, exactly as imported: the header line, then every stored entry line in
//! file order, each followed by `\n`.

use crate::error::{Error, Result};
use crate::pi::layout;
use crate::read::file_writer::{write_file_atomically, FileWriter};
use crate::store::handle::Db;
use crate::store::interface::sessions;
use crate::store::keys::SessionKey;
use serde::Serialize;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

/// Writes session `sid` as JSONL to `out`. Returns the bytes written. The header and the
/// lines are read in one snapshot: a write landing meanwhile is seen whole or not at all.
pub fn write_session(db: &Db, sid: SessionKey, out: &mut (impl Write + ?Sized)) -> Result<u64> {
    write_session_with(db, sid, out, |out, lines| out.write_all(lines).map_err(|e| Error::io("<output>", e)))
}

/// [`write_session`] into the file begun last on `w`, which takes the store's pieces whole.
fn write_session_pieces(db: &Db, sid: SessionKey, w: &mut FileWriter) -> Result<u64> {
    write_session_with(db, sid, w, |w, lines| w.take(lines))
}

/// The header line written to `out`, then the store's pieces of lines handed to `lines`.
fn write_session_with<W: Write + ?Sized>(
    db: &Db,
    sid: SessionKey,
    out: &mut W,
    mut lines: impl FnMut(&mut W, &mut Vec<u8>) -> Result<()>,
) -> Result<u64> {
    db.reading(|| {
        let header = db.store().session_row(sid)?.header;
        let mut bytes = header.len() as u64 + 1;
        out.write_all(header.as_bytes()).and_then(|()| out.write_all(b"\n")).map_err(|e| Error::io("<output>", e))?;
        db.store().write_lines(sid, &mut |piece| {
            bytes += piece.len() as u64;
            lines(out, piece)
        })?;
        Ok(bytes)
    })
}

/// Writes session `sid` to the file `path` atomically (temporary file, then rename).
pub fn write_session_file(db: &Db, sid: SessionKey, path: &Path) -> Result<u64> {
    write_file_atomically(path, |w| write_session(db, sid, w))
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
    let sids = db.store().all_sessions()?;
    let mut written = Vec::with_capacity(sids.len());
    let mut reported = 0;
    let mut used = std::collections::HashSet::new();
    // A thread writes and syncs each file while this one reads (and unpacks) the next session.
    FileWriter::run(|w| {
        for sid in sids {
            let (path, session_id) = file_name(db, sid, out_dir, &canonical_out, &mut used)?;
            w.begin_file(&path)?;
            let bytes = write_session_pieces(db, sid, w)?;
            w.finish_file()?;
            written.push(ExportedFile { session_id, path, bytes });
            for _ in w.written() {
                progress(&written[reported]);
                reported += 1;
            }
        }
        Ok(())
    })?;
    written[reported..].iter().for_each(&mut progress);
    Ok(written)
}

/// Where session `sid` is written below `out_dir` (its folders created), and its id: the path
/// it was imported from, else pi's layout, else names no other session took.
fn file_name(
    db: &Db,
    sid: SessionKey,
    out_dir: &Path,
    canonical_out: &Path,
    used: &mut std::collections::HashSet<String>,
) -> Result<(PathBuf, String)> {
    let sessions::SessionRow { rel_path: rel, id, cwd, created, origin, .. } = db.store().session_row(sid)?;
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
    ensure_inside(out_dir, &rel, canonical_out)?;
    Ok((out_dir.join(&rel), id))
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
