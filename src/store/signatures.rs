//! The signatures of the files sessions were imported from: what lets an import skip an
//! unchanged file and a sync tell a grown file from a rewritten one.

use crate::jsonl::signature::FileSignature;
use crate::store::handle::Db;
use rusqlite::named_params;
use std::collections::HashMap;
use std::path::PathBuf;

/// Every imported file's signature.
const KNOWN: &str = "SELECT path, file_size, file_mtime_ns FROM sessions \
    WHERE file_size IS NOT NULL AND file_mtime_ns IS NOT NULL";

/// The signature of every imported file, by path.
pub fn known(db: &Db) -> crate::error::Result<HashMap<PathBuf, FileSignature>> {
    let conn = db.conn()?;
    let mut st = conn.prepare(KNOWN)?;
    let rows = st.query_map([], |r| {
        let sig = FileSignature { size: r.get("file_size")?, mtime_ns: r.get("file_mtime_ns")? };
        Ok((PathBuf::from(r.get::<_, String>("path")?), sig))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Records a session's file as read up to `sig` (its newest write is the file's mtime).
const SET: &str = "UPDATE sessions SET file_size = :size, file_mtime_ns = :mtime, written_ns = :mtime WHERE sid = :sid";

/// Records that session `sid`'s file now has signature `sig`.
pub fn set(db: &Db, sid: i64, sig: FileSignature) -> crate::error::Result<()> {
    let conn = db.conn()?;
    conn.prepare_cached(SET)?.execute(named_params! { ":sid": sid, ":size": sig.size, ":mtime": sig.mtime_ns })?;
    Ok(())
}
