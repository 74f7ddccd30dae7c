//! Stored values in order, unpacked by other threads ahead of the caller: a session's lines
//! (export). The calling thread reads
//! rows and hands each slice of values, unpacked into one buffer, to its consumer (which
//! writes the file), while a few others unpack the next slices of frames. Unpacking a
//! 100,000-line session in line would double its export's time; rows of one slice are
//! unpacked in line.

use crate::error::{Error, Result};
use crate::store::codec::Unpacker;
use crate::store::keys::EntryKey;
use crate::store::parallel::{self, Pool};
use crate::store::sqlite::lines::DICTIONARY;
use rusqlite::types::ValueRef;
use rusqlite::{named_params, Connection};
use std::collections::VecDeque;
use std::sync::Arc;

/// A session's lines (keys `:lo..=:hi`) as stored, a copy's from the row holding it.
pub const STORED_LINES: &str = "SELECT \
        CASE WHEN e.body_key IS NULL THEN e.body ELSE (SELECT o.body FROM entries o WHERE o.key = e.body_key) END AS body, \
        CASE WHEN e.body_key IS NULL THEN e.body_dict ELSE (SELECT o.body_dict FROM entries o WHERE o.key = e.body_key) END AS dict \
    FROM entries e WHERE e.key BETWEEN :lo AND :hi ORDER BY e.key";

/// Bytes of stored values per slice handed to the unpacking thread.
const SLICE_BYTES: usize = 1 << 20;

/// How a stored value is kept.
#[derive(Clone, Copy)]
enum Kind {
    Text,
    /// A frame, and the dictionary it was packed with.
    Frame(Option<i64>),
}

/// Dictionaries by id, with their bytes.
type DictBytes = Arc<Vec<(i64, Vec<u8>)>>;

/// A slice of stored values, one after another in `bytes` (each ending where `values` says),
/// with the dictionaries its unpacker may not know: one buffer per slice, not one per row.
/// `out` is the buffer its lines are unpacked into: buffers go round (a new one of several
/// MiB is fresh pages from the system, each faulted in and zeroed).
#[derive(Default)]
struct Slice {
    bytes: Vec<u8>,
    values: Vec<(usize, Kind)>,
    dicts: DictBytes,
    out: Vec<u8>,
}

/// A slice unpacked: its lines, its emptied buffer of stored values, and where each line ends
/// (before its `\n`).
type Unpacked = std::result::Result<(Vec<u8>, Vec<u8>, Vec<usize>), String>;

/// Threads unpacking a session's slices, at most.
const UNPACKERS: usize = 4;

/// Slices handed to the unpacking threads ahead of the one being written, per thread.
const AHEAD_PER_WORKER: usize = 2;

/// The slice's lines, each followed by `\n`, in one buffer (its `out`).
fn unpack_slice(un: &mut Unpacker, slice: Slice) -> Unpacked {
    for (id, bytes) in slice.dicts.iter() {
        if !un.knows(*id) {
            un.learn(*id, bytes)?;
        }
    }
    // Frames hold about a quarter of their lines' bytes (more is reserved as it comes).
    let mut out = slice.out;
    out.clear();
    out.reserve(slice.bytes.len() * 4);
    let mut start = 0;
    let mut ends = Vec::with_capacity(slice.values.len());
    for &(end, kind) in &slice.values {
        let value = &slice.bytes[start..end];
        start = end;
        match kind {
            Kind::Text => out.extend_from_slice(value),
            Kind::Frame(d) => {
                un.unpack_onto(value, d, &mut out).map_err(|e| format!("a stored line is damaged: {e}"))?
            }
        }
        ends.push(out.len());
        out.push(b'\n');
    }
    Ok((out, slice.bytes, ends))
}

fn damaged(why: String) -> Error {
    Error::from(rusqlite::Error::UserFunctionError(why.into()))
}

fn stopped() -> Error {
    damaged("an unpacking thread stopped".into())
}

/// The dictionaries a session's frames name, read from `line_dicts` only when an unpacker
/// that does not know them needs them (the connection's keeps them from one session to the
/// next: reading 110 KiB per session again would cost more than a small session's lines).
#[derive(Default)]
struct Dicts {
    named: Vec<i64>,
    read: DictBytes,
}

impl Dicts {
    fn name(&mut self, id: i64) {
        if !self.named.contains(&id) {
            self.named.push(id);
        }
    }

    /// Reads those named that are not read yet and `wanted` says are wanted.
    fn read(&mut self, conn: &Connection, wanted: impl Fn(i64) -> bool) -> Result<DictBytes> {
        for &id in &self.named {
            if !wanted(id) || self.read.iter().any(|(d, _)| *d == id) {
                continue;
            }
            let bytes: Vec<u8> = conn
                .query_row(DICTIONARY, named_params! { ":id": id }, |r| r.get("dict"))
                .map_err(|_| damaged(format!("the dictionary {id} of a stored line is missing")))?;
            Arc::make_mut(&mut self.read).push((id, bytes));
        }
        Ok(Arc::clone(&self.read))
    }
}

