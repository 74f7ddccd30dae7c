//! The native half of the `sessiondb` npm package: one [`Native`] per JS `SessionManager`,
//! holding an rpc server whose current manager is that instance. The JS half (`index.js`)
//! sends pi's calls as JSON lines and parses the answers with `JSON.parse`, so values are
//! exactly what JavaScript makes of the stored text.
//!
//! Nothing unwinds into Node: every entry point runs under `catch_unwind`, and a panic
//! becomes a JS exception naming what failed.

use napi::bindgen_prelude::Buffer;
use napi::{Error, Result};
use napi_derive::napi;
use sessiondb::manager::{LinkRef, Links, SessionManager};
use sessiondb::paths as layout;
use sessiondb::rpc::RpcServer;
use sessiondb::tree::PathStep;
use sessiondb::EntryKey;
use std::panic::{catch_unwind, AssertUnwindSafe};

use std::path::{Path, PathBuf};

/// Runs `f`, turning a library error or a panic into a JS exception.
fn guard<T>(what: &str, f: impl FnOnce() -> sessiondb::Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(Error::from_reason(e.to_string())),
        Err(payload) => {
            let why = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(Error::from_reason(format!("sessiondb: internal error in {what}: {why}")))
        }
    }
}

/// One session of `listInfos`: pi's `SessionInfo` without `allMessagesText`, with the dates as
/// milliseconds (null: pi's Invalid Date), and the session's key and last line number for
/// `messagesTexts`.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct InfoOut<'a> {
    path: &'a str,
    id: &'a str,
    cwd: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_session_path: Option<&'a str>,
    created: Option<i64>,
    modified: Option<i64>,
    message_count: i64,
    first_message: &'a str,
    sid: i64,
    last_seq: i64,
}

impl<'a> From<&'a sessiondb::discovery::SessionInfo> for InfoOut<'a> {
    fn from(i: &'a sessiondb::discovery::SessionInfo) -> Self {
        InfoOut {
            path: &i.path,
            id: &i.id,
            cwd: &i.cwd,
            name: i.name.as_deref(),
            parent_session_path: i.parent_session_path.as_deref(),
            created: i.created_ms,
            modified: i.modified_ms,
            message_count: i.message_count,
            first_message: &i.first_message,
            sid: i.sid.0,
            last_seq: i.last_seq,
        }
    }
}

/// A connection to the database and, once a constructor ran, its current session.
#[napi]
pub struct Native {
    server: RpcServer,
}

impl Native {
    fn manager(&self) -> sessiondb::Result<&SessionManager> {
        self.server.current().ok_or_else(|| sessiondb::Error::InvalidArgument("no current session".into()))
    }
}

#[napi]
impl Native {
    /// A server on the database at `db` (opened, and created if needed, on first use).
    #[napi(constructor)]
    pub fn new(db: String) -> Self {
        Native { server: RpcServer::new(Path::new(&db)) }
    }

    /// One rpc request line in, its response line out.
    #[napi]
    pub fn call(&mut self, line: String) -> Result<String> {
        let server = &mut self.server;
        guard("call", || Ok(server.handle_line(&line)))
    }

    /// pi's `list(cwd, sessionDir?)` (`cwd` given) or `listAll(sessionDir?)` without the texts,
    /// as the UTF-8 JSON text of an array of pi's `SessionInfo` fields (see [`InfoOut`]).
    /// Written straight from the rows: 10,000 sessions cross in a few milliseconds.
    #[napi]
    pub fn list_infos(&mut self, cwd: Option<String>, session_dir: Option<String>) -> Result<Buffer> {
        let server = &mut self.server;
        guard("list", || {
            let infos = server.session_infos(cwd.as_deref(), session_dir.as_deref())?;
            let out: Vec<InfoOut<'_>> = infos.iter().map(InfoOut::from).collect();
            serde_json::to_vec(&out)
                .map(Buffer::from)
                .map_err(|e| sessiondb::Error::InvalidArgument(format!("cannot write the list: {e}")))
        })
    }

