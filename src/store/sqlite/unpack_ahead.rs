//! A session's lines in file order, unpacked by other threads ahead of the caller (export):
//! the calling thread reads rows and hands each line to its consumer (which writes the file),
//! while a few others unpack the next slices of frames. Unpacking a 100,000-line session in
//! line would double its export's time; a session of one slice is unpacked in line.

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

/// A stored value.
enum Stored {
    Text(String),
    Frame(Vec<u8>, Option<i64>),
}

/// Dictionaries by id, with their bytes.
type DictBytes = Arc<Vec<(i64, Vec<u8>)>>;

/// A slice of stored values, with the dictionaries its unpacker may not know.
struct Slice {
    values: Vec<Stored>,
    dicts: DictBytes,
}

/// Threads unpacking a session's slices, at most.
const UNPACKERS: usize = 4;

/// Slices handed to the unpacking threads ahead of the one being written, per thread.
const AHEAD_PER_WORKER: usize = 2;

fn unpack_slice(un: &mut Unpacker, slice: Slice) -> std::result::Result<Vec<String>, String> {
    for (id, bytes) in slice.dicts.iter() {
        if !un.knows(*id) {
            un.learn(*id, bytes)?;
        }
    }
    slice
        .values
        .into_iter()
        .map(|v| match v {
            Stored::Text(t) => Ok(t),
            Stored::Frame(f, d) => un.unpack(&f, d).map_err(|e| format!("a stored line is damaged: {e}")),
        })
        .collect()
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

/// Hands `f` each line of keys `lo..=hi` in order, unpacked with `un` (the connection's, which
/// keeps the dictionaries it learnt from one session to the next) when the session is one
/// slice, else by a few threads, a slice each, while this one reads and hands over lines.
pub fn each_line(
    conn: &Connection,
    un: &mut Unpacker,
    lo: EntryKey,
    hi: EntryKey,
    f: &mut dyn FnMut(&str) -> Result<()>,
) -> Result<()> {
    let mut st = conn.prepare_cached(STORED_LINES)?;
    let mut rows = st.query(named_params! { ":lo": lo, ":hi": hi })?;
    let mut dicts = Dicts::default();
    // Reads the next slice of rows (empty at the end), its dictionaries named, not read.
    let next_slice = |rows: &mut rusqlite::Rows<'_>, dicts: &mut Dicts| -> Result<Vec<Stored>> {
        let mut values = Vec::new();
        let mut bytes = 0;
        while bytes < SLICE_BYTES {
            let Some(r) = rows.next()? else { break };
            let dict: Option<i64> = r.get("dict")?;
            let value = match r.get_ref("body")? {
                ValueRef::Blob(b) => Stored::Frame(b.to_vec(), dict),
                ValueRef::Text(t) => Stored::Text(String::from_utf8_lossy(t).into_owned()),
                _ => return Err(damaged("a stored line is neither text nor a frame".into())),
            };
            bytes += match &value {
                Stored::Text(t) => t.len(),
                Stored::Frame(b, _) => b.len() * 4,
            };
            if let Some(id) = dict {
                dicts.name(id);
            }
            values.push(value);
        }
        Ok(values)
    };
    let first = next_slice(&mut rows, &mut dicts)?;
    let more = if first.is_empty() { Vec::new() } else { next_slice(&mut rows, &mut dicts)? };
    if more.is_empty() {
        let known = dicts.read(conn, |id| !un.knows(id))?;
        let slice = Slice { values: first, dicts: known };
        return unpack_slice(un, slice).map_err(damaged)?.iter().try_for_each(|l| f(l));
    }
    std::thread::scope(|scope| -> Result<()> {
        let workers = parallel::workers(UNPACKERS);
        let pool = Pool::start(scope, (0..workers).map(|_| Unpacker::default()).collect(), unpack_slice);
        // The workers' unpackers are new: they need every dictionary named.
        let all = dicts.read(conn, |_| true)?;
        let mut ahead = VecDeque::from([
            pool.submit(Slice { values: first, dicts: Arc::clone(&all) }),
            pool.submit(Slice { values: more, dicts: all }),
        ]);
        let mut read_all = false;
        while let Some(next) = ahead.pop_front() {
            // Keep the workers busy while this thread writes what they unpacked.
            while !read_all && ahead.len() < workers * AHEAD_PER_WORKER {
                let values = next_slice(&mut rows, &mut dicts)?;
                read_all = values.is_empty();
                if !read_all {
                    ahead.push_back(pool.submit(Slice { values, dicts: dicts.read(conn, |_| true)? }));
                }
            }
            let lines = next.wait().ok_or_else(stopped)?.map_err(damaged)?;
            lines.iter().try_for_each(|l| f(l))?;
        }
        Ok(())
    })
}
