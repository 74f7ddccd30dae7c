//! The commands served from a PostgreSQL server (filled by `push`): `export`, `list` and
//! `find`, with the answers they give on SQLite for the same sessions.

use crate::error::{Error, Result};
use crate::js::jstime;
use crate::pi::layout;
use crate::read::discovery::SessionInfo;
use crate::read::export::{safe_relative, write_file_atomically, ExportedFile};
use crate::store::postgres::read::{self, RemoteInfo, Which};
use crate::store::postgres::Server;
use std::io::Write;
use std::path::Path;

/// A session found on the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteRef {
    /// The server's key.
    pub skey: i64,
    /// Header id.
    pub id: String,
    /// The machine it was pushed from.
    pub origin: String,
    /// Its file's path there.
    pub path: String,
}

fn refs(found: Vec<RemoteInfo>) -> Vec<RemoteRef> {
    found.into_iter().map(|i| RemoteRef { skey: i.skey, id: i.id, origin: i.origin, path: i.path }).collect()
}

fn one(what: &str, found: Vec<RemoteRef>) -> Result<Option<RemoteRef>> {
    match found.len() {
        0 => Ok(None),
        1 => Ok(found.into_iter().next()),
        _ => Err(Error::Ambiguous {
            what: what.to_string(),
            candidates: found.iter().map(|s| format!("{} ({}:{})", s.id, s.origin, s.path)).collect(),
        }),
    }
}

/// The session `reference` names on the server, as `resolve` does on SQLite: a file path, an
/// exact id or a unique id prefix (4+ characters). The same path pushed from two origins, or
/// one id on two, is ambiguous.
pub fn resolve(s: &mut Server, reference: &str) -> Result<RemoteRef> {
    if reference.is_empty() {
        return Err(Error::InvalidArgument("empty session reference".into()));
    }
    let looks_like_path = reference.contains('/') || reference.ends_with(".jsonl");
    if looks_like_path {
        let abs = layout::resolve_path(reference).to_string_lossy().into_owned();
        if let Some(r) = one(reference, refs(read::sessions(s, Which::Path(&abs))?))? {
            return Ok(r);
        }
        return Err(Error::NotFound(format!("{}: no session recorded at {abs}", s.name)));
    }
    if let Some(r) = one(&format!("session id {reference}"), refs(read::sessions(s, Which::Id(reference))?))? {
        return Ok(r);
    }
    if reference.chars().count() < crate::read::resolve::MIN_PREFIX {
        return Err(Error::NotFound(format!("{}: no session with id {reference}", s.name)));
    }
    let found = refs(read::sessions(s, Which::IdPrefix(reference))?);
    one(&format!("session id prefix {reference}"), found)?
        .ok_or_else(|| Error::NotFound(format!("{}: no session with id or id prefix {reference}", s.name)))
}

/// Writes session `skey` as JSONL, byte for byte what was imported (as `export` on SQLite).
pub fn write_session(s: &mut Server, skey: i64, out: &mut impl Write) -> Result<u64> {
    read::write_session(s, skey, out)
}

/// Writes session `skey` to `path` (a temporary file, then renamed).
pub fn write_session_file(s: &mut Server, skey: i64, path: &Path) -> Result<u64> {
    write_file_atomically(path, |w| read::write_session(s, skey, w))
}

/// Writes every session under `out_dir/<origin>/` (the server's own, of origin `''`, under
/// `out_dir`), each at the path it had below the folder
/// it was imported from (else in pi's layout), as `export --all` does on SQLite.
pub fn export_all(
    s: &mut Server,
    out_dir: &Path,
    mut progress: impl FnMut(&ExportedFile),
) -> Result<Vec<ExportedFile>> {
    std::fs::create_dir_all(out_dir).map_err(|e| Error::io(out_dir, e))?;
    let mut written = Vec::new();
    let mut used = std::collections::HashSet::new();
    for i in read::sessions(s, Which::All)? {
        // The server's own sessions (origin '': imported or made there) go where SQLite's
        // `export --all` puts them; pushed ones under their origin's folder.
        if !i.origin.is_empty() && (!safe_relative(&i.origin) || i.origin.contains('/')) {
            return Err(Error::InvalidArgument(format!("origin {:?}: not usable as a folder name", i.origin)));
        }
        let cwd = i.cwd.as_deref().unwrap_or("");
        let layout_rel = || layout::relative_session_path(cwd, i.created.as_deref().unwrap_or(""), &i.id);
        let candidates = [
            i.rel_path.clone().filter(|r| safe_relative(r)).unwrap_or_else(layout_rel),
            format!("{}/{}", layout::encode_cwd_dir(cwd), layout::safe_file_stem(&i.id, i.skey)),
            format!("sessiondb-unnamed/session-{}.jsonl", i.skey),
        ];
        let Some(rel) = candidates
            .into_iter()
            .map(|r| if i.origin.is_empty() { r } else { format!("{}/{r}", i.origin) })
            .find(|r| safe_relative(r) && used.insert(r.clone()))
        else {
            return Err(Error::InvalidArgument(format!(
                "session {}: no safe file name under {}",
                i.id,
                out_dir.display()
            )));
        };
        let path = out_dir.join(&rel);
        let bytes = write_session_file(s, i.skey, &path)?;
        let f = ExportedFile { session_id: i.id, path, bytes };
        progress(&f);
        written.push(f);
    }
    Ok(written)
}

