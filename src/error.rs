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
    /// The database failed a statement, or could not be reached: `database` says which
    /// (`database` for a SQLite file, `postgres://host:port/db` for a server, never with the
    /// password), `cause` what happened in one line, `kind` what callers may tell apart; the
    /// driver's own error is the [`std::error::Error::source`].
    #[error("{database}: {cause}")]
    Database {
        kind: DbFailure,
        database: String,
        cause: String,
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// A schema migration failed.
    #[error("database migration: {0}")]
    Migration(String),
    /// The database's backend cannot do this operation (`what` names it: "the SQLite
    /// integrity check", ...).
    #[error("{what} is not available on {backend}")]
    Unsupported { what: &'static str, backend: String },
}

/// What kind of database failure an [`Error::Database`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbFailure {
    /// A write broke a constraint (a unique path already taken, say).
    Constraint,
    /// The database file is damaged or is not a database.
    Corrupt,
    /// Anything else: a statement failed, the server is unreachable, refused the
    /// credentials, is too old or holds a newer schema.
    Other,
}

/// The `database` of an [`Error::Database`] raised where the driver does not know which
/// database it is (a SQLite connection's statements): the caller that opened it says which.
pub(crate) const UNNAMED_DATABASE: &str = "database";

impl Error {
    /// Whether this is a database failure that does not say which database failed (see
    /// [`Error::Database`]): a caller that knows (it opened the database) should name it.
    pub fn names_no_database(&self) -> bool {
        matches!(self, Error::Database { database, .. } if database == UNNAMED_DATABASE)
    }

    /// The driver's error beneath a database failure, if any: its own sources (a bare result
    /// code, say) only repeat it.
    pub fn driver_error(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Database { source: Some(s), .. } => Some(s.as_ref()),
            _ => None,
        }
    }

    /// A database failure without a driver error beneath it.
    pub fn database(database: impl Into<String>, cause: impl std::fmt::Display) -> Self {
        Error::Database { kind: DbFailure::Other, database: database.into(), cause: cause.to_string(), source: None }
    }

    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
}
