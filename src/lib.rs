//! sessiondb: pi coding-agent sessions kept in SQLite, with exact JSONL import and export.

pub mod bench;
pub mod branch;
pub mod bulk;
pub mod canonical;
pub mod check;
pub mod collate;
pub mod db;
pub mod derive;
pub mod discovery;
pub mod entries;
pub mod error;
pub mod export;
pub mod extract;
pub mod ids;
pub mod import;
pub mod journal;
pub mod json;
pub mod jsonl;
pub mod jstime;
pub mod layout;
pub mod manager;
pub mod migrate;
pub mod projection;
pub mod queries;
pub mod readahead;
pub mod render;
pub mod resolve;
pub mod rpc;
pub mod search;
pub mod stats;
pub mod store;
pub mod sync;
pub mod system;
pub mod tree;
pub mod usage_stats;

pub use error::{Error, Result};
