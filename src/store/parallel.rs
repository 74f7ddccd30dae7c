//! Work spread over a few threads with its results taken back in the order it was given: the
//! packing of an import's lines and the unpacking of an export's (zstd packs about 250 MB of
//! lines a second on one core of this machine, as slow as parsing them).
//!
//! Each worker keeps its own state (a packer, an unpacker: zstd contexts are not shared); a
//! job's result comes back through its own [`Ticket`], so whoever holds the tickets in order
//! reads the results in order, whichever worker finished first.

use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::Scope;

/// Workers for a machine: one per core, at most `most`.
pub fn workers(most: usize) -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, most.max(1))
}

/// The result of one job, once its worker is done with it.
pub struct Ticket<Out>(Receiver<Out>);

impl<Out> Ticket<Out> {
    /// Waits for the result; `None` when the worker stopped without one (it panicked).
    pub fn wait(self) -> Option<Out> {
        self.0.recv().ok()
    }
}

type Job<In, Out> = (In, SyncSender<Out>);

/// Workers taking jobs from one queue; they stop when the pool is dropped and the queue is
/// empty (the scope they run in waits for them).
pub struct Pool<In, Out> {
    jobs: Sender<Job<In, Out>>,
}

impl<In: Send, Out: Send> Pool<In, Out> {
    /// Starts one worker per state in `scope`, each running `work` on the jobs it takes.
    pub fn start<'scope, 'env, S: Send + 'scope>(
        scope: &'scope Scope<'scope, 'env>,
        states: Vec<S>,
        work: fn(&mut S, In) -> Out,
    ) -> Self
    where
        In: 'scope,
        Out: 'scope,
    {
        let (jobs, queue) = channel::<Job<In, Out>>();
        let queue = Arc::new(Mutex::new(queue));
        for mut state in states {
            let queue = Arc::clone(&queue);
            scope.spawn(move || loop {
                // The lock is held only while taking a job, not while doing it.
                let job = match queue.lock() {
                    Ok(q) => q.recv(),
                    Err(_) => return,
                };
                let Ok((input, done)) = job else { return };
                // The holder of the ticket may have gone (an error stopped it): nothing to do.
                let _ = done.send(work(&mut state, input));
            });
        }
        Pool { jobs }
    }

    /// Queues `input`; its result comes back through the ticket. With every worker gone the
    /// ticket's `wait` says so.
    pub fn submit(&self, input: In) -> Ticket<Out> {
        let (done, result) = sync_channel(1);
        let _ = self.jobs.send((input, done));
        Ticket(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_the_order_given_whichever_worker_finishes_first() {
        fn work(seen: &mut usize, n: u64) -> u64 {
            *seen += 1;
            // Earlier jobs take longer, so later ones finish first.
            std::thread::sleep(std::time::Duration::from_millis(20u64.saturating_sub(n)));
            n * n
        }
        std::thread::scope(|s| {
            let pool = Pool::start(s, vec![0usize; 3], work);
            let tickets: Vec<_> = (0..20).map(|n| pool.submit(n)).collect();
            let got: Vec<u64> = tickets.into_iter().map(|t| t.wait().unwrap()).collect();
            assert_eq!(got, (0..20).map(|n| n * n).collect::<Vec<_>>());
        });
    }
}
