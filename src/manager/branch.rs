//! pi's `createBranchedSession` lines: the root→leaf path of a session without its label
//! entries (re-chained), a compaction's `firstKeptEntryId` moved off a dropped label, then
//! the labels of kept entries re-emitted. Lines that do not change are handed on as shared
//! with their source row, so that a session in the same database can copy rows instead of
//! reading and writing lines; lines the store noted as plain when they were written are
//! handed on unread.

use crate::error::Result;
use crate::js::canonical;
use crate::js::json::{self, Value};
use crate::pi::entries as build;
use crate::pi::ids;
use crate::store::handle::Db;
use crate::store::interface::write::{SharedLine, COPY_SLICE};
use crate::store::keys::EntryKey;
use indexmap::IndexMap;
use std::collections::{HashMap, HashSet};

/// One entry line of a new session.
pub enum Line<'a> {
    /// A line to store as it is.
    Text(&'a str),
    /// A line that a row of the same database holds exactly (`.1` is that line, `None` when it
    /// was not read: the row's [`SharedLine::plain`] says what it adds to the statistics).
    Shared(&'a SharedLine, Option<&'a str>),
}

/// Takes the entry lines of a new session in order.
pub type LineSink<'a> = dyn FnMut(Line<'_>) -> Result<()> + 'a;

/// The line of `row`: `body` when it was read, else read now.
fn line_of(src: &Db, row: &SharedLine, body: Option<String>) -> Result<String> {
    match body {
        Some(body) => Ok(body),
        None => src
            .store()
            .entry_by_key(row.key)?
            .map(|r| r.body)
            .ok_or_else(|| crate::error::Error::NotFound(format!("entry {} of the branched path is gone", row.key))),
    }
}

/// What walking the path has kept so far.
#[derive(Default)]
struct Walk {
    /// Ids of the entries kept.
    kept: HashSet<String>,
    /// Dropped label id → the entry that follows it (a compaction's new `firstKeptEntryId`).
    replacement: HashMap<String, String>,
    /// Labels dropped since the last kept entry.
    pending: Vec<String>,
    /// Id of the last kept entry.
    parent: Option<String>,
}

impl Walk {
    /// Keeps an entry whose line stays as `row` holds it.
    fn keep_as_is(&mut self, row: &SharedLine) {
        self.kept.extend(row.fields.id.clone());
        self.parent.clone_from(&row.fields.id);
    }

    /// Takes the line `body` of `row` as pi does: a label is dropped, any other entry is
    /// re-chained to the last kept one (and a compaction's `firstKeptEntryId` moved off a
    /// dropped label), then written as JSON.stringify writes it.
    fn rewrite(&mut self, row: &SharedLine, body: &str, share: bool, sink: &mut LineSink<'_>) -> Result<()> {
        let Value::Object(mut o) = json::parse_or_raw(body).unwrap_or(Value::Null) else { return Ok(()) };
        let eid = o.get("id").and_then(Value::as_str).map(str::to_owned);
        if o.get("type").and_then(Value::as_str) == Some("label") {
            self.pending.extend(eid);
            return Ok(());
        }
        for l in self.pending.drain(..) {
            self.replacement.insert(l, eid.clone().unwrap_or_default());
        }
        o.set("parentId", self.parent.as_deref().map_or(Value::Null, build::s));
        if o.get("type").and_then(Value::as_str) == Some("compaction") {
            if let Some(Value::String(fk)) = o.get("firstKeptEntryId") {
                let fk = fk.to_str().into_owned();
                if Some(fk.as_str()) != eid.as_deref() {
                    if let Some(r) = self.replacement.get(&fk) {
                        o.set("firstKeptEntryId", build::s(r));
                    }
                }
            }
        }
        let line = Value::Object(o).to_json();
        if share && line == body {
            sink(Line::Shared(row, Some(body)))?;
        } else {
            sink(Line::Text(&line))?;
        }
        self.kept.extend(eid.clone());
        self.parent = eid;
        Ok(())
    }
}

/// Hands the branched session's lines for the path `keys` (root first) of the session in
/// `src` to `sink`, with the labels of kept entries (from `labels`) last. With `share`, lines
/// that stay as the source row holds them are handed on as [`Line::Shared`].
pub fn branch_lines(
    src: &Db,
    keys: &[EntryKey],
    labels: &IndexMap<String, (Value, Option<Value>)>,
    share: bool,
    sink: &mut LineSink<'_>,
) -> Result<()> {
    let mut walk = Walk::default();
    // In slices: a long path is never held in memory.
    for slice in keys.chunks(COPY_SLICE as usize) {
        // Without sharing, every line is rewritten: read them all.
        for (row, body) in src.store().branch_source_rows(slice, !share)? {
            let f = &row.fields;
            // Most lines keep their parent and are already what JSON.stringify writes: shared
            // as they are, without parsing and writing them again (labels and compactions,
            // whose fields may change, and the line after dropped labels take the slow path).
            // A line the store noted as plain when it was written is not even read: unpacking
            // and checking every line was most of a long path's time.
            let as_is = share
                && walk.parent.is_some()
                && f.parent_id == walk.parent
                && walk.pending.is_empty()
                && !matches!(f.kind.as_deref(), Some("label" | "compaction" | "session"));
            if as_is && body.is_none() && row.plain.is_some_and(|p| p.observation(f).is_some()) {
                sink(Line::Shared(&row, None))?;
                walk.keep_as_is(&row);
                continue;
            }
            // A label is dropped: a plain one by its columns (a plain line repeats no key).
            if body.is_none() && row.plain.is_some() && f.kind.as_deref() == Some("label") {
                walk.pending.extend(f.id.clone());
                continue;
            }
            let body = line_of(src, &row, body)?;
            if as_is && (row.plain.is_some() || (body.starts_with('{') && canonical::is_stringify_form(&body))) {
                sink(Line::Shared(&row, Some(&body)))?;
                walk.keep_as_is(&row);
                continue;
            }
            walk.rewrite(&row, &body, share, sink)?;
        }
    }
    let Walk { kept, parent, .. } = walk;
    let mut taken = kept.clone();
    let mut label_parent = parent;
    for (target, (label, label_ts)) in labels {
        if !kept.contains(target.as_str()) {
            continue;
        }
        let lid = ids::new_entry_id(|c| taken.contains(c));
        taken.insert(lid.clone());
        let ts_value = label_ts.clone().unwrap_or(Value::Null);
        let mut e = build::label(&lid, label_parent.as_deref(), &ts_value, target, Some(label.clone()));
        if label_ts.is_none() {
            e.remove("timestamp");
        }
        sink(Line::Text(&Value::Object(e).to_json()))?;
        label_parent = Some(lid);
    }
    Ok(())
}
