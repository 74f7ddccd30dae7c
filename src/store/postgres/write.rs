//! [`Writes`] on PostgreSQL: a session made on the server (origin `''`), and appends of one
//! conditional statement (one round trip) or, inside a transaction, with the session's row
//! locked first.

use crate::error::Result;
use crate::store::derive::{Derived, EntryFields};
use crate::store::interface::write::{
    entry_key, now_ns, place_appended, scan, AppendRow, AppendState, Appended, LineWriter, NewSession, ParsedLine,
    SharedLine, StoredStats, Writes,
};
use crate::store::keys::{EntryKey, SessionKey};
use crate::store::postgres::{pg_text, Pg, PgParams};
use crate::store::stats::{Observation, SessionStats};

/// [`INSERT_SESSION`] on PostgreSQL: a session made on the server (origin `''`), whose
/// derived entry columns are exact (`tree_ok`).
pub const PG_INSERT_SESSION: &str = "INSERT INTO sessions (origin, path, id, dir, rel_path, cwd, created, \
        parent_session, header, file_mtime_ns, written_ns, message_count, entry_count, last_seq, all_text, \
        lines_hash, local_sid, tree_ok) \
    VALUES ('', $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 0, 0, 0, ''::bytea, 0, 0, true) RETURNING skey";

/// [`COPY_ENTRIES`] on PostgreSQL: every line of session `$1` copied into session `$2`, the
/// keys in its derived columns moved to the copy's range.
pub const PG_COPY_ENTRIES: &str = "INSERT INTO entries (session, seq, id, parent_id, type, ts, body, role, ts_ms, \
        parent_key, depth, compaction_key, thinking_key, model_key, list_text) \
    SELECT $2::bigint, seq, id, parent_id, type, ts, body, role, ts_ms, parent_key + (($2::bigint - $1::bigint) << 32), \
        depth, compaction_key + (($2::bigint - $1::bigint) << 32), thinking_key + (($2::bigint - $1::bigint) << 32), \
        model_key + (($2::bigint - $1::bigint) << 32), list_text \
    FROM entries WHERE session = $1::bigint ORDER BY seq";

/// [`COPY_SESSION_STATS`] on PostgreSQL (with the joined message text).
pub const PG_COPY_SESSION_STATS: &str = "UPDATE sessions SET (name, message_count, first_message, last_activity_ms, \
        entry_count, last_seq, tree_ok, all_text, has_text, text_seq) = \
    (SELECT name, message_count, first_message, last_activity_ms, entry_count, last_seq, tree_ok, all_text, has_text, \
        text_seq FROM sessions WHERE skey = $1) WHERE skey = $2";

/// [`SESSION_STATS`] on PostgreSQL, with what an append checks and folds (`written_ns`,
/// `text_seq`).
pub const PG_SESSION_STATS: &str = "SELECT name, message_count, first_message, last_activity_ms, entry_count, \
    last_seq, tree_ok, written_ns, text_seq FROM sessions WHERE skey = $1";

/// [`PG_SESSION_STATS`], locking the session's row until the transaction ends: the appends of
/// two writers of one session take turns, each after the other's last line.
pub const PG_SESSION_STATS_FOR_UPDATE: &str = "SELECT name, message_count, first_message, last_activity_ms, \
    entry_count, last_seq, tree_ok, written_ns, text_seq FROM sessions WHERE skey = $1 FOR UPDATE";

fn pg_session_row(pg: &Pg, sql: &'static str, sid: SessionKey) -> Result<AppendRow> {
    let text =
        |r: &postgres::Row, c: &str| r.get::<_, Option<&[u8]>>(c).map(|b| String::from_utf8_lossy(b).into_owned());
    let r = pg
        .query_opt(sql, &[&sid])?
        .ok_or_else(|| crate::error::Error::NotFound(format!("no session with internal key {sid}")))?;
    Ok(AppendRow {
        stored: StoredStats {
            stats: SessionStats {
                name: text(&r, "name"),
                message_count: r.get("message_count"),
                first_message: text(&r, "first_message"),
                last_activity_ms: r.get("last_activity_ms"),
                entry_count: r.get("entry_count"),
            },
            last_seq: r.get("last_seq"),
            tree_ok: r.get("tree_ok"),
        },
        written_ns: r.get("written_ns"),
        text_seq: r.get("text_seq"),
    })
}

