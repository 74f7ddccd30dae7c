//! Turning what a user types (a session id, a unique id prefix, or a file path) into a session.

use crate::error::{Error, Result};
use crate::store::handle::Db;
pub use crate::store::interface::discovery::SessionRef;

/// Shortest id prefix accepted.
pub const MIN_PREFIX: usize = 4;

fn one(what: &str, found: Vec<SessionRef>) -> Result<Option<SessionRef>> {
    match found.len() {
        0 => Ok(None),
        1 => Ok(found.into_iter().next()),
        _ => Err(Error::Ambiguous {
            what: what.to_string(),
            candidates: found.iter().map(|s| format!("{} ({})", s.id, s.place())).collect(),
        }),
    }
}

/// Finds the session `reference` names: its file path, its exact id, or a unique id prefix of
/// at least [`MIN_PREFIX`] characters. Several matches are an error listing them.
pub fn resolve(db: &Db, reference: &str) -> Result<SessionRef> {
    if reference.is_empty() {
        return Err(Error::InvalidArgument("empty session reference".into()));
    }
    let looks_like_path = reference.contains('/') || reference.ends_with(".jsonl");
    if looks_like_path || std::path::Path::new(reference).is_file() {
        let abs = crate::pi::layout::resolve_path(reference);
        if let Some(s) = one(reference, db.store().refs_by_path(&abs.to_string_lossy())?)? {
            return Ok(s);
        }
        if looks_like_path {
            return Err(Error::NotFound(format!("no session recorded at {}", abs.display())));
        }
    }
    if let Some(s) = one(&format!("session id {reference}"), db.store().refs_by_id(reference)?)? {
        return Ok(s);
    }
    if reference.chars().count() < MIN_PREFIX {
        return Err(Error::NotFound(format!(
            "no session with id {reference} (an id prefix needs at least {MIN_PREFIX} characters)"
        )));
    }
    match one(&format!("session id prefix {reference}"), db.store().refs_by_id_prefix(reference)?)? {
        Some(s) => Ok(s),
        None => Err(Error::NotFound(format!("no session with id or id prefix {reference}"))),
    }
}

/// The session a link by header id names (`serve`'s `/s/ID`): of several sessions with that
/// id (a file imported from two paths, a session pushed from two machines), the one with the
/// lowest internal key, the first stored, so that the link always opens the same one.
pub fn by_id(db: &Db, id: &str) -> Result<Option<SessionRef>> {
    Ok(db.store().refs_by_id(id)?.into_iter().min_by_key(|r| r.sid))
}
