//! The PostgreSQL store: connecting (server checks, schema migrations of `migrations/postgres/`
//! under an advisory lock), the storage interface's implementation (one file per capability)
//! and the typed statements of `push` ([`push`]) and of the files a server's `import` and
//! `sync` read ([`files`]).

/// SQL for the whole `allMessagesText` of session row `s`: its `all_text`, joined up to line
/// `text_seq`, and the message texts appends left in their entry rows since (see
/// `store::postgres::write::PG_FOLD_TEXT`), space-joined as pi joins them.
macro_rules! all_text_of_s {
    () => {
        "CASE WHEN s.text_seq >= s.last_seq THEN s.all_text ELSE ( \
            SELECT CASE WHEN string_agg(e.list_text, '\\x20'::bytea ORDER BY e.seq) IS NULL THEN s.all_text \
                WHEN s.has_text THEN s.all_text || '\\x20'::bytea || string_agg(e.list_text, '\\x20'::bytea ORDER BY e.seq) \
                ELSE string_agg(e.list_text, '\\x20'::bytea ORDER BY e.seq) END \
            FROM entries e WHERE e.session = s.skey AND e.seq > s.text_seq AND e.list_text IS NOT NULL) END"
    };
}
pub(crate) use all_text_of_s;

mod client;
pub mod discovery;
pub mod entries;
pub mod files;
pub mod integrity;
mod keys;
pub mod lease;
mod one_trip;
pub mod push;
pub mod replica;
pub mod search;
pub mod search_merge;
pub mod sessions;
pub mod signatures;
pub mod tls;
pub mod usage;
pub mod write;

pub(crate) use client::{Pg, PgParams};

use crate::error::{DbFailure, Error, Result};
use crate::store::postgres::one_trip::OneTrip;
use postgres::{Client, Config};

mod embedded {
    refinery::embed_migrations!("migrations/postgres");
}

/// Oldest server accepted (`server_version_num`): `COPY … BINARY`, `bigserial` and
/// `ON CONFLICT` are older, but 12 is the oldest release its maintainers still knew of.
const OLDEST_SERVER: i32 = 120_000;

/// Advisory lock key held while migrating (any constant shared by every sessiondb).
const MIGRATION_LOCK: i64 = 0x5e55_10db_0001;

/// How the cause of a broken unique constraint starts.
const UNIQUE_VIOLATION: &str = "already taken: ";

/// Whether `text` names a PostgreSQL database rather than a SQLite file: it starts with
/// `postgres://` or `postgresql://`, the scheme in any case (RFC 3986 §3.1: schemes are
/// case-insensitive). The one test of it: the Node binding exports it (`isServerUrl`) and the
/// pi package asks `sessiondb paths --json`.
pub fn is_url(text: &str) -> bool {
    scheme_len(text).is_some()
}

/// The length of `text`'s PostgreSQL scheme with its `://`, if it has one.
fn scheme_len(text: &str) -> Option<usize> {
    ["postgres://", "postgresql://"]
        .into_iter()
        .find(|scheme| text.get(..scheme.len()).is_some_and(|head| head.eq_ignore_ascii_case(scheme)))
        .map(str::len)
}

/// `url` with its scheme in lower case, the only case the driver's parser knows.
fn lowercase_scheme(url: &str) -> String {
    match scheme_len(url) {
        Some(n) => format!("{}{}", url[..n].to_ascii_lowercase(), &url[n..]),
        None => url.to_owned(),
    }
}

/// A connection to a sessiondb database on a PostgreSQL server.
pub struct Server {
    /// The connection.
    pub client: Client,
    /// `host:port/dbname`, for messages (never the password).
    pub name: String,
}

impl Server {
    /// An error about this server, in one line.
    pub fn error(&self, cause: impl std::fmt::Display) -> Error {
        server_error(&self.name, cause)
    }

    /// Wraps a client error with the server's name and the cause.
    pub fn pg(&self, e: postgres::Error) -> Error {
        Server::describe(&self.name, &e)
    }

    /// [`Server::pg`] where the server is borrowed elsewhere (a transaction), by its name.
    pub fn describe(name: &str, e: &postgres::Error) -> Error {
        let kind = match e.as_db_error().map(|d| d.code().code()) {
            Some("23505") => DbFailure::Constraint,
            _ => DbFailure::Other,
        };
        let cause = one_line(cause_of(e));
        // The driver's error is not `Clone`: its text stands in as the source.
        let source: Box<dyn std::error::Error + Send + Sync> = e.to_string().into();
        Error::Database { kind, database: name.to_string(), cause, source: Some(source) }
    }
}

fn one_line(cause: impl std::fmt::Display) -> String {
    cause.to_string().split_whitespace().collect::<Vec<_>>().join(" ")
}

fn server_error(name: &str, cause: impl std::fmt::Display) -> Error {
    Error::database(name, one_line(cause))
}

/// What went wrong, in words a user can act on.
fn cause_of(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        let code = db.code().code();
        let what = match code {
            "28P01" | "28000" => "wrong credentials: ",
            "3D000" => "no such database: ",
            "42501" => "permission denied: ",
            "23505" => UNIQUE_VIOLATION,
            _ => "",
        };
        return format!("{what}{}", db.message());
    }
    if e.is_closed() {
        return "the connection was closed".into();
    }
    // "error connecting to server: Connection refused (os error 111)" and the like.
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        source = s.source();
    }
    text
}

