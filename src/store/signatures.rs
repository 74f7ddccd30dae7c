//! The signatures of the files sessions were imported from, the same on every backend
//! ([`Signatures`], implemented in `store::sqlite::signatures`).

use crate::store::handle::Db;
use crate::store::keys::SessionKey;

use crate::jsonl::signature::FileSignature;
pub(crate) use crate::store::interface::signatures::*;
use std::collections::HashMap;
use std::path::PathBuf;

/// The signature of every imported file, by path.
pub fn known(db: &Db) -> crate::error::Result<HashMap<PathBuf, FileSignature>> {
    db.store().known_signatures()
}

/// Records that session `sid`'s file now has signature `sig`.
pub fn set(db: &Db, sid: SessionKey, sig: FileSignature) -> crate::error::Result<()> {
    db.store().set_signature(sid, sig)
}
