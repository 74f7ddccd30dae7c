//! [`Discovery`] on PostgreSQL: these search every origin (`SessionRef::origin` says which);
//! the joined text is folded from the rows appends left since.

use crate::error::Result;
use crate::store::interface::discovery::{Discovery, InfoRow, Origins, SessionRef};
use crate::store::keys::SessionKey;
use crate::store::postgres::{Pg, PgParams};

/// [`info_select!`] on PostgreSQL: every origin's sessions (`$where` starts `WHERE`), or with
/// [`own!`] only the server's own (origin `''`).
macro_rules! pg_info_select {
    ($where:expr) => {
        concat!(
            "SELECT skey AS sid, path, id, cwd, name, created, parent_session, message_count, last_activity_ms, ",
            "first_message, coalesce(file_mtime_ns, written_ns) AS written_ns, last_seq, origin FROM sessions ",
            $where
        )
    };
}

/// `WHERE origin = ''` and then `$more` conditions, if any.
macro_rules! own {
    () => {
        "WHERE origin = ''"
    };
    ($more:literal) => {
        concat!("WHERE origin = '' AND ", $more)
    };
}

/// [`SESSION_INFOS_IN_DIR`] on PostgreSQL, the server's own sessions.
pub const PG_SESSION_INFOS_IN_DIR: &str = pg_info_select!(own!("dir = $1"));
/// [`SESSION_INFOS_IN_DIR`] on PostgreSQL, every origin's.
pub const PG_SESSION_INFOS_IN_DIR_EVERY: &str = pg_info_select!("WHERE dir = $1");

/// [`SESSION_INFO_BY_SID`](crate::store::sqlite::discovery::SESSION_INFO_BY_SID) on
/// PostgreSQL: a session of any origin.
pub const PG_SESSION_INFO_BY_SID: &str = pg_info_select!("WHERE skey = $1");

/// [`SESSION_INFOS_ALL`] on PostgreSQL, the server's own sessions.
pub const PG_SESSION_INFOS_ALL: &str = pg_info_select!(own!());
/// [`SESSION_INFOS_ALL`] on PostgreSQL, every origin's.
pub const PG_SESSION_INFOS_ALL_EVERY: &str = pg_info_select!("");

/// [`SESSION_INFOS_UNDER`] on PostgreSQL.
pub const PG_SESSION_INFOS_UNDER: &str = pg_info_select!(own!("dir >= $1 AND dir < $2"));

/// [`SESSION_INFOS_FOR_CWD`] on PostgreSQL, the server's own sessions.
pub const PG_SESSION_INFOS_FOR_CWD: &str = pg_info_select!(own!("cwd = $1"));
/// [`SESSION_INFOS_FOR_CWD`] on PostgreSQL, every origin's.
pub const PG_SESSION_INFOS_FOR_CWD_EVERY: &str = pg_info_select!("WHERE cwd = $1");

fn pg_infos(pg: &Pg, sql: &'static str, params: PgParams<'_>) -> Result<Vec<InfoRow>> {
    let text = |r: &postgres::Row, c: &str| r.get::<_, Option<&[u8]>>(c).map(utf8);
    let mut out = Vec::new();
    pg.each(sql, params, |r| {
        out.push(InfoRow {
            sid: r.get("sid"),
            path: r.get("path"),
            id: r.get("id"),
            cwd: r.get("cwd"),
            name: text(r, "name"),
            created: r.get("created"),
            parent_session: r.get("parent_session"),
            message_count: r.get("message_count"),
            last_activity_ms: r.get("last_activity_ms"),
            first_message: text(r, "first_message"),
            written_ns: r.get("written_ns"),
            last_seq: r.get("last_seq"),
            origin: r.get("origin"),
        })
    })?;
    Ok(out)
}

/// [`SESSION_COUNT`] on PostgreSQL (the sessions made on the server).
pub const PG_SESSION_COUNT: &str = "SELECT count(*) AS n FROM sessions WHERE origin = ''";

/// The joined texts of every session on PostgreSQL (SQLite: `LIST_TEXT_STORED_ALL`), exact up
/// to the last line.
pub const PG_LIST_TEXT_ALL: &str = concat!(
    "SELECT s.skey AS sid, s.last_seq, ",
    crate::store::postgres::all_text_of_s!(),
    " AS all_text FROM sessions s WHERE s.origin = ''"
);

