//! Reads by storage key, for hosts that parse a large session lazily: the keys of a branch
//! (keys, ids and types: no line read), then the lines of the few keys a caller looks at.

use super::SessionManager;
use crate::error::Result;
use crate::hash::{FxBuildHasher, FxHashMap};
use crate::js::json::{self, Value};
use crate::pi::tree_row;
use crate::read::tree::PathStep;
use crate::store::interface::links::Links;
use crate::store::interface::usage::EntryUsages;
use crate::store::keys::EntryKey;

/// A session's tree without its lines: links in file order, the times pi's sort compares, and
/// pi's labels (target id, label, the label entry's timestamp) in the order they were set.
#[derive(Debug, Clone)]
pub struct TreeLinks {
    /// Every entry, in file order (header lines excluded).
    pub links: Links,
    /// For each of `links`: `new Date(timestamp).getTime()` (inner `None` for NaN), read only
    /// for an entry with a sibling or a parentId that is not a string; `None` when not read.
    pub times: Vec<Option<Option<i64>>>,
    /// pi's `labelsById` and `labelTimestampsById`.
    pub labels: Vec<(String, Value, Option<Value>)>,
}

/// The JSON texts of an entry's `usage` and of its `message.usage`, where present.
pub type RawUsages<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);

impl SessionManager {
    /// The storage keys, ids and types of pi's `getBranch(from)` (default: from the leaf),
    /// root first; empty for an unknown id. No line is read.
    /// With `limit`, only the last `limit` steps of that path (the ones nearest `from`), for
    /// a host that holds the path to an earlier entry already.
    pub fn branch_steps(&self, from: Option<&str>, limit: Option<i64>) -> Result<Vec<PathStep>> {
        let Some(id) = from.or(self.leaf.as_deref()) else { return Ok(Vec::new()) };
        let Some(limit) = limit else {
            let tree = self.tree()?;
            if tree.is_regular() {
                return Ok(walk_links(&self.db()?.store().links(self.sid)?, id));
            }
            return tree.branch_keys(id);
        };
        let db = self.db()?;
        let Some((key, _)) = db.store().entry_node(self.sid, id)? else { return Ok(Vec::new()) };
        let mut steps = db.store().walk_up_steps(key, limit)?;
        steps.reverse();
        Ok(steps)
    }

    /// Every entry's steps in file order (as [`Self::entry_steps`] of all) and pi's
    /// `getBranch(from)` as indexes into them, root first, from one read of the links: a host
    /// resuming a long session asks for both (pi's TUI: the branch at start, every entry for
    /// its footer), and each read every link. `None` when the tree's derived columns cannot be
    /// trusted (the host asks for the branch alone).
    pub fn entries_and_path(&self, from: Option<&str>) -> Result<Option<(Links, Vec<u32>)>> {
        if !self.tree()?.is_regular() {
            return Ok(None);
        }
        let links = self.db()?.store().links(self.sid)?;
        let path = match from.or(self.leaf.as_deref()) {
            Some(id) => walk_indexes(&links, id),
            None => Vec::new(),
        };
        let path = path.into_iter().map(u32::try_from).collect::<std::result::Result<Vec<u32>, _>>();
        let path = path
            .map_err(|_| crate::error::Error::InvalidArgument("a session too long for a path of u32 indexes".into()))?;
        Ok(Some((links, path)))
    }

    /// The storage keys, ids, types and roles of the session's entries stored after key
    /// `after` (from the first when `None`), in file order: pi's `getEntries()` without its
    /// lines. No line is read.
    pub fn entry_steps(&self, after: Option<EntryKey>) -> Result<Links> {
        self.db()?.store().links_after(self.sid, after.unwrap_or(EntryKey::MIN))
    }

    /// What pi's `getTree()` is made of, without reading a line but the labels': every entry's
    /// key, id, parentId, type and role in file order, the time of each entry that has a
    /// sibling, and the labels. A host builds pi's tree from them and parses an entry's line
    /// only when its other fields are read (pi's `/tree` shows a screenful).
    pub fn tree_links(&self) -> Result<TreeLinks> {
        let store = self.db()?.store();
        let links = store.links(self.sid)?;
        // pi sorts each node's children by time: a lone child is never compared, so only the
        // entries sharing a parent (or whose parent is not a string: the host parses those)
        // have their time read.
        let mut children: FxHashMap<&str, u32> = FxHashMap::with_capacity_and_hasher(links.len(), FxBuildHasher);
        for l in links.iter() {
            if let Some(p) = l.parent_id {
                *children.entry(p).or_default() += 1;
            }
        }
        let mut times = Vec::with_capacity(links.len());
        for l in links.iter() {
            let sorted = l.parent_id.is_none_or(|p| children.get(p).is_some_and(|&n| n > 1));
            times.push(match sorted {
                true => Some(store.entry_kind(l.key)?.and_then(|k| k.ts_ms)),
                false => None,
            });
        }
        let labels = self.tree()?.labels()?.into_iter().map(|(target, (label, ts))| (target, label, ts)).collect();
        drop(children);
        Ok(TreeLinks { links, times, labels })
    }

