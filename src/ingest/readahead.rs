//! Reading and parsing an import's files on a second thread, ahead of the thread writing them
//! to the database: parsing is about 40% of an import's time, and the writer no longer waits
//! for it. Files are handed over in order, each as a stream of parsed lines; memory stays
//! bounded (a few files and a few MiB of lines ahead), whatever the files' sizes. Where the
//! store keeps its lines packed, a few workers pack each piece before the writer takes it.

use crate::jsonl::signature::FileSignature;
use crate::jsonl::{classify, LineKind, LineReader};
use crate::store::codec::{Dictionary, Packer};
use crate::store::interface::write::ParsedLine;
use crate::store::parallel::{self, Pool, Ticket};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

/// A line's kind, with what writing it needs when it is an entry.
// Nearly every line is an entry: boxing that variant would allocate for each one.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Scanned {
    /// Empty or whitespace only.
    Blank,
    /// Not a JSON object: the reason.
    Malformed(String),
    /// A JSON object.
    Entry(ParsedLine),
}

impl Scanned {
    /// Classifies and reads one line.
    pub fn of(text: &str) -> Self {
        match classify(text) {
            LineKind::Blank => Scanned::Blank,
            LineKind::Malformed(reason) => Scanned::Malformed(reason),
            LineKind::Object(obj) => Scanned::Entry(ParsedLine::of_line(text, &obj)),
        }
    }
}

/// One line read ahead.
#[derive(Debug)]
pub struct AheadLine {
    /// 1-based line number.
    pub number: u64,
    /// Byte offset of the line's start.
    pub offset: u64,
    /// Byte offset just past the line.
    pub end: u64,
    /// The text (see [`crate::jsonl::Line`]).
    pub text: String,
    /// False for a final line without `\n`.
    pub terminated: bool,
    /// The line parsed.
    pub scanned: Scanned,
}

/// What the reader sends for one file, in order.
enum Piece {
    Lines(Vec<AheadLine>),
    /// Lines being packed by a worker of the pool.
    Packing(Ticket<Vec<AheadLine>>),
    End,
    Failed(std::io::Error),
}

/// A file as the reader found it: its signature when it looked, and its lines unless it
/// looked unchanged or could not be looked at (the writer then reads it itself).
struct AheadFile {
    index: usize,
    read: Option<(FileSignature, Receiver<Piece>)>,
}

/// Lines per piece, and bytes: small enough that a small file is handed over in a few pieces,
/// large enough that handing over costs little.
const PIECE_LINES: usize = 64;
const PIECE_BYTES: usize = 256 << 10;
/// Pieces read ahead within a file, and files read ahead: at most 64 MiB of pieces waiting
/// (32 × 8 × 256 KiB). A batch's commit stops the writer; with 4 files ahead the reader and
/// the packers then stopped too, and an import of the 10k corpus kept 1.5 of the 2 cores busy.
/// With 32, its import went from 12.7-12.9 to 11.0-11.1 s; HUGE's (one file) stayed at 2.4 s.
const PIECES_AHEAD: usize = 8;
const FILES_AHEAD: usize = 32;

/// The reading thread of one import.
pub struct ReadAhead {
    files: Option<Receiver<AheadFile>>,
    pending: Option<AheadFile>,
    worker: Option<JoinHandle<()>>,
}

impl ReadAhead {
    /// Starts reading `paths` in order. A file whose size and modification time are those in
    /// `known` (by absolute path) is not read: the writer will find it unchanged. With a
    /// `packer` (the store keeps its lines packed), entry lines are packed here too.
    pub fn start(paths: Vec<PathBuf>, known: HashMap<PathBuf, FileSignature>, mut packer: Option<Packer>) -> Self {
        let (tx, rx) = sync_channel(FILES_AHEAD);
        let worker = std::thread::Builder::new()
            .name("sessiondb-readahead".into())
            .spawn(move || match packer.take() {
                None => read_files(&paths, &known, &tx, None),
                Some(trainer) => std::thread::scope(|scope| {
                    let dict = trainer.dictionary().cloned();
                    let states = (0..parallel::workers(PACKERS)).map(|_| Packer::new(dict.clone(), false)).collect();
                    let mut packing = Packing { trainer, pool: Pool::start(scope, states, pack_piece) };
                    read_files(&paths, &known, &tx, Some(&mut packing));
                }),
            })
            .ok();
        ReadAhead { files: worker.is_some().then_some(rx), pending: None, worker }
    }