/// Appends one line and updates its session's row in one statement, on condition that the
/// session still ends at line `$2 - 1` with the write time `$23` (nobody else wrote since it
/// was read) and, when `$24`, that no entry of the session has the line's id: outside a
/// transaction this is the whole append, one round trip committed by itself. When the
/// condition fails nothing is written. The line's message text goes into `list_text`, not
/// into the session's joined `all_text`: rewriting that on every append made an append's cost
/// grow with the session (1.1 ms after 2,000 appends of 1 KiB).
pub const PG_APPEND_AT: &str = "WITH s AS ( \
        UPDATE sessions SET name = $15, message_count = $16, first_message = $17, last_activity_ms = $18, \
            entry_count = $19, last_seq = $2::bigint, written_ns = $20, tree_ok = tree_ok AND NOT $22::boolean \
        WHERE skey = $1::bigint AND last_seq = $2::bigint - 1 AND written_ns = $23::bigint \
            AND (NOT $24::boolean OR NOT EXISTS (SELECT 1 FROM entries WHERE session = $1::bigint AND id = $3::text)) \
        RETURNING skey) \
    INSERT INTO entries (session, seq, id, parent_id, type, ts, body, role, ts_ms, parent_key, depth, \
        compaction_key, thinking_key, model_key, list_text) \
    SELECT skey, $2::bigint, $3::text, $4::text, $5::text, $6::text, $7::bytea, $8::text, $9::bigint, $10::bigint, \
        $11::bigint, $12::bigint, $13::bigint, $14::bigint, $21::bytea FROM s";

/// Whether session `$1` has an entry with id `$2` (why a checked append wrote nothing).
pub const PG_ID_TAKEN: &str = "SELECT EXISTS (SELECT 1 FROM entries WHERE session = $1 AND id = $2) AS taken";

/// Joins the message texts of lines after `text_seq` up to `$2` onto the session's `all_text`
/// (pi's `allMessagesText`, space-joined), so that reading it never gathers more than
/// [`PG_FOLD_EVERY`] lines' texts.
pub const PG_FOLD_TEXT: &str = "UPDATE sessions s SET \
        all_text = CASE WHEN p.t IS NULL THEN s.all_text WHEN s.has_text THEN s.all_text || '\\x20'::bytea || p.t \
            ELSE p.t END, \
        has_text = s.has_text OR p.t IS NOT NULL, text_seq = $2::bigint \
    FROM (SELECT string_agg(e.list_text, '\\x20'::bytea ORDER BY e.seq) AS t FROM entries e \
          WHERE e.session = $1::bigint AND e.seq > (SELECT text_seq FROM sessions WHERE skey = $1::bigint) \
            AND e.seq <= $2::bigint AND e.list_text IS NOT NULL) p \
    WHERE s.skey = $1::bigint AND s.text_seq < $2::bigint";

/// Lines whose texts an append leaves in `entries.list_text` before it folds them.
const PG_FOLD_EVERY: i64 = 256;

/// Appends that found another writer's line in their place, at most, before giving up.
const PG_APPEND_TRIES: usize = 1000;

