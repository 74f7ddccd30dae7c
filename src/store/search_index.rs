//! The search index and every statement search runs (migration V10).
//!
//! For each word token (src/store/tokens.rs), the keys of the entries holding it: sorted,
//! delta-encoded as varints, one row per token and build batch (`search_postings`), plus a
//! vocabulary of tokens (`search_terms`) for words a query cuts. A build reads the queue
//! (`fts_pending`), tokenizes the texts on several threads, gathers postings in memory and
//! writes them in token order when the memory bound is reached or the queue is empty.
//!
//! A line shared by forks and branched sessions (a row holding `''` and its owner's key in
//! `body_key`) is indexed once, under its owner's key; the copies are recorded as runs
//! (`search_copies`: owner keys `lo..=hi` have copies at key + shift) and added to the
//! candidates at query time. Deleted entries stay in the postings (their rows are gone, so
//! [`hit_row`] finds nothing) until deletions reach half of what was indexed: then the next
//! catch-up rebuilds.

use crate::error::{Error, Result};
use crate::js::json;
use crate::store::derive::EntryFields;
use crate::store::extract;
use crate::store::handle::Db;
use crate::store::postgres::Pg;
use crate::store::postgres::{pg_text, Server};
use crate::store::tokens::{self, FxHasher};
use postgres::binary_copy::BinaryCopyInWriter;
use postgres::types::Type;
use rusqlite::{named_params, Connection, OptionalExtension, TransactionBehavior};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

const PENDING_COUNT: &str = "SELECT count(*) FROM fts_pending";

/// The next `:n` queued entries after key `:after`: the owner of a copy's line, and the line
/// of an entry holding its own (entries gone since they were queued give neither).
pub const PENDING_BATCH: &str = "SELECT p.key, e.body_key, CASE WHEN e.body_key IS NULL THEN e.body END \
    FROM (SELECT key FROM fts_pending WHERE key > :after ORDER BY key LIMIT :n) p \
    LEFT JOIN entries e ON e.key = p.key ORDER BY p.key";

const PENDING_IN_RANGE: &str = "SELECT count(*) FROM fts_pending WHERE key BETWEEN :lo AND :hi";
const DEQUEUE_RANGE: &str = "DELETE FROM fts_pending WHERE key BETWEEN :lo AND :hi";
const DEQUEUE_ONE: &str = "DELETE FROM fts_pending WHERE key = :key";
const QUEUE_ALL: &str = "INSERT OR IGNORE INTO fts_pending (key) SELECT key FROM texts";

const POSTINGS_INSERT: &str =
    "INSERT OR REPLACE INTO search_postings (token, batch, keys) VALUES (:token, :batch, :keys)";
const TERM_INSERT: &str = "INSERT OR IGNORE INTO search_terms (term) VALUES (:term)";
const COPIES_INSERT: &str = "INSERT OR IGNORE INTO search_copies (owner_lo, owner_hi, shift) VALUES (:lo, :hi, :shift)";

const META_GET: &str = "SELECT value FROM search_meta WHERE name = :name";
const META_ADD: &str = "UPDATE search_meta SET value = value + :by WHERE name = :name";
const META_RESET: &str = "UPDATE search_meta SET value = 0";

const DELETE_POSTINGS: &str = "DELETE FROM search_postings";
const DELETE_TERMS: &str = "DELETE FROM search_terms";
const DELETE_COPIES: &str = "DELETE FROM search_copies";

/// The key lists of `:token` (one per build batch).
pub const POSTINGS_OF: &str = "SELECT keys FROM search_postings WHERE token = :token";

/// Every vocabulary token: scanned once per query for all the words that may be cut at their
/// start (a scan per word cost ~10 ms each on 10,000 sessions).
pub const TERMS_ALL: &str = "SELECT term FROM search_terms";

/// Vocabulary tokens starting with `:part` (at most `:n`): a range of the vocabulary's key.
pub const TERMS_STARTING: &str =
    "SELECT term FROM search_terms WHERE term >= :part AND term < :part || char(1114111) LIMIT :n";

/// Runs of copies of lines of the sessions whose keys lie in `:lo..=:hi`.
pub const COPY_RUNS_IN: &str = "SELECT owner_lo, owner_hi, shift FROM search_copies WHERE owner_lo BETWEEN :lo AND :hi";

/// Every run of copies.
pub const COPY_RUNS_ALL: &str = "SELECT owner_lo, owner_hi, shift FROM search_copies";

/// A searchable entry `:key` with what a hit shows, if it passes the filters (`:cwd`, `:role`,
/// `:since` ms) and holds its own line (`:owner` NULL) or a copy of `:owner`'s; its line only
/// when `:with_line`.
pub const HIT_ROW: &str = "SELECT s.id, s.path, s.cwd, e.id, t.role, t.ts_ms, \
        CASE WHEN :with_line THEN (SELECT o.body FROM entries o WHERE o.key = coalesce(e.body_key, e.key)) END \
    FROM texts t JOIN sessions s ON s.sid = t.session JOIN entries e ON e.key = t.key \
    WHERE t.key = :key AND e.body_key IS :owner \
        AND (:cwd IS NULL OR s.cwd = :cwd) AND (:role IS NULL OR t.role = :role) AND (:since IS NULL OR t.ts_ms >= :since)";

/// Every searchable entry passing the filters, newest stored first, with its line (whose
/// key is the last column): the scan for queries the index cannot narrow (punctuation only,
/// one or two letters found in too many words).
pub const SCAN: &str = "SELECT s.id, s.path, s.cwd, e.id, t.role, t.ts_ms, \
        CASE WHEN e.body_key IS NULL THEN e.body ELSE (SELECT o.body FROM entries o WHERE o.key = e.body_key) END, \
        t.key, coalesce(e.body_key, e.key) \
    FROM texts t JOIN sessions s ON s.sid = t.session JOIN entries e ON e.key = t.key \
    WHERE (:cwd IS NULL OR s.cwd = :cwd) AND (:role IS NULL OR t.role = :role) AND (:since IS NULL OR t.ts_ms >= :since) \
    ORDER BY t.key DESC";

const TEXT_COUNT: &str = "SELECT count(*) FROM texts";

/// Queued entries read per batch (their lines are in memory together).
pub(crate) const READ_BATCH: i64 = 2000;

/// Memory the postings gathered in memory may take before they are written (bytes, an
/// estimate): what bounds a build's peak.
pub(crate) const FLUSH_BYTES: usize = 96 << 20;

/// Deleted entries below which the index is never rebuilt for them.
const REBUILD_MIN_DELETED: i64 = 10_000;

/// Number of entries waiting to be indexed.
pub fn pending(db: &Db) -> Result<i64> {
    if let Some(pg) = db.pg() {
        return Ok(pg.query(PG_PENDING, &[])?.first().map_or(0, |r| r.get("n")));
    }
    let conn = db.conn()?;
    Ok(conn.query_row(PENDING_COUNT, [], |r| r.get(0))?)
}

/// Number of searchable entries.
pub fn text_count(db: &Db) -> Result<i64> {
    if let Some(pg) = db.pg() {
        return Ok(pg.query(PG_TEXT_COUNT, &[])?.first().map_or(0, |r| r.get("n")));
    }
    let conn = db.conn()?;
    Ok(conn.query_row(TEXT_COUNT, [], |r| r.get(0))?)
}

