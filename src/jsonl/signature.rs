//! A file's signature: what tells an import or a sync that a file changed since it was read.

use crate::error::{Error, Result};
use std::path::Path;

/// Size and modification time of a file, as stored beside a session imported from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileSignature {
    pub size: i64,
    pub mtime_ns: i64,
}

/// Size and modification time (ns) of a file.
pub fn file_signature(path: &Path) -> Result<FileSignature> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
    Ok(FileSignature { size: i64::try_from(meta.len()).unwrap_or(i64::MAX), mtime_ns: mtime })
}
