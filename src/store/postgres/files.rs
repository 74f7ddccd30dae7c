//! What `import` and `sync` keep on the server besides the sessions push writes: the
//! signature (size, modification time) of the file each of the server's own sessions (origin
//! `''`) was imported from, and whether that file was gone at the last sync.

use super::{pg_text, Server};
use crate::error::Result;
use crate::store::interface::replica::KnownFile;
use crate::store::keys::SessionKey;
use crate::store::postgres::one_trip::OneTrip;
use std::collections::HashMap;

/// Every session of an origin with its file's signature.
pub const ORIGIN_FILES: &str = "SELECT s.path, s.skey, f.size, f.mtime_ns, coalesce(f.missing, false) AS missing \
    FROM sessions s LEFT JOIN session_files f ON f.skey = s.skey WHERE s.origin = $1";

/// The same for some paths of the origin (by its `(origin, path)` unique index).
pub const ORIGIN_FILES_AT: &str = "SELECT s.path, s.skey, f.size, f.mtime_ns, coalesce(f.missing, false) AS missing \
    FROM sessions s LEFT JOIN session_files f ON f.skey = s.skey WHERE s.origin = $1 AND s.path = ANY($2)";

/// The sessions of `origin` (at `paths`, or all), by path.
pub fn origin_files(s: &mut Server, origin: &str, paths: Option<&[String]>) -> Result<HashMap<String, KnownFile>> {
    let rows = match paths {
        None => s.client.query_1(ORIGIN_FILES, &[&origin]),
        Some(paths) => {
            let paths: Vec<String> = paths.iter().map(|p| pg_text(p).into_owned()).collect();
            s.client.query_1(ORIGIN_FILES_AT, &[&origin, &paths])
        }
    }
    .map_err(|e| s.pg(e))?;
    Ok(rows
        .iter()
        .map(|r| {
            let (size, mtime): (Option<i64>, Option<i64>) = (r.get("size"), r.get("mtime_ns"));
            let file = KnownFile { skey: r.get("skey"), signature: size.zip(mtime), missing: r.get("missing") };
            (r.get("path"), file)
        })
        .collect())
}

/// Records the signatures of files just sent, by the path of their session.
pub const RECORD_FILES: &str = "INSERT INTO session_files (skey, size, mtime_ns) \
    SELECT s.skey, v.size, v.mtime FROM unnest($2::text[], $3::bigint[], $4::bigint[]) AS v(path, size, mtime) \
    JOIN sessions s ON s.origin = $1 AND s.path = v.path \
    ON CONFLICT (skey) DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns, missing = false";

/// Records `(path, size, mtime_ns)` of each file whose session of `origin` was just sent.
pub fn record_files(s: &mut Server, origin: &str, files: &[(String, i64, i64)]) -> Result<()> {
    if files.is_empty() {
        return Ok(());
    }
    let paths: Vec<String> = files.iter().map(|f| pg_text(&f.0).into_owned()).collect();
    let sizes: Vec<i64> = files.iter().map(|f| f.1).collect();
    let mtimes: Vec<i64> = files.iter().map(|f| f.2).collect();
    s.client.execute_1(RECORD_FILES, &[&origin, &paths, &sizes, &mtimes]).map_err(|e| s.pg(e))?;
    Ok(())
}

/// Marks sessions whose file is gone (or back).
pub const SET_MISSING: &str = "UPDATE session_files SET missing = $2 WHERE skey = ANY($1)";

/// Sets `missing` of the sessions `skeys`.
pub fn set_missing(s: &mut Server, skeys: &[SessionKey], missing: bool) -> Result<()> {
    if skeys.is_empty() {
        return Ok(());
    }
    s.client.execute_1(SET_MISSING, &[&skeys, &missing]).map_err(|e| s.pg(e))?;
    Ok(())
}

/// Removes sessions whose file is gone (`sync --prune`); returns how many.
pub fn delete_sessions(s: &mut Server, skeys: &[SessionKey]) -> Result<u64> {
    if skeys.is_empty() {
        return Ok(0);
    }
    s.client.execute_1(super::push::DELETE_SESSIONS, &[&skeys]).map_err(|e| s.pg(e))
}
