//! The signatures of the files sessions were imported from, the same on every backend
//! ([`Signatures`], implemented in `store::sqlite::signatures`).

use crate::jsonl::signature::FileSignature;
use crate::store::keys::SessionKey;
use std::collections::HashMap;
use std::path::PathBuf;

/// File signatures.
pub trait Signatures {
    /// The signature of every imported file, by path.
    fn known_signatures(&self) -> crate::error::Result<HashMap<PathBuf, FileSignature>>;
    /// Records that session `sid`'s file now has signature `sig`.
    fn set_signature(&self, sid: SessionKey, sig: FileSignature) -> crate::error::Result<()>;
}