/// Empties the index and queues every searchable entry again.
pub fn reset(db: &mut Db) -> Result<()> {
    if let Some(pg) = db.pg() {
        // Everything is extracted again by the next catch-up.
        let mut s = pg.server()?;
        return s.client.batch_execute(PG_RESET).map_err(|e| s.pg(e));
    }
    let conn = db.conn_mut()?;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute(DELETE_POSTINGS, [])?;
    tx.execute(DELETE_TERMS, [])?;
    tx.execute(DELETE_COPIES, [])?;
    tx.execute(META_RESET, [])?;
    tx.execute(QUEUE_ALL, [])?;
    tx.commit()?;
    Ok(())
}

fn meta(conn: &Connection, name: &str) -> Result<i64> {
    Ok(conn.prepare_cached(META_GET)?.query_row(named_params! {":name": name}, |r| r.get(0)).optional()?.unwrap_or(0))
}

/// Appends `v` to `out` as a varint (7 bits a byte, low first).
fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends the keys of a posting blob to `out` (ascending within the blob).
fn decode_into(blob: &[u8], out: &mut Vec<i64>) {
    keys_upto(blob, i64::MAX, |k| out.push(k));
}

/// One token's keys being gathered: the last key added and the encoded gaps.
#[derive(Default)]
struct Posting {
    last: u64,
    bytes: Vec<u8>,
}

type FxBuild = BuildHasherDefault<FxHasher>;

/// A token → id map of one tokenizing thread: open addressing over 16-byte slots holding a
/// token's first 8 bytes (most tokens whole: no string to fetch and compare, which was a
/// third of a build in `HashMap<Box<str>, u32>`), its length and its id.
struct Ids {
    slots: Vec<Slot>,
    /// Slots are found by the top bits of a token's hash: `64 - shift` of them.
    shift: u32,
    /// Per id: where its bytes start in `arena` (their length is in its slot).
    starts: Vec<usize>,
    arena: Vec<u8>,
}

#[derive(Clone, Copy)]
struct Slot {
    head: u64,
    len: u32,
    /// `u32::MAX`: empty.
    id: u32,
}

const EMPTY: Slot = Slot { head: 0, len: 0, id: u32::MAX };

/// Up to the first 8 bytes of a token, zero-padded (tokens hold no zero byte).
fn head(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    let n = b.len().min(8);
    w[..n].copy_from_slice(&b[..n]);
    u64::from_le_bytes(w)
}

fn token_hash(b: &[u8], head: u64) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = (head ^ (b.len() as u64).rotate_left(56)).wrapping_mul(K);
    if b.len() > 8 {
        for c in b[8..].chunks(8) {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            h = (h.rotate_left(23) ^ u64::from_le_bytes(w)).wrapping_mul(K);
        }
    }
    h
}

impl Default for Ids {
    fn default() -> Self {
        Ids { slots: vec![EMPTY; 1 << 10], shift: 64 - 10, starts: Vec::new(), arena: Vec::new() }
    }
}

impl Ids {
    /// The id of `t`, and whether it is new (ids count up from 0).
    fn id(&mut self, t: &str) -> (u32, bool) {
        let b = t.as_bytes();
        let hd = head(b);
        let mask = self.slots.len() - 1;
        let mut i = (token_hash(b, hd) >> self.shift) as usize;
        loop {
            let s = self.slots[i];
            if s.id == u32::MAX {
                break;
            }
            if s.head == hd && s.len as usize == b.len() {
                let at = self.starts[s.id as usize];
                if b.len() <= 8 || self.arena[at + 8..at + b.len()] == b[8..] {
                    return (s.id, false);
                }
            }
            i = (i + 1) & mask;
        }
        let id = self.starts.len() as u32;
        self.slots[i] = Slot { head: hd, len: b.len() as u32, id };
        self.starts.push(self.arena.len());
        self.arena.extend_from_slice(b);
        if self.starts.len() * 2 > self.slots.len() {
            self.grow();
        }
        (id, true)
    }

    /// Twice the slots, every token placed again.
    fn grow(&mut self) {
        let twice = vec![EMPTY; self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, twice);
        self.shift -= 1;
        let mask = self.slots.len() - 1;
        for s in old.into_iter().filter(|s| s.id != u32::MAX) {
            let at = self.starts[s.id as usize];
            let mut i = (token_hash(&self.arena[at..at + s.len as usize], s.head) >> self.shift) as usize;
            while self.slots[i].id != u32::MAX {
                i = (i + 1) & mask;
            }
            self.slots[i] = s;
        }
    }
}

/// A tokenizing thread's vocabulary until the postings are written: its tokens get ids of
/// its own, so that the gatherer (one thread) finds a token's postings by index instead of
/// hashing and comparing the token again (which was two thirds of the build's serial work).
#[derive(Default)]
struct Vocab {
    ids: Ids,
    /// Tokens given ids since the gatherer last took them, in the order of their ids.
    fresh: Vec<Box<str>>,
    /// Per id: the number of the last text holding it (a text gives each token once).
    seen: Vec<u32>,
    texts: u32,
}

impl Vocab {
    /// Appends the ids of the distinct tokens of `text` to `out`.
    fn add_text(&mut self, text: &str, out: &mut Vec<u32>) {
        self.texts += 1;
        let Vocab { ids, fresh, seen, texts } = self;
        tokens::each_token(text, |t| {
            let (id, new) = ids.id(t);
            if new {
                fresh.push(t.into());
                seen.push(0);
            }
            let last = &mut seen[id as usize];
            if *last != *texts {
                *last = *texts;
                out.push(id);
            }
        });
    }
}

/// A batch's texts as one tokenizing thread gives them: each text's token ids, the text
/// ending at the matching entry of `ends`.
#[derive(Default)]
struct Part {
    ids: Vec<u32>,
    ends: Vec<usize>,
}

/// A run of copies being gathered (see `search_copies`).
#[derive(Debug, Clone, Copy)]
struct Run {
    lo: i64,
    hi: i64,
    shift: i64,
}

/// What a build has gathered and not yet written.
#[derive(Default)]
struct Gathered {
    /// Tokens, with their postings at the same index.
    tokens: Vec<Box<str>>,
    postings: Vec<Posting>,
    index: HashMap<Box<str>, u32, FxBuild>,
    /// Per tokenizing thread: its ids' indexes here.
    ids: Vec<Vec<u32>>,
    bytes: usize,
    runs: Vec<Run>,
    open_run: Option<Run>,
    /// Queued keys read (to dequeue at the write), ascending.
    keys: Vec<i64>,
}

impl Gathered {
    /// Learns the tokens thread `w` gave ids to since last time.
    fn learn(&mut self, w: usize, v: &mut Vocab) {
        if self.ids.len() <= w {
            self.ids.resize_with(w + 1, Vec::new);
        }
        for t in v.fresh.drain(..) {
            // The thread's copy of the token, its map slot and `seen`: about 48 bytes besides.
            self.bytes += t.len() + 48;
            let at = match self.index.get(&*t) {
                Some(&at) => at,
                None => {
                    let at = self.tokens.len() as u32;
                    // Two copies, the map's slot and the posting: about 96 bytes besides.
                    self.bytes += 2 * t.len() + 96;
                    self.index.insert(t.clone(), at);
                    self.tokens.push(t);
                    self.postings.push(Posting::default());
                    at
                }
            };
            self.ids[w].push(at);
        }
    }