/// [`append_entry`] on PostgreSQL. Without `parent`, the parent named by the line is looked
/// up. Inside a transaction the session's row is locked first (`FOR UPDATE`), so the writers
/// of one session take turns; outside one, [`PG_APPEND_AT`] appends and commits in one round
/// trip, trying again after a concurrent append to the same session.
fn pg_append_entry(
    pg: &Pg,
    sid: SessionKey,
    text: &str,
    mut parent: Option<(EntryKey, Derived)>,
    state: &mut AppendState,
    check_id: bool,
) -> Result<Appended> {
    let obj = scan(text).ok_or_else(|| crate::error::Error::InvalidArgument("entry is not a JSON object".into()))?;
    let ParsedLine { fields: f, extras, seen, .. } = ParsedLine::of(&obj);
    let body = pg_text(text);
    let list_text = extras.list_text();
    let locked = pg.in_transaction();
    for attempt in 0..PG_APPEND_TRIES {
        if attempt > 0 || parent.is_none() {
            // The caller's parent may have come from `state`, which another writer made stale.
            parent = match f.parent_id.as_deref() {
                Some(pid) => pg.entry_node(sid, pid)?,
                None => None,
            };
        }
        let row = match state.known.take() {
            Some((s, row)) if s == sid && !locked => row,
            _ => pg_session_row(pg, if locked { PG_SESSION_STATS_FOR_UPDATE } else { PG_SESSION_STATS }, sid)?,
        };
        let AppendRow { stored: StoredStats { mut stats, last_seq, tree_ok: regular }, written_ns, text_seq } = row;
        let seq = last_seq + 1;
        let key = entry_key(sid, seq);
        let (d, tree) = place_appended(key, &f, parent, regular);
        stats.apply(&seen, list_text);
        let bytes = |t: &Option<String>| t.as_ref().map(|t| t.as_bytes().to_vec());
        let irregular = tree.is_irregular() && regular;
        let now = now_ns();
        let written = pg.execute(
            PG_APPEND_AT,
            &[
                &sid,
                &seq,
                &f.id,
                &f.parent_id,
                &f.kind,
                &f.ts,
                &body.as_bytes(),
                &f.role,
                &f.ts_ms,
                &d.parent_key,
                &d.depth,
                &d.compaction_key,
                &d.thinking_key,
                &d.model_key,
                &bytes(&stats.name),
                &stats.message_count,
                &bytes(&stats.first_message),
                &stats.last_activity_ms,
                &stats.entry_count,
                &now,
                &list_text.map(str::as_bytes),
                &irregular,
                &written_ns,
                &check_id,
            ],
        )?;
        if written == 1 {
            let mut text_seq = text_seq;
            if seq - text_seq >= PG_FOLD_EVERY {
                pg.execute(PG_FOLD_TEXT, &[&sid, &seq])?;
                text_seq = seq;
            }
            let stored = StoredStats { stats, last_seq: seq, tree_ok: regular && !irregular };
            state.known = Some((sid, AppendRow { stored, written_ns: now, text_seq }));
            state.last = f.id.clone().map(|id| (sid, id, key, d));
            return Ok(Appended::Key(key));
        }
        state.last = None;
        if check_id && f.id.is_some() {
            let taken = pg.query_opt(PG_ID_TAKEN, &[&sid, &f.id])?.is_some_and(|r| r.get::<_, bool>("taken"));
            if taken {
                return Ok(Appended::IdTaken);
            }
        }
        if locked {
            break; // the row is locked: nobody else can have moved it
        }
    }
    Err(crate::error::Error::database(
        pg.name(),
        format!("could not append to session {sid}: its last line kept moving (concurrent writers)"),
    ))
}

/// [`ENTRY_NODE`] on PostgreSQL.
pub const PG_ENTRY_NODE: &str = "SELECT (session << 32) | seq AS key, parent_key, depth, compaction_key, \
    thinking_key, model_key FROM entries \
    WHERE session = $1 AND id = $2 AND type IS DISTINCT FROM 'session' ORDER BY seq DESC LIMIT 1";

/// [`BRANCH_SOURCE_ROWS`] on PostgreSQL (without the list text: the server's writer reads
/// the lines again).
pub const PG_BRANCH_SOURCE_ROWS: &str = "SELECT (session << 32) | seq AS key, id, parent_id, type, ts, ts_ms, role, \
        body, parent_key, depth, compaction_key, thinking_key, model_key \
    FROM entries WHERE session = $1 AND seq BETWEEN $2 AND $3 ORDER BY seq";

fn pg_branch_source_rows(pg: &Pg, keys: &[EntryKey]) -> Result<Vec<(SharedLine, Option<String>)>> {
    let mut out = Vec::with_capacity(keys.len());
    let mut rest = keys;
    while let Some(&lo) = rest.first() {
        let len = rest.windows(2).take_while(|w| w[1] == w[0] + 1).count() + 1;
        let (sid, seq) = lo.parts();
        for r in pg.query(PG_BRANCH_SOURCE_ROWS, &[&sid, &seq, &(seq + len as i64 - 1)])? {
            let line = SharedLine {
                key: r.get("key"),
                fields: EntryFields {
                    id: r.get("id"),
                    parent_id: r.get("parent_id"),
                    kind: r.get("type"),
                    ts: r.get("ts"),
                    ts_ms: r.get("ts_ms"),
                    role: r.get("role"),
                },
                derived: Derived {
                    parent_key: r.get("parent_key"),
                    depth: r.get("depth"),
                    compaction_key: r.get("compaction_key"),
                    thinking_key: r.get("thinking_key"),
                    model_key: r.get("model_key"),
                },
                list_text: None,
                // Not noted on the server: every line is read.
                plain: None,
            };
            out.push((line, Some(String::from_utf8_lossy(r.get::<_, &[u8]>("body")).into_owned())));
        }
        rest = &rest[len..];
    }
    Ok(out)
}

