//! The storage interface: what the layers above `store/` need of a database, as traits by
//! capability with the rows they return, implemented once for SQLite (`store::sqlite`) and
//! once for PostgreSQL (`store::postgres`). `store::backend::Store` is all of them together,
//! with the roles only one backend has (`Store::replica`, `Store::receiver`, ...); the layers
//! above call them on the `Db` they hold: `db.store().entry_by_id(…)`.

pub mod discovery;
pub mod entries;
pub mod integrity;
pub mod lease;
pub mod links;
pub mod replica;
pub mod search;
pub mod sessions;
pub mod signatures;
pub mod sync_state;
pub mod usage;
pub mod write;
