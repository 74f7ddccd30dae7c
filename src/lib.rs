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

pub use error::{Error, Result};
pub use ingest::{import, sync};
pub use js::json;
pub use manager::{NewSessionOptions, SessionManager};
pub use pi::layout::default_session_dir;
pub use read::{check, discovery, export, outline, resolve, search, tree, usage_stats};
pub use rpc::RpcServer;
pub use store::db::default_path as default_db_path;

/// Opening a database.
pub mod db {
    pub use crate::store::db::{
        access_problem, beside, default_path, open, open_existing, open_in_memory, Backend, Db, Tx,
    };
    pub use crate::store::read_only::open_read_only;
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
        resolve, write_session, write_session_file, RemoteRef,
    };
    pub use crate::store::pg::{connect, is_url, shown, Server, KNOWN_VERSION};
}

/// Not part of the API: the layers below the public modules, reachable for the `sessiondb`
/// binary's benchmark, the tests and the fuzz targets. Paths here may change at any time.
#[doc(hidden)]
pub mod internals {
    pub use crate::ingest::readahead;
    pub use crate::js::{canonical, collate, jstime};
    pub use crate::pi::{entries, ids, layout, migrate, projection, system};
    pub use crate::store::db::{open_pooled, Pooled, BUSY_TIMEOUT};
    pub use crate::store::{
        bulk, derive, discovery, entries as entry_rows, extract, integrity, journal, keys, outline, search_index,
        sessions, signatures, stats, tokens, usage, write,
    };

    /// The PostgreSQL store's statements (for tests of their plans).
    pub mod pg_store {
        pub use crate::store::pg::{read, write};
    }

    /// Reading session files line by line.
    pub mod jsonl {
        pub use crate::jsonl::signature::file_signature;
        pub use crate::jsonl::{classify, Line, LineKind, LineReader};
    }
}
