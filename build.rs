//! Rebuilds the crate when a schema migration is added or edited: `embed_migrations!` reads
//! `migrations/` (SQLite) and `src/store/postgres/migrations/` (PostgreSQL) at compile time, which
//! cargo does not track by itself.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
    println!("cargo:rerun-if-changed=src/store/postgres/migrations");
}
