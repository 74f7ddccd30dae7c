//! Recording the signature of a session's file as read or written, the same on every backend
//! ([`Signatures`]; reading them back is a local database's, `SyncStates::known_signatures`).

use crate::jsonl::signature::FileSignature;
use crate::store::keys::SessionKey;

/// File signatures.
pub trait Signatures {
    /// Records that session `sid`'s file now has signature `sig`.
    fn set_signature(&self, sid: SessionKey, sig: FileSignature) -> crate::error::Result<()>;
}
