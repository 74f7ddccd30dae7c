//! What `push` writes on the server: the origin's sessions as the server has them, session
//! rows, entry lines by binary `COPY`, and the removal of sessions gone from the origin.

use super::{pg_text, Server};
use crate::error::Result;
use crate::store::interface::replica::{LocalLine, LocalSession, ReceivedSession};
use crate::store::keys::{EntryKey, SessionKey};
use crate::store::postgres::one_trip::OneTrip;
use postgres::binary_copy::BinaryCopyInWriter;
use postgres::types::Type;
use postgres::Transaction;
use std::collections::HashMap;

/// The push's high-water marks: one row per session of an origin.
pub const ORIGIN_SESSIONS: &str =
    "SELECT path, skey, local_sid, written_ns, last_seq, lines_hash FROM sessions WHERE origin = $1";

/// The same for some paths of the origin (by its `(origin, path)` unique index).
pub const ORIGIN_SESSIONS_AT: &str = "SELECT path, skey, local_sid, written_ns, last_seq, lines_hash FROM sessions \
    WHERE origin = $1 AND path = ANY($2)";

/// The origin's sessions on the server (at `paths`, or all), by path.
pub fn origin_sessions(
    s: &mut Server,
    origin: &str,
    paths: Option<&[String]>,
) -> Result<HashMap<String, ReceivedSession>> {
    let rows = match paths {
        None => s.client.query_1(ORIGIN_SESSIONS, &[&origin]),
        Some(paths) => {
            let paths: Vec<String> = paths.iter().map(|p| pg_text(p).into_owned()).collect();
            s.client.query_1(ORIGIN_SESSIONS_AT, &[&origin, &paths])
        }
    }
    .map_err(|e| s.pg(e))?;
    Ok(rows
        .iter()
        .map(|r| {
            let hash: i64 = r.get("lines_hash");
            (
                r.get("path"),
                ReceivedSession {
                    skey: r.get("skey"),
                    local_sid: r.get("local_sid"),
                    written_ns: r.get("written_ns"),
                    last_seq: r.get("last_seq"),
                    lines_hash: hash as u64,
                },
            )
        })
        .collect())
}

/// Holds the origin's push lock for the connection's life (or until [`unlock_origin`]):
/// two pushes of one origin take turns; pushes of different origins run at once.
pub fn lock_origin(s: &mut Server, origin: &str) -> Result<()> {
    s.client.execute_1("SELECT pg_advisory_lock($1)", &[&origin_lock(origin)]).map_err(|e| s.pg(e))?;
    Ok(())
}

/// Releases [`lock_origin`]'s lock.
pub fn unlock_origin(s: &mut Server, origin: &str) -> Result<()> {
    s.client.execute_1("SELECT pg_advisory_unlock($1)", &[&origin_lock(origin)]).map_err(|e| s.pg(e))?;
    Ok(())
}

fn origin_lock(origin: &str) -> i64 {
    crate::hash::fnv1a(&[b"sessiondb push ", origin.as_bytes()]) as i64
}

/// A new session row (its lines follow by [`EntryCopy`], its hash by [`set_hashes`]).
pub const INSERT_SESSION: &str = "INSERT INTO sessions (origin, path, id, dir, rel_path, cwd, created, \
    parent_session, header, file_mtime_ns, written_ns, name, message_count, first_message, last_activity_ms, \
    entry_count, last_seq, all_text, lines_hash, local_sid, tree_ok, has_text, text_seq) \
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, 0, $19, $20, \
        octet_length($18::bytea) > 0, $17) RETURNING skey";

/// An existing session row brought up to the origin's.
pub const UPDATE_SESSION: &str = "UPDATE sessions SET id = $2, dir = $3, rel_path = $4, cwd = $5, created = $6, \
    parent_session = $7, header = $8, file_mtime_ns = $9, written_ns = $10, name = $11, message_count = $12, \
    first_message = $13, last_activity_ms = $14, entry_count = $15, last_seq = $16, all_text = $17, local_sid = $18, \
    tree_ok = $19, has_text = octet_length($17::bytea) > 0, text_seq = $16 WHERE skey = $1";

/// Drops a session's lines before it is sent again whole.
pub const DELETE_LINES: &str = "DELETE FROM entries WHERE session = $1";

