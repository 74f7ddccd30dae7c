//! [`Receiver`] on PostgreSQL: a server is pushed to, not from (it has no `Replica` role). The statements
//! are in [`push`] and [`files`].

use crate::error::Result;
use crate::store::interface::replica::{BatchLines, KnownFile, Outgoing, ReceivedSession, Receiver};
use crate::store::keys::SessionKey;
use crate::store::postgres::{files, push, Pg, Server};
use std::collections::HashMap;

impl Receiver for Pg {
    fn stored_path(&self, path: &str) -> String {
        super::pg_text(path).into_owned()
    }

    fn lock_origin(&self, origin: &str) -> Result<()> {
        push::lock_origin(&mut *self.server()?, origin)
    }

    fn unlock_origin(&self, origin: &str) -> Result<()> {
        push::unlock_origin(&mut *self.server()?, origin)
    }

    fn origin_sessions(&self, origin: &str, paths: Option<&[String]>) -> Result<HashMap<String, ReceivedSession>> {
        push::origin_sessions(&mut *self.server()?, origin, paths)
    }

    fn receive_batch(
        &self,
        origin: &str,
        batch: &[Outgoing<'_>],
        lines: &mut BatchLines<'_>,
    ) -> Result<Vec<SessionKey>> {
        let mut s = self.server()?;
        let name = s.name.clone();
        let pg = |e: postgres::Error| Server::describe(&name, &e);
        let mut tx = s.client.transaction().map_err(pg)?;
        let mut keys = Vec::with_capacity(batch.len());
        for o in batch {
            keys.push(push::put_session(&mut tx, origin, o.session, &o.all_text, o.existing, o.whole).map_err(pg)?);
        }
        let mut hashes = Vec::with_capacity(batch.len());
        {
            let mut copy = push::EntryCopy::start(&mut tx).map_err(pg)?;
            for (i, &skey) in keys.iter().enumerate() {
                let hash = lines(i, &mut |line| copy.line(skey, line).map_err(pg))?;
                hashes.push((skey, hash));
            }
            copy.finish().map_err(pg)?;
        }
        push::set_hashes(&mut tx, &hashes).map_err(pg)?;
        tx.commit().map_err(pg)?;
        Ok(keys)
    }

    fn remove_sessions(&self, skeys: &[SessionKey]) -> Result<u64> {
        files::delete_sessions(&mut *self.server()?, skeys)
    }

    fn origin_files(&self, origin: &str, paths: Option<&[String]>) -> Result<HashMap<String, KnownFile>> {
        files::origin_files(&mut *self.server()?, origin, paths)
    }

    fn record_files(&self, origin: &str, list: &[(String, i64, i64)]) -> Result<()> {
        files::record_files(&mut *self.server()?, origin, list)
    }

    fn set_files_missing(&self, skeys: &[SessionKey], missing: bool) -> Result<()> {
        files::set_missing(&mut *self.server()?, skeys, missing)
    }
}
