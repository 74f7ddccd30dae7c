//! Stored lines as zstd frames: the codec every backend that compresses its lines uses (SQLite:
//! `store::sqlite::lines`). A line is packed on its own (a row must be readable alone) at
//! level 3 with a dictionary trained from the database's own lines, into a frame carrying its
//! length and a checksum of the line, so that unpacking proves the line is the one written.
//! The measurements behind these choices are in docs/benchmarks/compression-study.md.

use std::sync::Arc;
use zstd::zstd_safe::{self, CCtx, CDict, CParameter, DCtx, DDict};

/// zstd's compression level: level 6 saves 2% more at a quarter of the speed, level 1 costs 9%.
pub const LEVEL: i32 = 3;

/// Size of a trained dictionary (zstd's default).
pub const DICTIONARY_BYTES: usize = 110 << 10;

/// Lines collected before a dictionary is trained from them: training takes about 0.15 s of
/// one core for this much, and 8 MiB (0.65 s) made frames only 0.6% smaller on c1k.
pub const TRAIN_BYTES: usize = 2 << 20;

/// Longest part of one line taken as a training sample.
const SAMPLE_CUT: usize = 128 << 10;

/// Longest line a frame may claim to hold: SQLite's largest value.
const MAX_LINE: u64 = 1_000_000_000;

/// A trained dictionary: its id (zstd's, written in its header) and bytes, prepared for packing.
pub struct Dictionary {
    /// The id rows name it by.
    pub id: i64,
    /// The dictionary as stored.
    pub bytes: Vec<u8>,
    cdict: CDict<'static>,
}

impl std::fmt::Debug for Dictionary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Dictionary({}, {} bytes)", self.id, self.bytes.len())
    }
}

impl Dictionary {
    /// A dictionary from its bytes; `None` when they are not a zstd dictionary.
    pub fn new(bytes: Vec<u8>) -> Option<Arc<Self>> {
        let id = i64::from(zstd_safe::get_dict_id_from_dict(&bytes)?.get());
        let cdict = CDict::try_create(&bytes, LEVEL)?;
        Some(Arc::new(Dictionary { id, bytes, cdict }))
    }

    /// Trains one from `samples` (lines one after another) of `sizes`; `None` when zstd finds
    /// too little to learn from.
    pub fn train(samples: &[u8], sizes: &[usize]) -> Option<Arc<Self>> {
        let bytes = zstd::dict::from_continuous(samples, sizes, DICTIONARY_BYTES).ok()?;
        Dictionary::new(bytes)
    }
}

/// A line packed: its frame, and the dictionary it needs (`None`: packed without one).
#[derive(Debug, Clone)]
pub struct Packed {
    /// The zstd frame.
    pub frame: Vec<u8>,
    /// The dictionary it was packed with.
    pub dict: Option<Arc<Dictionary>>,
}

impl Packed {
    /// The id of the dictionary the frame needs.
    pub fn dict_id(&self) -> Option<i64> {
        self.dict.as_ref().map(|d| d.id)
    }
}

/// Lines collected to train a dictionary from.
#[derive(Default)]
struct Samples {
    data: Vec<u8>,
    sizes: Vec<usize>,
}

/// Packs lines, one at a time, with the dictionary it was given or, when it had none and
/// trains, with the one it trains from the first [`TRAIN_BYTES`] of lines it sees.
pub struct Packer {
    // Declared before `dict`, so dropped before the dictionary it refers to.
    cctx: CCtx<'static>,
    dict: Option<Arc<Dictionary>>,
    samples: Option<Samples>,
    scratch: Vec<u8>,
}

impl std::fmt::Debug for Packer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Packer({:?}, training: {})", self.dict, self.samples.is_some())
    }
}

impl Packer {
    /// A packer using `dict`; with none and `train`, it trains one from the lines it packs.
    pub fn new(dict: Option<Arc<Dictionary>>, train: bool) -> Self {
        let mut cctx = CCtx::create();
        // Settings that cannot fail on a fresh context.
        let _ = cctx.set_parameter(CParameter::CompressionLevel(LEVEL));
        let _ = cctx.set_parameter(CParameter::ChecksumFlag(true));
        let _ = cctx.set_parameter(CParameter::ContentSizeFlag(true));
        // The row names the dictionary: the frame need not.
        let _ = cctx.set_parameter(CParameter::DictIdFlag(false));
        let samples = (dict.is_none() && train).then(Samples::default);
        let mut p = Packer { cctx, dict: None, samples, scratch: Vec::new() };
        if let Some(d) = dict {
            p.use_dictionary(d);
        }
        p
    }

