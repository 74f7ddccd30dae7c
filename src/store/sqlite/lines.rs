//! Entry lines stored packed, on SQLite: the `sessiondb_line(body,
//! dict)` SQL function every connection gets (what reads of lines go through), the dictionaries
//! in `line_dicts`, the packer a connection's own writes use, and packing the lines a database
//! held before (the `compress-lines` maintenance of migration V17); joined message texts are
//! kept as text (`unpack-list-texts`, V20).
//!
//! A `body` (or `list_texts.text`) is the line itself when it is TEXT, and a zstd frame of it
//! ([`crate::store::codec`]) when it is a BLOB, with the id of its dictionary beside it.

use crate::error::{Error, Result};
use crate::store::codec::{Dictionary, Packed, Packer, Unpacker, TRAIN_BYTES};
use crate::store::keys::EntryKey;
use crate::store::sqlite::Sqlite;
use rusqlite::functions::FunctionFlags;
use rusqlite::types::{ToSqlOutput, Value, ValueRef};
use rusqlite::{named_params, Connection, OptionalExtension};
use std::cell::RefCell;
use std::io::IsTerminal;
use std::sync::Arc;

/// The name of the SQL function that reads a stored line.
pub const LINE_FUNCTION: &str = "sessiondb_line";

/// One dictionary's bytes.
pub const DICTIONARY: &str = "SELECT dict FROM line_dicts WHERE id = :id";

/// The newest dictionary.
pub const NEWEST_DICTIONARY: &str = "SELECT id, dict FROM line_dicts ORDER BY trained_ns DESC, id LIMIT 1";

/// Saves a dictionary (already there: nothing).
pub const SAVE_DICTIONARY: &str =
    "INSERT OR IGNORE INTO line_dicts (id, dict, trained_ns) VALUES (:id, :dict, :trained_ns)";

/// Bytes of unpacked lines a connection keeps, by frame: a session read again (pi builds its
/// context on every turn) is not unpacked again.
const UNPACKED_KEPT: usize = 4 << 20;

/// Lines a connection unpacked last, by their frame (a frame always unpacks to the same line).
#[derive(Default)]
struct Unpacked {
    lines: std::collections::HashMap<Vec<u8>, (Option<i64>, String)>,
    bytes: usize,
}

/// Gives the connection `sessiondb_line(body, dict)`: `body` as it is when it is text, its frame
/// unpacked (with dictionary `dict`, loaded from `line_dicts` once per connection) when it is a
/// blob. A damaged frame is an error naming what is wrong.
pub fn register(conn: &Connection) -> rusqlite::Result<()> {
    let state = RefCell::new((Unpacker::default(), Unpacked::default()));
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    conn.create_scalar_function(LINE_FUNCTION, 2, flags, move |ctx| {
        let dict: Option<i64> = ctx.get(1)?;
        let frame = match ctx.get_raw(0) {
            ValueRef::Blob(b) => b,
            // Checked first as valid UTF-8 (what SQLite's text nearly always is): several times
            // faster than the lossy conversion, which a listing's 60 MB of texts spent most of
            // its time in.
            ValueRef::Text(t) => {
                let text = match std::str::from_utf8(t) {
                    Ok(text) => text.to_owned(),
                    Err(_) => String::from_utf8_lossy(t).into_owned(),
                };
                return Ok(ToSqlOutput::Owned(Value::Text(text)));
            }
            ValueRef::Null => return Ok(ToSqlOutput::Owned(Value::Null)),
            _ => return Err(user_error("a stored line is neither text nor a frame".into())),
        };
        let mut state = state.borrow_mut();
        let (un, kept) = &mut *state;
        if let Some((d, line)) = kept.lines.get(frame) {
            if *d == dict {
                return Ok(ToSqlOutput::Owned(Value::Text(line.clone())));
            }
        }
        if let Some(id) = dict.filter(|&id| !un.knows(id)) {
            // SAFETY: the connection is only read here, not closed, while the function runs.
            let conn = unsafe { ctx.get_connection()? };
            let bytes: Option<Vec<u8>> =
                conn.query_row(DICTIONARY, named_params! { ":id": id }, |r| r.get("dict")).optional()?;
            let bytes = bytes.ok_or_else(|| user_error(format!("the dictionary {id} of a stored line is missing")))?;
            un.learn(id, &bytes).map_err(user_error)?;
        }
        let line = un.unpack(frame, dict).map_err(|e| user_error(format!("a stored line is damaged: {e}")))?;
        if line.len() <= UNPACKED_KEPT / 8 {
            if kept.bytes + line.len() > UNPACKED_KEPT {
                kept.lines.clear();
                kept.bytes = 0;
            }
            kept.bytes += line.len() + frame.len();
            kept.lines.insert(frame.to_vec(), (dict, line.clone()));
        }
        Ok(ToSqlOutput::Owned(Value::Text(line)))
    })
}

