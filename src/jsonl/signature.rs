//! A file's signature: what tells an import or a sync that a file changed since it was read,
//! and the hash of the bytes before a sync position that tells an appended file from a
//! rewritten one.

use crate::error::{Error, Result};
use std::fs::File;
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
    Ok(FileSignature::of(&meta))
}

impl FileSignature {
    /// The signature in `meta` (a regular file's metadata, however it was read).
    pub fn of(meta: &std::fs::Metadata) -> Self {
        let mtime = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        FileSignature { size: i64::try_from(meta.len()).unwrap_or(i64::MAX), mtime_ns: mtime }
    }
}

/// Bytes hashed before a sync position to tell an appended file from a rewritten one.
pub const TAIL_BYTES: u64 = 4096;

/// FNV-1a of the file's bytes in `[end - TAIL_BYTES, end)`: what a later sync compares
/// before reading only what was appended.
pub fn tail_hash(path: &Path, end: u64) -> Result<i64> {
    use std::io::{Read, Seek, SeekFrom};
    let start = end.saturating_sub(TAIL_BYTES);
    let mut f = File::open(path).map_err(|e| Error::io(path, e))?;
    f.seek(SeekFrom::Start(start)).map_err(|e| Error::io(path, e))?;
    let mut buf = Vec::with_capacity((end - start) as usize);
    f.take(end - start).read_to_end(&mut buf).map_err(|e| Error::io(path, e))?;
    if (buf.len() as u64) < end - start {
        return Ok(0); // the file is shorter now: no match possible
    }
    Ok(crate::hash::fnv1a(&[&buf]) as i64)
}

#[cfg(test)]
mod tests {
    /// The tail hash stored in a file's sync position: a sync compares it, so it must never
    /// change (a changed hash makes every followed file look rewritten).
    #[test]
    fn tail_hashes_are_as_before() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("s.jsonl");
        let text: String = (0..300).map(|i| format!("{{\"n\":{i},\"t\":\"ü\"}}\n")).collect();
        std::fs::write(&f, &text).unwrap();
        let got = (super::tail_hash(&f, 10).unwrap(), super::tail_hash(&f, text.len() as u64).unwrap());
        assert_eq!(got, (-2317373793876339222, -1762209188963331909));
    }
}
