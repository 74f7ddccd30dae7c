//! [`Signatures`] on PostgreSQL: a server keeps the signatures of its own sessions' files (origin
//! `''`) in `session_files` (`store::postgres::files`, which `import` and `sync` there read and
//! write); a local import's signatures are not the server's business.

use crate::jsonl::signature::FileSignature;
use crate::store::interface::signatures::Signatures;
use crate::store::keys::SessionKey;
use crate::store::postgres::Pg;

/// Records the file of one of the server's sessions as read or written up to `(size, mtime)`:
/// a sync then finds it unchanged (a host writing pi's files, the `sessiondb-pi` launcher).
pub const SET_SESSION_FILE: &str = "INSERT INTO session_files (skey, size, mtime_ns) VALUES ($1, $2, $3) \
    ON CONFLICT (skey) DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns, missing = false";

impl Signatures for Pg {
    fn set_signature(&self, sid: SessionKey, sig: FileSignature) -> crate::error::Result<()> {
        self.execute(SET_SESSION_FILE, &[&sid, &sig.size, &sig.mtime_ns])?;
        Ok(())
    }
}
