//! Opening a database: a [`Location`] (a SQLite file's path or a PostgreSQL URL) chooses the
//! backend once, here; the backends open their own (`store::sqlite::open`,
//! `store::postgres::connect`).

use crate::error::{Error, Result};
pub use crate::store::files::{beside, BUSY_TIMEOUT};
pub use crate::store::handle::{is_constraint_violation, Backend, Db, Pooled, Tx};
pub use crate::store::sqlite::open::{access_problem, open_in_memory};
use std::path::{Path, PathBuf};

/// Where a database is: a SQLite file, or a database on a PostgreSQL server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// The path of a SQLite database file.
    File(PathBuf),
    /// A `postgres://` or `postgresql://` URL.
    Server(String),
}

impl Location {
    /// The location `text` names: a PostgreSQL URL, else a file path.
    pub fn parse(text: &str) -> Location {
        if crate::store::postgres::is_url(text) {
            Location::Server(text.to_owned())
        } else {
            Location::File(PathBuf::from(text))
        }
    }

    /// The location as given, for messages (a URL without its password).
    pub fn shown(&self) -> String {
        match self {
            Location::File(p) => p.display().to_string(),
            Location::Server(url) => crate::store::postgres::shown(url),
        }
    }
}

impl From<&Path> for Location {
    fn from(p: &Path) -> Self {
        match p.to_str() {
            Some(t) => Location::parse(t),
            None => Location::File(p.to_path_buf()),
        }
    }
}

impl From<&PathBuf> for Location {
    fn from(p: &PathBuf) -> Self {
        Location::from(p.as_path())
    }
}

impl From<PathBuf> for Location {
    fn from(p: PathBuf) -> Self {
        Location::from(p.as_path())
    }
}

impl From<&str> for Location {
    fn from(t: &str) -> Self {
        Location::parse(t)
    }
}

impl From<&String> for Location {
    fn from(t: &String) -> Self {
        Location::parse(t)
    }
}

impl From<String> for Location {
    fn from(t: String) -> Self {
        Location::parse(&t)
    }
}

impl From<&Location> for Location {
    fn from(l: &Location) -> Self {
        l.clone()
    }
}

/// The default database: `$SESSIONDB_PATH`, else `~/.pi/agent/sessiondb.sqlite`.
pub fn default_path() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("SESSIONDB_PATH").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .ok_or_else(|| Error::InvalidArgument("HOME is not set; pass --db or set SESSIONDB_PATH".into()))?;
    Ok(Path::new(&home).join(".pi").join("agent").join("sessiondb.sqlite"))
}

/// A file path that is a URL of another scheme than PostgreSQL's is not a file: without this
/// check, opening it would quietly create a folder named after the scheme with a new SQLite
/// file in it.
fn refuse_url(path: &Path) -> Result<()> {
    let text = path.to_string_lossy();
    let Some((scheme, _)) = text.split_once("://") else { return Ok(()) };
    let is_scheme = scheme.len() > 1
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !is_scheme {
        return Ok(());
    }
    Err(Error::InvalidArgument(format!(
        "{text}: sessiondb does not serve {scheme}:// databases; give the path of a SQLite database file"
    )))
}

/// Opens (creating if needed) the database at `location` for writing and brings its schema up
/// to date. A database that cannot be written is refused with the reason.
pub fn open(location: impl Into<Location>) -> Result<Db> {
    match location.into() {
        Location::Server(url) => crate::store::postgres::open(&url),
        Location::File(path) => {
            refuse_url(&path)?;
            crate::store::sqlite::open::open(&path)
        }
    }
}

/// [`open`], reusing an idle connection to the same SQLite file when the process has one.
pub fn open_pooled(location: impl Into<Location>) -> Result<Pooled> {
    match location.into() {
        Location::Server(url) => Ok(Pooled::unpooled(crate::store::postgres::open(&url)?)),
        Location::File(path) => {
            refuse_url(&path)?;
            crate::store::sqlite::pool::open_pooled(&path)
        }
    }
}

/// Opens an existing database only to read it (`sessiondb serve`). A SQLite file is opened in
/// SQLite's read-only mode (see `store::sqlite::open::open_read_only`); on a server every
/// transaction of the connection is read-only, and search and usage read the rows the last
/// catch-up extracted (`search::catch_up` on another connection brings them up to date).
pub fn open_read_only(location: impl Into<Location>) -> Result<Db> {
    match location.into() {
        Location::Server(url) => crate::store::postgres::open_read_only(&url),
        Location::File(path) => {
            refuse_url(&path)?;
            crate::store::sqlite::open::open_read_only(&path)
        }
    }
}

/// Opens an existing database without creating it (read commands). A database file that
/// cannot be written is fine as long as SQLite can read it.
pub fn open_existing(location: impl Into<Location>) -> Result<Db> {
    match location.into() {
        Location::Server(url) => crate::store::postgres::open(&url),
        Location::File(path) => {
            refuse_url(&path)?;
            crate::store::sqlite::open::open_existing(&path)
        }
    }
}
