//! Files written whole or not at all: a temporary file beside the target, synced, then renamed
//! over it; and a thread that writes a run of such files while its caller prepares the next
//! (an export of many sessions: unpacking one overlaps the syncing of another).

use crate::error::{Error, Result};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, Sender, SyncSender};

/// Writes `path` through `write` into a new temporary file beside it, synced, then renamed
/// over `path`: a reader sees the old file or the whole new one. (Also the export from a
/// PostgreSQL server.)
pub fn write_file_atomically(path: &Path, write: impl FnOnce(&mut dyn Write) -> Result<u64>) -> Result<u64> {
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

/// What the writer thread is handed: a file's name, its bytes in pieces, its end.
enum Piece {
    Start(PathBuf),
    Bytes(Vec<u8>),
    End,
}

/// Bytes gathered before they are handed over.
const PIECE_BYTES: usize = 1 << 20;

/// Pieces that may wait for the writer: what a caller runs ahead of the disk.
const PIECES_AHEAD: usize = 8;

/// Files written atomically on a thread of its own, in the order they are begun. A file's bytes
/// go to it through `Write`; [`FileWriter::finish_file`] ends it. Files written are reported
/// by [`FileWriter::written`] as the writer gets through them.
pub struct FileWriter {
    pieces: SyncSender<Piece>,
    done: Receiver<u64>,
    /// Buffers the thread is through with: reused, as a new one is fresh pages to fault in.
    spent: Receiver<Vec<u8>>,
    gathered: Vec<u8>,
    /// The thread stopped taking pieces: it failed, and its error says why.
    gone: bool,
}

impl FileWriter {
    /// Runs `work` with a writer, whose thread has written every file `work` finished when this
    /// returns. When the thread failed (a full disk), its error is the one returned: `work`
    /// only saw it stop.
    pub fn run<T>(work: impl FnOnce(&mut FileWriter) -> Result<T>) -> Result<T> {
        let (pieces, rx) = sync_channel::<Piece>(PIECES_AHEAD);
        let (done_tx, done) = std::sync::mpsc::channel::<u64>();
        let (spent_tx, spent) = std::sync::mpsc::channel::<Vec<u8>>();
        std::thread::scope(|scope| {
            let thread = scope.spawn(move || write_files(rx, done_tx, spent_tx));
            let mut w = FileWriter { pieces, done, spent, gathered: Vec::new(), gone: false };
            let result = work(&mut w);
            let gone = w.gone;
            // Ends the thread's input: a file begun and not finished is not written.
            drop(w);
            let written = thread.join().unwrap_or_else(|_| Err(writer_stopped()));
            match (result, written) {
                (Ok(v), Ok(())) => Ok(v),
                (Err(e), Ok(())) | (Ok(_), Err(e)) => Err(e),
                (Err(mine), Err(theirs)) => Err(if gone { theirs } else { mine }),
            }
        })
    }

    /// Begins the file at `path`.
    pub fn begin_file(&mut self, path: &Path) -> Result<()> {
        self.send(Piece::Start(path.to_path_buf()))
    }

    /// Ends the file begun last: it is synced and renamed into place (a reader sees it whole).
    pub fn finish_file(&mut self) -> Result<()> {
        self.hand_over()?;
        self.send(Piece::End)
    }

    /// Sizes of the files written since the last call, in the order they were begun.
    pub fn written(&mut self) -> impl Iterator<Item = u64> + '_ {
        self.done.try_iter()
    }

    /// Adds `buf`'s bytes to the file begun last: a large buffer is handed to the thread as it
    /// is (not copied), and a buffer the thread is through with (or an empty one) left in its
    /// place.
    pub fn take(&mut self, buf: &mut Vec<u8>) -> Result<()> {
        if buf.len() < PIECE_BYTES / 4 {
            return self.write_all(buf).map_err(|e| Error::io("<output>", e));
        }
        self.hand_over()?;
        // The thread empties a buffer before it hands it back.
        let mut spent = self.spent.try_recv().unwrap_or_default();
        std::mem::swap(buf, &mut spent);
        self.send(Piece::Bytes(spent))
    }

    /// Hands the bytes gathered to the thread.
    fn hand_over(&mut self) -> Result<()> {
        if !self.gathered.is_empty() {
            let next = self.spent.try_recv().unwrap_or_else(|_| Vec::with_capacity(PIECE_BYTES));
            let full = std::mem::replace(&mut self.gathered, next);
            self.send(Piece::Bytes(full))?;
        }
        Ok(())
    }

    fn send(&mut self, piece: Piece) -> Result<()> {
        self.pieces.send(piece).map_err(|_| {
            self.gone = true;
            writer_stopped()
        })
    }
}

