//! Getting session files into the database: one-shot import (with its read-ahead thread)
//! and sync, which follows a directory pi is still writing; on a server, through staging
//! databases and push (`route` chooses).

pub mod import;
pub mod move_leftovers;
pub mod move_session;
pub mod push;
pub mod readahead;
pub mod route;
pub mod sync;
pub mod to_server;