    /// `appendMessage(message)` with the message as JSON text: the hot path of an agent
    /// turn, without the rpc envelope.
    #[napi]
    pub fn append_message(&mut self, message: String) -> Result<String> {
        let server = &mut self.server;
        guard("appendMessage", || {
            let value = sessiondb::json::parse(message.as_bytes())
                .map_err(|e| sessiondb::Error::InvalidArgument(format!("message is not JSON: {e}")))?;
            let m =
                server.current_mut().ok_or_else(|| sessiondb::Error::InvalidArgument("no current session".into()))?;
            m.append_message(value)
        })
    }

    /// Where the keys handed out live; a change means cached lines are stale.
    #[napi]
    pub fn epoch(&self) -> Result<String> {
        guard("epoch", || Ok(self.server.current().map(SessionManager::cache_epoch).unwrap_or_default()))
    }

    /// True once the session is in the database (pi has written its file by then).
    #[napi]
    pub fn is_saved(&self) -> Result<bool> {
        guard("isSaved", || Ok(self.manager()?.is_saved()))
    }

    /// The header line exactly as stored.
    #[napi]
    pub fn header_line(&self) -> Result<String> {
        guard("headerLine", || self.manager()?.header_line())
    }

    /// The storage key of the session's last line, if it has one.
    #[napi]
    pub fn last_key(&self) -> Result<Option<f64>> {
        guard("lastKey", || Ok(self.manager()?.last_key()?.map(|k| k.0 as f64)))
    }

    /// The lines after storage key `after` (from the first when absent) exactly as stored,
    /// each followed by `\n`, as pi appends them to its file; `lastKey` is the key of the last.
    #[napi]
    pub fn file_lines_after(&self, after: Option<f64>) -> Result<FileLines> {
        guard("fileLinesAfter", || {
            let mut text = Vec::new();
            let mut last = None;
            self.manager()?.lines_after(after.map(|k| EntryKey(k as i64)), i64::MAX, &mut |k, line| {
                text.extend_from_slice(line);
                text.push(b'\n');
                last = Some(k.0 as f64);
            })?;
            Ok(FileLines { last_key: last, text: Buffer::from(text) })
        })
    }

    /// Records that the session's file now holds every stored line (see
    /// `SessionManager::note_file_written`).
    #[napi]
    pub fn note_file_written(&mut self) -> Result<()> {
        let server = &mut self.server;
        guard("noteFileWritten", || match server.current_mut() {
            Some(m) => m.note_file_written(),
            None => Ok(()),
        })
    }

    /// Why the last constructor or switch continued in a fork of the session asked for
    /// (another live process writes it), as JSON (`LeaseNotice`); null otherwise. Taken once.
    #[napi]
    pub fn lease_notice(&mut self) -> Result<Option<String>> {
        let server = &mut self.server;
        guard("leaseNotice", || {
            Ok(server
                .current_mut()
                .and_then(SessionManager::lease_notice)
                .map(|n| serde_json::to_string(&n).unwrap_or_default()))
        })
    }

    /// Renews the lease the current manager holds (a timer's call); false when another
    /// process holds the session now.
    #[napi]
    pub fn renew_lease(&mut self) -> Result<bool> {
        let server = &mut self.server;
        guard("renewLease", || match server.current_mut() {
            Some(m) => m.renew_lease(),
            None => Ok(true),
        })
    }

    /// Gives back the lease the current manager holds (the process is exiting).
    #[napi]
    pub fn release_lease(&mut self) -> Result<()> {
        let server = &mut self.server;
        guard("releaseLease", || {
            if let Some(m) = server.current_mut() {
                m.release_lease();
            }
            Ok(())
        })
    }

    /// The storage keys, ids, types and message roles of `getBranch(from)` (its last `limit`
    /// when given), root first (no line read), in columns (see `steps_bin`).
    #[napi]
    pub fn branch_steps(&self, from: Option<String>, limit: Option<f64>) -> Result<Buffer> {
        guard("getBranch", || {
            let steps = self.manager()?.branch_steps(from.as_deref(), limit.map(|l| l as i64))?;
            Ok(Buffer::from(steps_bin(&path_links(&steps))?))
        })
    }

