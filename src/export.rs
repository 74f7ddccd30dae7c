//! Writing sessions back as JSONL (SPEC 7): the header line, then every stored entry line in
//! file order, each followed by `\n`.

use crate::error::{Error, Result};
use crate::layout;
use crate::queries;
use rusqlite::Connection;
use serde::Serialize;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

/// Writes session `sid` as JSONL to `out`. Returns the bytes written.
pub fn write_session(conn: &Connection, sid: i64, out: &mut impl Write) -> Result<u64> {
    let header: String = conn.query_row(queries::SESSION_HEADER, [sid], |r| r.get(0))?;
    let io = |e: std::io::Error| Error::io("<output>", e);
    let mut bytes = header.len() as u64 + 1;
    out.write_all(header.as_bytes()).map_err(io)?;
    out.write_all(b"\n").map_err(io)?;
    let mut stmt = conn.prepare_cached(queries::ENTRY_BODIES)?;
    let mut rows = stmt.query([sid << 32, (sid << 32) | 0xFFFF_FFFF])?;
    while let Some(row) = rows.next()? {
        let body = row.get_ref(0)?.as_str().map_err(|e| Error::Sqlite(e.into()))?;
        out.write_all(body.as_bytes()).map_err(io)?;
        out.write_all(b"\n").map_err(io)?;
        bytes += body.len() as u64 + 1;
    }
    Ok(bytes)
}

/// Writes session `sid` to the file `path` atomically (temporary file, then rename).
pub fn write_session_file(conn: &Connection, sid: i64, path: &Path) -> Result<u64> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    let tmp = path.with_extension("jsonl.sessiondb-tmp");
    let result = (|| {
        let file = std::fs::File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
        let n = write_session(conn, sid, &mut w).map_err(|e| retarget(e, path))?;
        let file = w.into_inner().map_err(|e| Error::io(path, e.into_error()))?;
        file.sync_all().map_err(|e| Error::io(path, e))?;
        std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))?;
        Ok(n)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
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
/// directory they were imported from, others in pi's layout (`--<cwd>--/<time>_<id>.jsonl`).
/// Refuses any path that would leave `out_dir`.
pub fn export_all(
    conn: &Connection,
    out_dir: &Path,
    mut progress: impl FnMut(&ExportedFile),
) -> Result<Vec<ExportedFile>> {
    std::fs::create_dir_all(out_dir).map_err(|e| Error::io(out_dir, e))?;
    let sids: Vec<i64> =
        conn.prepare(queries::ALL_SESSIONS)?.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
    let mut written = Vec::with_capacity(sids.len());
    let mut used = std::collections::HashSet::new();
    for sid in sids {
        let (rel, id, cwd, created): (Option<String>, String, Option<String>, Option<String>) =
            conn.query_row(queries::SESSION_HEADER, [sid], |r| Ok((r.get(2)?, r.get(4)?, r.get(3)?, r.get(5)?)))?;
        let layout_rel =
            || layout::relative_session_path(cwd.as_deref().unwrap_or(""), created.as_deref().unwrap_or(""), &id);
        let mut rel = rel.filter(|r| safe_relative(r)).unwrap_or_else(layout_rel);
        if !safe_relative(&rel) || !used.insert(rel.clone()) {
            // Two sessions claim one file, or the name is unsafe: fall back to an id-keyed name.
            rel = format!(
                "{}/{}",
                layout::encode_cwd_dir(cwd.as_deref().unwrap_or("")),
                layout::safe_file_stem(&id, sid)
            );
            if !safe_relative(&rel) || !used.insert(rel.clone()) {
                return Err(Error::InvalidArgument(format!(
                    "session {id}: no safe file name under {}",
                    out_dir.display()
                )));
            }
        }
        let path = out_dir.join(&rel);
        let bytes = write_session_file(conn, sid, &path)?;
        let f = ExportedFile { session_id: id, path, bytes };
        progress(&f);
        written.push(f);
    }
    Ok(written)
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