/// `host:port/dbname` of a URL, without user or password.
fn display_name(config: &Config) -> String {
    let host = match config.get_hosts().first() {
        Some(postgres::config::Host::Tcp(h)) => h.clone(),
        #[cfg(unix)]
        Some(postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let db = config.get_dbname().or(config.get_user()).unwrap_or("postgres");
    format!("postgres://{host}:{port}/{db}")
}

/// The URL with its password hidden, for messages.
pub fn shown(url: &str) -> String {
    without_password(url)
}

fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    match rest.split_once('@') {
        Some((user, host)) => format!("{scheme}://{}@{host}", user.split(':').next().unwrap_or("")),
        None => url.to_string(),
    }
}

/// Opens the database `url` names as the storage interface holds it.
pub(crate) fn open(url: &str) -> Result<crate::store::handle::Db> {
    connect(url).map(Pg::db)
}

/// Opens the database `url` names for reading only: every transaction of the connection is
/// read-only, so no statement run through it can write.
pub(crate) fn open_read_only(url: &str) -> Result<crate::store::handle::Db> {
    connect_read_only(url).map(Pg::db_read_only)
}

/// [`connect`], then makes every transaction of the connection read-only: a statement that
/// writes fails on the server (`cannot execute … in a read-only transaction`).
pub fn connect_read_only(url: &str) -> Result<Server> {
    let mut server = connect(url)?;
    server.client.batch_execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY").map_err(|e| server.pg(e))?;
    Ok(server)
}

/// Connects to the database `url` names, checks the server (version, encoding) and brings the
/// schema up to date. Each failure is one line naming the server and the cause.
pub fn connect(url: &str) -> Result<Server> {
    let shown = without_password(url);
    let url = lowercase_scheme(url);
    let (url, tls) = tls::split(&url).map_err(|e| server_error(&shown, e))?;
    let mut config: Config =
        url.parse().map_err(|e: postgres::Error| server_error(&shown, format!("not a PostgreSQL URL: {e}")))?;
    config.ssl_mode(tls.ssl_mode());
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(std::time::Duration::from_secs(10));
    }
    if config.get_application_name().is_none() {
        config.application_name("sessiondb");
    }
    let name = display_name(&config);
    let connector = tls.connector().map_err(|e| server_error(&name, e))?;
    let client = config.connect(connector).map_err(|e| {
        let cause = cause_of(&e);
        let host = name.trim_start_matches("postgres://").rsplit_once(':').map_or("", |(h, _)| h);
        server_error(&name, tls::explain(&cause, host).unwrap_or(cause))
    })?;
    let mut server = Server { client, name };
    check_server(&mut server)?;
    migrate(&mut server)?;
    Ok(server)
}

fn check_server(s: &mut Server) -> Result<()> {
    let row = s
        .client
        .query_one_1(
            "SELECT current_setting('server_version_num')::int AS num, current_setting('server_version') AS version, \
                pg_encoding_to_char(encoding) AS encoding FROM pg_database WHERE datname = current_database()",
            &[],
        )
        .map_err(|e| s.pg(e))?;
    let (num, version, encoding): (i32, String, String) = (row.get("num"), row.get("version"), row.get("encoding"));
    if num < OLDEST_SERVER {
        return Err(s.error(format!("PostgreSQL {version} is too old; sessiondb needs PostgreSQL 12 or newer")));
    }
    if encoding != "UTF8" {
        return Err(s.error(format!(
            "the database's encoding is {encoding}; sessiondb needs UTF8 (CREATE DATABASE … ENCODING 'UTF8')"
        )));
    }
    Ok(())
}

/// Newest migration this build knows (`migrations/postgres/`; a unit test keeps them equal). A
/// constant: asking refinery compiles its migration-name regex, on every connection.
pub const KNOWN_VERSION: i64 = 16;

/// Newest migration applied to the server's database (`None` for a new one).
fn applied_version(s: &mut Server) -> Result<Option<i64>> {
    let exists: bool = s
        .client
        .query_one_1("SELECT to_regclass('refinery_schema_history') IS NOT NULL AS present", &[])
        .map_err(|e| s.pg(e))?
        .get("present");
    if !exists {
        return Ok(None);
    }
    let v: Option<i32> = s
        .client
        .query_one_1("SELECT max(version) AS version FROM refinery_schema_history", &[])
        .map_err(|e| s.pg(e))?
        .get("version");
    Ok(v.map(i64::from))
}

fn newer(s: &Server, found: i64, known: i64) -> Error {
    s.error(format!("database schema version {found} is newer than this sessiondb knows ({known}); upgrade sessiondb"))
}

/// Applies the migrations the database lacks, one process at a time (an advisory lock), and
/// refuses a schema newer than this build.
fn migrate(s: &mut Server) -> Result<()> {
    let known = KNOWN_VERSION;
    match applied_version(s)? {
        Some(v) if v > known => return Err(newer(s, v, known)),
        Some(v) if v == known => return Ok(()),
        _ => {}
    }
    s.client.execute_1("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK]).map_err(|e| s.pg(e))?;
    let result = (|| {
        // Another process may have migrated while this one waited for the lock.
        match applied_version(s)? {
            Some(v) if v > known => return Err(newer(s, v, known)),
            Some(v) if v == known => return Ok(()),
            _ => {}
        }
        embedded::migrations::runner()
            .run(&mut s.client)
            .map(|_| ())
            .map_err(|e| s.error(format!("database migration: {e}")))
    })();
    let unlocked = s.client.execute_1("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK]).map_err(|e| s.pg(e));
    result.and(unlocked.map(|_| ()))
}

/// `text` as PostgreSQL's `text` can hold it: NUL is the one character it refuses.
pub(crate) fn pg_text(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains('\0') {
        std::borrow::Cow::Owned(text.replace('\0', "\u{FFFD}"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_known_version_is_the_newest_migration() {
        let newest =
            super::embedded::migrations::runner().get_migrations().iter().map(|m| i64::from(m.version())).max();
        assert_eq!(newest, Some(super::KNOWN_VERSION));
    }
}
