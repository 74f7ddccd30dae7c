//! [`Signatures`] on PostgreSQL: none here; a server keeps file signatures of its own, per
//! origin (`store::postgres::files`).

use crate::jsonl::signature::FileSignature;
use crate::store::postgres::Pg;
use crate::store::signatures::Signatures;
use std::collections::HashMap;
use std::path::PathBuf;

impl Signatures for Pg {
    fn known_signatures(&self) -> crate::error::Result<HashMap<PathBuf, FileSignature>> {
        Err(self.unsupported("reading the file signatures of a local import (a server keeps its own, per origin)"))
    }

    fn set_signature(&self, _sid: i64, _sig: FileSignature) -> crate::error::Result<()> {
        Err(self.unsupported("recording a local import's file signature (a server keeps its own, per origin)"))
    }
}
