//! [`Replica`] on PostgreSQL: a server is pushed to, not from.

use crate::error::Result;
use crate::store::postgres::Pg;
use crate::store::replica::{LocalLine, LocalSession, Replica};

impl Replica for Pg {
    fn local_sessions(&self) -> Result<Vec<LocalSession>> {
        Err(self.unsupported("pushing from a PostgreSQL database"))
    }

    fn local_lines(
        &self,
        _sid: i64,
        _from: i64,
        _to: i64,
        _f: &mut dyn FnMut(LocalLine<'_>) -> Result<()>,
    ) -> Result<()> {
        Err(self.unsupported("pushing from a PostgreSQL database"))
    }

    fn local_all_messages_text(&self, _sid: i64) -> Result<String> {
        Err(self.unsupported("pushing from a PostgreSQL database"))
    }
}