/// [`LIST_TEXT_CACHED`] on PostgreSQL.
pub const PG_LIST_TEXT: &str = concat!(
    "SELECT s.last_seq, ",
    crate::store::postgres::all_text_of_s!(),
    " AS all_text FROM sessions s WHERE s.skey = $1"
);

/// The joined texts of sessions `$1` on PostgreSQL, in one round trip.
pub const PG_LIST_TEXTS_OF: &str = concat!(
    "SELECT s.skey, s.last_seq, ",
    crate::store::postgres::all_text_of_s!(),
    " AS all_text FROM sessions s WHERE s.skey = ANY($1)"
);

/// [`SESSIONS_IN_DIR_BY_RECENCY`] on PostgreSQL, among the sessions made on the server. Ties
/// go to the newest key, as SQLite's backward walk of `sessions_by_dir` gives them.
pub const PG_SESSIONS_IN_DIR_BY_RECENCY: &str =
    "SELECT skey, path, cwd FROM sessions WHERE origin = '' AND dir = $1 ORDER BY written_ns DESC, skey DESC";

/// [`MOST_RECENT_SESSION`] on PostgreSQL, among the sessions made on the server (as
/// continue-recent in a folder; ties to the newest key, as on SQLite).
pub const PG_MOST_RECENT_SESSION: &str =
    "SELECT skey, path FROM sessions WHERE origin = '' ORDER BY written_ns DESC, skey DESC LIMIT 1";

/// [`SESSIONS_WITH_ID_IN_DIR`] on PostgreSQL, among the sessions made on the server.
pub const PG_SESSIONS_WITH_ID_IN_DIR: &str =
    "SELECT path, cwd FROM sessions WHERE id = $1 AND origin = '' AND dir = $2 ORDER BY skey";

/// A PostgreSQL statement's [`SessionRef`]s. A server holds the sessions of every origin:
/// references find them all (a path or id on two origins is ambiguous), as `export` does.
fn pg_refs(pg: &Pg, sql: &'static str, params: PgParams<'_>) -> Result<Vec<SessionRef>> {
    Ok(pg
        .query(sql, params)?
        .iter()
        .map(|r| SessionRef { sid: r.get("sid"), id: r.get("id"), path: r.get("path"), origin: Some(r.get("origin")) })
        .collect())
}

/// [`SESSIONS_BY_ID`] on PostgreSQL (every origin).
pub const PG_SESSIONS_BY_ID: &str = "SELECT skey AS sid, id, path, origin FROM sessions WHERE id = $1 ORDER BY skey";

/// [`SESSIONS_BY_ID_PREFIX`] on PostgreSQL (every origin).
pub const PG_SESSIONS_BY_ID_PREFIX: &str =
    "SELECT skey AS sid, id, path, origin FROM sessions WHERE id >= $1 AND id < $2 ORDER BY id, skey LIMIT 50";

/// [`crate::store::sqlite::sessions::SESSION_REF_BY_PATH`] on PostgreSQL: one session per origin.
pub const PG_SESSIONS_AT_PATH: &str =
    "SELECT skey AS sid, id, path, origin FROM sessions WHERE path = $1 ORDER BY skey";

/// UTF-8 the server keeps as bytes (`bytea` holds NUL, which `text` cannot): checked first,
/// copied once; replaced lossily only when invalid.
fn utf8(b: &[u8]) -> String {
    match std::str::from_utf8(b) {
        Ok(s) => s.to_owned(),
        Err(_) => String::from_utf8_lossy(b).into_owned(),
    }
}

impl Discovery for Pg {
    fn infos_in_dir(&self, dir: &str, origins: Origins) -> Result<Vec<InfoRow>> {
        let sql = match origins {
            Origins::Own => PG_SESSION_INFOS_IN_DIR,
            Origins::Every => PG_SESSION_INFOS_IN_DIR_EVERY,
        };
        pg_infos(self, sql, &[&dir])
    }