/// Hands `f` the lines of keys `lo..=hi` in order, each followed by `\n`, a slice of them at a
/// time (see [`each_slice`]).
pub fn write_lines(
    conn: &Connection,
    un: &mut Unpacker,
    lo: EntryKey,
    hi: EntryKey,
    f: &mut dyn FnMut(&mut Vec<u8>) -> Result<()>,
) -> Result<()> {
    let mut st = conn.prepare_cached(STORED_LINES)?;
    let mut rows = st.query(named_params! { ":lo": lo, ":hi": hi })?;
    each_slice(conn, un, &mut rows, |_| Ok(()), &mut |_, lines, _| f(lines))
}

/// What [`each_slice`] hands each slice to: its rows' keys, its values unpacked, where each ends.
pub type SliceFn<'a, K> = dyn FnMut(Vec<K>, &mut Vec<u8>, &[usize]) -> Result<()> + 'a;

/// The stored values of `rows` (columns `body` and `dict`) in order, with `key` of each row:
/// `f` gets a slice of them at a time, its keys, its values unpacked into one buffer (each
/// followed by `\n`; `f` may keep the buffer and leave another) and where each value ends.
/// Unpacked with `un` (the connection's, which keeps the dictionaries it learnt from one call
/// to the next) when the rows are one slice, else by a few threads, a slice each, while this
/// one reads rows and hands over what they unpacked.
fn each_slice<K>(
    conn: &Connection,
    un: &mut Unpacker,
    rows: &mut rusqlite::Rows<'_>,
    key: impl Fn(&rusqlite::Row<'_>) -> Result<K>,
    f: &mut SliceFn<'_, K>,
) -> Result<()> {
    let mut dicts = Dicts::default();
    // Reads the next slice of rows (empty at the end), its dictionaries named, not read.
    let next_slice = |rows: &mut rusqlite::Rows<'_>,
                      dicts: &mut Dicts,
                      spare: &mut Vec<Vec<u8>>|
     -> Result<(Slice, Vec<K>)> {
        let mut slice =
            Slice { bytes: spare.pop().unwrap_or_default(), out: spare.pop().unwrap_or_default(), ..Slice::default() };
        slice.bytes.clear();
        let mut keys = Vec::new();
        let mut bytes = 0;
        while bytes < SLICE_BYTES {
            let Some(r) = rows.next()? else { break };
            let dict: Option<i64> = r.get("dict")?;
            let kind = match r.get_ref("body")? {
                ValueRef::Blob(b) => {
                    slice.bytes.extend_from_slice(b);
                    bytes += b.len() * 4;
                    Kind::Frame(dict)
                }
                ValueRef::Text(t) => {
                    slice.bytes.extend_from_slice(t);
                    bytes += t.len();
                    Kind::Text
                }
                _ => return Err(damaged("a stored line is neither text nor a frame".into())),
            };
            if let Some(id) = dict {
                dicts.name(id);
            }
            slice.values.push((slice.bytes.len(), kind));
            keys.push(key(r)?);
        }
        Ok((slice, keys))
    };
    let mut spare = Vec::new();
    let (first, first_keys) = next_slice(rows, &mut dicts, &mut spare)?;
    let (more, more_keys) = if first.values.is_empty() {
        (Slice::default(), Vec::new())
    } else {
        next_slice(rows, &mut dicts, &mut spare)?
    };
    if more.values.is_empty() {
        let known = dicts.read(conn, |id| !un.knows(id))?;
        let slice = Slice { dicts: known, ..first };
        let (mut lines, _, ends) = unpack_slice(un, slice).map_err(damaged)?;
        return f(first_keys, &mut lines, &ends);
    }
    std::thread::scope(|scope| -> Result<()> {
        let workers = parallel::workers(UNPACKERS);
        let pool = Pool::start(scope, (0..workers).map(|_| Unpacker::default()).collect(), unpack_slice);
        // The workers' unpackers are new: they need every dictionary named.
        let all = dicts.read(conn, |_| true)?;
        let mut ahead = VecDeque::from([
            (pool.submit(Slice { dicts: Arc::clone(&all), ..first }), first_keys),
            (pool.submit(Slice { dicts: all, ..more }), more_keys),
        ]);
        let mut read_all = false;
        while let Some((next, keys)) = ahead.pop_front() {
            // Keep the workers busy while this thread hands over what they unpacked.
            while !read_all && ahead.len() < workers * AHEAD_PER_WORKER {
                let (slice, keys) = next_slice(rows, &mut dicts, &mut spare)?;
                read_all = slice.values.is_empty();
                if !read_all {
                    let dicts = dicts.read(conn, |_| true)?;
                    ahead.push_back((pool.submit(Slice { dicts, ..slice }), keys));
                }
            }
            let (mut lines, bytes, ends) = next.wait().ok_or_else(stopped)?.map_err(damaged)?;
            // `f` may keep the buffer and leave one of its own: either goes round.
            f(keys, &mut lines, &ends)?;
            spare.extend([lines, bytes]);
        }
        Ok(())
    })
}