    /// The stream of file `index` (of the paths given to [`ReadAhead::start`]), with the
    /// file's signature; `None` when the reader did not read it (it looked unchanged, or its
    /// signature could not be taken) or stopped. Files before `index` not taken are dropped.
    pub fn take(&mut self, index: usize) -> Option<FileStream> {
        loop {
            let file = match self.pending.take() {
                Some(f) => f,
                None => self.files.as_ref()?.recv().ok()?,
            };
            if file.index < index {
                continue;
            }
            if file.index > index {
                self.pending = Some(file);
                return None;
            }
            let (signature, lines) = file.read?;
            return Some(FileStream { signature, lines, piece: Vec::new().into_iter(), done: false });
        }
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        // Closing the channels ends the reader at its next send.
        self.pending = None;
        self.files = None;
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

/// One file's lines, read and parsed ahead.
pub struct FileStream {
    /// Size and modification time (ns) of the file, taken before reading it.
    pub signature: FileSignature,
    lines: Receiver<Piece>,
    piece: std::vec::IntoIter<AheadLine>,
    done: bool,
}

impl FileStream {
    /// The next line; `None` at the end of the file.
    pub fn next_line(&mut self) -> std::io::Result<Option<AheadLine>> {
        loop {
            if let Some(line) = self.piece.next() {
                return Ok(Some(line));
            }
            if self.done {
                return Ok(None);
            }
            match self.lines.recv() {
                Ok(Piece::Lines(v)) => self.piece = v.into_iter(),
                Ok(Piece::Packing(t)) => match t.wait() {
                    Some(v) => self.piece = v.into_iter(),
                    None => {
                        self.done = true;
                        return Err(std::io::Error::other("the packing thread stopped before the end of the file"));
                    }
                },
                Ok(Piece::End) => self.done = true,
                Ok(Piece::Failed(e)) => {
                    self.done = true;
                    return Err(e);
                }
                Err(_) => {
                    self.done = true;
                    return Err(std::io::Error::other("the reading thread stopped before the end of the file"));
                }
            }
        }
    }
}

/// Threads packing lines beside the reader, at most.
const PACKERS: usize = 4;

/// Lines to pack, with the dictionary to pack them with.
type PackJob = (Vec<AheadLine>, Option<Arc<Dictionary>>);

/// The packing of entry lines: the reader's packer only collects lines and trains the
/// dictionary from them (when the store has none yet); the pool's workers pack.
struct Packing {
    trainer: Packer,
    pool: Pool<PackJob, Vec<AheadLine>>,
}

impl Packing {
    /// Hands `piece` to a worker, its entry lines taken as training samples first.
    fn submit(&mut self, piece: Vec<AheadLine>) -> Piece {
        if self.trainer.is_training() {
            for l in &piece {
                if matches!(l.scanned, Scanned::Entry(_)) {
                    self.trainer.sample(l.text.as_bytes());
                }
            }
        }
        Piece::Packing(self.pool.submit((piece, self.trainer.dictionary().cloned())))
    }
}

/// A worker's job: the entry lines of a piece packed.
fn pack_piece(packer: &mut Packer, (mut lines, dict): PackJob) -> Vec<AheadLine> {
    packer.set_dictionary(dict);
    for l in &mut lines {
        if let Scanned::Entry(parsed) = &mut l.scanned {
            parsed.packed = packer.pack(l.text.as_bytes());
        }
    }
    lines
}

/// The reader: every path in order, each as an [`AheadFile`] followed by its pieces.
fn read_files(
    paths: &[PathBuf],
    known: &HashMap<PathBuf, FileSignature>,
    files: &SyncSender<AheadFile>,
    mut packing: Option<&mut Packing>,
) {
    for (index, path) in paths.iter().enumerate() {
        let abs = crate::pi::layout::absolute(path);
        let signature = crate::jsonl::signature::file_signature(path).ok().filter(|sig| known.get(&abs) != Some(sig));
        let Some(signature) = signature else {
            if files.send(AheadFile { index, read: None }).is_err() {
                return;
            }
            continue;
        };
        let (tx, rx) = sync_channel(PIECES_AHEAD);
        if files.send(AheadFile { index, read: Some((signature, rx)) }).is_err() {
            return;
        }
        // The writer dropping the stream (it found the file unchanged, or failed) ends this
        // file early; the next one follows.
        let _ = read_file(path, &tx, packing.as_deref_mut());
    }
}

/// Sends one file's lines in pieces, then `End` (or `Failed`). `Err` when the writer no
/// longer listens.
fn read_file(path: &std::path::Path, tx: &SyncSender<Piece>, mut packing: Option<&mut Packing>) -> Result<(), ()> {
    // A piece as it is sent: to be packed first when the store packs its lines.
    let mut send = |piece: Vec<AheadLine>| {
        let piece = match packing.as_deref_mut() {
            Some(p) => p.submit(piece),
            None => Piece::Lines(piece),
        };
        tx.send(piece).map_err(drop)
    };
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => return tx.send(Piece::Failed(e)).map_err(drop),
    };
    let mut reader = LineReader::new(file);
    let (mut piece, mut bytes) = (Vec::with_capacity(PIECE_LINES), 0);
    loop {
        match reader.next_line() {
            Ok(Some(line)) => {
                bytes += line.text.len();
                let scanned = Scanned::of(&line.text);
                piece.push(AheadLine {
                    number: line.number,
                    offset: line.offset,
                    end: line.end,
                    text: line.text.into_owned(),
                    terminated: line.terminated,
                    scanned,
                });
                if piece.len() >= PIECE_LINES || bytes >= PIECE_BYTES {
                    send(std::mem::replace(&mut piece, Vec::with_capacity(PIECE_LINES)))?;
                    bytes = 0;
                }
            }
            Ok(None) => break,
            Err(e) => {
                if !piece.is_empty() {
                    send(piece)?;
                }
                return tx.send(Piece::Failed(e)).map_err(drop);
            }
        }
    }
    if !piece.is_empty() {
        send(piece)?;
    }
    tx.send(Piece::End).map_err(drop)
}
