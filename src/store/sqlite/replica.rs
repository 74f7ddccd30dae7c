//! [`Replica`] on SQLite: a SQLite file is pushed from, never to (it has no `Receiver` role).

use crate::error::{Error, Result};
use crate::store::derive::Derived;
use crate::store::interface::replica::{LocalLine, LocalSession, Replica};
use crate::store::keys::SessionKey;
use crate::store::sqlite::Sqlite;
use rusqlite::named_params;

/// What `push` sends of a session row.
pub const LOCAL_SESSIONS: &str = "SELECT sid, path, id, dir, rel_path, cwd, created, parent_session, header, \
    file_mtime_ns, written_ns, name, message_count, first_message, last_activity_ms, entry_count, last_seq, tree_ok \
    FROM sessions ORDER BY sid";

/// Lines of a session between two keys, in file order (shared lines resolved).
pub const LOCAL_LINES: &str =
    "SELECT seq, id, parent_id, type, ts, body, role, ts_ms, parent_key, depth, compaction_key, thinking_key, \
        model_key FROM entry_lines WHERE key BETWEEN :lo AND :hi ORDER BY key";

fn text(v: rusqlite::types::ValueRef<'_>) -> Result<Option<&str>> {
    v.as_str_or_null().map_err(|e| Error::from(rusqlite::Error::from(e)))
}

/// The list texts of a session's lines, in file order (a copied line's is its holder's:
/// `text_parts`, V24).
pub const LIST_TEXTS: &str =
    "SELECT list_text FROM text_parts WHERE key BETWEEN :lo AND :hi AND list_text IS NOT NULL ORDER BY key";

impl Replica for Sqlite {
    fn local_sessions(&self) -> Result<Vec<LocalSession>> {
        let db = &self.conn;
        let mut st = db.prepare(LOCAL_SESSIONS)?;
        let rows = st.query_map([], |r| {
            Ok(LocalSession {
                sid: r.get("sid")?,
                path: r.get("path")?,
                id: r.get("id")?,
                dir: r.get("dir")?,
                rel_path: r.get("rel_path")?,
                cwd: r.get("cwd")?,
                created: r.get("created")?,
                parent_session: r.get("parent_session")?,
                header: r.get("header")?,
                file_mtime_ns: r.get("file_mtime_ns")?,
                written_ns: r.get("written_ns")?,
                name: r.get("name")?,
                message_count: r.get("message_count")?,
                first_message: r.get("first_message")?,
                last_activity_ms: r.get("last_activity_ms")?,
                entry_count: r.get("entry_count")?,
                last_seq: r.get("last_seq")?,
                tree_ok: r.get::<_, i64>("tree_ok")? != 0,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn local_lines(
        &self,
        sid: SessionKey,
        from: i64,
        to: i64,
        f: &mut dyn FnMut(LocalLine<'_>) -> Result<()>,
    ) -> Result<()> {
        let db = &self.conn;
        if from > to {
            return Ok(());
        }
        let mut st = db.prepare_cached(LOCAL_LINES)?;
        let mut rows = st.query(named_params! { ":lo": sid.entry(from), ":hi": sid.entry(to) })?;
        while let Some(r) = rows.next()? {
            let body = r.get_ref("body")?.as_str().map_err(|e| Error::from(rusqlite::Error::from(e)))?;
            f(LocalLine {
                seq: r.get("seq")?,
                id: text(r.get_ref("id")?)?,
                parent_id: text(r.get_ref("parent_id")?)?,
                kind: text(r.get_ref("type")?)?,
                ts: text(r.get_ref("ts")?)?,
                body,
                role: text(r.get_ref("role")?)?,
                ts_ms: r.get("ts_ms")?,
                derived: Derived {
                    parent_key: r.get("parent_key")?,
                    depth: r.get("depth")?,
                    compaction_key: r.get("compaction_key")?,
                    thinking_key: r.get("thinking_key")?,
                    model_key: r.get("model_key")?,
                },
            })?;
        }
        Ok(())
    }

    fn local_all_messages_text(&self, sid: SessionKey) -> Result<String> {
        let db = &self.conn;
        let (lo, hi) = sid.range();
        let mut st = db.prepare_cached(LIST_TEXTS)?;
        let mut rows = st.query(named_params! { ":lo": lo, ":hi": hi })?;
        let mut out = String::new();
        while let Some(r) = rows.next()? {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(r.get_ref("list_text")?.as_str().unwrap_or_default());
        }
        Ok(out)
    }
}