    /// Every entry's steps (as `entrySteps` of all) and the path of `getBranch(from)` as u32
    /// indexes into them (little-endian), root first: `[steps, path]`, from one read of the
    /// links; null when the session's derived columns cannot be trusted (ask `branchSteps`).
    #[napi]
    pub fn entries_and_path(&self, from: Option<String>) -> Result<Option<Vec<Buffer>>> {
        guard("getBranch", || {
            let Some((steps, path)) = self.manager()?.entries_and_path(from.as_deref())? else { return Ok(None) };
            let indexes: Vec<u8> = path.iter().flat_map(|i| i.to_le_bytes()).collect();
            Ok(Some(vec![Buffer::from(steps_bin(&steps)?), Buffer::from(indexes)]))
        })
    }

    /// The keys, ids, types and roles of the session's entries after key `after` (all when
    /// absent), in file order, as `branchSteps` writes them.
    #[napi]
    pub fn entry_steps(&self, after: Option<f64>) -> Result<Buffer> {
        guard("getEntries", || {
            Ok(Buffer::from(steps_bin(&self.manager()?.entry_steps(after.map(|k| EntryKey(k as i64)))?)?))
        })
    }

    /// pi's `getTree()` without the lines (see `SessionManager::tree_links`), in columns for
    /// `decodeTreeLinks` (index.cjs): a 100,000-entry tree crossed as JSON spent most of `/tree`'s
    /// `getTree` in `JSON.parse`, interning every id twice. Layout, little-endian:
    /// - u32 `n`, u32 byte length of the steps (below), u32 byte length of the JSON text (last),
    ///   u32 0;
    /// - f64 times `[n]` (`new Date(timestamp).getTime()`; 0 where the state says otherwise);
    /// - i32 parents `[n]`: the index of a link whose id is the parentId, -1 where the parentId is
    ///   not a string (the entry answers), -2 where no link has it (given in the JSON text);
    /// - u8 time states `[n]`: 0 a number, 1 NaN (null), 2 not read (false);
    /// - zeros up to a multiple of 8 bytes, then `steps_bin` of the links (keys, ids, types, roles);
    /// - the JSON text `{"parents": [[index, parentId], ...], "labels": [[target, label,
    ///   timestamp?], ...]}`: a label without its timestamp when the label entry has none.
    #[napi]
    pub fn tree_links(&self) -> Result<Buffer> {
        guard("getTree", || {
            let tree = self.manager()?.tree_links()?;
            let links = &tree.links;
            let n = links.len();
            let steps = steps_bin(links)?;
            let mut out = Vec::with_capacity(16 + 13 * n + 8 + steps.len() + 1024);
            out.extend_from_slice(&u32::try_from(n).map_err(too_long)?.to_le_bytes());
            out.extend_from_slice(&u32::try_from(steps.len()).map_err(too_long)?.to_le_bytes());
            out.extend_from_slice(&[0; 8]); // the JSON text's length, known at the end
            for time in &tree.times {
                out.extend_from_slice(&time.flatten().map_or(0.0, |ms| ms as f64).to_le_bytes());
            }
            // An id's index: any link holding the same id gives the same string.
            let at: std::collections::HashMap<&str, i32> =
                links.iter().enumerate().filter_map(|(i, l)| Some((l.id?, i32::try_from(i).ok()?))).collect();
            let mut text = Vec::with_capacity(1024);
            text.extend_from_slice(b"{\"parents\":[");
            let mut unlinked = 0;
            for (i, l) in links.iter().enumerate() {
                let parent = match l.parent_id {
                    None => -1,
                    Some(p) => match at.get(p) {
                        Some(&j) => j,
                        None => {
                            if unlinked > 0 {
                                text.push(b',');
                            }
                            unlinked += 1;
                            text.extend_from_slice(format!("[{i},").as_bytes());
                            json_string(&mut text, p)?;
                            text.push(b']');
                            -2
                        }
                    },
                };
                out.extend_from_slice(&parent.to_le_bytes());
            }
            out.extend(tree.times.iter().map(|t| match t {
                Some(Some(_)) => 0u8,
                Some(None) => 1,
                None => 2,
            }));
            out.resize(out.len().next_multiple_of(8), 0);
            out.extend_from_slice(&steps);
            text.extend_from_slice(b"],\"labels\":[");
            for (i, (target, label, ts)) in tree.labels.iter().enumerate() {
                if i > 0 {
                    text.push(b',');
                }
                text.push(b'[');
                json_string(&mut text, target)?;
                text.push(b',');
                text.extend_from_slice(label.to_json().as_bytes());
                if let Some(ts) = ts {
                    text.push(b',');
                    text.extend_from_slice(ts.to_json().as_bytes());
                }
                text.push(b']');
            }
            text.extend_from_slice(b"]}");
            out[8..12].copy_from_slice(&u32::try_from(text.len()).map_err(too_long)?.to_le_bytes());
            out.extend_from_slice(&text);
            Ok(Buffer::from(out))
        })
    }

