//! Typed reads of a sessiondb database on a PostgreSQL server: session rows for `list` and
//! `find`, and a session's lines for `export`.

use super::Server;
use crate::error::{Error, Result};
use postgres::fallible_iterator::FallibleIterator;
use postgres::Row;

/// A session row as `list`, `find` and `export` need it.
#[derive(Debug, Clone)]
pub struct RemoteInfo {
    /// The server's key.
    pub skey: i64,
    /// The machine it was pushed from.
    pub origin: String,
    /// Its file's path on that machine.
    pub path: String,
    /// Header id.
    pub id: String,
    /// Header cwd.
    pub cwd: Option<String>,
    /// Session name.
    pub name: Option<String>,
    /// Header timestamp.
    pub created: Option<String>,
    /// Header parentSession.
    pub parent_session: Option<String>,
    /// Message entries.
    pub message_count: i64,
    /// Newest activity (ms).
    pub last_activity_ms: Option<f64>,
    /// First user message text.
    pub first_message: Option<String>,
    /// File modification time at import, else newest write (ns).
    pub written_ns: i64,
    /// Lines held.
    pub last_seq: i64,
    /// Path below the folder it was imported from.
    pub rel_path: Option<String>,
}

/// Free text the server keeps as bytes (UTF-8 that may hold NUL).
fn utf8(v: Option<Vec<u8>>) -> Option<String> {
    v.map(|b| String::from_utf8(b).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

fn info(r: &Row) -> RemoteInfo {
    RemoteInfo {
        skey: r.get("skey"),
        origin: r.get("origin"),
        path: r.get("path"),
        id: r.get("id"),
        cwd: r.get("cwd"),
        name: utf8(r.get("name")),
        created: r.get("created"),
        parent_session: r.get("parent_session"),
        message_count: r.get("message_count"),
        last_activity_ms: r.get("last_activity_ms"),
        first_message: utf8(r.get("first_message")),
        written_ns: r.get("written_ns"),
        last_seq: r.get("last_seq"),
        rel_path: r.get("rel_path"),
    }
}

/// Which sessions a read wants.
pub enum Which<'a> {
    /// Every session.
    All,
    /// Sessions whose file is in this folder.
    Dir(&'a str),
    /// Sessions whose header cwd is this.
    Cwd(&'a str),
    /// Sessions with this header id.
    Id(&'a str),
    /// Sessions whose header id starts with this (at most 50, by id).
    IdPrefix(&'a str),
    /// Sessions at this path (one per origin).
    Path(&'a str),
}

macro_rules! info_query {
    ($where:literal) => {
        concat!(
            "SELECT skey, origin, path, id, cwd, name, created, parent_session, message_count, last_activity_ms, \
                first_message, coalesce(file_mtime_ns, written_ns) AS written_ns, last_seq, rel_path FROM sessions ",
            $where
        )
    };
}

/// Every session.
pub const SESSIONS_ALL: &str = info_query!("ORDER BY skey");
/// Sessions whose file is in folder `$1`.
pub const SESSIONS_IN_DIR: &str = info_query!("WHERE dir = $1 ORDER BY skey");
/// Sessions with header cwd `$1`.
pub const SESSIONS_FOR_CWD: &str = info_query!("WHERE cwd = $1 ORDER BY skey");
/// Sessions with header id `$1`.
pub const SESSIONS_BY_ID: &str = info_query!("WHERE id = $1 ORDER BY skey");
/// Sessions whose id starts with `$1` (`$2` is `$1` followed by U+10FFFF): an index range.
pub const SESSIONS_BY_ID_PREFIX: &str = info_query!("WHERE id >= $1 AND id < $2 ORDER BY id, skey LIMIT 50");
/// Sessions at path `$1` (one per origin).
pub const SESSIONS_AT_PATH: &str = info_query!("WHERE path = $1 ORDER BY skey");

/// Session rows, in the server's key order (by id for a prefix).
pub fn sessions(s: &mut Server, which: Which<'_>) -> Result<Vec<RemoteInfo>> {
    let rows = match which {
        Which::All => s.client.query(SESSIONS_ALL, &[]),
        Which::Dir(d) => s.client.query(SESSIONS_IN_DIR, &[&d]),
        Which::Cwd(c) => s.client.query(SESSIONS_FOR_CWD, &[&c]),
        Which::Id(i) => s.client.query(SESSIONS_BY_ID, &[&i]),
        Which::IdPrefix(p) => {
            let upper = format!("{p}\u{10FFFF}");
            s.client.query(SESSIONS_BY_ID_PREFIX, &[&p, &upper])
        }
        Which::Path(p) => s.client.query(SESSIONS_AT_PATH, &[&p]),
    }
    .map_err(|e| s.pg(e))?;
    Ok(rows.iter().map(info).collect())
}

/// pi's `allMessagesText` of each session in `skeys`, in that order.
pub fn all_texts(s: &mut Server, skeys: &[i64]) -> Result<Vec<String>> {
    let rows = s
        .client
        .query(
            concat!(
                "SELECT k.skey, ",
                super::all_text_of_s!(),
                " AS all_text FROM unnest($1::bigint[]) WITH ORDINALITY AS k(skey, n) \
                JOIN sessions s ON s.skey = k.skey ORDER BY k.n"
            ),
            &[&skeys],
        )
        .map_err(|e| s.pg(e))?;
    let mut by_key: std::collections::HashMap<i64, String> =
        rows.iter().map(|r| (r.get::<_, i64>("skey"), utf8(r.get("all_text")).unwrap_or_default())).collect();
    Ok(skeys.iter().map(|k| by_key.remove(k).unwrap_or_default()).collect())
}

/// A session's lines in file order (the primary key's range).
pub const SESSION_LINES: &str = "SELECT body FROM entries WHERE session = $1 ORDER BY seq";

/// Writes session `skey` as JSONL: its header line, then its lines in file order, each with
/// `\n`. The lines are streamed, never all in memory. Returns the bytes written.
pub fn write_session(s: &mut Server, skey: i64, out: &mut impl std::io::Write) -> Result<u64> {
    let io = |e: std::io::Error| Error::io("<output>", e);
    let name = s.name.clone();
    let pg = |e: postgres::Error| super::server_error(&name, super::cause_of(&e));
    // One snapshot for the header and the lines: a push landing meanwhile is seen whole or not.
    let mut tx = s
        .client
        .build_transaction()
        .read_only(true)
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .start()
        .map_err(pg)?;
    let header: Vec<u8> = tx
        .query_opt("SELECT header FROM sessions WHERE skey = $1", &[&skey])
        .map_err(pg)?
        .ok_or_else(|| Error::NotFound(format!("{name}: no session with key {skey}")))?
        .get("header");
    out.write_all(&header).map_err(io)?;
    out.write_all(b"\n").map_err(io)?;
    let mut bytes = header.len() as u64 + 1;
    let mut rows = tx.query_raw("SELECT body FROM entries WHERE session = $1 ORDER BY seq", [&skey]).map_err(pg)?;
    while let Some(r) = rows.next().map_err(pg)? {
        let body: &[u8] = r.get("body");
        out.write_all(body).map_err(io)?;
        out.write_all(b"\n").map_err(io)?;
        bytes += body.len() as u64 + 1;
    }
    drop(rows);
    tx.commit().map_err(pg)?;
    Ok(bytes)
}