    fn infos_all(&self, origins: Origins) -> Result<Vec<InfoRow>> {
        let sql = match origins {
            Origins::Own => PG_SESSION_INFOS_ALL,
            Origins::Every => PG_SESSION_INFOS_ALL_EVERY,
        };
        pg_infos(self, sql, &[])
    }

    fn info_by_sid(&self, sid: SessionKey) -> Result<Option<InfoRow>> {
        Ok(pg_infos(self, PG_SESSION_INFO_BY_SID, &[&sid])?.into_iter().next())
    }

    fn infos_under(&self, root: &str) -> Result<Vec<InfoRow>> {
        let (lo, hi) = (format!("{root}/"), format!("{root}0"));

        pg_infos(self, PG_SESSION_INFOS_UNDER, &[&lo, &hi])
    }

    fn infos_for_cwd(&self, cwd: &str, origins: Origins) -> Result<Vec<InfoRow>> {
        let sql = match origins {
            Origins::Own => PG_SESSION_INFOS_FOR_CWD,
            Origins::Every => PG_SESSION_INFOS_FOR_CWD_EVERY,
        };
        pg_infos(self, sql, &[&cwd])
    }

    fn session_count(&self) -> Result<i64> {
        Ok(self.query_opt(PG_SESSION_COUNT, &[])?.map_or(0, |r| r.get("n")))
    }

    fn each_list_text(&self, f: &mut dyn FnMut(SessionKey, i64, String)) -> Result<()> {
        for r in self.query(PG_LIST_TEXT_ALL, &[])? {
            f(r.get("sid"), r.get("last_seq"), utf8(r.get("all_text")));
        }
        Ok(())
    }

    fn list_text(&self, sid: SessionKey) -> Result<Option<(i64, String)>> {
        Ok(self.query_opt(PG_LIST_TEXT, &[&sid])?.map(|r| (r.get("last_seq"), utf8(r.get("all_text")))))
    }

    fn most_recent_in_dir(
        &self,
        dir: &str,
        pick: &mut dyn FnMut(Option<&str>) -> bool,
    ) -> Result<Option<(SessionKey, String)>> {
        for r in self.query(PG_SESSIONS_IN_DIR_BY_RECENCY, &[&dir])? {
            if pick(r.get("cwd")) {
                return Ok(Some((r.get("skey"), r.get("path"))));
            }
        }
        Ok(None)
    }

    fn most_recent(&self) -> Result<Option<(SessionKey, String)>> {
        Ok(self.query_opt(PG_MOST_RECENT_SESSION, &[])?.map(|r| (r.get("skey"), r.get("path"))))
    }

    fn path_with_id_in_dir(
        &self,
        id: &str,
        dir: &str,
        pick: &mut dyn FnMut(Option<&str>) -> bool,
    ) -> Result<Option<String>> {
        for r in self.query(PG_SESSIONS_WITH_ID_IN_DIR, &[&id, &dir])? {
            if pick(r.get("cwd")) {
                return Ok(Some(r.get("path")));
            }
        }
        Ok(None)
    }

    fn refs_by_id(&self, id: &str) -> Result<Vec<SessionRef>> {
        pg_refs(self, PG_SESSIONS_BY_ID, &[&id])
    }

    fn list_texts_of(&self, sids: &[SessionKey]) -> Result<Vec<Option<(i64, String)>>> {
        let at: std::collections::HashMap<SessionKey, usize> = sids.iter().enumerate().map(|(i, &s)| (s, i)).collect();
        let mut out = vec![None; sids.len()];
        self.each(PG_LIST_TEXTS_OF, &[&sids], |r| {
            if let Some(&i) = at.get(&r.get::<_, SessionKey>("skey")) {
                out[i] = Some((r.get("last_seq"), utf8(r.get("all_text"))));
            }
        })?;
        Ok(out)
    }

    fn refs_by_id_prefix(&self, prefix: &str) -> Result<Vec<SessionRef>> {
        let upper = format!("{prefix}\u{10FFFF}");

        pg_refs(self, PG_SESSIONS_BY_ID_PREFIX, &[&prefix, &upper])
    }

    fn refs_by_path(&self, path: &str) -> Result<Vec<SessionRef>> {
        pg_refs(self, PG_SESSIONS_AT_PATH, &[&path])
    }
}