    /// For each of `keys` (assistant messages), what pi's tree selector reads of it to build its
    /// rows (`sessiondb::internals::tree_row`: stored with the line, else read from it), as the
    /// UTF-8 JSON text `[row, ...]` (null where none), without a line crossing.
    #[napi]
    pub fn assistant_rows(&self, keys: Vec<f64>) -> Result<Buffer> {
        guard("getTree", || {
            let keys: Vec<EntryKey> = keys.into_iter().map(|k| EntryKey(k as i64)).collect();
            let rows = self.manager()?.tree_rows_at(&keys)?;
            let mut out = Vec::with_capacity(keys.len() * 48 + 2);
            out.push(b'[');
            for (i, row) in rows.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(row.as_deref().unwrap_or("null").as_bytes());
            }
            out.push(b']');
            Ok(Buffer::from(out))
        })
    }

    /// For each of `keys`, the entry's `usage` and its `message.usage`, each as `[value]`, or
    /// null where absent: the UTF-8 JSON text `[[usage], [messageUsage], null, ...]`.
    #[napi]
    pub fn usages_at(&self, keys: Vec<f64>) -> Result<Buffer> {
        guard("getEntries", || {
            let keys: Vec<EntryKey> = keys.into_iter().map(|k| EntryKey(k as i64)).collect();
            let mut out = Vec::with_capacity(64 * 1024);
            out.push(b'[');
            self.manager()?.usages_at(&keys, &mut |(usage, message_usage)| {
                for raw in [usage, message_usage] {
                    if out.len() > 1 {
                        out.push(b',');
                    }
                    match raw {
                        Some(raw) => {
                            out.push(b'[');
                            out.extend_from_slice(raw);
                            out.push(b']');
                        }
                        None => out.extend_from_slice(b"null"),
                    }
                }
            })?;
            out.push(b']');
            Ok(Buffer::from(out))
        })
    }

    /// The usages of the entries stored after key `after` (all when absent; see
    /// `Usage::entry_usages`): up to `upto` (absent: nothing is known), an entry with a row has
    /// that usage and no other, one in `inLine` has its usages read from its line, any other has
    /// none. In columns, for `decodeUsages` (index.cjs): pi's footer asks for every row of a
    /// session (44,000 on a 100,000-entry one), and crossing them as JSON cost more in
    /// `JSON.parse` than reading them. Layout, little-endian, `r` rows and `l` keys in `inLine`:
    /// - u32 `r`, u32 `l`, u32 1 when `upto` is known (else 0), u32 byte length of the table;
    /// - f64 `upto`;
    /// - f64 `[r][6]`: each row's key, input, output, cacheRead, cacheWrite and cost total;
    /// - f64 `[l]`: the keys of `inLine`;
    /// - u16 codes of the rows' providers `[r]`, then of their models `[r]`: 0 for null, else
    ///   one more than the index in the table;
    /// - the table: the JSON text `["provider or model", ...]`.
    #[napi]
    pub fn entry_usages(&self, after: Option<f64>) -> Result<Buffer> {
        guard("getEntries", || {
            let u = self.manager()?.entry_usages(after.map(|k| EntryKey(k as i64)))?;
            let (r, l) = (u.rows.len(), u.in_line.len());
            let mut out = Vec::with_capacity(24 + 52 * r + 8 * l + 256);
            for n in [r, l] {
                out.extend_from_slice(&u32::try_from(n).map_err(too_long)?.to_le_bytes());
            }
            out.extend_from_slice(&u32::from(u.upto.is_some()).to_le_bytes());
            out.extend_from_slice(&[0; 4]); // the table's length, known at the end
            out.extend_from_slice(&(u.upto.map_or(0, |k| k.0) as f64).to_le_bytes());
            for row in &u.rows {
                let (key, cache_read, cache_write) = (row.key.0 as f64, row.cache_read as f64, row.cache_write as f64);
                for v in [key, row.input as f64, row.output as f64, cache_read, cache_write, row.cost] {
                    out.extend_from_slice(&v.to_le_bytes());
                }
            }
            for k in &u.in_line {
                out.extend_from_slice(&(k.0 as f64).to_le_bytes());
            }
            let mut table = Table::default();
            for row in &u.rows {
                out.extend_from_slice(&table.code(row.provider.as_deref())?.to_le_bytes());
            }
            for row in &u.rows {
                out.extend_from_slice(&table.code(row.model.as_deref())?.to_le_bytes());
            }
            table.finish(&mut out, 12)?;
            Ok(Buffer::from(out))
        })
    }

    /// The lines stored under `keys`, as the UTF-8 JSON text `[line, ...]`.
    #[napi]
    pub fn lines_at(&self, keys: Vec<f64>) -> Result<Buffer> {
        guard("getBranch", || {
            let keys: Vec<EntryKey> = keys.into_iter().map(|k| EntryKey(k as i64)).collect();
            let mut out = Vec::with_capacity(64 * 1024);
            out.push(b'[');
            self.manager()?.lines_at(&keys, &mut |_, line| {
                if out.len() > 1 {
                    out.push(b',');
                }
                out.extend_from_slice(line);
            })?;
            out.push(b']');
            Ok(Buffer::from(out))
        })
    }

    /// At most `limit` entry lines after storage key `after` (from the first when absent),
    /// in file order, as the UTF-8 JSON text `[[key, ...], [line, ...]]` (a Buffer: Node
    /// decodes it faster than N-API makes a string).
    #[napi]
    pub fn lines_after(&self, after: Option<f64>, limit: u32) -> Result<Buffer> {
        guard("getEntries", || {
            let mut keys = Vec::with_capacity(64 * 1024);
            let mut lines = Vec::with_capacity(1024 * 1024);
            keys.extend_from_slice(b"[[");
            lines.extend_from_slice(b"],[");
            let mut first = true;
            self.manager()?.lines_after(after.map(|k| EntryKey(k as i64)), i64::from(limit), &mut |k, line| {
                if !first {
                    keys.push(b',');
                    lines.push(b',');
                }
                first = false;
                keys.extend_from_slice(k.to_string().as_bytes());
                lines.extend_from_slice(line);
            })?;
            keys.extend_from_slice(&lines);
            keys.extend_from_slice(b"]]");
            Ok(Buffer::from(keys))
        })
    }
}