/// A stored line (`body` and its dictionary `dict`) read back with `unpacker`, which learns the
/// dictionaries it needs from `line_dicts`; why not, when it cannot be.
pub fn read_line(
    conn: &Connection,
    unpacker: &mut Unpacker,
    body: ValueRef<'_>,
    dict: Option<i64>,
) -> std::result::Result<String, String> {
    let frame = match body {
        ValueRef::Blob(b) => b,
        ValueRef::Text(t) => return String::from_utf8(t.to_vec()).map_err(|_| "the line is not UTF-8".into()),
        _ => return Err("the stored line is neither text nor a frame".into()),
    };
    if let Some(id) = dict.filter(|&id| !unpacker.knows(id)) {
        let bytes: Option<Vec<u8>> = conn
            .query_row(DICTIONARY, named_params! { ":id": id }, |r| r.get("dict"))
            .optional()
            .map_err(|e| e.to_string())?;
        let bytes = bytes.ok_or_else(|| format!("its dictionary {id} is missing"))?;
        unpacker.learn(id, &bytes)?;
    }
    unpacker.unpack(frame, dict).map_err(|e| format!("its compressed line is damaged: {e}"))
}

fn user_error(message: String) -> rusqlite::Error {
    rusqlite::Error::UserFunctionError(message.into())
}

/// The newest dictionary of the database, if it has one.
pub fn newest_dictionary(conn: &Connection) -> Result<Option<Arc<Dictionary>>> {
    let row: Option<(i64, Vec<u8>)> =
        conn.query_row(NEWEST_DICTIONARY, [], |r| Ok((r.get("id")?, r.get("dict")?))).optional()?;
    Ok(row.and_then(|(_, bytes)| Dictionary::new(bytes)))
}

/// Saves `d` in the current transaction, unless the database has it; a different dictionary
/// under the same id (zstd's ids are random 32-bit numbers) is refused.
pub fn save_dictionary(conn: &Connection, d: &Dictionary) -> Result<()> {
    let now = crate::store::interface::write::now_ns();
    let added = conn.prepare_cached(SAVE_DICTIONARY)?.execute(named_params! {
        ":id": d.id, ":dict": d.bytes, ":trained_ns": now,
    })?;
    if added == 0 {
        let stored: Vec<u8> =
            conn.prepare_cached(DICTIONARY)?.query_row(named_params! { ":id": d.id }, |r| r.get("dict"))?;
        if stored != d.bytes {
            return Err(Error::Migration(format!("two different line dictionaries have the id {}", d.id)));
        }
    }
    Ok(())
}

/// A packed line as bound to `body` and `body_dict`.
pub enum Stored<'a> {
    Text(&'a str),
    Frame(Packed),
}

impl Stored<'_> {
    /// The value of the `body` column.
    pub fn body(&self) -> ToSqlOutput<'_> {
        ToSqlOutput::Borrowed(match self {
            Stored::Text(t) => ValueRef::Text(t.as_bytes()),
            Stored::Frame(p) => ValueRef::Blob(&p.frame),
        })
    }

    /// The value of the dictionary column.
    pub fn dict(&self) -> Option<i64> {
        match self {
            Stored::Text(_) => None,
            Stored::Frame(p) => p.dict_id(),
        }
    }
}

