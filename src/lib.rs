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
pub use ingest::{import, sync};
pub use js::json;
pub use manager::{NewSessionOptions, SessionManager};
pub use pi::layout::default_session_dir;
pub use read::{check, discovery, export, outline, resolve, search, tree, usage_stats};
pub use rpc::RpcServer;
pub use store::db::default_path as default_db_path;

/// Opening a database.
pub mod db {
    pub use crate::store::db::open_read_only;
    pub use crate::store::db::{
        access_problem, beside, default_path, open, open_existing, open_in_memory, Backend, Db, Location, Tx,
    };
}

/// PostgreSQL: `push` replicates a local database into a server, `import_targets`, `sync_dir`
/// and `sync_paths` write session files into it (its own sessions, origin `''`), and `export`,
/// `list` and `find` read from it across origins. The SessionManager, `rpc`, the tree,
/// `resolve`, `discovery`, `search`, `usage_stats` and `check` run on a server given its URL
/// where they take a database path (docs/postgres.md).
pub mod pg {
    pub use crate::ingest::push::{default_origin, push, PushOptions, PushSummary};
    pub use crate::ingest::to_server::{import_targets, sync_dir, sync_paths, SERVER_ORIGIN};
    pub use crate::read::remote::{
        export_all, fill_all_text, find_everywhere, find_in_dir, find_prefix, list_cwd, list_dir, list_everything,
        list_everything_with_origin, resolve, write_session, write_session_file, RemoteRef,
    };
    pub use crate::store::postgres::{connect, connect_read_only, is_url, shown, Server, KNOWN_VERSION};
}

/// Not part of the API: the layers below the public modules, reachable for the `sessiondb`
/// binary's benchmark, the tests and the fuzz targets. Paths here may change at any time.
#[doc(hidden)]
pub mod internals {
    pub use crate::ingest::readahead;
    pub use crate::js::{canonical, collate, jstime};
    pub use crate::pi::{entries, ids, layout, migrate, projection, system};
    pub use crate::store::db::{open_pooled, Pooled, BUSY_TIMEOUT};
    pub use crate::store::sqlite::{bulk, journal};
    pub use crate::store::{derive, keys, replica, stats, tokens};

    /// Discovery: the types, and each backend's statements (for tests of their plans).
    pub mod discovery {
        pub use crate::store::discovery::*;
        pub use crate::store::postgres::discovery::*;
        pub use crate::store::sqlite::discovery::*;
    }

    /// What `check` reads: the types, and each backend's statements.
    pub mod integrity {
        pub use crate::store::integrity::*;
        pub use crate::store::postgres::integrity::*;
        pub use crate::store::sqlite::integrity::*;
    }

    /// Usage totals: the types, and each backend's statements.
    pub mod usage {
        pub use crate::store::postgres::usage::*;
        pub use crate::store::sqlite::usage::*;
        pub use crate::store::usage::*;
    }

    /// File signatures.
    pub mod signatures {
        pub use crate::store::signatures::*;
    }

    /// What `sync` keeps per file.
    pub mod sync_state {
        pub use crate::store::sqlite::sync_state::*;
        pub use crate::store::sync_state::*;
    }

    /// The search index: the shared pipeline, and each backend's statements.
    pub mod search_index {
        pub use crate::store::postgres::search::*;
        pub use crate::store::search::*;
        pub use crate::store::sqlite::search::*;
    }

    /// What is stored beside each line, and SQLite's statements rebuilding it.
    pub mod extract {
        pub use crate::store::extract::*;
        pub use crate::store::sqlite::extract::*;
    }

    /// Writing sessions: the types, and each backend's statements.
    pub mod write {
        pub use crate::store::postgres::write::*;
        pub use crate::store::sqlite::write::*;
        pub use crate::store::write::*;
    }

    /// Entry rows: the types, and each backend's statements (for tests of their plans).
    pub mod entry_rows {
        pub use crate::store::entries::*;
        pub use crate::store::postgres::entries::*;
        pub use crate::store::sqlite::entries::*;
    }

    /// One session's row: the types, and each backend's statements (for tests of their plans).
    pub mod sessions {
        pub use crate::store::postgres::sessions::*;
        pub use crate::store::sessions::*;
        pub use crate::store::sqlite::sessions::*;
    }

    /// The PostgreSQL store's statements (for tests of their plans).
    pub mod pg_store {
        pub use crate::store::postgres::{push as write, read};
    }

    /// Reading session files line by line.
    pub mod jsonl {
        pub use crate::jsonl::signature::file_signature;
        pub use crate::jsonl::{classify, Line, LineKind, LineReader};
    }
}
