//! `push`: replicating a local database into a sessiondb database on a PostgreSQL server,
//! incrementally and idempotently, through the store's [`Receiver`](crate::store::interface::replica::Receiver)
//! capability.
//!
//! The server keeps, per session of an origin (machine), how many lines it holds and an
//! FNV-1a hash of the header and those lines. A session whose local row has not changed since
//! (same local key, same newest write, same line count) is not read. One that changed is an
//! append when its first lines still hash to what the server holds: only the lines after are
//! sent; otherwise (rewritten, imported again) it is sent again whole. Lines go by binary
//! `COPY`, batches of sessions in one transaction each, so a push cut short leaves whole
//! sessions: the server never holds a session whose lines and hash disagree.

use crate::error::Result;
use crate::hash::{fnv1a, fnv1a_more};
use crate::store::handle::Db;
use crate::store::interface::replica::{LocalSession, Outgoing, Receiver, Replica};
use crate::store::keys::SessionKey;
use serde::Serialize;

/// How to push.
#[derive(Debug, Clone)]
pub struct PushOptions {
    /// The name the sessions are kept under on the server (default: the host name).
    pub origin: String,
    /// Remove the origin's sessions that are no longer in the local database.
    pub prune: bool,
    /// Lines per transaction (a batch holds whole sessions, so it may hold more).
    pub batch_lines: u64,
    /// Never take a session whose local row looks as pushed for unchanged: compare its lines
    /// (a temporary local database, as `import` on a server uses, whose keys and times mean
    /// nothing across runs).
    pub compare_lines: bool,
}

impl PushOptions {
    /// Defaults for `origin`.
    pub fn new(origin: impl Into<String>) -> Self {
        PushOptions { origin: origin.into(), prune: false, batch_lines: 200_000, compare_lines: false }
    }
}

/// What a push did.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PushSummary {
    /// The origin pushed.
    pub origin: String,
    /// Local sessions.
    pub sessions: u64,
    /// Sessions the server did not have.
    pub new: u64,
    /// Sessions that had lines appended: only those were sent.
    pub appended: u64,
    /// Sessions sent again whole (rewritten or imported again locally).
    pub resent: u64,
    /// Sessions not read: the server holds them as they are.
    pub unchanged: u64,
    /// The origin's sessions removed from the server (`prune`).
    pub pruned: u64,
    /// Lines written to the server.
    pub lines: u64,
    /// Bytes of those lines (and the headers of sessions sent whole).
    pub bytes: u64,
    /// Transactions committed.
    pub batches: u64,
    /// Wall time.
    pub seconds: f64,
}

impl PushSummary {
    /// Whether the push wrote anything.
    pub fn wrote(&self) -> bool {
        self.lines > 0 || self.new + self.appended + self.resent + self.pruned > 0
    }
}

