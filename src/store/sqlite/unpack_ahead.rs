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

/// A slice of stored values, with the dictionaries the session's frames have needed so far.
struct Slice {
    values: Vec<Stored>,
    dicts: Arc<Vec<(i64, Vec<u8>)>>,
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
    let mut dicts: Arc<Vec<(i64, Vec<u8>)>> = Arc::default();
    // Reads the next slice of rows (empty at the end).
    let mut next_slice = |rows: &mut rusqlite::Rows<'_>| -> Result<Slice> {
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
            if let Some(id) = dict.filter(|id| !dicts.iter().any(|(d, _)| d == id)) {
                let bytes: Vec<u8> = conn
                    .query_row(DICTIONARY, named_params! { ":id": id }, |r| r.get("dict"))
                    .map_err(|_| damaged(format!("the dictionary {id} of a stored line is missing")))?;
                Arc::make_mut(&mut dicts).push((id, bytes));
            }
            values.push(value);
        }
        Ok(Slice { values, dicts: Arc::clone(&dicts) })
    };
    let first = next_slice(&mut rows)?;
    let more = if first.values.is_empty() { None } else { Some(next_slice(&mut rows)?) };
    let Some(more) = more.filter(|m| !m.values.is_empty()) else {
        return unpack_slice(un, first).map_err(damaged)?.iter().try_for_each(|l| f(l));
    };
    std::thread::scope(|scope| -> Result<()> {
        let workers = parallel::workers(UNPACKERS);
        let pool = Pool::start(scope, (0..workers).map(|_| Unpacker::default()).collect(), unpack_slice);
        let mut ahead = VecDeque::from([pool.submit(first), pool.submit(more)]);
        let mut read_all = false;
        while let Some(next) = ahead.pop_front() {
            // Keep the workers busy while this thread writes what they unpacked.
            while !read_all && ahead.len() < workers * AHEAD_PER_WORKER {
                let slice = next_slice(&mut rows)?;
                read_all = slice.values.is_empty();
                if !read_all {
                    ahead.push_back(pool.submit(slice));
                }
            }
            let lines = next.wait().ok_or_else(stopped)?.map_err(damaged)?;
            lines.iter().try_for_each(|l| f(l))?;
        }
        Ok(())
    })
}