/// Lines copied out of the database, for a session file.
#[napi(object)]
pub struct FileLines {
    pub last_key: Option<f64>,
    pub text: Buffer,
}

/// The database as the launcher's file side sees it: catching up session folders that
/// changed behind its back, and the first import of a user's folders.
#[napi]
pub struct Catalog {
    db: sessiondb::db::Db,
}

#[napi]
impl Catalog {
    /// Opens the database at `db` (a path or a `postgres://` URL).
    #[napi(constructor)]
    pub fn new(db: String) -> Result<Self> {
        guard("Catalog", || Ok(Catalog { db: sessiondb::db::open(db.as_str())? }))
    }

    /// Brings every `*.jsonl` below `dir` up to date (new, grown and rewritten files read,
    /// unchanged ones only stat'ed; the sessions of files gone removed with `prune`, else
    /// marked missing); the summary as JSON. A folder that does not exist is nothing to do.
    #[napi]
    pub fn sync_dir(&mut self, dir: String, prune: bool) -> Result<String> {
        let db = &mut self.db;
        guard("syncDir", || {
            let dir = Path::new(&dir);
            if !dir.is_dir() {
                return Ok("{}".into());
            }
            let opts = sessiondb::sync::SyncOptions { prune };
            let s = sessiondb::sync::sync_dir(db, dir, opts, |_, _| {})?;
            Ok(serde_json::to_string(&s).unwrap_or_default())
        })
    }

