//! Merging the postings on SQLite (migration V12): the batches and their sizes
//! (`search_batches`), the deleted keys (`search_deleted`, written by the trigger on `texts`),
//! and the merge the policy of `store::search::merge` asks for after a catch-up, in one
//! transaction.

use crate::error::Result;
use crate::store::keys::EntryKey;
use crate::store::search::merge::{deletions_needed_since, plan, Batch, Merging, Plan};
use rusqlite::{named_params, Connection, OptionalExtension, TransactionBehavior};
use std::collections::HashSet;

/// Every build batch holding postings, with the bytes of its key lists and the oldest build
/// batch whose keys it holds.
pub const BATCHES: &str = "SELECT batch, bytes, first FROM search_batches";

/// Records a build batch written (or merged into).
pub const BATCH_SET: &str =
    "INSERT OR REPLACE INTO search_batches (batch, bytes, first) VALUES (:batch, :bytes, :first)";

const BATCH_DELETE: &str = "DELETE FROM search_batches WHERE batch = :batch";

/// The postings of build batch `:batch`.
pub const POSTINGS_OF_BATCH: &str = "SELECT token, keys FROM search_postings WHERE batch = :batch";

/// Token `:token`'s row of batch `:batch`.
pub const POSTING_OF: &str = "SELECT keys FROM search_postings WHERE token = :token AND batch = :batch";

const POSTINGS_DELETE_BATCH: &str = "DELETE FROM search_postings WHERE batch = :batch";

const POSTING_SET: &str = "INSERT OR REPLACE INTO search_postings (token, batch, keys) VALUES (:token, :batch, :keys)";

const POSTING_DELETE: &str = "DELETE FROM search_postings WHERE token = :token AND batch = :batch";

/// Keys deleted when batch `:batch` or a later one was the last written that no entry holds
/// now.
pub const DEAD_SINCE: &str = "SELECT d.key FROM search_deleted d WHERE d.batch >= :batch \
    AND NOT EXISTS (SELECT 1 FROM texts t WHERE t.key = d.key)";

/// Forgets deletions older than `:batch`.
pub const DELETED_FORGET: &str = "DELETE FROM search_deleted WHERE batch < :batch";

const LAST_BATCH: &str = "SELECT value FROM search_meta WHERE name = 'batch'";

/// Empties the merge bookkeeping (with the postings, at a rebuild).
pub(super) const RESET: [&str; 2] = ["DELETE FROM search_batches", "DELETE FROM search_deleted"];

fn batches(conn: &Connection) -> Result<Vec<Batch>> {
    let mut st = conn.prepare_cached(BATCHES)?;
    let rows = st.query_map([], |r| Ok(Batch { batch: r.get(0)?, bytes: r.get(1)?, first: r.get(2)? }))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Runs the merge the policy asks for, if any.
pub(super) fn merge_due(conn: &mut Connection) -> Result<()> {
    let Some(p) = plan(&batches(conn)?) else { return Ok(()) };
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    merge(&tx, &p)?;
    let last: i64 = tx.query_row(LAST_BATCH, [], |r| r.get(0)).optional()?.unwrap_or(0);
    let since = deletions_needed_since(&batches(&tx)?, last + 1);
    tx.prepare_cached(DELETED_FORGET)?.execute(named_params! {":batch": since})?;
    tx.commit()?;
    Ok(())
}

/// Merges the small batches of `p` into its tail, token by token.
fn merge(tx: &Connection, p: &Plan) -> Result<()> {
    let mut dead = HashSet::new();
    {
        let mut st = tx.prepare_cached(DEAD_SINCE)?;
        let mut rows = st.query(named_params! {":batch": p.since()})?;
        while let Some(r) = rows.next()? {
            dead.insert(r.get::<_, EntryKey>(0)?);
        }
    }
    let mut m = Merging::default();
    let mut read = tx.prepare_cached(POSTINGS_OF_BATCH)?;
    for b in &p.small {
        let mut rows = read.query(named_params! {":batch": b.batch})?;
        while let Some(r) = rows.next()? {
            m.add(r.get(0)?, r.get(1)?);
        }
    }
    let tokens: Vec<String> = m.tokens().into_iter().map(str::to_owned).collect();
    let mut bytes = p.tail.bytes;
    let mut tail_row = tx.prepare_cached(POSTING_OF)?;
    for t in tokens {
        let old: Option<Vec<u8>> =
            tail_row.query_row(named_params! {":token": t, ":batch": p.tail.batch}, |r| r.get(0)).optional()?;
        if let Some(old) = old {
            bytes -= old.len() as i64;
            m.add(t, old);
        }
    }
    let mut drop_rows = tx.prepare_cached(POSTINGS_DELETE_BATCH)?;
    let mut drop_batch = tx.prepare_cached(BATCH_DELETE)?;
    for b in &p.small {
        drop_rows.execute(named_params! {":batch": b.batch})?;
        drop_batch.execute(named_params! {":batch": b.batch})?;
    }
    let mut set = tx.prepare_cached(POSTING_SET)?;
    let mut unset = tx.prepare_cached(POSTING_DELETE)?;
    for (token, keys) in m.finish(&dead) {
        if keys.is_empty() {
            unset.execute(named_params! {":token": token, ":batch": p.tail.batch})?;
        } else {
            bytes += keys.len() as i64;
            set.execute(named_params! {":token": token, ":batch": p.tail.batch, ":keys": keys})?;
        }
    }
    tx.prepare_cached(BATCH_SET)?
        .execute(named_params! {":batch": p.tail.batch, ":bytes": bytes, ":first": p.since()})?;
    Ok(())
}