    fn use_dictionary(&mut self, d: Arc<Dictionary>) {
        if self.cctx.ref_cdict(&d.cdict).is_ok() {
            self.dict = Some(d);
        }
    }

    /// Packs with `dict` from now on (`None`: without one), unless it does already.
    pub fn set_dictionary(&mut self, dict: Option<Arc<Dictionary>>) {
        if self.dict.as_ref().map(|d| d.id) == dict.as_ref().map(|d| d.id) {
            return;
        }
        match dict {
            Some(d) => self.use_dictionary(d),
            None => {
                // The context lets go of the dictionary before it may be dropped.
                if self.cctx.disable_dictionary().is_ok() {
                    self.dict = None;
                }
            }
        }
    }

    /// The dictionary lines are packed with now.
    pub fn dictionary(&self) -> Option<&Arc<Dictionary>> {
        self.dict.as_ref()
    }

    /// Whether the packer still collects lines to train a dictionary from.
    pub fn is_training(&self) -> bool {
        self.samples.is_some()
    }

    /// Takes `line` as a training sample without packing it (lines already stored); trains
    /// once enough were seen.
    pub fn sample(&mut self, line: &[u8]) {
        let Some(s) = self.samples.as_mut() else { return };
        let cut = &line[..line.len().min(SAMPLE_CUT)];
        if cut.is_empty() {
            return;
        }
        s.data.extend_from_slice(cut);
        s.sizes.push(cut.len());
        if s.data.len() >= TRAIN_BYTES {
            self.train_now();
        }
    }

    /// Trains the dictionary from the samples taken so far (if there are any), and stops
    /// sampling.
    pub fn train_now(&mut self) {
        let Some(s) = self.samples.take() else { return };
        if let Some(d) = Dictionary::train(&s.data, &s.sizes) {
            self.use_dictionary(d);
        }
    }

    /// `line` packed; `None` when the frame would not be smaller (the line is stored as it is).
    pub fn pack(&mut self, line: &[u8]) -> Option<Packed> {
        self.sample(line);
        if line.len() < 8 {
            return None;
        }
        self.scratch.clear();
        self.scratch.reserve(line.len() - 1);
        // A frame that does not fit in fewer bytes than the line fails with "destination too
        // small": the line is then kept as it is, and no larger buffer was needed.
        match self.cctx.compress2(&mut self.scratch, line) {
            Ok(n) if n < line.len() => Some(Packed { frame: self.scratch[..n].to_vec(), dict: self.dict.clone() }),
            _ => None,
        }
    }
}

/// Unpacks frames, with the dictionaries it was taught by id.
pub struct Unpacker {
    dctx: DCtx<'static>,
    /// A database has a dictionary or two: a list is searched faster than a map is hashed.
    dicts: Vec<(i64, DDict<'static>)>,
}

impl Default for Unpacker {
    fn default() -> Self {
        Unpacker { dctx: DCtx::create(), dicts: Vec::new() }
    }
}

impl Unpacker {
    /// Whether it knows dictionary `id`.
    pub fn knows(&self, id: i64) -> bool {
        self.dicts.iter().any(|(d, _)| *d == id)
    }

    /// The dictionaries it knows.
    pub fn known(&self) -> impl Iterator<Item = i64> + '_ {
        self.dicts.iter().map(|(d, _)| *d)
    }

    /// Learns dictionary `id` from its bytes.
    pub fn learn(&mut self, id: i64, bytes: &[u8]) -> Result<(), String> {
        let d = DDict::try_create(bytes).ok_or_else(|| format!("dictionary {id} cannot be loaded"))?;
        self.dicts.retain(|(k, _)| *k != id);
        self.dicts.push((id, d));
        Ok(())
    }

    /// The line in `frame`, packed with dictionary `dict`; an error saying what is wrong when
    /// the frame is damaged (its checksum or length disagrees, or it is no frame).
    pub fn unpack(&mut self, frame: &[u8], dict: Option<i64>) -> Result<String, String> {
        let mut out = Vec::new();
        self.unpack_onto(frame, dict, &mut out)?;
        String::from_utf8(out).map_err(|_| "the line is not UTF-8".into())
    }

