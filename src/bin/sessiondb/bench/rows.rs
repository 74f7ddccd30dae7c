//! Counting the entry rows a piece of work reads, through SQLite's row trace: every row a
//! statement over `entries` returns to sessiondb is one row read.

use rusqlite::trace::{TraceEvent, TraceEventCodes};
use sessiondb::db::Db;
use sessiondb::Result;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Runs `f` on `conn` and returns its result with the number of `entries` rows it read.
/// Tracing slows statements down: never time work while counting.
pub fn count_entry_rows<T>(db: &mut Db, f: impl FnOnce(&Db) -> Result<T>) -> Result<(T, u64)> {
    let count = Arc::new(AtomicU64::new(0));
    let seen = Arc::clone(&count);
    db.sqlite_mut().trace_v2(
        TraceEventCodes::SQLITE_TRACE_ROW,
        Some(move |event: TraceEvent<'_>| {
            if let TraceEvent::Row(stmt) = event {
                if stmt.sql().contains("entries") || stmt.sql().contains("entry_lines") {
                    seen.fetch_add(1, Ordering::Relaxed);
                }
            }
        }),
    )?;
    let result = f(db);
    db.sqlite_mut().trace_v2(TraceEventCodes::empty(), None::<fn(TraceEvent<'_>)>)?;
    Ok((result?, count.load(Ordering::Relaxed)))
}