/// The origin a push uses by default: this machine's host name.
pub fn default_origin() -> String {
    let from_kernel = std::fs::read_to_string("/proc/sys/kernel/hostname").ok();
    from_kernel
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

fn hash_header(header: &str) -> u64 {
    fnv1a_more(fnv1a_more(fnv1a(&[]), header.as_bytes()), b"\n")
}

fn hash_line(h: u64, body: &str) -> u64 {
    fnv1a_more(fnv1a_more(h, body.as_bytes()), b"\n")
}

/// What `server` keeps of pushes; `Unsupported` for a database that receives none (a SQLite
/// file: `push --to` takes a server).
pub(crate) fn receiver(server: &Db) -> Result<&dyn Receiver> {
    server.store().receiver().ok_or_else(|| server.unsupported("receiving a push"))
}

/// What a push reads of `local`; `Unsupported` for a database that is not pushed from (a
/// server).
fn replica(local: &Db) -> Result<&dyn Replica> {
    local.store().replica().ok_or_else(|| local.unsupported("pushing from it"))
}

/// What to send of one session.
enum Plan {
    /// The whole session: new on the server (`None`) or replacing its lines.
    Whole(Option<SessionKey>),
    /// Lines after `from_seq`, continuing the hash `hash` of what the server holds.
    Append { skey: SessionKey, from_seq: i64, hash: u64 },
}

/// Pushes every session of `local` to `server` (a database that receives pushes: a
/// PostgreSQL server) under `opts.origin`. `progress(done, total)` after each batch (sessions
/// to send). Two pushes of one origin take turns.
pub fn push(local: &Db, server: &Db, opts: &PushOptions, mut progress: impl FnMut(u64, u64)) -> Result<PushSummary> {
    let started = std::time::Instant::now();
    receiver(server)?.lock_origin(&opts.origin)?;
    let result = push_locked(local, server, opts, &mut progress);
    let unlocked = receiver(server).and_then(|r| r.unlock_origin(&opts.origin));
    let mut summary = result?;
    unlocked?;
    summary.seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}

fn push_locked(
    local: &Db,
    server: &Db,
    opts: &PushOptions,
    progress: &mut impl FnMut(u64, u64),
) -> Result<PushSummary> {
    // One read snapshot of the local database: rows and lines agree even while pi appends.
    local.reading(|| push_snapshot(local, server, opts, progress))
}

fn push_snapshot(
    local: &Db,
    server: &Db,
    opts: &PushOptions,
    progress: &mut impl FnMut(u64, u64),
) -> Result<PushSummary> {
    let sessions = replica(local)?.local_sessions()?;
    // Without pruning, only the server's rows of the sessions sent are needed (a per-turn
    // sync sends one); pruning needs every row of the origin, to find those gone.
    let paths: Option<Vec<String>> = (!opts.prune).then(|| sessions.iter().map(|l| l.path.clone()).collect());
    let mut remote = receiver(server)?.origin_sessions(&opts.origin, paths.as_deref())?;
    let mut summary =
        PushSummary { origin: opts.origin.clone(), sessions: sessions.len() as u64, ..Default::default() };
    let mut todo: Vec<(LocalSession, Plan)> = Vec::new();
    for l in sessions {
        let plan = match remote.remove(&l.path) {
            None => {
                summary.new += 1;
                Plan::Whole(None)
            }
            Some(r)
                if !opts.compare_lines
                    && r.local_sid == l.sid
                    && r.written_ns == l.written_ns
                    && r.last_seq == l.last_seq =>
            {
                summary.unchanged += 1;
                continue;
            }
            Some(r) => match prefix_hash(local, &l, r.last_seq)? {
                Some(h) if h == r.lines_hash => {
                    if r.last_seq == l.last_seq && (r.local_sid == l.sid || opts.compare_lines) {
                        // Same lines; only the row's fields moved (a sync that found nothing new).
                        summary.unchanged += 1;
                    } else {
                        summary.appended += 1;
                    }
                    Plan::Append { skey: r.skey, from_seq: r.last_seq, hash: h }
                }
                _ => {
                    summary.resent += 1;
                    Plan::Whole(Some(r.skey))
                }
            },
        };
        todo.push((l, plan));
    }
    let total = todo.len() as u64;
    let mut done = 0u64;
    let mut batch: Vec<(LocalSession, Plan)> = Vec::new();
    let mut lines_in_batch = 0u64;
    for item in todo {
        lines_in_batch += match &item.1 {
            Plan::Whole(_) => item.0.last_seq as u64,
            Plan::Append { from_seq, .. } => (item.0.last_seq - from_seq).max(0) as u64,
        };
        batch.push(item);
        if lines_in_batch >= opts.batch_lines || batch.len() >= 2_000 {
            done += batch.len() as u64;
            send_batch(local, server, opts, std::mem::take(&mut batch), &mut summary)?;
            lines_in_batch = 0;
            progress(done, total);
        }
    }
    if !batch.is_empty() {
        done += batch.len() as u64;
        send_batch(local, server, opts, batch, &mut summary)?;
        progress(done, total);
    }
    if opts.prune && !remote.is_empty() {
        let gone: Vec<SessionKey> = remote.values().map(|r| r.skey).collect();
        summary.pruned = receiver(server)?.remove_sessions(&gone)?;
        summary.batches += 1;
    }
    Ok(summary)
}

/// The hash of the header and lines `1..=upto` of a local session (`None` when it has fewer).
fn prefix_hash(local: &Db, l: &LocalSession, upto: i64) -> Result<Option<u64>> {
    if upto > l.last_seq {
        return Ok(None);
    }
    let mut h = hash_header(&l.header);
    let mut n = 0;
    replica(local)?.local_lines(l.sid, 1, upto, &mut |line| {
        h = hash_line(h, line.body);
        n += 1;
        Ok(())
    })?;
    Ok((n == upto).then_some(h))
}

/// Sends one batch of sessions in one transaction: rows, then every line, then the hashes of
/// what was sent.
fn send_batch(
    local: &Db,
    server: &Db,
    opts: &PushOptions,
    batch: Vec<(LocalSession, Plan)>,
    summary: &mut PushSummary,
) -> Result<()> {
    let mut outgoing = Vec::with_capacity(batch.len());
    for (l, plan) in &batch {
        let all_text = replica(local)?.local_all_messages_text(l.sid)?;
        let (existing, whole) = match plan {
            Plan::Whole(existing) => (*existing, true),
            Plan::Append { skey, .. } => (Some(*skey), false),
        };
        outgoing.push(Outgoing { session: l, all_text, existing, whole });
    }
    receiver(server)?.receive_batch(&opts.origin, &outgoing, &mut |i, sink| {
        let (l, plan) = &batch[i];
        let (from, mut h) = match plan {
            Plan::Whole(_) => {
                summary.bytes += l.header.len() as u64 + 1;
                (1, hash_header(&l.header))
            }
            Plan::Append { from_seq, hash, .. } => (from_seq + 1, *hash),
        };
        replica(local)?.local_lines(l.sid, from, l.last_seq, &mut |line| {
            h = hash_line(h, line.body);
            summary.lines += 1;
            summary.bytes += line.body.len() as u64 + 1;
            sink(&line)
        })?;
        Ok(h)
    })?;
    summary.batches += 1;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hash of a session's lines that a server keeps (`lines_hash`) and a push continues:
    /// FNV-1a 64 of the header and each line, each with its `\n`. Servers hold these values,
    /// so they must never change.
    #[test]
    fn lines_hashes_are_as_before() {
        let header = hash_header(r#"{"type":"session","version":3,"id":"s1"}"#);
        let one = hash_line(header, r#"{"type":"message","id":"a"}"#);
        let two = hash_line(one, "{\"text\":\"é 日本\"}");
        assert_eq!((header, one, two), (6989691645296892967, 9081636952535044018, 12927200873998885623));
        assert_eq!(
            two,
            crate::hash::fnv1a(&[
                b"{\"type\":\"session\",\"version\":3,\"id\":\"s1\"}\n{\"type\":\"message\",\"id\":\"a\"}\n",
                "{\"text\":\"é 日本\"}\n".as_bytes()
            ])
        );
    }
}
