//! Where pi keeps session files, and pi's path handling.

use std::path::{Component, Path, PathBuf};

/// `~` expansion and lexical resolution against the current directory, as pi's `resolvePath`
/// (Node's `path.resolve`: no symlinks followed, `.`/`..` folded, no trailing slash).
pub fn resolve_path(input: &str) -> PathBuf {
    let expanded = expand_tilde(input);
    absolute(Path::new(&expanded))
}

/// `path` absolute and without `.` or `..` (pi's `path.resolve`, without `~`): the form session
/// paths are stored in, so that a file imported as `../x.jsonl` is found again by that name.
pub fn absolute(path: &Path) -> PathBuf {
    let base = if path.is_absolute() {
        PathBuf::new()
    } else {
        std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"))
    };
    normalize(&base.join(path))
}

fn expand_tilde(input: &str) -> String {
    let home = || std::env::var("HOME").unwrap_or_default();
    if input == "~" {
        home()
    } else if let Some(rest) = input.strip_prefix("~/") {
        format!("{}/{}", home(), rest)
    } else {
        input.to_string()
    }
}

/// Folds `.` and `..` lexically.
pub fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push("/");
    }
    out
}

/// pi's agent dir (pi's `getAgentDir`): `$PI_CODING_AGENT_DIR`, else `~/.pi/agent`.
pub fn agent_dir() -> PathBuf {
    match std::env::var("PI_CODING_AGENT_DIR") {
        Ok(d) if !d.is_empty() => resolve_path(&d),
        _ => resolve_path("~/.pi/agent"),
    }
}

/// The folder holding every project's session folder (pi's `getSessionsDir`):
/// `<agent dir>/sessions`. pi keeps a folder per cwd only here (`default_session_dir`), so
/// `sessiondb move` moves files below it.
pub fn sessions_root() -> PathBuf {
    agent_dir().join("sessions")
}

/// The folder pi writes sessions in when started without `--session-dir`, as far as the
/// environment says: `$PI_CODING_AGENT_SESSION_DIR` (pi's override: every session in that
/// one folder), else [`sessions_root`]. What `sessiondb sync` and the first import of
/// `sessiondb-pi` read by default.
pub fn sessions_dir() -> PathBuf {
    match std::env::var("PI_CODING_AGENT_SESSION_DIR") {
        Ok(d) if !d.is_empty() => resolve_path(&d),
        _ => sessions_root(),
    }
}

/// The folder name pi gives a cwd: `--<cwd without leading / or \, with / \ : as ->--`.
pub fn encode_cwd_dir(cwd: &str) -> String {
    let resolved = resolve_path(cwd).to_string_lossy().into_owned();
    let trimmed = resolved.strip_prefix(['/', '\\']).unwrap_or(&resolved);
    format!("--{}--", trimmed.replace(['/', '\\', ':'], "-"))
}

/// pi's default session folder for a cwd: `<agent dir>/sessions/--<cwd>--`.
pub fn default_session_dir(cwd: &str) -> PathBuf {
    sessions_root().join(encode_cwd_dir(cwd))
}

/// pi's file name for a session: `<timestamp with : and . as ->_<id>.jsonl`.
pub fn session_file_name(timestamp: &str, id: &str) -> String {
    format!("{}_{}.jsonl", timestamp.replace([':', '.'], "-"), id)
}

/// `--<cwd>--/<timestamp>_<id>.jsonl`, relative to a sessions folder.
pub fn relative_session_path(cwd: &str, timestamp: &str, id: &str) -> String {
    format!("{}/{}", encode_cwd_dir(cwd), session_file_name(timestamp, id))
}

/// A file name safe to write for a session whose id may hold any characters (`key`: the
/// session's storage key, shown when the id cannot be).
pub fn safe_file_stem(id: &str, key: impl std::fmt::Display) -> String {
    if crate::pi::ids::is_valid_session_id(id) {
        format!("{id}.jsonl")
    } else {
        format!("session-{key}.jsonl")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cwd_folder_names() {
        assert_eq!(encode_cwd_dir("/home/u/proj-a"), "--home-u-proj-a--");
        assert_eq!(encode_cwd_dir("/srv/x:y"), "--srv-x-y--");
        assert_eq!(encode_cwd_dir("/home/u/proj ü/中文/"), "--home-u-proj ü-中文--");
        assert_eq!(session_file_name("2025-02-01T00:00:00.000Z", "abc"), "2025-02-01T00-00-00-000Z_abc.jsonl");
    }
}