    /// Hands `f`, for each of `keys` in that order, the JSON texts of the entry's `usage` and
    /// of its `message.usage` as they stand in the line (`None` where absent; the last of
    /// repeated keys, as `JSON.parse` keeps): what pi's usage totals read of each entry,
    /// without parsing the rest of the line.
    pub fn usages_at(&self, keys: &[EntryKey], f: &mut dyn FnMut(RawUsages<'_>)) -> Result<()> {
        type Usages = (Option<Vec<u8>>, Option<Vec<u8>>);
        let mut found: FxHashMap<EntryKey, Usages> = FxHashMap::default();
        self.each_line_at(keys, &mut |k, line| {
            let Ok(Some(entry)) = json::scan_object(line) else { return };
            let message = entry.raw("message").and_then(|m| json::scan_object(m).ok().flatten());
            let usage = entry.raw("usage").map(<[u8]>::to_vec);
            found.insert(k, (usage, message.as_ref().and_then(|m| m.raw("usage")).map(<[u8]>::to_vec)));
        })?;
        for k in keys {
            let (usage, message_usage) = found.get(k).map_or((None, None), |(u, m)| (u.as_deref(), m.as_deref()));
            f((usage, message_usage));
        }
        Ok(())
    }

    /// The usages of the session's entries stored after key `after` (from the first when
    /// `None`; see `store::interface::usage::Usage::entry_usages`): pi's usage totals and an
    /// assistant's `provider`/`model`, for the entries whose rows give them, and the entries
    /// whose usages are read from their lines; no line is read.
    pub fn entry_usages(&self, after: Option<EntryKey>) -> Result<EntryUsages> {
        self.db()?.store().entry_usages(self.sid, after.unwrap_or(EntryKey::MIN))
    }

    /// What pi's tree selector reads of each of `keys` (assistant messages): its row
    /// (`pi::tree_row`), stored with the line, or read from the line where none is stored;
    /// `None` for a key without a line or whose line the row cannot answer.
    pub fn tree_rows_at(&self, keys: &[EntryKey]) -> Result<Vec<Option<String>>> {
        let at: FxHashMap<EntryKey, usize> = keys.iter().enumerate().map(|(i, &k)| (k, i)).collect();
        let mut rows = vec![None; keys.len()];
        self.db()?.store().tree_rows_at(keys, &mut |k, row| {
            if let Some(&i) = at.get(&k) {
                rows[i] = Some(row.to_owned());
            }
        })?;
        let missing: Vec<EntryKey> = keys.iter().zip(&rows).filter(|(_, r)| r.is_none()).map(|(&k, _)| k).collect();
        if !missing.is_empty() {
            self.each_line_at(&missing, &mut |k, line| {
                if let Some(&i) = at.get(&k) {
                    rows[i] = tree_row::of_line(line);
                }
            })?;
        }
        Ok(rows)
    }

    /// Hands `f` the line stored under each of `keys`, in that order (a key with no line is
    /// skipped).
    pub fn lines_at(&self, keys: &[EntryKey], f: &mut dyn FnMut(EntryKey, &[u8])) -> Result<()> {
        self.each_line_at(keys, f)
    }

    /// [`Self::lines_at`]: ascending keys close together (a window of a lazy array) are read as
    /// one range of the session, other ascending keys in one statement by key, and keys in any
    /// other order one by one.
    fn each_line_at(&self, keys: &[EntryKey], f: &mut dyn FnMut(EntryKey, &[u8])) -> Result<()> {
        let ascending = keys.windows(2).all(|w| w[0] < w[1]);
        if let (true, Some(&first), Some(&last)) = (ascending, keys.first(), keys.last()) {
            let span = last - first + 1;
            let n = keys.len() as i64;
            // Sparser keys (every assistant of a session, for pi's /tree) are looked up one by
            // one: reading the range unpacked every line between them, 2.3x the bytes wanted.
            if span > n + n / 4 + 16 {
                return self.db()?.store().lines_at(keys, f);
            }
            let mut next = 0;
            return self.lines_after(Some(first - 1), span, &mut |k, line| {
                while next < keys.len() && keys[next] < k {
                    next += 1;
                }
                if keys.get(next) == Some(&k) {
                    f(k, line);
                    next += 1;
                }
            });
        }
        let tree = self.tree()?;
        for &k in keys {
            if let Some(row) = tree.entry_at(k)? {
                f(k, row.body.as_bytes());
            }
        }
        Ok(())
    }
}

/// pi's `getBranch` walk (from `id` up through `parentId`, the later line of a repeated id
/// winning, stopping at a cycle) over the entries' links read in one pass: on a long path one
/// sequential read is cheaper than a lookup per step.
fn walk_links(links: &Links, id: &str) -> Vec<PathStep> {
    walk_indexes(links, id)
        .into_iter()
        .map(|i| {
            let l = links.get(i);
            PathStep {
                key: l.key,
                id: l.id.map(str::to_owned),
                kind: l.kind.map(str::to_owned),
                role: l.role.map(str::to_owned),
            }
        })
        .collect()
}

/// [`walk_links`] as indexes into `links`, root first, each at most once.
fn walk_indexes(links: &Links, id: &str) -> Vec<usize> {
    // Entry ids are short, and SipHash's setup costs more than hashing them (a 100,000-entry
    // path is walked at every resume).
    let mut by_id: FxHashMap<&str, usize> = FxHashMap::with_capacity_and_hasher(links.len(), FxBuildHasher);
    for i in 0..links.len() {
        if let Some(id) = links.id(i) {
            by_id.insert(id, i);
        }
    }
    let mut seen = vec![false; links.len()];
    let mut path = Vec::new();
    let mut current = by_id.get(id).copied();
    while let Some(i) = current {
        if seen[i] {
            break;
        }
        seen[i] = true;
        path.push(i);
        current = links.parent_id(i).and_then(|p| by_id.get(p).copied());
    }
    path.reverse();
    path
}