fn to_info(i: RemoteInfo) -> SessionInfo {
    let created_ms = i.created.as_deref().and_then(jstime::parse_ms);
    let modified_ms = match i.last_activity_ms {
        Some(t) if t > 0.0 => Some(t as i64),
        _ => created_ms.or(Some(i.written_ns / 1_000_000)),
    };
    SessionInfo {
        sid: i.skey,
        path: i.path,
        id: i.id,
        cwd: i.cwd.unwrap_or_default(),
        name: i.name,
        parent_session_path: i.parent_session,
        created_ms,
        modified_ms,
        message_count: i.message_count,
        first_message: i.first_message.unwrap_or_else(|| "(no messages)".into()),
        all_messages_text: String::new(),
        written_ns: Some(i.written_ns),
        last_seq: i.last_seq,
    }
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn newest_first(mut v: Vec<SessionInfo>) -> Vec<SessionInfo> {
    v.sort_by(newer);
    v
}

fn newer(a: &SessionInfo, b: &SessionInfo) -> std::cmp::Ordering {
    match (a.modified_ms, b.modified_ms) {
        (Some(x), Some(y)) => y.cmp(&x),
        _ => std::cmp::Ordering::Equal,
    }
}

/// Every session on the server, newest first (`list` without a scope).
pub fn list_everything(s: &mut Server) -> Result<Vec<SessionInfo>> {
    Ok(list_everything_with_origin(s)?.into_iter().map(|(_, i)| i).collect())
}

/// [`list_everything`] with the origin each session was pushed from (`sessiondb push`'s
/// `--origin`, by default the machine's name; `""` for the server's own sessions, imported or
/// made there).
pub fn list_everything_with_origin(s: &mut Server) -> Result<Vec<(String, SessionInfo)>> {
    let mut v: Vec<(String, SessionInfo)> =
        read::sessions(s, Which::All)?.into_iter().map(|i| (i.origin.clone(), to_info(i))).collect();
    v.sort_by(|a, b| newer(&a.1, &b.1));
    Ok(v)
}

/// Sessions with header cwd `cwd`, newest first.
pub fn list_cwd(s: &mut Server, cwd: &str) -> Result<Vec<SessionInfo>> {
    Ok(newest_first(read::sessions(s, Which::Cwd(cwd))?.into_iter().map(to_info).collect()))
}

/// Sessions whose file is in folder `dir` (on any origin), in pi's order for a folder.
pub fn list_dir(s: &mut Server, dir: &str) -> Result<Vec<SessionInfo>> {
    let mut v: Vec<SessionInfo> = read::sessions(s, Which::Dir(dir))?.into_iter().map(to_info).collect();
    v.sort_by_cached_key(|i| std::cmp::Reverse(crate::js::collate::sort_key(file_name(&i.path))));
    Ok(newest_first(v))
}

/// Fills in `allMessagesText` (kept on the server by every push).
pub fn fill_all_text(s: &mut Server, infos: &mut [SessionInfo]) -> Result<()> {
    let keys: Vec<i64> = infos.iter().map(|i| i.sid).collect();
    for (info, text) in infos.iter_mut().zip(read::all_texts(s, &keys)?) {
        info.all_messages_text = text;
    }
    Ok(())
}

/// Paths of the sessions with header id `id` (any origin), in push order.
pub fn find_everywhere(s: &mut Server, id: &str) -> Result<Vec<String>> {
    Ok(read::sessions(s, Which::Id(id))?.into_iter().map(|i| i.path).collect())
}

/// Paths of the sessions whose header id starts with `prefix` (at most 50).
pub fn find_prefix(s: &mut Server, prefix: &str) -> Result<Vec<String>> {
    Ok(read::sessions(s, Which::IdPrefix(prefix))?.into_iter().map(|i| i.path).collect())
}

/// pi's findById in folder `dir`: the first path of a session with that id there.
pub fn find_in_dir(s: &mut Server, id: &str, dir: &str, cwd_filter: Option<&str>) -> Result<Option<String>> {
    Ok(read::sessions(s, Which::Dir(dir))?
        .into_iter()
        .filter(|i| i.id == id)
        .find(|i| cwd_filter.is_none_or(|c| crate::read::discovery::cwd_matches(i.cwd.as_deref(), c)))
        .map(|i| i.path))
}
