//! [`Discovery`] on SQLite: each statement beside the method that binds it (named
//! parameters) and reads its columns by name.

use crate::error::Result;
use crate::store::interface::discovery::{Discovery, InfoRow, ListTextCache, Origins, SessionRef};
use crate::store::keys::SessionKey;
use crate::store::sqlite::keys::SessionKeyList;
use crate::store::sqlite::{columns, Sqlite};
use rusqlite::{named_params, Connection, OptionalExtension, Row};

/// The columns an [`InfoRow`] is read from, by name.
const INFO_COLUMNS: [&str; 12] = [
    "sid",
    "path",
    "id",
    "cwd",
    "name",
    "created",
    "parent_session",
    "message_count",
    "last_activity_ms",
    "first_message",
    "written_ns",
    "last_seq",
];

macro_rules! info_select {
    ($where:literal) => {
        concat!(
            "SELECT sid, path, id, cwd, name, created, parent_session, message_count, last_activity_ms, ",
            "first_message, coalesce(file_mtime_ns, written_ns) AS written_ns, last_seq FROM sessions",
            $where
        )
    };
}

/// Reads a row whose [`INFO_COLUMNS`] are at `c` (see `handle::columns`).
fn info_row(r: &Row<'_>, c: &[usize; 12]) -> rusqlite::Result<InfoRow> {
    Ok(InfoRow {
        sid: r.get(c[0])?,
        path: r.get(c[1])?,
        id: r.get(c[2])?,
        cwd: r.get(c[3])?,
        name: r.get(c[4])?,
        created: r.get(c[5])?,
        parent_session: r.get(c[6])?,
        message_count: r.get(c[7])?,
        last_activity_ms: r.get(c[8])?,
        first_message: r.get(c[9])?,
        written_ns: r.get(c[10])?,
        last_seq: r.get(c[11])?,
        origin: String::new(),
    })
}

/// SessionInfo columns of the sessions in folder `:dir`.
pub const SESSION_INFOS_IN_DIR: &str = info_select!(" WHERE dir = :dir");

/// SessionInfo columns of every session.
pub const SESSION_INFOS_ALL: &str = info_select!("");

/// SessionInfo columns of sessions whose folder sorts in `[:lo, :hi)` (below one root).
pub const SESSION_INFOS_UNDER: &str = info_select!(" WHERE dir >= :lo AND dir < :hi");

/// SessionInfo columns of sessions with header cwd `:cwd`.
pub const SESSION_INFOS_FOR_CWD: &str = info_select!(" WHERE cwd = :cwd");

