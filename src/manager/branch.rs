//! pi's `createBranchedSession` lines: the root→leaf path of a session without its label
//! entries (re-chained), a compaction's `firstKeptEntryId` moved off a dropped label, then
//! the labels of kept entries re-emitted. Lines that do not change are handed on as shared
//! with their source row, so that a session in the same database can copy rows instead of
//! reading and writing lines.

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
    /// A line that a row of the same database holds exactly (`.1` is that line).
    Shared(&'a SharedLine, &'a str),
}

/// Takes the entry lines of a new session in order.
pub type LineSink<'a> = dyn FnMut(Line<'_>) -> Result<()> + 'a;

/// A path row of the source session: its columns and its line.
struct SourceRow {
    line: SharedLine,
    body: String,
}

/// The rows stored under `keys` (absent keys skipped), in that order.
fn read_rows(src: &Db, keys: &[EntryKey]) -> Result<Vec<SourceRow>> {
    Ok(src.store().branch_source_rows(keys)?.into_iter().map(|(line, body)| SourceRow { line, body }).collect())
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
    let mut kept: HashSet<String> = HashSet::new();
    let mut replacement: HashMap<String, String> = HashMap::new();
    let mut pending: Vec<String> = Vec::new();
    let mut parent: Option<String> = None;
    // In slices: a long path is never held in memory.
    for slice in keys.chunks(COPY_SLICE as usize) {
        for row in read_rows(src, slice)? {
            let f = &row.line.fields;
            // Most lines keep their parent and are already what JSON.stringify writes: shared
            // as they are, without parsing and writing them again (labels and compactions,
            // whose fields may change, and the line after dropped labels take the slow path).
            if share
                && parent.is_some()
                && f.parent_id == parent
                && pending.is_empty()
                && !matches!(f.kind.as_deref(), Some("label" | "compaction" | "session"))
                && row.body.starts_with('{')
                && canonical::is_stringify_form(&row.body)
            {
                sink(Line::Shared(&row.line, &row.body))?;
                kept.extend(f.id.clone());
                parent.clone_from(&f.id);
                continue;
            }
            let Value::Object(mut o) = json::parse_or_raw(&row.body).unwrap_or(Value::Null) else { continue };
            let eid = o.get("id").and_then(Value::as_str).map(str::to_owned);
            if o.get("type").and_then(Value::as_str) == Some("label") {
                pending.extend(eid);
                continue;
            }
            for l in pending.drain(..) {
                replacement.insert(l, eid.clone().unwrap_or_default());
            }
            o.set("parentId", parent.as_deref().map_or(Value::Null, build::s));
            if o.get("type").and_then(Value::as_str) == Some("compaction") {
                if let Some(Value::String(fk)) = o.get("firstKeptEntryId") {
                    let fk = fk.to_str().into_owned();
                    if Some(fk.as_str()) != eid.as_deref() {
                        if let Some(r) = replacement.get(&fk) {
                            o.set("firstKeptEntryId", build::s(r));
                        }
                    }
                }
            }
            let line = Value::Object(o).to_json();
            if share && line == row.body {
                sink(Line::Shared(&row.line, &row.body))?;
            } else {
                sink(Line::Text(&line))?;
            }
            kept.extend(eid.clone());
            parent = eid;
        }
    }
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