/// What a connection's writers keep between writes: the packer of its own writes (appends,
/// branched sessions) and the dictionaries this connection knows are saved.
#[derive(Default)]
pub struct Packing {
    packer: Option<Packer>,
    saved: Vec<i64>,
    /// Lines are stored as text (a database in memory).
    text_only: bool,
}

impl Packing {
    /// Stores every line as text from now on.
    pub(in crate::store) fn keep_text(&mut self) {
        self.text_only = true;
    }

    /// Whether lines are stored as text.
    pub(in crate::store) fn text_only(&self) -> bool {
        self.text_only
    }
}

impl Sqlite {
    /// `text` as it is to be stored: packed with the connection's packer (the newest
    /// dictionary when the connection made it), or `packed` already (by an import's
    /// read-ahead), its dictionary saved in the current transaction when it is new.
    pub(in crate::store) fn stored<'a>(&self, text: &'a str, packed: Option<Packed>) -> Result<Stored<'a>> {
        let mut p = self.packing.borrow_mut();
        if p.text_only {
            return Ok(Stored::Text(text));
        }
        let packed = match packed {
            Some(packed) => {
                // The read-ahead trained a dictionary: this connection's own writes (the
                // joined texts) use it too, rather than train another.
                let untrained = p.packer.as_ref().is_none_or(|k| k.dictionary().is_none());
                if let Some(d) = packed.dict.as_ref().filter(|_| untrained) {
                    p.packer = Some(Packer::new(Some(d.clone()), false));
                }
                Some(packed)
            }
            None => {
                if p.packer.is_none() {
                    // Trains a dictionary when the database has none (see `import_packer`).
                    p.packer = Some(self.import_packer()?);
                }
                p.packer.as_mut().and_then(|k| k.pack(text.as_bytes()))
            }
        };
        let Some(packed) = packed else { return Ok(Stored::Text(text)) };
        if let Some(d) = &packed.dict {
            // Saved once per transaction at most: a rolled-back one may have taken it away.
            if !p.saved.contains(&d.id) || self.conn.is_autocommit() {
                save_dictionary(&self.conn, d)?;
                p.saved.push(d.id);
            }
        }
        Ok(Stored::Frame(packed))
    }

    /// Forgets which dictionaries this connection saved (a transaction ended).
    pub(in crate::store) fn forget_saved_dictionaries(&self) {
        self.packing.borrow_mut().saved.clear();
    }

    /// A packer for an import's read-ahead thread: with the newest dictionary; without one,
    /// it trains one from the database's own lines (up to [`TRAIN_BYTES`] of them, read now)
    /// and the lines it packs.
    pub(in crate::store) fn import_packer(&self) -> Result<Packer> {
        if let Some(d) = newest_dictionary(&self.conn)? {
            return Ok(Packer::new(Some(d), false));
        }
        let mut packer = Packer::new(None, true);
        let mut st = self.conn.prepare_cached(SAMPLE_LINES)?;
        let mut rows = st.query([])?;
        let mut taken = 0;
        while let Some(r) = rows.next()? {
            let line: String = r.get("body")?;
            taken += line.len();
            packer.sample(line.as_bytes());
            if taken >= TRAIN_BYTES {
                break;
            }
        }
        Ok(packer)
    }
}

/// The newest stored lines, for training a dictionary.
pub const SAMPLE_LINES: &str =
    "SELECT sessiondb_line(body, body_dict) AS body FROM entries WHERE body_key IS NULL ORDER BY key DESC";

/// Rows packed per transaction by the migration.
const SLICE_ROWS: i64 = 2000;

/// The lines stored as text from key `:from` on (at most `:n`), for the migration.
pub const PLAIN_LINES: &str = "SELECT key, body FROM entries \
    WHERE key >= :from AND body_key IS NULL AND typeof(body) = 'text' ORDER BY key LIMIT :n";

/// Stores one packed line in place of its text.
pub const PACK_LINE: &str = "UPDATE entries SET body = :body, body_dict = :dict WHERE key = :key";

