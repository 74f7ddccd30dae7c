//! Merging the postings on PostgreSQL (migration V10 of `migrations/postgres/`): the batches
//! and their sizes (`search_batches`), the lines whose search rows a catch-up dropped
//! (`search_deleted`), and the merge the policy of `store::search::merge` asks for, inside
//! the catch-up's transaction.

use crate::store::keys::{EntryKey, SessionKey};
use crate::store::postgres::one_trip::OneTrip;
use crate::store::search::merge::{deletions_needed_since, plan, Batch, Merging, Plan};
use std::collections::HashSet;

type PgResult<T> = std::result::Result<T, postgres::Error>;

/// Every build batch holding postings, with the bytes of its key lists and the oldest build
/// batch whose keys it holds.
pub const PG_BATCHES: &str = "SELECT batch, bytes, first FROM search_batches";

/// Records a build batch written (or merged into).
pub const PG_BATCH_SET: &str = "INSERT INTO search_batches (batch, bytes, first) VALUES ($1, $2, $3) \
    ON CONFLICT (batch) DO UPDATE SET bytes = excluded.bytes, first = excluded.first";

const PG_BATCHES_DELETE: &str = "DELETE FROM search_batches WHERE batch = ANY($1)";

/// The postings of some build batches.
pub const PG_POSTINGS_OF_BATCHES: &str = "SELECT token, keys FROM search_postings WHERE batch = ANY($1)";

/// The rows of batch `$1` of tokens `$2`.
pub const PG_POSTINGS_OF_TOKENS: &str = "SELECT token, keys FROM search_postings WHERE batch = $1 AND token = ANY($2)";

const PG_POSTINGS_DELETE_BATCHES: &str = "DELETE FROM search_postings WHERE batch = ANY($1)";

const PG_POSTINGS_SET: &str = "INSERT INTO search_postings (token, batch, keys) \
    SELECT v.token, $1, v.keys FROM unnest($2::text[], $3::bytea[]) AS v(token, keys) \
    ON CONFLICT (token, batch) DO UPDATE SET keys = excluded.keys";

const PG_POSTINGS_DELETE_TOKENS: &str = "DELETE FROM search_postings WHERE batch = $1 AND token = ANY($2)";

/// Lines deleted when batch `$1` or a later one was the last written that no line's search
/// row holds now.
pub const PG_DEAD_SINCE: &str = "SELECT d.session, d.seq FROM search_deleted d WHERE d.batch >= $1 \
    AND NOT EXISTS (SELECT 1 FROM search_texts t WHERE t.session = d.session AND t.seq = d.seq)";

/// Forgets deletions older than `$1`.
pub const PG_DELETED_FORGET: &str = "DELETE FROM search_deleted WHERE batch < $1";

/// Drops the search rows of sessions `$1`, recording their lines as deleted after batch `$2`.
pub const PG_DROP_TEXTS: &str = "WITH d AS (DELETE FROM search_texts WHERE session = ANY($1) RETURNING session, seq) \
    INSERT INTO search_deleted (session, seq, batch) SELECT session, seq, $2 FROM d \
    ON CONFLICT (session, seq) DO UPDATE SET batch = excluded.batch";

const PG_LAST_BATCH: &str = "SELECT value FROM search_meta WHERE name = 'batch'";

fn batches(tx: &mut postgres::Transaction<'_>) -> PgResult<Vec<Batch>> {
    Ok(tx
        .query_1(PG_BATCHES, &[])?
        .iter()
        .map(|r| Batch { batch: r.get(0), bytes: r.get(1), first: r.get(2) })
        .collect())
}

/// Runs the merge the policy asks for, if any.
pub(super) fn merge_due(tx: &mut postgres::Transaction<'_>) -> PgResult<()> {
    let Some(p) = plan(&batches(tx)?) else { return Ok(()) };
    merge(tx, &p)?;
    let last: i64 = tx.query_opt_1(PG_LAST_BATCH, &[])?.map_or(0, |r| r.get(0));
    let since = deletions_needed_since(&batches(tx)?, last + 1);
    tx.execute_1(PG_DELETED_FORGET, &[&since])?;
    Ok(())
}

/// Merges the small batches of `p` into its tail, token by token.
fn merge(tx: &mut postgres::Transaction<'_>, p: &Plan) -> PgResult<()> {
    let dead: HashSet<EntryKey> =
        tx.query_1(PG_DEAD_SINCE, &[&p.since()])?.iter().map(|r| SessionKey(r.get(0)).entry(r.get(1))).collect();
    let small: Vec<i64> = p.small.iter().map(|b| b.batch).collect();
    let mut m = Merging::default();
    for r in tx.query_1(PG_POSTINGS_OF_BATCHES, &[&small])? {
        m.add(r.get(0), r.get(1));
    }
    let tokens: Vec<String> = m.tokens().into_iter().map(str::to_owned).collect();
    let mut bytes = p.tail.bytes;
    for r in tx.query_1(PG_POSTINGS_OF_TOKENS, &[&p.tail.batch, &tokens])? {
        let old: Vec<u8> = r.get(1);
        bytes -= old.len() as i64;
        m.add(r.get(0), old);
    }
    tx.execute_1(PG_POSTINGS_DELETE_BATCHES, &[&small])?;
    tx.execute_1(PG_BATCHES_DELETE, &[&small])?;
    let (mut set_tokens, mut set_keys, mut unset) = (Vec::new(), Vec::new(), Vec::new());
    for (token, keys) in m.finish(&dead) {
        if keys.is_empty() {
            unset.push(token);
        } else {
            bytes += keys.len() as i64;
            set_tokens.push(token);
            set_keys.push(keys);
        }
    }
    if !set_tokens.is_empty() {
        tx.execute_1(PG_POSTINGS_SET, &[&p.tail.batch, &set_tokens, &set_keys])?;
    }
    if !unset.is_empty() {
        tx.execute_1(PG_POSTINGS_DELETE_TOKENS, &[&p.tail.batch, &unset])?;
    }
    tx.execute_1(PG_BATCH_SET, &[&p.tail.batch, &bytes, &p.since()])?;
    Ok(())
}