fn infos(db: &Connection, sql: &str, params: &[(&str, &dyn rusqlite::ToSql)]) -> Result<Vec<InfoRow>> {
    let mut st = db.prepare_cached(sql)?;
    let c = columns(&st, INFO_COLUMNS)?;
    let rows = st.query_map(params, |r| info_row(r, &c))?.collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// SessionInfo columns of session `:sid`.
pub const SESSION_INFO_BY_SID: &str = info_select!(" WHERE sid = :sid");

/// Number of sessions.
pub const SESSION_COUNT: &str = "SELECT count(*) AS n FROM sessions";

/// Every session's joined `allMessagesText` (for listing most of the sessions at once). Stored
/// as text (migration 20), read as it is: through `sessiondb_line`, each text would be copied
/// twice more (a listing reads tens of MB of them); a packed one (the migration's task cut
/// short) is unpacked.
pub const LIST_TEXT_STORED_ALL: &str = "SELECT sid, upto_seq, \
    CASE WHEN typeof(text) = 'text' THEN text ELSE sessiondb_line(text, text_dict) END AS text FROM list_texts";

/// The joined texts of the sessions whose keys are in the JSON array `:sids` (a folder's
/// sessions), each found by its key.
pub const LIST_TEXT_STORED_OF: &str = "SELECT l.sid, l.upto_seq, \
    CASE WHEN typeof(l.text) = 'text' THEN l.text ELSE sessiondb_line(l.text, l.text_dict) END AS text \
    FROM json_each(:sids) AS k JOIN list_texts l ON l.sid = k.value";

/// A session's joined `allMessagesText` and the line it is exact up to.
pub const LIST_TEXT_CACHED: &str =
    "SELECT upto_seq, sessiondb_line(text, text_dict) AS text FROM list_texts WHERE sid = :sid";

/// Sessions whose joined `allMessagesText` misses lines appended since (`index` folds them in).
pub const STALE_LIST_TEXTS: &str =
    "SELECT s.sid FROM sessions s JOIN list_texts l ON l.sid = s.sid WHERE l.upto_seq < s.last_seq";

/// A session's last line number.
pub const SESSION_LAST_SEQ: &str = "SELECT last_seq FROM sessions WHERE sid = :sid";

/// Stores a session's joined `allMessagesText`, exact up to line `:upto`.
pub const SAVE_LIST_TEXT: &str =
    "INSERT OR REPLACE INTO list_texts (sid, upto_seq, text, text_dict) VALUES (:sid, :upto, :text, :text_dict)";

/// Forgets a session's joined `allMessagesText` (it outgrew the limit).
pub const DROP_LIST_TEXT: &str = "DELETE FROM list_texts WHERE sid = :sid";

/// The user/assistant message texts of a session (keys `:lo..=:hi`) in file order (a copied
/// line's is its holder's: `text_parts`, V24).
pub const LIST_TEXTS: &str =
    "SELECT list_text FROM text_parts WHERE key BETWEEN :lo AND :hi AND list_text IS NOT NULL ORDER BY key";

/// Sessions whose file is in folder `:dir`, most recently written first (continue-recent).
pub const SESSIONS_IN_DIR_BY_RECENCY: &str =
    "SELECT sid, path, cwd FROM sessions WHERE dir = :dir ORDER BY written_ns DESC";

/// The session written last.
pub const MOST_RECENT_SESSION: &str = "SELECT sid, path FROM sessions ORDER BY written_ns DESC LIMIT 1";

/// Sessions with header id `:id` whose file is in folder `:dir` (find-by-id).
pub const SESSIONS_WITH_ID_IN_DIR: &str = "SELECT path, cwd FROM sessions WHERE id = :id AND dir = :dir ORDER BY sid";

fn refs(db: &Connection, sql: &str, params: &[(&str, &dyn rusqlite::ToSql)]) -> Result<Vec<SessionRef>> {
    let mut st = db.prepare_cached(sql)?;
    let rows = st
        .query_map(params, |r| {
            Ok(SessionRef { sid: r.get("sid")?, id: r.get("id")?, path: r.get("path")?, origin: None })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// Sessions whose header id is exactly `:id`.
pub const SESSIONS_BY_ID: &str = "SELECT sid, id, path FROM sessions WHERE id = :id ORDER BY sid";

/// Sessions whose header id starts with `:lo` (`:hi` is `:lo` followed by U+10FFFF): an index
/// range, not a scan.
pub const SESSIONS_BY_ID_PREFIX: &str =
    "SELECT sid, id, path FROM sessions WHERE id >= :lo AND id < :hi ORDER BY id LIMIT 50";

impl Discovery for Sqlite {
    // A SQLite database's sessions are all its own: `Origins` changes nothing here.
    fn infos_in_dir(&self, dir: &str, _: Origins) -> Result<Vec<InfoRow>> {
        let db = &self.conn;
        infos(db, SESSION_INFOS_IN_DIR, named_params! { ":dir": dir })
    }

    fn infos_all(&self, _: Origins) -> Result<Vec<InfoRow>> {
        let db = &self.conn;
        infos(db, SESSION_INFOS_ALL, &[])
    }

    fn info_by_sid(&self, sid: SessionKey) -> Result<Option<InfoRow>> {
        Ok(infos(&self.conn, SESSION_INFO_BY_SID, named_params! { ":sid": sid })?.into_iter().next())
    }

    fn infos_under(&self, root: &str) -> Result<Vec<InfoRow>> {
        let db = &self.conn;
        let (lo, hi) = (format!("{root}/"), format!("{root}0"));
        infos(db, SESSION_INFOS_UNDER, named_params! { ":lo": lo, ":hi": hi })
    }

    fn infos_for_cwd(&self, cwd: &str, _: Origins) -> Result<Vec<InfoRow>> {
        let db = &self.conn;
        infos(db, SESSION_INFOS_FOR_CWD, named_params! { ":cwd": cwd })
    }

    fn session_count(&self) -> Result<i64> {
        let db = &self.conn;
        Ok(db.prepare_cached(SESSION_COUNT)?.query_row([], |r| r.get("n"))?)
    }

    fn each_list_text(&self, f: &mut dyn FnMut(SessionKey, i64, String)) -> Result<()> {
        let mut st = self.conn.prepare_cached(LIST_TEXT_STORED_ALL)?;
        let rows = st.query([])?;
        each_stored_text(rows, f)
    }

    fn list_text(&self, sid: SessionKey) -> Result<Option<(i64, String)>> {
        let db = &self.conn;
        let mut st = db.prepare_cached(LIST_TEXT_CACHED)?;
        Ok(st.query_row(named_params! { ":sid": sid }, |r| Ok((r.get("upto_seq")?, r.get("text")?))).optional()?)
    }

    fn most_recent_in_dir(
        &self,
        dir: &str,
        pick: &mut dyn FnMut(Option<&str>) -> bool,
    ) -> Result<Option<(SessionKey, String)>> {
        let db = &self.conn;
        let mut st = db.prepare_cached(SESSIONS_IN_DIR_BY_RECENCY)?;
        let mut rows = st.query(named_params! { ":dir": dir })?;
        while let Some(r) = rows.next()? {
            let cwd: Option<String> = r.get("cwd")?;
            if pick(cwd.as_deref()) {
                return Ok(Some((r.get("sid")?, r.get("path")?)));
            }
        }
        Ok(None)
    }

    fn most_recent(&self) -> Result<Option<(SessionKey, String)>> {
        let db = &self.conn;
        let mut st = db.prepare_cached(MOST_RECENT_SESSION)?;
        Ok(st.query_row([], |r| Ok((r.get("sid")?, r.get("path")?))).optional()?)
    }

    fn path_with_id_in_dir(
        &self,
        id: &str,
        dir: &str,
        pick: &mut dyn FnMut(Option<&str>) -> bool,
    ) -> Result<Option<String>> {
        let db = &self.conn;
        let mut st = db.prepare_cached(SESSIONS_WITH_ID_IN_DIR)?;
        let mut rows = st.query(named_params! { ":id": id, ":dir": dir })?;
        while let Some(r) = rows.next()? {
            let cwd: Option<String> = r.get("cwd")?;
            if pick(cwd.as_deref()) {
                return Ok(Some(r.get("path")?));
            }
        }
        Ok(None)
    }

    fn refs_by_id(&self, id: &str) -> Result<Vec<SessionRef>> {
        let db = &self.conn;
        refs(db, SESSIONS_BY_ID, named_params! { ":id": id })
    }

    fn list_texts_of(&self, sids: &[SessionKey]) -> Result<Vec<Option<(i64, String)>>> {
        if sids.len() < FEW_TEXTS {
            return sids.iter().map(|&sid| self.list_text(sid)).collect();
        }
        let at: std::collections::HashMap<SessionKey, usize> = sids.iter().enumerate().map(|(i, &s)| (s, i)).collect();
        let mut cached = vec![None; sids.len()];
        let mut put = |sid, upto, text| {
            if let Some(&i) = at.get(&sid) {
                cached[i] = Some((upto, text));
            }
        };
        if (sids.len() as i64) * 2 < self.session_count()? {
            // A part of the sessions (a folder's): theirs only, each by its key.
            let mut st = self.conn.prepare_cached(LIST_TEXT_STORED_OF)?;
            let rows = st.query(named_params! { ":sids": SessionKeyList(sids) })?;
            each_stored_text(rows, &mut put)?;
        } else {
            self.each_list_text(&mut put)?;
        }
        Ok(cached)
    }

    fn refs_by_id_prefix(&self, prefix: &str) -> Result<Vec<SessionRef>> {
        let db = &self.conn;
        let upper = format!("{prefix}\u{10FFFF}");
        refs(db, SESSIONS_BY_ID_PREFIX, named_params! { ":lo": prefix, ":hi": upper })
    }

    fn refs_by_path(&self, path: &str) -> Result<Vec<SessionRef>> {
        let db = &self.conn;
        refs(db, crate::store::sqlite::sessions::SESSION_REF_BY_PATH, named_params! { ":path": path })
    }
}

/// Fewer joined texts than this are read one by one, each by its key.
const FEW_TEXTS: usize = 64;

/// Hands `f` the session key, `upto_seq` and text of each row of `rows` (columns `sid`,
/// `upto_seq`, `text`).
fn each_stored_text(mut rows: rusqlite::Rows<'_>, f: &mut dyn FnMut(SessionKey, i64, String)) -> Result<()> {
    while let Some(r) = rows.next()? {
        f(r.get("sid")?, r.get("upto_seq")?, r.get("text")?);
    }
    Ok(())
}

impl ListTextCache for Sqlite {
    fn stale_list_texts(&self) -> Result<Vec<SessionKey>> {
        let db = &self.conn;
        let mut st = db.prepare(STALE_LIST_TEXTS)?;
        let rows = st.query_map([], |r| r.get("sid"))?.collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }

    fn last_seq(&self, sid: SessionKey) -> Result<i64> {
        let db = &self.conn;
        Ok(db.prepare_cached(SESSION_LAST_SEQ)?.query_row(named_params! { ":sid": sid }, |r| r.get("last_seq"))?)
    }

    fn save_list_text(&self, sid: SessionKey, upto: i64, text: &str) -> Result<()> {
        // Kept as text, not packed: a listing reads every session's joined text, and unpacking
        // them doubled its time; they are a few percent of the database (docs/storage.md).
        let db = &self.conn;
        db.prepare_cached(SAVE_LIST_TEXT)?
            .execute(named_params! { ":sid": sid, ":upto": upto, ":text": text, ":text_dict": None::<i64> })?;
        Ok(())
    }

    fn drop_list_text(&self, sid: SessionKey) -> Result<()> {
        let db = &self.conn;
        db.prepare_cached(DROP_LIST_TEXT)?.execute(named_params! { ":sid": sid })?;
        Ok(())
    }

    fn append_list_texts(&self, sid: SessionKey, from_seq: i64, mut out: String) -> Result<String> {
        let db = &self.conn;
        let (lo, hi) = (sid.entry(from_seq), sid.range().1);
        let mut st = db.prepare_cached(LIST_TEXTS)?;
        let [text] = columns(&st, ["list_text"])?;
        let mut rows = st.query(named_params! { ":lo": lo, ":hi": hi })?;
        while let Some(r) = rows.next()? {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(r.get_ref(text)?.as_str().unwrap_or_default());
        }
        Ok(out)
    }
}