    /// Brings the given files below `dir` up to date (a file gone is marked missing).
    #[napi]
    pub fn sync_paths(&mut self, dir: String, paths: Vec<String>) -> Result<String> {
        let db = &mut self.db;
        guard("syncPaths", || {
            let paths: Vec<PathBuf> = paths.into_iter().map(PathBuf::from).collect();
            let mut s = sessiondb::sync::SyncSummary::default();
            sessiondb::sync::sync_paths(db, Path::new(&dir), &paths, &mut s)?;
            Ok(serde_json::to_string(&s).unwrap_or_default())
        })
    }

    /// Removes the session recorded at `path` from the database; false when there is none.
    #[napi]
    pub fn delete_session(&mut self, path: String) -> Result<bool> {
        let db = &mut self.db;
        guard("deleteSession", || {
            let Some(sid) = db.store().sid_by_path(&path)? else { return Ok(false) };
            let tx = db.write()?;
            tx.store().delete_session(sid)?;
            tx.commit()?;
            Ok(true)
        })
    }

    /// Imports every `*.jsonl` below the folders that exist in `dirs` (unchanged files
    /// skipped); with `progress`, a line on stderr counts the files. The summary as JSON.
    #[napi]
    pub fn import_folders(&mut self, dirs: Vec<String>, progress: bool) -> Result<String> {
        let db = &mut self.db;
        guard("importFolders", || {
            use std::io::Write;
            let dirs: Vec<PathBuf> = dirs.into_iter().map(PathBuf::from).filter(|d| d.is_dir()).collect();
            if dirs.is_empty() {
                return Ok("{}".into());
            }
            let targets = sessiondb::import::collect_targets(&dirs)?;
            let total = targets.len();
            let mut done = 0usize;
            let mut shown = std::time::Instant::now();
            let mut tick = |_: &sessiondb::import::FileReport| {
                done += 1;
                if progress && (done == total || shown.elapsed().as_millis() >= 100) {
                    shown = std::time::Instant::now();
                    let mut err = std::io::stderr();
                    let _ = write!(err, "\rsessiondb-pi: importing your pi sessions into the database: {done}/{total}");
                    let _ = err.flush();
                }
            };
            let opts = sessiondb::import::ImportOptions::default();
            let s = sessiondb::import::import_targets(db, &targets, opts, &mut tick)?;
            if progress && total > 0 {
                eprintln!();
            }
            Ok(serde_json::json!({
                "files": s.files, "sessions": s.sessions, "unchanged": s.unchanged, "failures": s.failures,
                "failed": s.reports.iter().filter(|r| r.status == sessiondb::import::FileStatus::Failed)
                    .map(|r| format!("{}: {}", r.path.display(), r.reason.as_deref().unwrap_or("unknown reason")))
                    .collect::<Vec<_>>(),
            })
            .to_string())
        })
    }
}

/// The CLI's default database: `$SESSIONDB_PATH`, else `~/.pi/agent/sessiondb.sqlite`.
#[napi]
pub fn default_database() -> Result<String> {
    guard("defaultDatabase", || Ok(sessiondb::db::default_path()?.to_string_lossy().into_owned()))
}

