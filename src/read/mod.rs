//! The read side: a stored session as a tree, discovery across projects, search (and its
//! snippets), usage totals, export back to JSONL, integrity checks, and resolving what a user typed to a session.

pub mod check;
pub mod discovery;
pub mod export;
pub mod file_writer;
pub mod outline;
pub mod resolve;
pub mod search;
pub mod snippet;
pub mod tree;
pub mod usage_stats;