impl Write for FileWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.gathered.extend_from_slice(buf);
        if self.gathered.len() >= PIECE_BYTES {
            self.hand_over().map_err(std::io::Error::other)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn writer_stopped() -> Error {
    Error::io("<export>", std::io::Error::other("the file writer stopped"))
}

/// The writer thread: each file from its start to its end, written atomically; a file whose
/// end never comes (the caller stopped) is left unwritten.
fn write_files(pieces: Receiver<Piece>, done: Sender<u64>, spent: Sender<Vec<u8>>) -> Result<()> {
    let mut pieces = pieces.into_iter();
    while let Some(piece) = pieces.next() {
        let Piece::Start(path) = piece else { return Err(writer_stopped()) };
        let n = write_file_atomically(&path, |w| {
            let mut n = 0u64;
            loop {
                match pieces.next() {
                    Some(Piece::Bytes(mut b)) => {
                        w.write_all(&b).map_err(|e| Error::io("<output>", e))?;
                        n += b.len() as u64;
                        b.clear();
                        let _ = spent.send(b);
                    }
                    Some(Piece::End) => return Ok(n),
                    _ => return Err(writer_stopped()),
                }
            }
        })?;
        let _ = done.send(n);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    #[test]
    fn files_are_written_whole_in_order_and_large_buffers_are_taken_not_copied() {
        let dir = tempfile::tempdir().unwrap();
        let big: Vec<u8> = (0..3 * PIECE_BYTES).map(|i| b'a' + (i % 26) as u8).collect();
        let mut sizes = Vec::new();
        FileWriter::run(|w| {
            for (i, name) in ["a.jsonl", "b.jsonl", "c.jsonl"].iter().enumerate() {
                w.begin_file(&dir.path().join(name))?;
                w.write_all(format!("head {i}\n").as_bytes()).unwrap();
                let mut buf = big.clone();
                w.take(&mut buf)?;
                assert!(buf.is_empty(), "the buffer was taken and an empty one left");
                let mut small = b"tail\n".to_vec();
                w.take(&mut small)?;
                w.finish_file()?;
                sizes.extend(w.written());
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(names(dir.path()), ["a.jsonl", "b.jsonl", "c.jsonl"], "no temporary file is left");
        for (i, name) in ["a.jsonl", "b.jsonl", "c.jsonl"].iter().enumerate() {
            let mut want = format!("head {i}\n").into_bytes();
            want.extend_from_slice(&big);
            want.extend_from_slice(b"tail\n");
            assert!(std::fs::read(dir.path().join(name)).unwrap() == want, "{name}");
        }
        assert!(sizes.len() <= 3 && sizes.iter().all(|&n| n as usize == 3 * PIECE_BYTES + 12), "{sizes:?}");
    }

    #[test]
    fn the_writers_failure_is_the_error_and_an_unfinished_file_is_not_written() {
        let dir = tempfile::tempdir().unwrap();
        // A file where a folder should be: the writer cannot create the file below it.
        std::fs::write(dir.path().join("blocked"), "").unwrap();
        let bad = dir.path().join("blocked/x.jsonl");
        let err = FileWriter::run(|w| {
            w.begin_file(&bad)?;
            w.write_all(b"line\n").unwrap();
            w.finish_file()?;
            // The caller goes on until the writer's stop reaches it.
            for i in 0..1000 {
                w.begin_file(&dir.path().join(format!("after-{i}.jsonl")))?;
                w.take(&mut vec![b'x'; PIECE_BYTES])?;
                w.finish_file()?;
            }
            Ok(())
        })
        .unwrap_err();
        assert!(err.to_string().contains("/blocked: File exists"), "{err}");
        assert_eq!(names(dir.path()), ["blocked"], "nothing after the failure is written");
        // The caller failing in the middle of a file: that file is not written, none is left half.
        let err = FileWriter::run(|w| {
            w.begin_file(&dir.path().join("whole.jsonl"))?;
            w.write_all(b"whole\n").unwrap();
            w.finish_file()?;
            w.begin_file(&dir.path().join("half.jsonl"))?;
            w.take(&mut vec![b'x'; PIECE_BYTES])?;
            Err::<(), _>(Error::InvalidArgument("the reader failed".into()))
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "the reader failed");
        assert_eq!(names(dir.path()), ["blocked", "whole.jsonl"]);
        assert_eq!(std::fs::read(dir.path().join("whole.jsonl")).unwrap(), b"whole\n");
    }
}
