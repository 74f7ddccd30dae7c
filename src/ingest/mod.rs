//! Getting session files into the database: one-shot import (with its read-ahead thread)
//! and sync, which follows a directory pi is still writing.

pub mod import;
pub mod push;
pub mod readahead;
pub mod sync;
pub mod to_server;
