//! `sessiondb serve` over HTTP: the safety rules (Host header, CSP on every response, the token a
//! non-loopback listener requires, read-only) checked with a plain HTTP client. The pages
//! themselves are driven in a browser by tests/browser.

mod backends;
mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};

/// A running `sessiondb serve`, killed when dropped.
struct Server {
    child: Child,
    port: u16,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(db: &Path, args: &[&str]) -> Server {
    let mut child = common::bin()
        .args(["--db", db.to_str().unwrap(), "serve"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains(" at http://") {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "serve ended before printing its URL");
    }
    std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
    let url = line.split(" at ").nth(1).unwrap().trim().to_string();
    let port = url.split(':').nth(2).unwrap().split('/').next().unwrap().parse().unwrap();
    Server { child, port, url }
}

/// A response: status, headers (lowercase names), body.
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

fn request(port: u16, method: &str, path: &str, host: &str, extra: &[(&str, &str)]) -> Reply {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    // HTTP/1.0: the body comes whole, never chunked.
    let mut req = format!("{method} {path} HTTP/1.0\r\nHost: {host}\r\nConnection: close\r\n");
    for (k, v) in extra {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers =
        lines.filter_map(|l| l.split_once(": ")).map(|(k, v)| (k.to_ascii_lowercase(), v.to_string())).collect();
    Reply { status, headers, body: body.to_string() }
}

fn get(port: u16, path: &str) -> Reply {
    request(port, "GET", path, &format!("127.0.0.1:{port}"), &[])
}

fn sample_db() -> (tempfile::TempDir, std::path::PathBuf) {
    let (dir, db, conn) = common::temp_db();
    drop(conn);
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sessions");
    let (code, _, err) = common::run(&db, &["import", samples.to_str().unwrap()]);
    assert!(code == 0 || code == 1, "{err}");
    (dir, db)
}

const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; \
    form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

#[test]
fn every_response_carries_the_csp_and_a_foreign_host_is_refused() {
    let (_dir, db) = sample_db();
    let s = serve(&db, &["--listen", "127.0.0.1:0"]);
    let p = s.port;
    let sid = {
        let page = get(p, "/");
        assert_eq!(page.status, 200);
        let at = page.body.find("href=\"/s/").expect("a session link");
        page.body[at + 9..].split('"').next().unwrap().to_string()
    };
    let paths = [
        "/".to_string(),
        "/?q=hello".into(),
        "/?project=%2Fnowhere&page=9".into(),
        "/usage".into(),
        "/usage?by=model&since=2020-01-01".into(),
        format!("/s/{sid}"),
        format!("/s/{sid}/export.jsonl"),
        "/assets/style.css".into(),
        "/assets/app.js".into(),
        "/s/999999".into(),
        "/nothing".into(),
    ];
    for path in &paths {
        let r = get(p, path);
        assert!(matches!(r.status, 200 | 404), "{path}: {}", r.status);
        assert_eq!(r.header("content-security-policy"), Some(CSP), "{path}");
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"), "{path}");
        assert_eq!(r.header("x-frame-options"), Some("DENY"), "{path}");
    }
    // The export is the CLI's, byte for byte.
    let (_, want, _) = common::run(&db, &["export", &get_id(&get(p, &format!("/s/{sid}")).body)]);
    assert_eq!(get(p, &format!("/s/{sid}/export.jsonl")).body, want);
    // DNS rebinding: a page of another site reaching 127.0.0.1 sends its own name.
    for host in ["evil.example", &format!("evil.example:{p}"), &format!("127.0.0.1.nip.io:{p}"), ""] {
        let r = request(p, "GET", "/", host, &[]);
        assert_eq!(r.status, 421, "Host {host:?}");
        assert_eq!(r.header("content-security-policy"), Some(CSP));
        assert!(!r.body.contains("<table"), "nothing served to {host:?}");
    }
    for host in [format!("localhost:{p}"), format!("[::1]:{p}"), format!("127.0.0.1:{p}")] {
        assert_eq!(request(p, "GET", "/", &host, &[]).status, 200, "{host}");
    }
    // Read-only: no method but GET and HEAD.
    let r = request(p, "POST", "/", &format!("127.0.0.1:{p}"), &[("Content-Length", "0")]);
    assert_eq!(r.status, 405);
    assert_eq!(r.header("content-security-policy"), Some(CSP));
}

fn get_id(page: &str) -> String {
    let at = page.find("id=\"session-id\">").unwrap();
    page[at + 16..].split('<').next().unwrap().to_string()
}

#[test]
fn a_non_loopback_listen_without_a_token_is_refused() {
    let (_dir, db) = sample_db();
    let (code, _, err) = common::run(&db, &["serve", "--listen", "0.0.0.0:0"]);
    assert_eq!(code, 2);
    assert!(err.contains("non-loopback") && err.contains("--token"), "{err}");
    let (code, _, err) = common::run(&db, &["serve", "--listen", "0.0.0.0:0", "--token", "short"]);
    assert_eq!(code, 2);
    assert!(err.contains("16 characters"), "{err}");
}

#[test]
fn a_token_is_required_once_set_and_kept_in_a_cookie() {
    let (_dir, db) = sample_db();
    let s = serve(&db, &["--listen", "0.0.0.0:0", "--new-token"]);
    let p = s.port;
    let token = s.url.split("?token=").nth(1).expect("the printed URL carries the token").to_string();
    assert!(token.len() >= 32, "{token}");
    let host = format!("127.0.0.1:{p}");
    let refused = get(p, "/");
    assert_eq!(refused.status, 401);
    assert!(!refused.body.contains("<table"));
    assert_eq!(refused.header("content-security-policy"), Some(CSP));
    assert_eq!(request(p, "GET", "/", &host, &[("Authorization", "Bearer wrong-token-0123456789")]).status, 401);
    assert_eq!(request(p, "GET", "/usage", &host, &[("Authorization", &format!("Bearer {token}"))]).status, 200);
    // The URL's token becomes a cookie scripts cannot read, then leaves the address bar.
    let r = get(p, &format!("/usage?by=model&token={token}"));
    assert_eq!(r.status, 303);
    assert_eq!(r.header("location"), Some("/usage?by=model"));
    let cookie = r.header("set-cookie").unwrap();
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "{cookie}");
    let pair = cookie.split(';').next().unwrap();
    assert_eq!(request(p, "GET", "/usage?by=model", &host, &[("Cookie", pair)]).status, 200);
    // The Host check holds with a token too.
    assert_eq!(request(p, "GET", "/", "evil.example", &[("Cookie", pair)]).status, 421);
}

#[test]
fn serving_leaves_the_database_unchanged() {
    let (_dir, db) = sample_db();
    let before = std::fs::read(&db).unwrap();
    let s = serve(&db, &["--listen", "127.0.0.1:0"]);
    for path in ["/", "/?q=hello", "/usage?by=session", "/s/1", "/s/2?leaf=nope"] {
        get(s.port, path);
    }
    drop(s);
    assert_eq!(std::fs::read(&db).unwrap(), before);
    // A read-only connection cannot write, whatever asks.
    let conn = sessiondb::db::open_read_only(&db).unwrap();
    assert!(conn.sqlite().execute("DELETE FROM sessions", []).is_err());
}

#[test]
fn on_postgresql_pushed_sessions_are_listed_shown_and_exported() {
    let (_dir, db) = sample_db();
    let Some(server) = backends::server() else { return };
    let url = backends::fresh_db(&server);
    let (code, _, err) = backends::sdb(db.to_str().unwrap(), &["push", "--to", &url, "--origin", "laptop"]);
    assert_eq!(code, 0, "{err}");
    let s = serve(Path::new(&url), &["--listen", "127.0.0.1:0"]);
    let list = get(s.port, "/");
    assert_eq!(list.status, 200);
    assert_eq!(list.header("content-security-policy"), Some(CSP));
    let (_, ids, _) = backends::sdb(&url, &["find", "01a23953-e425-718a-bccb-56957dc75fe8"]);
    assert!(!ids.is_empty());
    for id in ["01a23953-e425-718a-bccb-56957dc75fe8", "01a23953-e42c-718a-bccb-569788a91100"] {
        let at = list.body.find(&format!("data-session-id=\"{id}\"")).unwrap_or_else(|| panic!("{id} listed"));
        let href = &list.body[at..];
        let sid = href[href.find("href=\"/s/").unwrap() + 9..].split('"').next().unwrap().to_string();
        let page = get(s.port, &format!("/s/{sid}"));
        assert_eq!(page.status, 200, "{}", page.body);
        assert!(page.body.contains(id));
        let (_, want, _) = backends::sdb(&url, &["export", id]);
        let got = get(s.port, &format!("/s/{sid}/export.jsonl"));
        assert_eq!(got.body.len(), want.len(), "{:?}", got.headers);
        assert_eq!(got.body, want);
    }
    let usage = get(s.port, "/usage?by=model");
    assert_eq!(usage.status, 200);
    let search = get(s.port, "/?q=hello");
    assert_eq!(search.status, 200);
    assert!(!usage.body.contains("class=\"error\"") && !search.body.contains("class=\"error\""), "{}", search.body);
}

#[test]
fn on_postgresql_the_origin_of_each_session_is_shown_and_filtered() {
    let (_dir, db) = sample_db();
    let Some(server) = backends::server() else { return };
    let url = backends::fresh_db(&server);
    for origin in ["laptop", "desk<top>"] {
        let (code, _, err) = backends::sdb(db.to_str().unwrap(), &["push", "--to", &url, "--origin", origin]);
        assert_eq!(code, 0, "{err}");
    }
    let s = serve(Path::new(&url), &["--listen", "127.0.0.1:0"]);
    let rows = |path: &str| {
        let page = get(s.port, path);
        assert_eq!(page.status, 200);
        let cells: Vec<String> = page
            .body
            .split("<td class=\"origin\">")
            .skip(1)
            .map(|c| c[c.find('>').unwrap() + 1..c.find("</a>").unwrap()].to_string())
            .collect();
        (page.body, cells)
    };
    let (page, all) = rows("/?page=1");
    assert!(page.contains("<th>Origin</th>") && page.contains("<select name=\"origin\">"), "{page}");
    let (_, listed, _) = backends::sdb(&url, &["list", "--json"]);
    let n = serde_json::from_str::<serde_json::Value>(&listed).unwrap().as_array().unwrap().len();
    assert_eq!(n % 2, 0);
    assert_eq!(all.len(), n.min(50));
    assert!(all.iter().any(|o| o == "laptop") && all.iter().any(|o| o == "desk&lt;top&gt;"), "{all:?}");
    let (_, only) = rows("/?origin=desk%3Ctop%3E");
    assert_eq!(only.len(), (n / 2).min(50));
    assert!(only.iter().all(|o| o == "desk&lt;top&gt;"), "{only:?}");
    // A SQLite database has no origins: no column.
    let local = serve(&db, &["--listen", "127.0.0.1:0"]);
    assert!(!get(local.port, "/").body.contains("<th>Origin</th>"));
}

#[test]
fn on_postgresql_serve_connections_cannot_write() {
    let (_dir, db) = sample_db();
    let Some(server) = backends::server() else { return };
    let url = backends::fresh_db(&server);
    backends::push(&db, &url, &[]);
    // The connections serve's pages read through, as serve opens them.
    let mut pages = sessiondb::db::open_read_only(Path::new(&url)).unwrap();
    // Extracting the search and usage rows of the lines just pushed writes: refused.
    let e = sessiondb::search::catch_up(&mut pages, |_, _| {}).unwrap_err();
    assert!(format!("{e} {e:?}").contains("read-only transaction"), "{e:?}");
    // A write through them (deleting a session) is refused by the server.
    let sid = sessiondb::discovery::list_everything(&pages).unwrap()[0].sid;
    let deleted = (|| {
        let tx = pages.write()?;
        tx.store().delete_session(sid)?;
        tx.commit()
    })();
    let e = deleted.unwrap_err();
    assert!(format!("{e} {e:?}").contains("read-only transaction"), "{e:?}");
    assert!(sessiondb::discovery::info(&pages, sid).unwrap().is_some(), "the session is still there");
    // They still read: usage as the last catch-up left it, equal to stats.
    let (_, want, _) = backends::sdb(&url, &["stats", "--json", "--by", "day"]);
    let want: serde_json::Value = serde_json::from_str(&want).unwrap();
    let got = sessiondb::usage_stats::totals(&pages, Some(sessiondb::usage_stats::GroupBy::Day), &Default::default())
        .unwrap();
    assert_eq!(serde_json::to_value(&got).unwrap(), want["groups"]);
}

/// A database of the examples, a session holding a 10 MB message and a copy of one example
/// under another path (two sessions with one id).
fn addressed_db() -> (tempfile::TempDir, std::path::PathBuf) {
    let (dir, db) = sample_db();
    let folder = dir.path().join("more/--h--");
    std::fs::create_dir_all(&folder).unwrap();
    let big = format!("start {} end", "x".repeat(10 << 20));
    let lines = [
        serde_json::json!({"type": "session", "version": 3, "id": "huge-message", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/h"}),
        serde_json::json!({"type": "message", "id": "u1", "parentId": null, "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": big, "timestamp": 1}}),
        serde_json::json!({"type": "message", "id": "u2", "parentId": "u1", "timestamp": "2026-01-01T00:00:02.000Z",
            "message": {"role": "user", "content": "short", "timestamp": 2}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(folder.join("2026-01-01T00-00-00-000Z_huge-message.jsonl"), text).unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sessions");
    let original = std::fs::read_dir(&example)
        .unwrap()
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).into_iter().flatten())
        .map(|f| f.unwrap().path())
        .find(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains("01a23953-e42c-718a-bccb-569788a91100")))
        .expect("the example session");
    std::fs::copy(&original, folder.join("copy.jsonl")).unwrap();
    let (code, _, err) = common::run(&db, &["import", folder.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    (dir, db)
}

#[test]
fn sessions_are_addressed_by_id_and_old_key_urls_redirect() {
    let (_dir, db) = addressed_db();
    let id = "01a23953-e42c-718a-bccb-569788a91100";
    let conn = sessiondb::db::open_existing(&db).unwrap();
    let (_, paths, _) = common::run(&db, &["find", id]);
    assert_eq!(paths.lines().count(), 2, "two sessions share the id: {paths}");
    let first = sessiondb::resolve::by_id(&conn, id).unwrap().unwrap();
    let copy = sessiondb::resolve::resolve(&conn, paths.lines().find(|p| p.ends_with("copy.jsonl")).unwrap()).unwrap();
    assert!(first.sid < copy.sid && !first.path.ends_with("copy.jsonl"));
    let s = serve(&db, &["--listen", "127.0.0.1:0"]);
    let p = s.port;
    // The page by id: the first stored of the two.
    let page = get(p, &format!("/s/{id}"));
    assert_eq!(page.status, 200);
    assert_eq!(get_id(&page.body), id);
    assert!(page.body.contains(&format!("<dd class=\"mono\">{}</dd>", first.path)), "the first stored is shown");
    // Entries are anchors by id; the tree and the leaf links name ids, never keys.
    let tree = sessiondb::tree::SessionTree::open(&conn, first.sid).unwrap();
    let last = tree.last_entry().unwrap().unwrap().id.unwrap();
    assert!(page.body.contains(&format!(" id=\"{last}\" data-entry-id=\"{last}\"")));
    assert!(page.body.contains(&format!("href=\"#{last}\"")));
    assert!(page.body.contains(&format!("href=\"/s/{id}?leaf=")), "tree links by id");
    assert!(!page.body.contains("href=\"/s/1") && !page.body.contains(&format!("/s/{}", first.sid)));
    // The old address by key: a permanent redirect, the rest of the address kept.
    let old = get(p, &format!("/s/{}?leaf={last}", first.sid));
    assert_eq!(old.status, 308);
    assert_eq!(old.header("location"), Some(format!("/s/{id}?leaf={last}").as_str()));
    assert_eq!(old.header("content-security-policy"), Some(CSP));
    let old = get(p, &format!("/s/{}/export.jsonl", first.sid));
    assert_eq!(old.header("location"), Some(format!("/s/{id}/export.jsonl").as_str()));
    // The copy has no address of its own: its key is not redirected to the first.
    assert_eq!(get(p, &format!("/s/{}", copy.sid)).status, 404);
    assert_eq!(get(p, "/s/no-such-session").status, 404);
    // Search hits link by ids: the session, the branch to the entry, the entry.
    let hits = get(p, "/?q=emoji");
    let at = hits.body.find("class=\"snippet\" href=\"").expect("a hit") + 22;
    let href = hits.body[at..].split('"').next().unwrap();
    let (path, entry) = href.split_once('#').unwrap();
    assert!(path.starts_with("/s/") && path.ends_with(&format!("?leaf={entry}")), "{href}");
    assert!(!path[3..].starts_with(|c: char| c.is_ascii_digit()) || path[3..].contains('-'), "{href}");
    assert_eq!(get(p, path).status, 200);
}

#[test]
fn a_huge_message_is_folded_and_the_branch_downloads_as_markdown_and_html() {
    let (_dir, db) = addressed_db();
    let s = serve(&db, &["--listen", "127.0.0.1:0"]);
    let p = s.port;
    let page = get(p, "/s/huge-message?leaf=u1");
    assert_eq!(page.status, 200);
    assert!(page.body.len() < 100_000, "{} bytes", page.body.len());
    assert!(page.body.contains("<p class=\"fold\">Folded: 10,481,674 more bytes. "), "{}", &page.body[..3000]);
    assert!(page.body.contains("href=\"/s/huge-message/full?id=u1\""));
    let full = get(p, "/s/huge-message/full?id=u1");
    assert_eq!(full.status, 200);
    assert!(full.body.contains(&format!("start {} end", "x".repeat(10 << 20))));
    assert!(!full.body.contains("class=\"fold\""));
    // The downloads are the CLI's exports, attachments.
    for (name, format, leaf) in
        [("export.md", "markdown", None), ("export.html", "html", None), ("export.md", "markdown", Some("u1"))]
    {
        let url = match leaf {
            Some(l) => format!("/s/huge-message/{name}?leaf={l}"),
            None => format!("/s/huge-message/{name}"),
        };
        let r = get(p, &url);
        assert_eq!(r.status, 200, "{url}");
        let ext = name.rsplit('.').next().unwrap();
        assert_eq!(
            r.header("content-disposition"),
            Some(format!("attachment; filename=\"huge-message.{ext}\"").as_str())
        );
        let mut args = vec!["export", "huge-message", "--format", format];
        args.extend(leaf.iter().flat_map(|l| ["--leaf", l]));
        let (_, want, _) = common::run(&db, &args);
        assert!(r.body == want, "{url} is not `sessiondb {}`", args.join(" "));
        assert_eq!(r.body.contains("short"), leaf.is_none());
    }
    let page = get(p, "/s/huge-message");
    assert!(page.body.contains("href=\"/s/huge-message/export.md\""));
    assert!(page.body.contains("href=\"/s/huge-message/export.html\""));
    let page = get(p, "/s/huge-message?leaf=u1");
    assert!(page.body.contains("href=\"/s/huge-message/export.html?leaf=u1\""));
}