/// Opens (creating if needed) the database at `path`: an error names the file and the cause.
#[napi]
pub fn check_database(path: String) -> Result<()> {
    guard("useDatabase", || {
        let p = PathBuf::from(&path);
        sessiondb::db::open(&p)
            .map(drop)
            .map_err(|e| sessiondb::Error::InvalidArgument(format!("cannot open the sessiondb database {path}: {e}")))
    })
}

/// Whether managers made from now on hold leases on the sessions they write (one writer per
/// session; see `sessiondb::manager::hold_leases`).
#[napi]
pub fn hold_leases(on: bool) -> Result<()> {
    guard("holdLeases", || {
        sessiondb::manager::hold_leases(on);
        Ok(())
    })
}

/// Who holds the lease on the session at `reference` (a file path or an id) in the database
/// `db`: the holder as JSON (`sessiondb::lease::Holder`, with whether it still lives), or null.
#[napi]
pub fn lease_holder(db: String, reference: String) -> Result<Option<String>> {
    guard("leaseHolder", || {
        let conn = sessiondb::db::open(db.as_str())?;
        let sid = sessiondb::resolve::resolve(&conn, &reference)?.sid;
        Ok(sessiondb::lease::holder(&conn, sid)?.map(|h| serde_json::to_string(&h).unwrap_or_default()))
    })
}

/// How often a holder renews its lease, in ms.
#[napi]
pub fn lease_renew_ms() -> f64 {
    sessiondb::lease::RENEW_EVERY_MS as f64
}

/// Panics inside the addon, to prove a panic reaches JS as an exception. Compiled only with
/// the `test-panic` feature (the test copy `test.sh` builds): the published addon lacks it.
#[cfg(feature = "test-panic")]
#[napi]
pub fn panic_for_test() -> Result<()> {
    guard("panicForTest", || -> sessiondb::Result<()> { panic!("deliberate test panic") })
}

/// pi's `getDefaultSessionDirPath(cwd)`: `<agent dir>/sessions/--<cwd encoded>--`.
#[napi]
pub fn default_session_dir(cwd: String) -> Result<String> {
    guard("usesDefaultSessionDir", || Ok(sessiondb::default_session_dir(&cwd).to_string_lossy().into_owned()))
}

/// Whether `text` names a PostgreSQL server rather than a SQLite file (`sessiondb::pg::is_url`:
/// `postgres://` or `postgresql://`, the scheme in any case).
#[napi]
pub fn is_server_url(text: String) -> bool {
    sessiondb::pg::is_url(&text)
}

/// pi's agent dir (`getAgentDir`): `$PI_CODING_AGENT_DIR`, else `~/.pi/agent`.
#[napi]
pub fn agent_dir() -> Result<String> {
    guard("agentDir", || Ok(layout::agent_dir().to_string_lossy().into_owned()))
}

/// The folder of every project's session folder (pi's `getSessionsDir`).
#[napi]
pub fn sessions_root() -> Result<String> {
    guard("sessionsRoot", || Ok(layout::sessions_root().to_string_lossy().into_owned()))
}

/// The folder pi writes sessions in, as the environment says (`$PI_CODING_AGENT_SESSION_DIR`,
/// else the sessions root): what `sessiondb sync` reads by default.
#[napi]
pub fn sessions_dir() -> Result<String> {
    guard("sessionsDir", || Ok(layout::sessions_dir().to_string_lossy().into_owned()))
}

