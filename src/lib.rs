//! sessiondb: pi coding-agent sessions kept in SQLite, with exact JSONL import and export.
//!
//! The public API is what a library user needs: [`SessionManager`] (pi's SessionManager over
//! the database), opening a database ([`db`]), [`import`] and [`export`], the read queries
//! ([`tree`], [`discovery`], [`search`], [`usage_stats`], [`check`], [`resolve`]), [`sync`],
//! [`rpc`] and the [`json`] values entries are made of. ARCHITECTURE.md maps the layers.

mod error;
pub(crate) mod hash;
pub(crate) mod ingest;
pub(crate) mod js;
pub(crate) mod jsonl;
pub mod manager;
pub(crate) mod pi;
pub(crate) mod read;
pub mod rpc;
pub(crate) mod store;

pub use error::{DbFailure, Error, Result};
pub use js::json;
pub use manager::{NewSessionOptions, SessionManager};
pub use pi::layout::default_session_dir;
/// Where pi keeps its files: the agent folder, the sessions root and the sessions folder (one
/// owner of these rules for the binary, the Node binding and the pi package).
pub mod paths {
    pub use crate::pi::layout::{agent_dir, sessions_dir, sessions_root};
}
pub use read::{check, discovery, export, outline, resolve, search, tree, usage_stats};
pub use rpc::RpcServer;
pub use store::db::default_path as default_db_path;
pub use store::keys::{EntryKey, SessionKey};

/// Opening a database.
pub mod db {
    pub use crate::store::db::open_read_only;
    pub use crate::store::db::{
        access_problem, beside, default_path, open, open_existing, open_in_memory, Backend, Db, Location, Tx,
    };
}

/// One writer per session: who holds a session's lease, and whether that process still runs
/// (see `store::lease` for the rule). A process that writes a session holds its lease; anyone
/// else about to write it (append, move, delete) asks [`lease::live_holder`] first.
pub mod lease {
    pub use crate::store::lease::{
        acquire, holder, live_holder, me, release, renew, Acquired, Claimant, Holder, RENEW_EVERY_MS, TTL_MS,
    };
}

/// Importing session files: `import_targets` into any database (on a server, through staging
/// databases and `push`).
pub mod import {
    pub use crate::ingest::import::*;
    pub use crate::ingest::route::import_targets;
}

/// `sessiondb move`: a session moved to another project folder, and finishing a killed move.
pub mod relocate {
    pub use crate::ingest::move_leftovers::{finish_interrupted_moves, CRASH_STEPS};
    pub use crate::ingest::move_session::{move_session, Moved};
}

/// Following a sessions folder pi is still writing: `sync_dir`, `sync_paths` into any database.
pub mod sync {
    pub use crate::ingest::route::{sync_dir, sync_paths};
    pub use crate::ingest::sync::*;
}

/// PostgreSQL: `push` replicates a local database into a server, `import_targets`, `sync_dir`
/// and `sync_paths` write session files into it (its own sessions, origin `''`). Everything
/// else (the SessionManager, `rpc`, `export`, `discovery`, the tree, `resolve`, `search`,
/// `usage_stats`, `check`) runs on a server given its URL where it takes a database path
/// (docs/postgres.md); `discovery::list_everything`, `list_cwd`, `list_folder` and
/// `export::export_all` cover every origin there.
pub mod pg {
    pub use crate::ingest::push::{default_origin, push, PushOptions, PushSummary};
    pub use crate::ingest::to_server::SERVER_ORIGIN;
    pub use crate::store::postgres::{is_url, shown, KNOWN_VERSION};
}

/// Not part of the API: the layers below the public modules, reachable for the `sessiondb`
/// binary's benchmark, the tests and the fuzz targets. Paths here may change at any time.
#[doc(hidden)]
pub mod internals {
    pub use crate::ingest::readahead;
    pub use crate::js::{canonical, collate, jstime};
    pub use crate::pi::{entries, ids, layout, migrate, projection, system, tree_row};
    pub use crate::store::db::{open_pooled, Pooled, BUSY_TIMEOUT};
    pub use crate::store::interface::replica;
    pub use crate::store::sqlite::journal;
    pub use crate::store::sqlite::open::create_at_version;
    pub use crate::store::sqlite::{bulk, lines};
    pub use crate::store::{derive, keys, stats, tokens};

    /// Discovery: the types, and each backend's statements (for tests of their plans).
    pub mod discovery {
        pub use crate::store::interface::discovery::*;
        pub use crate::store::postgres::discovery::*;
        pub use crate::store::sqlite::discovery::*;
    }

    /// What `check` reads: the types, and each backend's statements.
    pub mod integrity {
        pub use crate::store::interface::integrity::*;
        pub use crate::store::postgres::integrity::*;
        pub use crate::store::sqlite::integrity::*;
    }

    /// Usage totals: the types, and each backend's statements.
    pub mod usage {
        pub use crate::store::interface::usage::*;
        pub use crate::store::postgres::usage::*;
        pub use crate::store::sqlite::usage::*;
    }

    /// Session leases: the rule, the raw operations for any process, each backend's statements.
    pub mod lease {
        pub use crate::store::lease::*;
        pub use crate::store::postgres::lease::*;
        pub use crate::store::process::{can_probe, start_of};
        pub use crate::store::sqlite::lease::*;
    }

    /// File signatures.
    pub mod signatures {
        pub use crate::store::interface::signatures::*;
    }

    /// What `sync` keeps per file.
    pub mod sync_state {
        pub use crate::store::interface::sync_state::*;
        pub use crate::store::sqlite::sync_state::*;
    }

    /// The search index: the shared pipeline, and each backend's statements.
    pub mod search_index {
        pub use crate::store::postgres::search::*;
        pub use crate::store::postgres::search_merge::*;
        pub use crate::store::search::*;
        pub use crate::store::sqlite::search::*;
        pub use crate::store::sqlite::search_merge::*;
    }

    /// What is stored beside each line, and SQLite's statements rebuilding it.
    pub mod extract {
        pub use crate::store::extract::*;
        pub use crate::store::sqlite::extract::*;
    }

    /// Writing sessions: the types, and each backend's statements.
    pub mod write {
        pub use crate::store::entry_writer::EntryWriter;
        pub use crate::store::interface::write::*;
        pub use crate::store::postgres::write::*;
        pub use crate::store::sqlite::write::*;
    }

    /// Entry rows: the types, and each backend's statements (for tests of their plans).
    pub mod entry_rows {
        pub use crate::store::interface::entries::*;
        pub use crate::store::postgres::entries::*;
        pub use crate::store::sqlite::entries::*;
        pub use crate::store::sqlite::unpack_ahead::STORED_LINES;
    }

    /// One session's row: the types, and each backend's statements (for tests of their plans).
    pub mod sessions {
        pub use crate::store::interface::sessions::*;
        pub use crate::store::postgres::sessions::*;
        pub use crate::store::sqlite::sessions::*;
    }

    /// The PostgreSQL store's statements (for tests of their plans).
    pub mod pg_store {
        pub use crate::store::postgres::push as write;
        pub use crate::store::postgres::search::PG_CHANGED;
    }

    /// Reading session files line by line.
    pub mod jsonl {
        pub use crate::jsonl::signature::file_signature;
        pub use crate::jsonl::{classify, Line, LineKind, LineReader};
    }
}
