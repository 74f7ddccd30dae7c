//! Rebuilds the crate when a schema migration is added or edited: `embed_migrations!` reads
//! `migrations/sqlite/` and `migrations/postgres/` at compile time, which cargo does not track
//! by itself.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
