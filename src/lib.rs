//! sessiondb: pi coding-agent sessions kept in SQLite, with exact JSONL import and export.

pub mod bench;
pub mod db;
pub mod derive;
pub mod error;
pub mod export;
pub mod ids;
pub mod import;
pub mod json;
pub mod jsonl;
pub mod jstime;
pub mod layout;
pub mod migrate;
pub mod projection;
pub mod queries;
pub mod resolve;
pub mod stats;
pub mod tree;

pub use error::{Error, Result};
