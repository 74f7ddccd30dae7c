//! [`Signatures`] on SQLite.

use crate::jsonl::signature::FileSignature;
use crate::store::keys::SessionKey;
use crate::store::signatures::Signatures;
use crate::store::sqlite::Sqlite;
use rusqlite::named_params;
use std::collections::HashMap;
use std::path::PathBuf;

/// Every imported file's signature.
const KNOWN: &str = "SELECT path, file_size, file_mtime_ns FROM sessions \
    WHERE file_size IS NOT NULL AND file_mtime_ns IS NOT NULL";

/// Records a session's file as read up to `sig` (its newest write is the file's mtime).
const SET: &str = "UPDATE sessions SET file_size = :size, file_mtime_ns = :mtime, written_ns = :mtime WHERE sid = :sid";

impl Signatures for Sqlite {
    fn known_signatures(&self) -> crate::error::Result<HashMap<PathBuf, FileSignature>> {
        let db = &self.conn;
        let conn = db;
        let mut st = conn.prepare(KNOWN)?;
        let rows = st.query_map([], |r| {
            let sig = FileSignature { size: r.get("file_size")?, mtime_ns: r.get("file_mtime_ns")? };
            Ok((PathBuf::from(r.get::<_, String>("path")?), sig))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn set_signature(&self, sid: SessionKey, sig: FileSignature) -> crate::error::Result<()> {
        let db = &self.conn;
        let conn = db;
        conn.prepare_cached(SET)?.execute(named_params! { ":sid": sid, ":size": sig.size, ":mtime": sig.mtime_ns })?;
        Ok(())
    }
}