    /// Adds entry `key` to the postings of the tokens thread `w` calls `ids`.
    fn add_ids(&mut self, key: i64, w: usize, ids: &[u32]) {
        let k = key as u64;
        let at = &self.ids[w];
        for &id in ids {
            let p = &mut self.postings[at[id as usize] as usize];
            let before = p.bytes.capacity();
            put_varint(&mut p.bytes, k.wrapping_sub(p.last));
            p.last = k;
            self.bytes += p.bytes.capacity() - before;
        }
    }

    fn add_copy(&mut self, copy: i64, owner: i64) {
        let shift = copy - owner;
        if let Some(r) = &mut self.open_run {
            if r.shift == shift && owner > r.hi && owner >> 32 == r.hi >> 32 {
                r.hi = owner;
                return;
            }
            self.runs.push(*r);
        }
        self.open_run = Some(Run { lo: owner, hi: owner, shift });
    }

    fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Writes everything gathered and dequeues the keys read, in one transaction.
    fn write(&mut self, conn: &mut Connection) -> Result<()> {
        if let Some(r) = self.open_run.take() {
            self.runs.push(r);
        }
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        {
            let batch = meta(&tx, "batch")? + 1;
            let mut order: Vec<usize> =
                (0..self.tokens.len()).filter(|&i| !self.postings[i].bytes.is_empty()).collect();
            order.sort_unstable_by(|&a, &b| self.tokens[a].cmp(&self.tokens[b]));
            let mut insert = tx.prepare_cached(POSTINGS_INSERT)?;
            let mut term = tx.prepare_cached(TERM_INSERT)?;
            for i in order {
                let token = &*self.tokens[i];
                insert.execute(named_params! {":token": token, ":batch": batch, ":keys": self.postings[i].bytes})?;
                term.execute(named_params! {":term": token})?;
            }
            let mut copies = tx.prepare_cached(COPIES_INSERT)?;
            for r in &self.runs {
                copies.execute(named_params! {":lo": r.lo, ":hi": r.hi, ":shift": r.shift})?;
            }
            // The keys read, unless another writer queued or dropped keys among them meanwhile:
            // then one by one.
            if let (Some(&lo), Some(&hi)) = (self.keys.first(), self.keys.last()) {
                let now: i64 = tx
                    .prepare_cached(PENDING_IN_RANGE)?
                    .query_row(named_params! {":lo": lo, ":hi": hi}, |r| r.get(0))?;
                if now == self.keys.len() as i64 {
                    tx.prepare_cached(DEQUEUE_RANGE)?.execute(named_params! {":lo": lo, ":hi": hi})?;
                } else {
                    let mut one = tx.prepare_cached(DEQUEUE_ONE)?;
                    for k in &self.keys {
                        one.execute(named_params! {":key": k})?;
                    }
                }
            }
            let mut add = tx.prepare_cached(META_ADD)?;
            add.execute(named_params! {":by": 1, ":name": "batch"})?;
            add.execute(named_params! {":by": self.keys.len() as i64, ":name": "indexed"})?;
        }
        tx.commit()?;
        // The vocabularies too: the caller empties the threads' (memory stays bounded when
        // every text brings new tokens).
        *self = Gathered::default();
        Ok(())
    }
}

/// A queued entry read: its key, and its line's owner (a copy) or its line.
enum Queued {
    Copy(i64, i64),
    Line(i64, String),
    Gone(i64),
}

fn read_batch(conn: &Connection, after: i64, n: i64) -> Result<Vec<Queued>> {
    let mut st = conn.prepare_cached(PENDING_BATCH)?;
    let mut rows = st.query(named_params! {":after": after, ":n": n})?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let key: i64 = r.get(0)?;
        let owner: Option<i64> = r.get(1)?;
        let line: Option<String> = r.get(2)?;
        out.push(match (owner, line) {
            (Some(o), _) => Queued::Copy(key, o),
            (None, Some(l)) => Queued::Line(key, l),
            (None, None) => Queued::Gone(key),
        });
    }
    Ok(out)
}

/// The token ids of some lines' texts, by one tokenizing thread.
fn tokenize(lines: &[(i64, &str)], v: &mut Vocab) -> Part {
    let mut part = Part { ids: Vec::new(), ends: Vec::with_capacity(lines.len()) };
    for (_, l) in lines {
        if let Some(text) = extract::text_of_line(l) {
            v.add_text(&text, &mut part.ids);
        }
        part.ends.push(part.ids.len());
    }
    part
}

/// A batch tokenized and not yet gathered: its texts' keys, and each thread's part (thread
/// `w` tokenized the `w`-th run of texts).
type Tokenized = (Vec<i64>, Vec<Part>);

fn gather(g: &mut Gathered, (keys, parts): Tokenized) {
    let mut keys = keys.iter();
    for (w, part) in parts.iter().enumerate() {
        let mut start = 0;
        for (&end, &k) in part.ends.iter().zip(&mut keys) {
            g.add_ids(k, w, &part.ids[start..end]);
            start = end;
        }
    }
}

/// Indexes every queued entry; `progress(done, total)` after each batch read. Rebuilds the
/// whole index first when deletions reached half of what it holds.
pub fn catch_up(db: &mut Db, progress: impl FnMut(i64, i64)) -> Result<i64> {
    catch_up_in(db, READ_BATCH, FLUSH_BYTES, progress)
}

/// [`catch_up`] reading `read_batch` entries at a time and writing the postings whenever
/// they take `flush_bytes` (tests make both small).
pub fn catch_up_in(
    db: &mut Db,
    read_batch_of: i64,
    flush_bytes: usize,
    mut progress: impl FnMut(i64, i64),
) -> Result<i64> {
    if let Some(pg) = db.pg() {
        return pg_catch_up(pg, read_batch_of, flush_bytes, &mut progress);
    }
    let deleted = meta(db.conn()?, "deleted")?;
    if deleted >= REBUILD_MIN_DELETED && deleted * 2 >= meta(db.conn()?, "indexed")? {
        reset(db)?;
    }
    let total = pending(db)?;
    let conn = db.conn_mut()?;
    if total == 0 {
        return Ok(0);
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    let mut vocabs: Vec<Vocab> = (0..threads).map(|_| Vocab::default()).collect();
    let mut g = Gathered::default();
    let mut done = 0;
    let mut after = i64::MIN;
    let mut next = read_batch(conn, after, read_batch_of)?;
    // The batch before, gathered (one thread) while this one is tokenized and the one after
    // is read: the gather alone was a fifth of a build.
    let mut ready: Option<Tokenized> = None;
    while let Some(last) = next.last() {
        after = match last {
            Queued::Copy(k, _) | Queued::Line(k, _) | Queued::Gone(k) => *k,
        };
        let mut lines: Vec<(i64, &str)> = Vec::new();
        for q in &next {
            match q {
                Queued::Copy(k, o) => {
                    g.add_copy(*k, *o);
                    g.keys.push(*k);
                }
                Queued::Line(k, l) => {
                    lines.push((*k, l));
                    g.keys.push(*k);
                }
                Queued::Gone(k) => g.keys.push(*k),
            }
        }
        let (parts, following) = std::thread::scope(|s| {
            let mut parts = Vec::new();
            let mut handles = Vec::new();
            if vocabs.len() <= 1 || lines.len() < 64 {
                if let Some(v) = vocabs.first_mut() {
                    parts.push(tokenize(&lines, v));
                }
            } else {
                let chunk = lines.len().div_ceil(vocabs.len()).max(1);
                for (part, v) in lines.chunks(chunk).zip(vocabs.iter_mut()) {
                    handles.push(s.spawn(move || tokenize(part, v)));
                }
            }
            if let Some(t) = ready.take() {
                gather(&mut g, t);
            }
            let following = read_batch(conn, after, read_batch_of);
            parts.extend(handles.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))));
            (parts, following)
        });
        let following = following?;
        for (w, v) in vocabs.iter_mut().enumerate() {
            g.learn(w, v);
        }
        ready = Some((lines.iter().map(|(k, _)| *k).collect(), parts));
        done += next.len() as i64;
        progress(done, total);
        next = following;
        if g.bytes >= flush_bytes {
            if let Some(t) = ready.take() {
                gather(&mut g, t);
            }
            g.write(conn)?;
            vocabs.iter_mut().for_each(|v| *v = Vocab::default());
        }
    }
    if let Some(t) = ready.take() {
        gather(&mut g, t);
    }
    if !g.is_empty() {
        g.write(conn)?;
    }
    Ok(done)
}

