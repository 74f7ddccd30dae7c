//! Errors callers need to tell apart.

use std::path::PathBuf;

/// Result with sessiondb's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong at the library boundary.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No session or entry matches.
    #[error("{0}")]
    NotFound(String),
    /// A reference matches several sessions.
    #[error("{what} is ambiguous; it matches: {}", candidates.join(", "))]
    Ambiguous { what: String, candidates: Vec<String> },
    /// A caller-supplied argument is not acceptable.
    #[error("{0}")]
    InvalidArgument(String),
    /// The file is not a pi session file.
    #[error("{}: not a session file: {reason}", path.display())]
    NotASession { path: PathBuf, reason: String },
    /// The database was made by a newer sessiondb.
    #[error("{}: database schema version {found} is newer than this sessiondb knows ({known}); upgrade sessiondb", path.display())]
    NewerDatabase { path: PathBuf, found: i64, known: i64 },
    /// A file-system operation failed.
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    /// SQLite failed.
    #[error("database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A schema migration failed.
    #[error("database migration: {0}")]
    Migration(String),
    /// A PostgreSQL server is unreachable, refused the credentials, is too old, holds a
    /// schema newer than this sessiondb, or failed a statement. `server` is
    /// `postgres://host:port/db`, never with the password.
    #[error("{server}: {cause}")]
    Server { server: String, cause: String },
    /// The database's backend does not serve this operation yet (`what`: "search", ...).
    #[error("{what} is not available on {backend} yet")]
    Unsupported { what: &'static str, backend: String },
}

impl Error {
    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
}