/// How many lines are stored as text.
pub const COUNT_PLAIN: &str = "SELECT count(*) FROM entries WHERE body_key IS NULL AND typeof(body) = 'text'";

/// Marks the maintenance done.
const DONE: &str = "DELETE FROM maintenance WHERE task = 'compress-lines'";

/// Packs every line stored as text (the `compress-lines` maintenance migration V17 leaves):
/// trains a dictionary from the lines first, then packs them a slice of rows per transaction,
/// so a process killed meanwhile leaves whole rows (packed or not) and the next open goes on
/// where it stopped. Progress goes to standard error when it is a terminal. The file keeps its
/// size (the pages freed are reused) unless it is vacuumed afterwards: `sessiondb` does that
/// at the end.
pub fn compress_stored_lines(conn: &mut Connection) -> Result<()> {
    let total: i64 = conn.query_row(COUNT_PLAIN, [], |r| r.get(0))?;
    let show = std::io::stderr().is_terminal() && total > 0;
    let store = Sqlite {
        conn: std::mem::replace(conn, Connection::open_in_memory()?),
        packing: Default::default(),
        unpacker: Default::default(),
        bulk: Default::default(),
        rows_counted: None,
        path: None,
        journal: Default::default(),
    };
    let result = pack_all(&store, total, show);
    *conn = store.conn;
    result?;
    conn.execute_batch(DONE)?;
    if total > 0 {
        if show {
            eprintln!("sessiondb: compacting the database file");
        }
        // Give the freed pages back to the file system (the copy VACUUM makes goes to a
        // temporary file, not memory); a full disk leaves the file as it is.
        let _ = conn.execute_batch("PRAGMA temp_store = FILE; VACUUM; PRAGMA temp_store = MEMORY;");
        conn.execute_batch("PRAGMA temp_store = MEMORY")?;
    }
    Ok(())
}

fn pack_all(store: &Sqlite, total: i64, show: bool) -> Result<()> {
    let conn = &store.conn;
    let mut packer = store.import_packer()?;
    packer.train_now();
    let dict = packer.dictionary().cloned();
    let (mut from, mut done) = (EntryKey::MIN, 0i64);
    loop {
        conn.execute_batch("BEGIN IMMEDIATE")?;
        if let Some(d) = &dict {
            save_dictionary(conn, d)?;
        }
        let rows: Vec<(EntryKey, String)> = conn
            .prepare_cached(PLAIN_LINES)?
            .query_map(named_params! { ":from": from, ":n": SLICE_ROWS }, |r| Ok((r.get("key")?, r.get("body")?)))?
            .collect::<rusqlite::Result<_>>()?;
        let mut st = conn.prepare_cached(PACK_LINE)?;
        for (key, line) in &rows {
            if let Some(p) = packer.pack(line.as_bytes()) {
                st.execute(named_params! { ":body": p.frame, ":dict": p.dict_id(), ":key": key })?;
            }
        }
        if rows.is_empty() {
            conn.execute_batch("COMMIT")?;
            break;
        }
        conn.execute_batch("COMMIT")?;
        from = rows.last().map_or(from, |(k, _)| *k + 1);
        done += rows.len() as i64;
        if show {
            eprint!("\rsessiondb: compressing stored lines: {done} of {total}");
        }
    }
    if show {
        eprintln!();
    }
    Ok(())
}

/// The joined texts packed by the sessiondb of V17 to V19, stored as text again.
const UNPACK_LIST_TEXTS: &str = "UPDATE list_texts SET text = sessiondb_line(text, text_dict), text_dict = NULL \
    WHERE text_dict IS NOT NULL OR typeof(text) = 'blob'";

/// Stores every joined text as text (the `unpack-list-texts` maintenance V20 leaves): a
/// listing reads them all, and unpacking them doubled its time. One statement: a process killed
/// meanwhile leaves them as they were.
pub fn unpack_list_texts(conn: &mut Connection) -> Result<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    tx.execute(UNPACK_LIST_TEXTS, [])?;
    tx.execute("DELETE FROM maintenance WHERE task = 'unpack-list-texts'", [])?;
    tx.commit()?;
    Ok(())
}
