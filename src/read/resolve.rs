//! Turning what a user types (a session id, a unique id prefix, or a file path) into a session.

use crate::error::{Error, Result};
use crate::store::queries;
use rusqlite::Connection;

/// Shortest id prefix accepted.
pub const MIN_PREFIX: usize = 4;

/// A session found in the database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRef {
    /// Internal key.
    pub sid: i64,
    /// Header id.
    pub id: String,
    /// The session's file path.
    pub path: String,
}

fn rows(conn: &Connection, sql: &str, params: impl rusqlite::Params) -> Result<Vec<SessionRef>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let found = stmt
        .query_map(params, |r| Ok(SessionRef { sid: r.get(0)?, id: r.get(1)?, path: r.get(2)? }))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(found)
}

fn one(what: &str, found: Vec<SessionRef>) -> Result<Option<SessionRef>> {
    match found.len() {
        0 => Ok(None),
        1 => Ok(found.into_iter().next()),
        _ => Err(Error::Ambiguous {
            what: what.to_string(),
            candidates: found.iter().map(|s| format!("{} ({})", s.id, s.path)).collect(),
        }),
    }
}

/// Finds the session `reference` names: its file path, its exact id, or a unique id prefix of
/// at least [`MIN_PREFIX`] characters. Several matches are an error listing them.
pub fn resolve(conn: &Connection, reference: &str) -> Result<SessionRef> {
    if reference.is_empty() {
        return Err(Error::InvalidArgument("empty session reference".into()));
    }
    let looks_like_path = reference.contains('/') || reference.ends_with(".jsonl");
    if looks_like_path || std::path::Path::new(reference).is_file() {
        let abs = crate::pi::layout::resolve_path(reference);
        let found = rows(conn, crate::store::sessions::SESSION_REF_BY_PATH, [abs.to_string_lossy()])?;
        if let Some(s) = one(reference, found)? {
            return Ok(s);
        }
        if looks_like_path {
            return Err(Error::NotFound(format!("no session recorded at {}", abs.display())));
        }
    }
    if let Some(s) = one(&format!("session id {reference}"), rows(conn, queries::SESSIONS_BY_ID, [reference])?)? {
        return Ok(s);
    }
    if reference.chars().count() < MIN_PREFIX {
        return Err(Error::NotFound(format!(
            "no session with id {reference} (an id prefix needs at least {MIN_PREFIX} characters)"
        )));
    }
    let upper = format!("{reference}\u{10FFFF}");
    match one(
        &format!("session id prefix {reference}"),
        rows(conn, queries::SESSIONS_BY_ID_PREFIX, [reference, &upper])?,
    )? {
        Some(s) => Ok(s),
        None => Err(Error::NotFound(format!("no session with id or id prefix {reference}"))),
    }
}
