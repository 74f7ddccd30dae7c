//! [`Signatures`] on SQLite.

use crate::jsonl::signature::FileSignature;
use crate::store::interface::signatures::Signatures;
use crate::store::keys::SessionKey;
use crate::store::sqlite::Sqlite;
use rusqlite::named_params;

/// Records a session's file as read up to `sig` (its newest write is the file's mtime).
const SET: &str = "UPDATE sessions SET file_size = :size, file_mtime_ns = :mtime, written_ns = :mtime WHERE sid = :sid";

impl Signatures for Sqlite {
    fn set_signature(&self, sid: SessionKey, sig: FileSignature) -> crate::error::Result<()> {
        let db = &self.conn;
        let conn = db;
        conn.prepare_cached(SET)?.execute(named_params! { ":sid": sid, ":size": sig.size, ":mtime": sig.mtime_ns })?;
        Ok(())
    }
}