/// [`LineWriter`] on PostgreSQL: one append per line, each finding its parent (the server has
/// no bulk entry writer yet).
struct Appends<'t> {
    pg: &'t Pg,
    sid: SessionKey,
}

impl LineWriter for Appends<'_> {
    fn write_parsed(&mut self, text: &str, _line: ParsedLine) -> Result<()> {
        self.pg.append_entry(self.sid, text, None).map(drop)
    }

    fn share(&mut self, _src: &SharedLine, text: Option<&str>, _seen: &Observation) -> Result<()> {
        // Lines are left unread only where the store noted them plain, which the server does not.
        let text = text.ok_or_else(|| crate::error::Error::InvalidArgument("a shared line was not read".into()))?;
        self.pg.append_entry(self.sid, text, None).map(drop)
    }

    fn finish(self: Box<Self>) -> Result<SessionStats> {
        Ok(self.pg.load_stats(self.sid)?.stats)
    }
}

impl Writes for Pg {
    fn line_packer(&self) -> Result<Option<crate::store::codec::Packer>> {
        // The server compresses its text itself (lz4 TOAST, migration V3).
        Ok(None)
    }

    fn line_writer<'a>(&'a self, sid: SessionKey) -> Result<Box<dyn LineWriter + 'a>> {
        Ok(Box::new(Appends { pg: self, sid }))
    }

    /// [`PG_APPEND_AT`] checks that the id is free (saving a round trip).
    fn append_checks_id(&self) -> bool {
        true
    }

    fn insert_session(&self, n: &NewSession<'_>) -> Result<SessionKey> {
        let s = |k: &str| n.header_str(k);
        let dir = n.dir();

        let path = n.path.to_string_lossy();
        let id = s("id").unwrap_or_default();
        let header = pg_text(n.header_line);
        let mtime = n.file.map(|f| f.mtime_ns);
        let params: PgParams<'_> = &[
            &path.as_ref(),
            &id,
            &dir,
            &n.rel_path,
            &s("cwd"),
            &s("timestamp"),
            &s("parentSession"),
            &header.as_bytes(),
            &mtime,
            &n.written_ns,
        ];
        let row = self.query_opt(PG_INSERT_SESSION, params)?;
        row.map(|r| r.get("skey")).ok_or_else(|| crate::error::Error::NotFound("the new session has no key".into()))
    }

    fn copy_session(&self, source: SessionKey, copy: SessionKey) -> Result<()> {
        self.execute(PG_COPY_ENTRIES, &[&source, &copy])?;
        self.execute(PG_COPY_SESSION_STATS, &[&source, &copy])?;
        Ok(())
    }

    fn append_new_entry(
        &self,
        sid: SessionKey,
        text: &str,
        parent: Option<(EntryKey, Derived)>,
        state: &mut AppendState,
    ) -> Result<Appended> {
        pg_append_entry(self, sid, text, parent, state, true)
    }

    fn load_stats(&self, sid: SessionKey) -> Result<StoredStats> {
        pg_session_row(self, PG_SESSION_STATS, sid).map(|r| r.stored)
    }

    fn append_entry(&self, sid: SessionKey, text: &str, parent: Option<(EntryKey, Derived)>) -> Result<EntryKey> {
        match pg_append_entry(self, sid, text, parent, &mut AppendState::default(), false)? {
            Appended::Key(key) => Ok(key),
            // A server's append reaches its tables at once: never `Pending`.
            Appended::IdTaken | Appended::Pending => {
                Err(crate::error::Error::InvalidArgument("entry id already in the session".into()))
            }
        }
    }

    fn entry_node(&self, sid: SessionKey, id: &str) -> Result<Option<(EntryKey, Derived)>> {
        Ok(self.query_opt(PG_ENTRY_NODE, &[&sid, &id])?.map(|r| {
            let derived = Derived {
                parent_key: r.get("parent_key"),
                depth: r.get("depth"),
                compaction_key: r.get("compaction_key"),
                thinking_key: r.get("thinking_key"),
                model_key: r.get("model_key"),
            };
            (r.get("key"), derived)
        }))
    }

    fn branch_source_rows(&self, keys: &[EntryKey], _every_line: bool) -> Result<Vec<(SharedLine, Option<String>)>> {
        pg_branch_source_rows(self, keys)
    }
}
