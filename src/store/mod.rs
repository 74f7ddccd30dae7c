//! Storage: the only layer that knows SQL. Opening a database (file mode, pragmas,
//! migrations, the connection pool), the append journal, bulk mode, and the typed reads and
//! writes of session and entry rows.

pub mod bulk;
pub mod db;
pub mod derive;
pub mod discovery;
pub mod entries;
pub mod extract;
pub mod files;
pub mod handle;
pub mod integrity;
pub mod journal;
pub mod keys;
pub mod outline;
pub mod pg;
pub mod read_only;
pub mod replica;
pub mod search_index;
pub mod sessions;
pub mod signatures;
pub mod stats;
pub mod sync_state;
pub mod tokens;
pub mod usage;
pub mod write;