/// Steps in columns, for `decodeSteps` (index.cjs): a 100,000-step path crossed as JSON cost
/// more in `JSON.parse` (V8 interning 100,000 ids) and in escaping than reading it. Layout,
/// little-endian (typed arrays on x64 and arm64), `n` steps and `t` distinct types and roles:
/// - u32 `n`, u32 byte length of the table (below);
/// - f64 keys `[n]` (JS numbers, as before);
/// - u16 codes of the types `[n]`, then of the roles `[n]`: 0 for null, else one more than the
///   index in the table;
/// - u32 offsets `[n + 1]` of each id in the ids' text, in UTF-16 units (JS string indices);
/// - u8 `[n]`: 1 where the id is null;
/// - the ids' text (UTF-8), then the table: the JSON text `["type or role", ...]`.
fn steps_bin(steps: &Links) -> sessiondb::Result<Vec<u8>> {
    let n = steps.len();
    let ids_len: usize = steps.iter().map(|s| s.id.map_or(0, str::len)).sum();
    let mut out = Vec::with_capacity(8 + n * 17 + 4 + ids_len + 256);
    out.extend_from_slice(&u32::try_from(n).map_err(too_long)?.to_le_bytes());
    out.extend_from_slice(&[0; 4]); // the table's length, known at the end
    for key in steps.keys() {
        out.extend_from_slice(&(key.0 as f64).to_le_bytes());
    }
    let mut table = Table::default();
    let columns: [fn(LinkRef<'_>) -> Option<&str>; 2] = [|s| s.kind, |s| s.role];
    for column in columns {
        for s in steps.iter() {
            out.extend_from_slice(&table.code(column(s))?.to_le_bytes());
        }
    }
    let mut at: u32 = 0;
    out.extend_from_slice(&at.to_le_bytes());
    for s in steps.iter() {
        let id = s.id.unwrap_or("");
        let units = if id.is_ascii() { id.len() } else { id.encode_utf16().count() };
        at = at.checked_add(u32::try_from(units).map_err(too_long)?).ok_or_else(|| too_long(()))?;
        out.extend_from_slice(&at.to_le_bytes());
    }
    out.extend(steps.iter().map(|s| u8::from(s.id.is_none())));
    for s in steps.iter() {
        out.extend_from_slice(s.id.unwrap_or("").as_bytes());
    }
    table.finish(&mut out, 4)?;
    Ok(out)
}

/// A path's steps as [`Links`] (no parent ids: `steps_bin` does not write them).
fn path_links(steps: &[PathStep]) -> Links {
    let mut links = Links::with_capacity(steps.len());
    for s in steps {
        links.push(LinkRef {
            key: s.key,
            id: s.id.as_deref(),
            parent_id: None,
            kind: s.kind.as_deref(),
            role: s.role.as_deref(),
        });
    }
    links
}

/// The distinct strings of a column (types, roles, providers, models: a few), coded as u16.
#[derive(Default)]
struct Table<'a> {
    values: Vec<&'a str>,
}

impl<'a> Table<'a> {
    /// 0 for null, else 1 + the index of `v` (added when new). A linear search: the columns
    /// hold a handful of distinct values, and hashing each of 100,000 cost more.
    fn code(&mut self, v: Option<&'a str>) -> sessiondb::Result<u16> {
        let Some(v) = v else { return Ok(0) };
        let i = match self.values.iter().rposition(|&x| x == v) {
            Some(i) => i,
            None => {
                self.values.push(v);
                self.values.len() - 1
            }
        };
        u16::try_from(i + 1).map_err(too_long)
    }

    /// Appends the JSON text `["value", ...]` to `out` and writes its byte length, a u32, at
    /// `len_at`.
    fn finish(self, out: &mut Vec<u8>, len_at: usize) -> sessiondb::Result<()> {
        let text = serde_json::to_vec(&self.values).map_err(|e| sessiondb::Error::InvalidArgument(e.to_string()))?;
        let len = u32::try_from(text.len()).map_err(too_long)?;
        out[len_at..len_at + 4].copy_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&text);
        Ok(())
    }
}

/// A path or session too long for the columns' widths (over 4 GiB of ids or 65,535 distinct
/// types and roles).
fn too_long<E>(_: E) -> sessiondb::Error {
    sessiondb::Error::InvalidArgument("a path too long to cross to JavaScript".into())
}

/// `v` as a JSON string.
fn json_string(out: &mut Vec<u8>, v: &str) -> sessiondb::Result<()> {
    serde_json::to_writer(out, v).map_err(|e| sessiondb::Error::InvalidArgument(e.to_string()))
}