/// Writes the row of `l` (new when `existing` is `None`; its lines dropped when `whole`).
/// Returns the server's key of the session.
pub fn put_session(
    tx: &mut Transaction<'_>,
    origin: &str,
    l: &LocalSession,
    all_text: &str,
    existing: Option<SessionKey>,
    whole: bool,
) -> std::result::Result<SessionKey, postgres::Error> {
    let t = |v: &Option<String>| v.as_deref().map(|s| pg_text(s).into_owned());
    let (id, dir, rel, cwd, created, parent) =
        (pg_text(&l.id), pg_text(&l.dir), t(&l.rel_path), t(&l.cwd), t(&l.created), t(&l.parent_session));
    // Free text is sent as bytes: PostgreSQL's text cannot hold NUL, and these are shown as they are.
    let (name, first, all) =
        (l.name.as_deref().map(str::as_bytes), l.first_message.as_deref().map(str::as_bytes), all_text.as_bytes());
    let header = l.header.as_bytes();
    // Both statements take the row's columns in this order after their own first parameters.
    let row: [&(dyn postgres::types::ToSql + Sync); 18] = [
        &id,
        &dir,
        &rel,
        &cwd,
        &created,
        &parent,
        &header,
        &l.file_mtime_ns,
        &l.written_ns,
        &name,
        &l.message_count,
        &first,
        &l.last_activity_ms,
        &l.entry_count,
        &l.last_seq,
        &all,
        &l.sid,
        &l.tree_ok,
    ];
    match existing {
        None => {
            let path = pg_text(&l.path);
            let params: Vec<_> =
                [&origin as &(dyn postgres::types::ToSql + Sync), &path].into_iter().chain(row).collect();
            Ok(tx.query_one_1(INSERT_SESSION, &params)?.get("skey"))
        }
        Some(skey) => {
            if whole {
                tx.execute_1(DELETE_LINES, &[&skey])?;
            }
            let params: Vec<_> = [&skey as &(dyn postgres::types::ToSql + Sync)].into_iter().chain(row).collect();
            tx.execute_1(UPDATE_SESSION, &params)?;
            Ok(skey)
        }
    }
}

/// Entry lines streamed to the server in `COPY`'s binary format.
pub const COPY_ENTRIES: &str = "COPY entries (session, seq, id, parent_id, type, ts, body, role, ts_ms, parent_key, \
    depth, compaction_key, thinking_key, model_key) FROM STDIN (FORMAT binary)";

/// One `COPY` of entry lines, inside a push's transaction.
pub struct EntryCopy<'a> {
    writer: BinaryCopyInWriter<'a>,
}

impl<'a> EntryCopy<'a> {
    /// Starts the copy.
    pub fn start(tx: &'a mut Transaction<'_>) -> std::result::Result<Self, postgres::Error> {
        let sink = tx.copy_in(COPY_ENTRIES)?;
        let types = [
            Type::INT8,
            Type::INT8,
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
            Type::BYTEA,
            Type::TEXT,
            Type::INT8,
            Type::INT8,
            Type::INT8,
            Type::INT8,
            Type::INT8,
            Type::INT8,
        ];
        Ok(EntryCopy { writer: BinaryCopyInWriter::new(sink, &types) })
    }

    /// Sends one line of session `skey`.
    pub fn line(&mut self, skey: SessionKey, l: &LocalLine<'_>) -> std::result::Result<(), postgres::Error> {
        let t = |v: Option<&str>| v.map(|s| pg_text(s).into_owned());
        let (id, parent, kind, ts, role) = (t(l.id), t(l.parent_id), t(l.kind), t(l.ts), t(l.role));
        // Keys of the local session become the server's: same line number, the server's session.
        let key = |k: Option<EntryKey>| k.map(|k| skey.entry(k.seq()));
        let d = l.derived;
        let (parent_key, depth, compaction, thinking, model) =
            (key(d.parent_key), d.depth, key(d.compaction_key), key(d.thinking_key), key(d.model_key));
        self.writer.write(&[
            &skey,
            &l.seq,
            &id,
            &parent,
            &kind,
            &ts,
            &l.body.as_bytes(),
            &role,
            &l.ts_ms,
            &parent_key,
            &depth,
            &compaction,
            &thinking,
            &model,
        ])
    }

    /// Ends the copy; returns the rows written.
    pub fn finish(self) -> std::result::Result<u64, postgres::Error> {
        self.writer.finish()
    }
}

/// Records each session's lines hash, after its lines are sent.
pub const SET_HASHES: &str = "UPDATE sessions s SET lines_hash = v.h \
    FROM unnest($1::bigint[], $2::bigint[]) AS v(k, h) WHERE s.skey = v.k";

/// Sets `lines_hash` of each `(skey, hash)`.
pub fn set_hashes(tx: &mut Transaction<'_>, hashes: &[(SessionKey, u64)]) -> std::result::Result<(), postgres::Error> {
    let keys: Vec<SessionKey> = hashes.iter().map(|h| h.0).collect();
    let values: Vec<i64> = hashes.iter().map(|h| h.1 as i64).collect();
    tx.execute_1(SET_HASHES, &[&keys, &values])?;
    Ok(())
}

/// Removes sessions of an origin (their lines go with them).
pub const DELETE_SESSIONS: &str = "DELETE FROM sessions WHERE skey = ANY($1)";