/// The keys of the entries holding `token`, ascending.
pub fn postings(db: &Db, token: &str) -> Result<Vec<i64>> {
    let mut out = Vec::new();
    let mut parts = 0;
    if let Some(pg) = db.pg() {
        for r in pg.query(PG_POSTINGS_OF, &[&token])? {
            decode_into(r.get::<_, &[u8]>(0), &mut out);
            parts += 1;
        }
    } else {
        let conn = db.conn()?;
        let mut st = conn.prepare_cached(POSTINGS_OF)?;
        let mut rows = st.query(named_params! {":token": token})?;
        while let Some(r) = rows.next()? {
            if let rusqlite::types::ValueRef::Blob(b) = r.get_ref(0)? {
                decode_into(b, &mut out);
                parts += 1;
            }
        }
    }
    if parts > 1 {
        // One sorted run per batch: a stable sort merges runs.
        out.sort();
        out.dedup();
    }
    Ok(out)
}

/// The key blobs of `token` (one per build batch), undecoded: a query decodes only the part
/// it needs ([`keys_upto`]).
pub fn posting_blobs(db: &Db, token: &str) -> Result<Vec<Vec<u8>>> {
    if let Some(pg) = db.pg() {
        return Ok(pg.query(PG_POSTINGS_OF, &[&token])?.iter().map(|r| r.get::<_, Vec<u8>>(0)).collect());
    }
    let conn = db.conn()?;
    let mut st = conn.prepare_cached(POSTINGS_OF)?;
    let mut rows = st.query(named_params! {":token": token})?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        if let rusqlite::types::ValueRef::Blob(b) = r.get_ref(0)? {
            out.push(b.to_vec());
        }
    }
    Ok(out)
}

/// The key blobs of every token of `tokens` (on a server in one round trip).
pub fn posting_blobs_of(db: &Db, tokens: &[&str]) -> Result<Vec<Vec<u8>>> {
    if let Some(pg) = db.pg() {
        if tokens.is_empty() {
            return Ok(Vec::new());
        }
        return Ok(pg.query(PG_POSTINGS_OF_ALL, &[&tokens])?.iter().map(|r| r.get::<_, Vec<u8>>(0)).collect());
    }
    let mut out = Vec::new();
    for t in tokens {
        out.extend(posting_blobs(db, t)?);
    }
    Ok(out)
}

/// Calls `f` with each key of a posting blob up to `last`, ascending.
pub fn keys_upto(blob: &[u8], last: i64, mut f: impl FnMut(i64)) {
    let mut key: u64 = 0;
    let mut v: u64 = 0;
    let mut shift = 0;
    for &b in blob {
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            key = key.wrapping_add(v);
            if key as i64 > last {
                return;
            }
            f(key as i64);
            v = 0;
            shift = 0;
        } else {
            shift += 7;
        }
    }
}

/// Vocabulary tokens starting with `part` (at most `n`).
pub fn terms_starting(db: &Db, part: &str, n: usize) -> Result<Vec<String>> {
    if let Some(pg) = db.pg() {
        return Ok(pg.query(PG_TERMS_STARTING, &[&part, &(n as i64)])?.iter().map(|r| r.get(0)).collect());
    }
    let conn = db.conn()?;
    let mut st = conn.prepare_cached(TERMS_STARTING)?;
    let found = st.query_map(named_params! {":part": part, ":n": n as i64}, |r| r.get(0))?;
    Ok(found.collect::<rusqlite::Result<_>>()?)
}

/// For each of `parts`, the vocabulary tokens containing it (at most `n` each), in one scan.
pub fn terms_containing(db: &Db, parts: &[&str], n: usize) -> Result<Vec<Vec<String>>> {
    let mut out: Vec<Vec<String>> = vec![Vec::new(); parts.len()];
    if parts.is_empty() {
        return Ok(out);
    }
    if let Some(pg) = db.pg() {
        // One indexed lookup per part (a scan of the vocabulary over the wire is not one pass).
        for (part, found) in parts.iter().zip(out.iter_mut()) {
            let pattern = format!("%{}%", like_escaped(part));
            *found = pg.query(PG_TERMS_LIKE, &[&pattern, &(n as i64)])?.iter().map(|r| r.get(0)).collect();
        }
        return Ok(out);
    }
    let conn = db.conn()?;
    let mut st = conn.prepare_cached(TERMS_ALL)?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let rusqlite::types::ValueRef::Text(term) = r.get_ref(0)? else { continue };
        let Ok(term) = std::str::from_utf8(term) else { continue };
        let mut open = false;
        for (part, found) in parts.iter().zip(out.iter_mut()) {
            if found.len() < n {
                open = true;
                if term.contains(part) {
                    found.push(term.to_owned());
                }
            }
        }
        if !open {
            break;
        }
    }
    Ok(out)
}

/// Candidates from the index: entries holding their own line (sorted keys), and the copies
/// of those lines, newest stored first.
pub struct Candidates {
    keys: Vec<i64>,
    /// Per source: the keys' index range still to give (`lo..hi`) and the shift (0: the
    /// entries themselves; else copies at key + shift).
    sources: Vec<(usize, usize, i64)>,
    heap: std::collections::BinaryHeap<(i64, usize)>,
    /// The last key given and the lines it was given with (a key comes once per line: a
    /// run may name a key that holds another line, or its own).
    last: Option<(i64, Vec<Option<i64>>)>,
}