    /// Appends the line in `frame` to `out`, checked as [`Unpacker::unpack`] checks it but for
    /// UTF-8 (bytes written out as they were read: an export); on an error `out` is as it was.
    pub fn unpack_onto(&mut self, frame: &[u8], dict: Option<i64>, out: &mut Vec<u8>) -> Result<(), String> {
        let size = match zstd_safe::get_frame_content_size(frame) {
            Ok(Some(n)) if n <= MAX_LINE => n as usize,
            Ok(Some(n)) => return Err(format!("the frame claims {n} bytes")),
            Ok(None) | Err(_) => return Err("not a zstd frame with its length".into()),
        };
        let start = out.len();
        out.reserve(size);
        // Written after what `out` holds, into its spare room: nothing is zeroed or copied.
        let mut tail = std::io::Cursor::new(&mut *out);
        tail.set_position(start as u64);
        let res = match dict {
            None => self.dctx.decompress(&mut tail, frame),
            Some(id) => {
                let d =
                    self.dicts.iter().find(|(k, _)| *k == id).ok_or_else(|| format!("dictionary {id} is missing"))?;
                self.dctx.decompress_using_ddict(&mut tail, frame, &d.1)
            }
        };
        let fail = match res {
            Ok(n) if n == size && out.len() == start + size => return Ok(()),
            Ok(n) => format!("the frame holds {n} bytes, not the {size} it says"),
            Err(code) => format!("zstd: {}", zstd_safe::get_error_name(code)),
        };
        out.truncate(start);
        Err(fail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize) -> Vec<String> {
        (0..n)
            .map(|i| {
                format!(
                    r#"{{"type":"message","id":"{i:08x}","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{{"role":"user","content":[{{"type":"text","text":"line {i} of the sample, about the ledger migration"}}]}}}}"#
                )
            })
            .collect()
    }

    #[test]
    fn lines_round_trip_with_and_without_a_dictionary_and_damage_is_reported() {
        let lines = lines(20_000);
        let mut plain = Packer::new(None, false);
        let mut training = Packer::new(None, true);
        for l in &lines {
            training.sample(l.as_bytes());
        }
        training.train_now();
        let dict = training.dictionary().cloned().expect("a dictionary is trained from 20,000 lines");
        let mut un = Unpacker::default();
        un.learn(dict.id, &dict.bytes).unwrap();
        for l in lines.iter().step_by(97) {
            let a = plain.pack(l.as_bytes()).expect("a JSON line compresses");
            let b = training.pack(l.as_bytes()).expect("a JSON line compresses");
            assert!(b.frame.len() < a.frame.len(), "the dictionary helps");
            assert_eq!(un.unpack(&a.frame, None).unwrap(), *l);
            assert_eq!(un.unpack(&b.frame, b.dict_id()).unwrap(), *l);
            let mut bad = b.frame.clone();
            let mid = bad.len() / 2;
            bad[mid] ^= 0x40;
            assert!(un.unpack(&bad, b.dict_id()).is_err(), "a flipped byte is caught by the checksum");
        }
        assert!(plain.pack(b"{}").is_none(), "a tiny line is kept as it is");
        assert!(Unpacker::default().unpack(b"not a frame", None).is_err());
    }

    #[test]
    fn lines_unpacked_onto_a_buffer_follow_what_it_holds_and_a_damaged_one_adds_nothing() {
        let lines = lines(3);
        let mut packer = Packer::new(None, false);
        let mut un = Unpacker::default();
        let mut out = b"head\n".to_vec();
        for l in &lines {
            let p = packer.pack(l.as_bytes()).expect("a JSON line compresses");
            un.unpack_onto(&p.frame, None, &mut out).unwrap();
            out.push(b'\n');
        }
        assert_eq!(String::from_utf8(out.clone()).unwrap(), format!("head\n{}\n", lines.join("\n")));
        let mut bad = packer.pack(lines[0].as_bytes()).unwrap().frame;
        let last = bad.len() - 1;
        bad[last] ^= 0x01;
        let before = out.clone();
        assert!(un.unpack_onto(&bad, None, &mut out).is_err(), "a damaged checksum is caught");
        assert_eq!(out, before);
        assert!(un.unpack_onto(&bad, Some(7), &mut out).unwrap_err().contains("dictionary 7 is missing"));
        assert_eq!(out, before);
    }
}
