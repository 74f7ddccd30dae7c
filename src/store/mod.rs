//! Storage: the only layer that knows SQL. Opening a database (file mode, pragmas,
//! migrations, the connection pool), the append journal, bulk mode, and the typed reads and
//! writes of session and entry rows.

pub mod backend;
pub mod codec;
pub mod db;
pub mod derive;
pub mod entry_writer;
pub mod extract;
pub mod files;
pub mod handle;
pub mod interface;
pub mod keys;
pub mod lease;
pub mod parallel;
pub mod postgres;
pub mod process;
pub mod search;
pub mod sqlite;
pub mod stats;

pub use search as search_index;
pub use search::tokens;