impl Candidates {
    /// The candidates for the entries `keys` (ascending) and their copies.
    pub fn new(db: &Db, keys: Vec<i64>) -> Result<Self> {
        let mut sources = vec![(0, keys.len(), 0)];
        // A server holds every line in its own row: no copies.
        let conn = if db.pg().is_some() { None } else { Some(db.conn()?) };
        if let (Some(&last), Some(conn)) = (keys.last(), conn) {
            let mut add = |lo: i64, hi: i64, shift: i64| {
                let a = keys.partition_point(|&k| k < lo);
                let b = keys.partition_point(|&k| k <= hi);
                if a < b {
                    sources.push((a, b, shift));
                }
            };
            // Few sessions: their runs by key; else all of them.
            let mut sids: Vec<i64> = keys.iter().map(|k| k >> 32).collect();
            sids.dedup();
            let mut read = |st: &mut rusqlite::CachedStatement<'_>, p: &[(&str, &dyn rusqlite::ToSql)]| -> Result<()> {
                let mut rows = st.query(p)?;
                while let Some(r) = rows.next()? {
                    add(r.get(0)?, r.get(1)?, r.get(2)?);
                }
                Ok(())
            };
            if sids.len() <= 32 {
                let mut st = conn.prepare_cached(COPY_RUNS_IN)?;
                for sid in sids {
                    // A run starts in the session holding its lines, before the last key.
                    let (lo, hi) = (sid << 32, last.min((sid << 32) | 0xffff_ffff));
                    read(&mut st, named_params! {":lo": lo, ":hi": hi})?;
                }
            } else {
                read(&mut conn.prepare_cached(COPY_RUNS_ALL)?, &[])?;
            }
        }
        let mut c = Candidates { keys, sources, heap: Default::default(), last: None };
        c.refill();
        Ok(c)
    }

    /// The entries' keys the candidates come from (ascending).
    pub fn keys(&self) -> &[i64] {
        &self.keys
    }

    fn refill(&mut self) {
        self.heap.clear();
        for (i, &(lo, hi, shift)) in self.sources.iter().enumerate() {
            if hi > lo {
                self.heap.push((self.keys[hi - 1] + shift, i));
            }
        }
    }

    /// Skips the rest of session `sid`'s candidates.
    pub fn skip_session(&mut self, sid: i64) {
        let below = sid << 32;
        for (lo, hi, shift) in &mut self.sources {
            let end = self.keys[*lo..*hi].partition_point(|&k| k + *shift < below);
            *hi = *lo + end;
        }
        self.refill();
    }
}

/// A candidate: the entry's key, and the key of the line it copies (None: its own).
impl Iterator for Candidates {
    type Item = (i64, Option<i64>);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (key, i) = self.heap.pop()?;
            let (lo, hi, shift) = &mut self.sources[i];
            *hi -= 1;
            let owner = self.keys[*hi];
            if *hi > *lo {
                self.heap.push((self.keys[*hi - 1] + *shift, i));
            }
            let line = (key != owner).then_some(owner);
            match &mut self.last {
                Some((k, lines)) if *k == key => {
                    if lines.contains(&line) {
                        continue;
                    }
                    lines.push(line);
                }
                _ => self.last = Some((key, vec![line])),
            }
            return Some((key, line));
        }
    }
}

/// Filters of a search.
#[derive(Debug, Clone, Copy, Default)]
pub struct RowFilter<'a> {
    /// Only sessions with this header cwd.
    pub cwd: Option<&'a str>,
    /// Only this role or entry type.
    pub role: Option<&'a str>,
    /// Only entries at or after this time (ms).
    pub since_ms: Option<i64>,
}

/// What a hit shows of an entry.
#[derive(Debug, Clone)]
pub struct HitRow {
    /// Header id of the session.
    pub session_id: String,
    /// The session's file path.
    pub session_file: String,
    /// Header cwd.
    pub cwd: Option<String>,
    /// The entry's id.
    pub entry_id: Option<String>,
    /// Role or entry type.
    pub role: String,
    /// Entry time (ms).
    pub ts_ms: Option<i64>,
    /// The entry's line, when asked for.
    pub line: Option<String>,
}

fn hit_row_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<HitRow> {
    Ok(HitRow {
        session_id: r.get(0)?,
        session_file: r.get(1)?,
        cwd: r.get(2)?,
        entry_id: r.get(3)?,
        role: r.get(4)?,
        ts_ms: r.get(5)?,
        line: r.get(6)?,
    })
}

/// Entry `key` if it is searchable, passes `f` and holds its own line (`owner` None) or a
/// copy of `owner`'s; with its line when `with_line`.
pub fn hit_row(db: &Db, key: i64, owner: Option<i64>, f: &RowFilter<'_>, with_line: bool) -> Result<Option<HitRow>> {
    if let Some(pg) = db.pg() {
        if owner.is_some() {
            return Ok(None);
        }
        let (session, seq) = (key >> 32, key & 0xffff_ffff);
        let row = pg.query_opt(PG_HIT_ROW, &[&session, &seq, &f.cwd, &f.role, &f.since_ms, &with_line])?;
        return Ok(row.map(|r| pg_hit_row(&r)));
    }
    let conn = db.conn()?;
    let mut st = conn.prepare_cached(HIT_ROW)?;
    Ok(st
        .query_row(
            named_params! {":key": key, ":owner": owner, ":cwd": f.cwd, ":role": f.role, ":since": f.since_ms, ":with_line": with_line},
            hit_row_of,
        )
        .optional()?)
}

/// [`hit_row`] of each `(key, owner, with_line)`, in one round trip on a server.
pub fn hit_rows(db: &Db, wanted: &[(i64, Option<i64>, bool)], f: &RowFilter<'_>) -> Result<Vec<Option<HitRow>>> {
    let Some(pg) = db.pg() else {
        return wanted.iter().map(|&(key, owner, with_line)| hit_row(db, key, owner, f, with_line)).collect();
    };
    let own: Vec<&(i64, Option<i64>, bool)> = wanted.iter().filter(|w| w.1.is_none()).collect();
    let sessions: Vec<i64> = own.iter().map(|w| w.0 >> 32).collect();
    let seqs: Vec<i64> = own.iter().map(|w| w.0 & 0xffff_ffff).collect();
    let lines: Vec<bool> = own.iter().map(|w| w.2).collect();
    let mut found: HashMap<i64, HitRow, FxBuild> = HashMap::default();
    for r in pg.query(PG_HIT_ROWS, &[&sessions, &seqs, &lines, &f.cwd, &f.role, &f.since_ms])? {
        found.insert((r.get::<_, i64>("session") << 32) | r.get::<_, i64>("seq"), pg_hit_row(&r));
    }
    Ok(wanted.iter().map(|w| if w.1.is_some() { None } else { found.remove(&w.0) }).collect())
}

/// Calls `take(key, line key, row)` with every searchable entry passing `f`, newest stored
/// first, until it returns false.
pub fn scan(db: &Db, f: &RowFilter<'_>, mut take: impl FnMut(i64, i64, HitRow) -> bool) -> Result<()> {
    if let Some(pg) = db.pg() {
        return pg_scan(pg, f, &mut take);
    }
    let conn = db.conn()?;
    let mut st = conn.prepare_cached(SCAN)?;
    let mut rows = st.query(named_params! {":cwd": f.cwd, ":role": f.role, ":since": f.since_ms})?;
    while let Some(r) = rows.next()? {
        let key: i64 = r.get(7)?;
        let line_key: i64 = r.get(8)?;
        if !take(key, line_key, hit_row_of(r)?) {
            break;
        }
    }
    Ok(())
}

/// The lowest and highest keys of search rows (the benchmark picks its rare word between them).
pub const TEXT_KEY_RANGE: &str = "SELECT min(key), max(key) FROM texts";

