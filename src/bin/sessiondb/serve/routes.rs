//! Which page answers a request: the worker loop (one read-only connection per worker), the
//! checks of `security` first, then the path.

use super::cache::Cache;
use super::http::{percent_decode, Query, Response};
use super::security::{Policy, Refusal};
use super::{assets, pages, token, Opener};
use sessiondb::db::Db;
use sessiondb::SessionKey;

/// Answers requests until the server stops. The connection is opened again after an error
/// that may have broken it.
pub fn worker(server: &tiny_http::Server, policy: &Policy, opener: &Opener, cache: &Cache) {
    let mut db: Option<Db> = None;
    for request in server.incoming_requests() {
        let head_only = *request.method() == tiny_http::Method::Head;
        let response = answer(&request, policy, opener, cache, &mut db);
        let _ = request.respond(response.into_tiny(head_only));
    }
}

fn header<'r>(request: &'r tiny_http::Request, name: &'static str) -> Option<&'r str> {
    request.headers().iter().find(|h| h.field.equiv(name)).map(|h| h.value.as_str())
}

fn answer(
    request: &tiny_http::Request,
    policy: &Policy,
    opener: &Opener,
    cache: &Cache,
    db: &mut Option<Db>,
) -> Response {
    let query = Query::parse(request.url());
    let host = header(request, "Host");
    if !policy.host_ok(host) {
        return Response::text(421, "sessiondb: this server answers only to its own address (Host header refused)\n");
    }
    // The token in the URL (printed at start): kept in a cookie, then out of the address bar.
    if let (Some(want), Some(given)) = (policy.token(), query.get("token")) {
        if token::same(given, want) {
            return Response::redirect(query.without("token")).with("Set-Cookie", token::set_cookie(want));
        }
    }
    match policy.check(host, header(request, "Cookie"), header(request, "Authorization")) {
        Ok(()) => {}
        Err(Refusal::ForeignHost) => return Response::text(421, "sessiondb: Host header refused\n"),
        Err(Refusal::NoToken) => {
            return Response::html(401, pages::layout::refused("This server needs its token: open the URL it printed."))
        }
    }
    if !matches!(request.method(), tiny_http::Method::Get | tiny_http::Method::Head) {
        return Response::text(405, "sessiondb: read-only\n").with("Allow", "GET, HEAD");
    }
    if let Some(asset) = query.path.strip_prefix("/assets/") {
        return assets::serve(asset);
    }
    let conn = match db {
        Some(c) => c,
        None => match opener.open() {
            Ok(c) => db.insert(c),
            Err(e) => return pages::layout::error_page(500, &format!("{e:#}")),
        },
    };
    let result = route(conn, cache, &query);
    match result {
        Ok(r) => r,
        Err(e) => {
            // A failed statement may leave the connection in a bad state: open a new one.
            *db = None;
            pages::layout::error_page(500, &format!("{e:#}"))
        }
    }
}

fn route(db: &Db, cache: &Cache, q: &Query) -> anyhow::Result<Response> {
    let path = q.path.as_str();
    if path == "/" {
        return pages::sessions::page(db, cache, q);
    }
    if path == "/usage" {
        return pages::usage::page(db, cache, q);
    }
    if let Some(rest) = q.raw_path.strip_prefix("/s/") {
        // The id is one segment, decoded alone: a session id may hold a `/`.
        let (segment, tail) = rest.split_once('/').unwrap_or((rest, ""));
        let id = percent_decode(segment);
        let session = match sessiondb::resolve::by_id(db, &id)? {
            Some(s) => pages::session::Session { sid: s.sid, id: s.id },
            None => return Ok(old_key(db, &id, tail, q)?.unwrap_or_else(pages::layout::not_found)),
        };
        return match tail {
            "" => pages::session::page(db, cache, &session, q),
            "export.jsonl" => pages::session::export(db, &session),
            "export.md" | "export.html" => pages::session::transcript_export(db, &session, tail, q),
            "entry" => pages::session::raw_entry(db, &session, q),
            "full" => pages::session::full_entry(db, &session, q),
            "tree" => pages::session::tree_fragment(db, cache, &session, q),
            _ => Ok(pages::layout::not_found()),
        };
    }
    if path == "/favicon.ico" {
        return Ok(Response::text(404, ""));
    }
    Ok(pages::layout::not_found())
}

/// `/s/KEY...`, the address of a session by its internal key before sessions were addressed
/// by id: a permanent redirect to the same page by id. An id is looked up first, so a session
/// whose id is a number is never shadowed by a key.
fn old_key(db: &Db, segment: &str, tail: &str, q: &Query) -> anyhow::Result<Option<Response>> {
    let Ok(key) = segment.parse::<i64>() else { return Ok(None) };
    let Some(info) = sessiondb::discovery::info(db, SessionKey(key))? else { return Ok(None) };
    // Only the first of several sessions sharing an id has an address by id.
    if sessiondb::resolve::by_id(db, &info.id)?.map(|s| s.sid) != Some(info.sid) {
        return Ok(None);
    }
    let mut to = pages::session::base(&info.id);
    if !tail.is_empty() {
        to = format!("{to}/{tail}");
    }
    if let Some(query) = q.raw_query() {
        to = format!("{to}?{query}");
    }
    Ok(Some(Response::moved(to)))
}

/// Fills the cache with what the first visit asks for: the session list. (Usage answers are
/// read from the totals the store keeps per day, a few milliseconds: nothing to prepare.)
pub fn warm(opener: &Opener, cache: &Cache) {
    let Ok(db) = opener.open() else { return };
    let _ = pages::sessions::page(&db, cache, &Query::parse("/"));
}
