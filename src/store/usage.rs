//! Token and cost totals from the usage rows extracted on write, the same on every backend
//! ([`Usage`], implemented in `store::sqlite::usage` and `store::postgres::usage`).

use crate::error::Result;
use crate::store::handle::Db;

pub use crate::store::interface::usage::*;

/// Totals per group (`group` is one of the names [`USAGE_TOTALS`] takes), ordered by group.
pub fn totals(
    db: &Db,
    group: &str,
    since_ms: Option<i64>,
    until_ms: Option<i64>,
    cwd: Option<&str>,
) -> Result<Vec<Totals>> {
    db.store().usage_totals(group, since_ms, until_ms, cwd)
}