/// The first search row at or after key `?1`, with its entry's line.
pub const TEXT_LINE_FROM: &str = "SELECT e.body FROM texts t JOIN entry_lines e ON e.key = t.key \
    WHERE t.key >= ?1 ORDER BY t.key LIMIT 1";

// PostgreSQL (migration V5 of src/store/postgres/migrations/): the same postings, vocabulary and
// counters, and the text and usage rows SQLite writes at import, extracted here from the
// stored lines by a catch-up (push's COPY and the manager's appends write lines only).

/// Advisory lock held by a catch-up: two processes catching up take turns.
const PG_CATCH_UP_LOCK: i64 = 0x5e55_10db_0005;

/// Sessions whose row changed since their lines were extracted (or never extracted), with
/// what was extracted of them.
pub const PG_CHANGED: &str = "SELECT s.skey, s.last_seq, s.xmin::text::bigint AS row_xmin, p.upto, p.line_xmin \
    FROM sessions s LEFT JOIN search_progress p ON p.session = s.skey \
    WHERE p.session IS NULL OR p.row_xmin <> s.xmin::text::bigint ORDER BY s.skey";

/// Sessions extracted that are gone.
pub const PG_GONE: &str =
    "SELECT p.session FROM search_progress p WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.skey = p.session)";

/// The version of line `seq` of each session (NULL when it is gone).
pub const PG_LINE_XMINS: &str = "SELECT v.session, e.xmin::text::bigint AS line_xmin \
    FROM unnest($1::bigint[], $2::bigint[]) AS v(session, seq) \
    LEFT JOIN entries e ON e.session = v.session AND e.seq = v.seq";

const PG_DROP_TEXTS: &str = "DELETE FROM search_texts WHERE session = ANY($1)";
const PG_DROP_USAGE: &str = "DELETE FROM search_usage WHERE session = ANY($1)";
const PG_DROP_PROGRESS: &str = "DELETE FROM search_progress WHERE session = ANY($1)";

/// The lines of each session after line `after`, in key order.
pub const PG_LINES_AFTER: &str = "SELECT e.session, e.seq, e.body, e.xmin::text::bigint AS line_xmin \
    FROM unnest($1::bigint[], $2::bigint[]) AS v(session, after) \
    JOIN entries e ON e.session = v.session AND e.seq > v.after ORDER BY e.session, e.seq";

const PG_COPY_TEXTS: &str = "COPY search_texts (session, seq, role, ts_ms) FROM STDIN (FORMAT binary)";
const PG_COPY_USAGE: &str = "COPY search_usage (session, seq, entry_id, ts, ts_ms, provider, model, input, output, \
    cache_read, cache_write, total, cost, invalid) FROM STDIN (FORMAT binary)";
const PG_COPY_POSTINGS: &str = "COPY search_postings (token, batch, keys) FROM STDIN (FORMAT binary)";
const PG_TERMS_INSERT: &str = "INSERT INTO search_terms (term) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING";
const PG_PROGRESS_SET: &str = "INSERT INTO search_progress (session, upto, row_xmin, line_xmin) \
    SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[]) \
    ON CONFLICT (session) DO UPDATE SET upto = excluded.upto, row_xmin = excluded.row_xmin, line_xmin = excluded.line_xmin";
const PG_META_GET: &str = "SELECT value FROM search_meta WHERE name = $1";
const PG_META_ADD: &str = "UPDATE search_meta SET value = value + $1 WHERE name = $2";
const PG_RESET: &str = "TRUNCATE search_progress, search_texts, search_usage, search_postings, search_terms; \
    UPDATE search_meta SET value = 0";
const PG_PENDING: &str = "SELECT coalesce(sum(s.last_seq - coalesce(p.upto, 0)), 0)::bigint AS n \
    FROM sessions s LEFT JOIN search_progress p ON p.session = s.skey \
    WHERE p.session IS NULL OR p.row_xmin <> s.xmin::text::bigint";
const PG_TEXT_COUNT: &str = "SELECT count(*) AS n FROM search_texts";
/// The key lists of several tokens.
pub const PG_POSTINGS_OF_ALL: &str = "SELECT keys FROM search_postings WHERE token = ANY($1)";

/// The key lists of a token.
pub const PG_POSTINGS_OF: &str = "SELECT keys FROM search_postings WHERE token = $1";
/// Vocabulary tokens starting with `$1` (at most `$2`).
pub const PG_TERMS_STARTING: &str =
    "SELECT term FROM search_terms WHERE term >= $1 AND term < $1 || chr(1114111) ORDER BY term LIMIT $2";
/// Vocabulary tokens matching a LIKE pattern (`%part%`): pg_trgm's index where it exists.
pub const PG_TERMS_LIKE: &str = "SELECT term FROM search_terms WHERE term LIKE $1 LIMIT $2";

/// A searchable entry with what a hit shows, if it passes the filters; its line only when `$6`.
pub const PG_HIT_ROW: &str = "SELECT s.id, s.path, s.cwd, e.id AS entry_id, t.role, t.ts_ms, \
        CASE WHEN $6 THEN e.body END AS body \
    FROM search_texts t JOIN sessions s ON s.skey = t.session JOIN entries e ON e.session = t.session AND e.seq = t.seq \
    WHERE t.session = $1 AND t.seq = $2 \
        AND ($3::text IS NULL OR s.cwd = $3) AND ($4::text IS NULL OR t.role = $4) AND ($5::bigint IS NULL OR t.ts_ms >= $5)";

/// [`PG_HIT_ROW`] of several entries (`$1` sessions, `$2` seqs, `$3` whether with the line).
pub const PG_HIT_ROWS: &str = "SELECT t.session, t.seq, s.id, s.path, s.cwd, e.id AS entry_id, t.role, t.ts_ms, \
        CASE WHEN v.with_line THEN e.body END AS body \
    FROM unnest($1::bigint[], $2::bigint[], $3::bool[]) AS v(session, seq, with_line) \
    JOIN search_texts t ON t.session = v.session AND t.seq = v.seq \
    JOIN sessions s ON s.skey = t.session JOIN entries e ON e.session = t.session AND e.seq = t.seq \
    WHERE ($4::text IS NULL OR s.cwd = $4) AND ($5::text IS NULL OR t.role = $5) AND ($6::bigint IS NULL OR t.ts_ms >= $6)";

/// Every searchable entry passing the filters, newest stored first, with its line.
pub const PG_SCAN: &str = "SELECT s.id, s.path, s.cwd, e.id AS entry_id, t.role, t.ts_ms, e.body, t.session, t.seq \
    FROM search_texts t JOIN sessions s ON s.skey = t.session JOIN entries e ON e.session = t.session AND e.seq = t.seq \
    WHERE ($1::text IS NULL OR s.cwd = $1) AND ($2::text IS NULL OR t.role = $2) AND ($3::bigint IS NULL OR t.ts_ms >= $3) \
    ORDER BY t.session DESC, t.seq DESC";

/// Rows a scan fetches at a time.
const PG_SCAN_FETCH: i32 = 256;

fn pg_err(name: &str) -> impl Fn(postgres::Error) -> crate::error::Error + '_ {
    move |e| Server::describe(name, &e)
}

/// A session to catch up.
struct Todo {
    skey: i64,
    row_xmin: i64,
    /// Lines extracted already, and the version of the last one.
    upto: i64,
    line_xmin: Option<i64>,
    /// Lines it holds (for the progress total).
    last_seq: i64,
}

