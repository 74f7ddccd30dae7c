//! A session's lines in file order, unpacked on a second thread ahead of the caller (export):
//! the calling thread reads rows and hands each line to its consumer (which writes the file),
//! while another unpacks the next slice of frames. Unpacking a 100,000-line session in line
//! would double its export's time; a session of one slice is unpacked in line.

use crate::error::{Error, Result};
use crate::store::codec::Unpacker;
use crate::store::sqlite::lines::DICTIONARY;
use rusqlite::types::ValueRef;
use rusqlite::{named_params, Connection};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

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

/// A slice of stored values, with the dictionaries the unpacker has not been given yet.
struct Slice {
    values: Vec<Stored>,
    dicts: Vec<(i64, Vec<u8>)>,
}

fn unpack_slice(un: &mut Unpacker, slice: Slice) -> std::result::Result<Vec<String>, String> {
    for (id, bytes) in &slice.dicts {
        un.learn(*id, bytes)?;
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

/// Hands `f` each line of keys `lo..=hi` in order, unpacked with `un` (the connection's, which
/// keeps the dictionaries it learnt from one session to the next).
pub fn each_line(
    conn: &Connection,
    un: &mut Unpacker,
    lo: i64,
    hi: i64,
    f: &mut dyn FnMut(&str) -> Result<()>,
) -> Result<()> {
    let mut st = conn.prepare_cached(STORED_LINES)?;
    let mut rows = st.query(named_params! { ":lo": lo, ":hi": hi })?;
    let mut known: Vec<i64> = Vec::new();
    // Dictionaries the unpacker learnt before this session.
    let already: Vec<i64> = un.known().collect();
    // Reads the next slice of rows (empty at the end).
    let mut next_slice = |rows: &mut rusqlite::Rows<'_>| -> Result<Slice> {
        let mut slice = Slice { values: Vec::new(), dicts: Vec::new() };
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
            if let Some(id) = dict.filter(|id| !known.contains(id)) {
                known.push(id);
                if already.contains(&id) {
                    slice.values.push(value);
                    continue;
                }
                let bytes: Vec<u8> = conn
                    .query_row(DICTIONARY, named_params! { ":id": id }, |r| r.get("dict"))
                    .map_err(|_| damaged(format!("the dictionary {id} of a stored line is missing")))?;
                slice.dicts.push((id, bytes));
            }
            slice.values.push(value);
        }
        Ok(slice)
    };
    let first = next_slice(&mut rows)?;
    let full = first.values.len();
    let lines = unpack_slice(un, first).map_err(damaged)?;
    let more = next_slice(&mut rows)?;
    if more.values.is_empty() || full == 0 {
        return lines.iter().try_for_each(|l| f(l));
    }
    std::thread::scope(|scope| -> Result<()> {
        let (to_worker, work): (SyncSender<Slice>, Receiver<Slice>) = sync_channel(1);
        let (to_caller, done) = sync_channel::<std::result::Result<Vec<String>, String>>(1);
        scope.spawn(move || {
            for slice in work {
                if to_caller.send(unpack_slice(un, slice)).is_err() {
                    return;
                }
            }
        });
        to_worker.send(more).map_err(|_| damaged("the unpacking thread stopped".into()))?;
        lines.iter().try_for_each(|l| f(l))?;
        loop {
            // Read the slice after the one being unpacked while the worker unpacks it.
            let next = next_slice(&mut rows)?;
            let unpacked = done.recv().map_err(|_| damaged("the unpacking thread stopped".into()))?.map_err(damaged)?;
            let last = next.values.is_empty();
            if !last {
                to_worker.send(next).map_err(|_| damaged("the unpacking thread stopped".into()))?;
            }
            unpacked.iter().try_for_each(|l| f(l))?;
            if last {
                return Ok(());
            }
        }
    })
}
