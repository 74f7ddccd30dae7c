//! `sessiondb serve`: a read-only web app over the database, one more client of the library.
//! `security` owns who may ask (loopback, Host header, token), `http` the response headers
//! every answer carries (CSP), `routes` which page answers a path, `pages/` the HTML (maud,
//! every value escaped), `assets` the embedded stylesheet and script.

mod assets;
mod cache;
mod http;
mod pages;
mod routes;
mod security;
mod token;

use anyhow::{bail, Context};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Serve every session, search and usage in the browser (read-only).
#[derive(clap::Args)]
pub struct Args {
    /// Address to listen on. Anything but a loopback address needs --token or --new-token.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8484")]
    listen: String,
    /// Open the page in the default browser.
    #[arg(long)]
    open: bool,
    /// Require this token (at least 16 characters): open the printed URL once, the browser
    /// keeps it in a cookie. Other clients send `Authorization: Bearer TOKEN`.
    #[arg(long, value_name = "TOKEN", conflicts_with = "new_token")]
    token: Option<String>,
    /// Generate a token, print it with the URL, and require it.
    #[arg(long)]
    new_token: bool,
    /// Also accept requests naming this host (a DNS name the server is reached by; IP
    /// addresses and localhost are always accepted). Repeatable.
    #[arg(long, value_name = "NAME")]
    allow_host: Vec<String>,
    /// Worker threads, each with its own read-only connection.
    #[arg(long, value_name = "N", default_value_t = 4)]
    workers: usize,
}

pub fn run(db: &Path, a: Args) -> anyhow::Result<i32> {
    let addr: SocketAddr = a
        .listen
        .parse()
        .or_else(|_| format!("127.0.0.1:{}", a.listen.trim_start_matches(':')).parse())
        .with_context(|| format!("--listen {}: not an address like 127.0.0.1:8484 or [::1]:8484", a.listen))?;
    let token = match (a.token, a.new_token) {
        (Some(t), _) if t.chars().count() < 16 => bail!("--token: use at least 16 characters (or --new-token)"),
        (Some(t), _) => Some(t),
        (None, true) => Some(token::generate()),
        (None, false) => None,
    };
    if !addr.ip().is_loopback() && token.is_none() {
        bail!(
            "--listen {addr}: a non-loopback address exposes every session to the network; \
             give --token TOKEN or --new-token (or listen on 127.0.0.1)"
        );
    }
    // Brings the schema up to date and settles the append journal, as any read command
    // does (on a server, extracts the search and usage rows of lines pushed since the last
    // catch-up, as `sessiondb index` does); from then on every connection is read-only.
    let is_pg = sessiondb::pg::is_url(&db.to_string_lossy());
    let mut first = sessiondb::db::open_existing(db)?;
    if is_pg {
        let pending = sessiondb::search::pending(&first)?;
        if pending > 0 {
            eprintln!("sessiondb: indexing {pending} lines pushed since the last index (as `sessiondb index` does)");
        }
        sessiondb::search::catch_up(&mut first, |_, _| {})?;
        let db = db.to_path_buf();
        std::thread::spawn(move || index_pushes(&db));
    }
    drop(first);
    let opener = Opener { path: db.to_path_buf() };
    opener.open()?;
    let server = tiny_http::Server::http(addr).map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
    let bound = server.server_addr().to_ip().context("not an IP listener")?;
    let policy = Arc::new(security::Policy::new(bound, token.clone(), a.allow_host));
    let shown_host = if bound.ip().is_unspecified() { "127.0.0.1".to_string() } else { bound.ip().to_string() };
    let base = match bound {
        SocketAddr::V6(_) if !bound.ip().is_unspecified() => format!("http://[{shown_host}]:{}/", bound.port()),
        _ => format!("http://{shown_host}:{}/", bound.port()),
    };
    let url = match &token {
        Some(t) => format!("{base}?token={t}"),
        None => base,
    };
    println!("sessiondb: serving {} read-only at {url}", sessiondb::pg::shown(&db.to_string_lossy()));
    if token.is_some() {
        println!("sessiondb: open that URL once (the token is kept in a cookie); other clients send `Authorization: Bearer <token>`");
    }
    println!("sessiondb: Ctrl-C stops");
    if a.open {
        let _ = std::process::Command::new("xdg-open").arg(&url).spawn();
    }
    let server = Arc::new(server);
    let opener = Arc::new(opener);
    let cache = Arc::new(cache::Cache::new((!is_pg).then_some(db)));
    // The first visit finds the session list and usage by day ready.
    {
        let (opener, cache) = (opener.clone(), cache.clone());
        std::thread::spawn(move || routes::warm(&opener, &cache));
    }
    let workers: Vec<_> = (0..a.workers.clamp(1, 64))
        .map(|_| {
            let (server, policy, opener, cache) = (server.clone(), policy.clone(), opener.clone(), cache.clone());
            std::thread::spawn(move || routes::worker(&server, &policy, &opener, &cache))
        })
        .collect();
    for w in workers {
        let _ = w.join();
    }
    Ok(0)
}

/// How often a server's search and usage rows are brought up to date with what was pushed.
const INDEX_EVERY: std::time::Duration = std::time::Duration::from_secs(30);

/// On a PostgreSQL server, extracts the search and usage rows of the lines pushed while
/// serving, every [`INDEX_EVERY`], as `sessiondb index` does: on a connection of its own that
/// no request reaches (the pages' connections cannot write).
fn index_pushes(db: &std::path::Path) {
    loop {
        std::thread::sleep(INDEX_EVERY);
        let caught_up =
            sessiondb::db::open_existing(db).and_then(|mut c| sessiondb::search::catch_up(&mut c, |_, _| {}));
        if let Err(e) = caught_up {
            eprintln!("sessiondb: indexing what was pushed: {e}");
        }
    }
}

/// Opens the connections workers read through: read-only, on SQLite (its read-only mode and
/// `query_only`) and on a PostgreSQL server (every transaction read-only).
pub struct Opener {
    path: PathBuf,
}

impl Opener {
    fn open(&self) -> anyhow::Result<sessiondb::db::Db> {
        Ok(sessiondb::db::open_read_only(self.path.as_path())?)
    }
}