/// What one thread extracted from some lines.
#[derive(Default)]
struct Extracted {
    texts: Vec<(i64, i64, String, Option<i64>)>,
    usage: Vec<(i64, i64, EntryFields, extract::UsageRow)>,
    /// Keys of the texts tokenized into `part`, in order.
    keys: Vec<i64>,
    part: Part,
}

fn extract_lines(rows: &[(i64, i64, String)], v: &mut Vocab) -> Extracted {
    let mut out = Extracted::default();
    for (session, seq, body) in rows {
        let Some(obj) = json::scan_object(body.as_bytes()).ok().flatten() else { continue };
        let (f, message) = EntryFields::read(&obj);
        let x = extract::Extras::of(&f, &obj, message.as_ref());
        if let Some((role, _)) = &x.search {
            out.texts.push((*session, *seq, pg_text(role).into_owned(), f.ts_ms));
            let key = (session << 32) | seq;
            if let Some(t) = extract::text_of(&f, &obj, message.as_ref()) {
                v.add_text(&t.text, &mut out.part.ids);
            }
            out.part.ends.push(out.part.ids.len());
            out.keys.push(key);
        }
        if let Some(u) = x.usage {
            out.usage.push((*session, *seq, f, u));
        }
    }
    out
}

fn copy_rows(tx: &mut postgres::Transaction<'_>, parts: &[Extracted]) -> std::result::Result<(), postgres::Error> {
    if parts.iter().any(|p| !p.texts.is_empty()) {
        let sink = tx.copy_in(PG_COPY_TEXTS)?;
        let mut w = BinaryCopyInWriter::new(sink, &[Type::INT8, Type::INT8, Type::TEXT, Type::INT8]);
        for (session, seq, role, ts_ms) in parts.iter().flat_map(|p| &p.texts) {
            w.write(&[session, seq, role, ts_ms])?;
        }
        w.finish()?;
    }
    if parts.iter().any(|p| !p.usage.is_empty()) {
        let sink = tx.copy_in(PG_COPY_USAGE)?;
        let types = [
            Type::INT8,
            Type::INT8,
            Type::TEXT,
            Type::TEXT,
            Type::INT8,
            Type::TEXT,
            Type::TEXT,
            Type::INT8,
            Type::INT8,
            Type::INT8,
            Type::INT8,
            Type::INT8,
            Type::FLOAT8,
            Type::INT8,
        ];
        let mut w = BinaryCopyInWriter::new(sink, &types);
        let t = |v: &Option<String>| v.as_deref().map(|s| pg_text(s).into_owned());
        for (session, seq, f, u) in parts.iter().flat_map(|p| &p.usage) {
            w.write(&[
                session,
                seq,
                &t(&f.id),
                &t(&f.ts),
                &f.ts_ms,
                &t(&u.provider),
                &t(&u.model),
                &u.input,
                &u.output,
                &u.cache_read,
                &u.cache_write,
                &u.total,
                &u.cost,
                &u.invalid,
            ])?;
        }
        w.finish()?;
    }
    Ok(())
}

impl Gathered {
    /// Writes the postings gathered as one build batch (inside the catch-up's transaction).
    fn write_pg(&mut self, tx: &mut postgres::Transaction<'_>) -> std::result::Result<(), postgres::Error> {
        let batch: i64 = tx.query_one(PG_META_GET, &[&"batch"])?.get(0);
        let batch = batch + 1;
        let order: Vec<usize> = (0..self.tokens.len()).filter(|&i| !self.postings[i].bytes.is_empty()).collect();
        {
            let sink = tx.copy_in(PG_COPY_POSTINGS)?;
            let mut w = BinaryCopyInWriter::new(sink, &[Type::TEXT, Type::INT8, Type::BYTEA]);
            for &i in &order {
                w.write(&[&&*self.tokens[i], &batch, &self.postings[i].bytes])?;
            }
            w.finish()?;
        }
        for chunk in order.chunks(50_000) {
            let terms: Vec<&str> = chunk.iter().map(|&i| &*self.tokens[i]).collect();
            tx.execute(PG_TERMS_INSERT, &[&terms])?;
        }
        tx.execute(PG_META_ADD, &[&1i64, &"batch"])?;
        tx.execute(PG_META_ADD, &[&(self.keys.len() as i64), &"indexed"])?;
        *self = Gathered::default();
        Ok(())
    }
}

/// [`catch_up_in`] on PostgreSQL: extracts the text and usage rows of the lines written
/// since the last catch-up (sessions sent again whole from their first line; those gone
/// dropped), indexes their texts, in one transaction (repeatable read: the lines, the
/// session rows and their versions agree) under an advisory lock.
pub(crate) fn pg_catch_up(
    pg: &Pg,
    read_batch_of: i64,
    flush_bytes: usize,
    progress: &mut dyn FnMut(i64, i64),
) -> Result<i64> {
    if pg.in_transaction() {
        return Err(Error::InvalidArgument("the search index cannot catch up inside a transaction".into()));
    }
    let mut s = pg.server()?;
    let name = s.name.clone();
    let err = pg_err(&name);
    s.client.execute("SELECT pg_advisory_lock($1)", &[&PG_CATCH_UP_LOCK]).map_err(&err)?;
    let result = pg_catch_up_locked(&mut s.client, read_batch_of, flush_bytes, progress).map_err(&err);
    let unlocked = s.client.execute("SELECT pg_advisory_unlock($1)", &[&PG_CATCH_UP_LOCK]).map_err(&err);
    let n = result?;
    unlocked?;
    Ok(n)
}

fn pg_catch_up_locked(
    client: &mut postgres::Client,
    read_batch_of: i64,
    flush_bytes: usize,
    progress: &mut dyn FnMut(i64, i64),
) -> std::result::Result<i64, postgres::Error> {
    let mut tx = client.build_transaction().isolation_level(postgres::IsolationLevel::RepeatableRead).start()?;
    let meta = |tx: &mut postgres::Transaction<'_>, name: &str| -> std::result::Result<i64, postgres::Error> {
        Ok(tx.query_one(PG_META_GET, &[&name])?.get(0))
    };
    let deleted = meta(&mut tx, "deleted")?;
    if deleted >= REBUILD_MIN_DELETED && deleted * 2 >= meta(&mut tx, "indexed")? {
        tx.batch_execute(PG_RESET)?;
    }
    let mut dropped = 0u64;
    let gone: Vec<i64> = tx.query(PG_GONE, &[])?.iter().map(|r| r.get(0)).collect();
    if !gone.is_empty() {
        dropped += tx.execute(PG_DROP_TEXTS, &[&gone])?;
        tx.execute(PG_DROP_USAGE, &[&gone])?;
        tx.execute(PG_DROP_PROGRESS, &[&gone])?;
    }
    let mut todo: Vec<Todo> = tx
        .query(PG_CHANGED, &[])?
        .iter()
        .map(|r| Todo {
            skey: r.get("skey"),
            row_xmin: r.get("row_xmin"),
            upto: r.get::<_, Option<i64>>("upto").unwrap_or(0),
            line_xmin: r.get("line_xmin"),
            last_seq: r.get("last_seq"),
        })
        .collect();
    // A session whose last extracted line is gone or was written again was sent again whole.
    let (check_s, check_q): (Vec<i64>, Vec<i64>) = todo.iter().filter(|t| t.upto > 0).map(|t| (t.skey, t.upto)).unzip();
    if !check_s.is_empty() {
        let now: HashMap<i64, Option<i64>> =
            tx.query(PG_LINE_XMINS, &[&check_s, &check_q])?.iter().map(|r| (r.get(0), r.get(1))).collect();
        let mut rewritten = Vec::new();
        for t in &mut todo {
            if t.upto > 0 && now.get(&t.skey).copied().flatten() != t.line_xmin {
                rewritten.push(t.skey);
                t.upto = 0;
                t.line_xmin = None;
            }
        }
        if !rewritten.is_empty() {
            dropped += tx.execute(PG_DROP_TEXTS, &[&rewritten])?;
            tx.execute(PG_DROP_USAGE, &[&rewritten])?;
        }
    }
    if dropped > 0 {
        tx.execute(PG_META_ADD, &[&(dropped as i64), &"deleted"])?;
    }
    let total: i64 = todo.iter().map(|t| (t.last_seq - t.upto).max(0)).sum();
    let (mut done, mut indexed) = (0i64, 0i64);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    let mut vocabs: Vec<Vocab> = (0..threads).map(|_| Vocab::default()).collect();
    let mut g = Gathered::default();
    let mut last: HashMap<i64, (i64, Option<i64>), FxBuild> = HashMap::default();
    if !todo.is_empty() {
        let skeys: Vec<i64> = todo.iter().map(|t| t.skey).collect();
        let afters: Vec<i64> = todo.iter().map(|t| t.upto).collect();
        let portal = tx.bind(PG_LINES_AFTER, &[&skeys, &afters])?;
        loop {
            let rows = tx.query_portal(&portal, read_batch_of.clamp(1, i64::from(i32::MAX)) as i32)?;
            if rows.is_empty() {
                break;
            }
            let mut lines = Vec::with_capacity(rows.len());
            for r in &rows {
                let (session, seq): (i64, i64) = (r.get(0), r.get(1));
                last.insert(session, (seq, r.get(3)));
                let body: &[u8] = r.get(2);
                lines.push((session, seq, String::from_utf8_lossy(body).into_owned()));
            }
            drop(rows);
            let parts: Vec<Extracted> = if vocabs.len() <= 1 || lines.len() < 64 {
                vec![extract_lines(&lines, &mut vocabs[0])]
            } else {
                let chunk = lines.len().div_ceil(vocabs.len()).max(1);
                std::thread::scope(|s| {
                    let handles: Vec<_> = lines
                        .chunks(chunk)
                        .zip(vocabs.iter_mut())
                        .map(|(part, v)| s.spawn(move || extract_lines(part, v)))
                        .collect();
                    handles.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
                })
            };
            copy_rows(&mut tx, &parts)?;
            for (w, v) in vocabs.iter_mut().enumerate() {
                g.learn(w, v);
            }
            let mut keys = Vec::new();
            let mut tokenized = Vec::with_capacity(parts.len());
            for p in parts {
                keys.extend_from_slice(&p.keys);
                g.keys.extend_from_slice(&p.keys);
                tokenized.push(p.part);
            }
            indexed += keys.len() as i64;
            gather(&mut g, (keys, tokenized));
            done += lines.len() as i64;
            progress(done, total);
            if g.bytes >= flush_bytes {
                g.write_pg(&mut tx)?;
                vocabs.iter_mut().for_each(|v| *v = Vocab::default());
            }
        }
    }
    if !g.is_empty() {
        g.write_pg(&mut tx)?;
    }
    let mut upto = Vec::with_capacity(todo.len());
    let mut line_xmin = Vec::with_capacity(todo.len());
    for t in &todo {
        let (u, x) = last.get(&t.skey).copied().unwrap_or((t.upto, t.line_xmin));
        upto.push(u);
        line_xmin.push(x);
    }
    let skeys: Vec<i64> = todo.iter().map(|t| t.skey).collect();
    let row_xmins: Vec<i64> = todo.iter().map(|t| t.row_xmin).collect();
    tx.execute(PG_PROGRESS_SET, &[&skeys, &upto, &row_xmins, &line_xmin])?;
    tx.commit()?;
    Ok(indexed)
}

/// `text` with LIKE's wildcards and escape character escaped.
fn like_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn pg_hit_row(r: &postgres::Row) -> HitRow {
    HitRow {
        session_id: r.get("id"),
        session_file: r.get("path"),
        cwd: r.get("cwd"),
        entry_id: r.get("entry_id"),
        role: r.get("role"),
        ts_ms: r.get("ts_ms"),
        line: r.get::<_, Option<&[u8]>>("body").map(|b| String::from_utf8_lossy(b).into_owned()),
    }
}

/// [`scan`] on PostgreSQL: rows fetched a few at a time (a portal), so that a scan stopped
/// early reads no more.
fn pg_scan(pg: &Pg, f: &RowFilter<'_>, take: &mut dyn FnMut(i64, i64, HitRow) -> bool) -> Result<()> {
    if pg.in_transaction() {
        return Err(Error::InvalidArgument("search cannot scan inside a transaction".into()));
    }
    let mut s = pg.server()?;
    let name = s.name.clone();
    let mut tx = s.client.transaction().map_err(pg_err(&name))?;
    let portal = tx.bind(PG_SCAN, &[&f.cwd, &f.role, &f.since_ms]).map_err(pg_err(&name))?;
    'rows: loop {
        let rows = tx.query_portal(&portal, PG_SCAN_FETCH).map_err(pg_err(&name))?;
        if rows.is_empty() {
            break;
        }
        for r in &rows {
            let key = (r.get::<_, i64>("session") << 32) | r.get::<_, i64>("seq");
            if !take(key, key, pg_hit_row(r)) {
                break 'rows;
            }
        }
    }
    tx.commit().map_err(pg_err(&name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_ids_are_one_per_distinct_token() {
        let mut ids = Ids::default();
        let mut known: HashMap<String, u32> = HashMap::new();
        let mut words: Vec<String> = Vec::new();
        for i in 0..5000u32 {
            // Short, exactly 8 bytes, longer ones sharing their first 8, and non-ASCII.
            words.push(format!("w{i}"));
            words.push(format!("abcdefg{}", i % 10));
            words.push(format!("abcdefgh{i}"));
            words.push(format!("abcdefghijklmnopq{}", i % 300));
            words.push(format!("會話{}", i % 77));
        }
        for w in words.iter().chain(&words) {
            let (id, new) = ids.id(w);
            let next = known.len() as u32;
            let want = *known.entry(w.clone()).or_insert(next);
            assert_eq!((id, new), (want, want == next), "{w}");
        }
    }

    #[test]
    fn posting_blobs_round_trip() {
        let keys = [(1i64 << 32) | 1, (1 << 32) | 2, (1 << 32) | 300, (7 << 32) | 5, (1 << 62) | 9];
        let mut blob = Vec::new();
        let mut last = 0u64;
        for k in keys {
            put_varint(&mut blob, (k as u64).wrapping_sub(last));
            last = k as u64;
        }
        let mut out = Vec::new();
        decode_into(&blob, &mut out);
        assert_eq!(out, keys);
    }
}
