//! A stored session as a tree (entries linked by `id`/`parentId`): paths by recursive CTE, children, the whole tree,
//! labels, and the model-context projection computed from the database.

use crate::error::{Error, Result};
use crate::js::json::Value;
use crate::pi::projection::{self, ParsedEntry, Settings};
use crate::store::handle::Db;
pub use crate::store::interface::entries::{EntryRow as Row, PathStep};
use crate::store::keys::{EntryKey, SessionKey};
use indexmap::IndexMap;
use std::collections::{HashMap, HashSet};

/// Where a projection or path starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Leaf {
    /// The last entry in file order (pi's leaf after loading).
    Last,
    /// The entry with this id; an unknown id falls back to the last entry (as pi's projection).
    Id(String),
    /// No leaf: the projection is empty.
    Null,
}

/// A root-first path and whether it was cut at a parent cycle.
#[derive(Debug, Clone)]
pub struct Path {
    /// Root first.
    pub entries: Vec<Row>,
    /// When the walk met an entry twice (a parent cycle), the id of that entry: the path
    /// stops before it.
    pub cycle: Option<String>,
}

/// One node of the flattened tree (pre-order).
#[derive(Debug, Clone)]
pub struct TreeNode {
    /// The node's entry.
    pub row: Row,
    /// Depth in the tree (roots are 0).
    pub depth: usize,
    /// Number of children.
    pub child_count: usize,
    /// Resolved label and its timestamp.
    pub label: Option<(Value, Option<Value>)>,
}

/// A session's tree in the database.
pub struct SessionTree<'c> {
    db: &'c Db,
    sid: SessionKey,
    regular: bool,
    entry_count: i64,
}

impl<'c> SessionTree<'c> {
    /// The tree of session `sid`.
    pub fn open(db: &'c Db, sid: SessionKey) -> Result<Self> {
        let (regular, entry_count) = db
            .store()
            .tree_state(sid)?
            .ok_or_else(|| Error::NotFound(format!("no session with internal key {sid}")))?;
        Ok(SessionTree { db, sid, regular, entry_count })
    }

    /// Forces the walk that does not trust derived columns (to test both ways agree).
    pub fn without_shortcuts(mut self) -> Self {
        self.regular = false;
        self
    }

    /// True when the derived entry columns can be trusted (see [`crate::store::derive`]).
    pub fn is_regular(&self) -> bool {
        self.regular
    }

    /// The last entry in file order (the leaf pi sets on load).
    pub fn last_entry(&self) -> Result<Option<Row>> {
        self.db.store().last_entry(self.sid)
    }

    /// The entry with `id` (the later line wins for a repeated id).
    pub fn entry(&self, id: &str) -> Result<Option<Row>> {
        self.db.store().entry_by_id(self.sid, id)
    }

    /// The entry stored under `key`.
    pub fn entry_at(&self, key: EntryKey) -> Result<Option<Row>> {
        self.db.store().entry_by_key(key)
    }

    /// Walks parents from `key` (included) up to `stop` (included) or the root, at most `limit`
    /// rows; root first. Stops before the first repeated entry.
    pub fn walk_up(&self, key: EntryKey, stop: Option<EntryKey>, limit: i64) -> Result<Path> {
        // Rows come leaf first, in the order the CTE produced them.
        let mut rows = self.db.store().walk_up(key, stop, limit)?;
        let cycle = cut_at_repeat(&mut rows, |r| r.key).map(|r| r.id.clone().unwrap_or_default());
        rows.reverse();
        Ok(Path { entries: rows, cycle })
    }

    /// How many rows a walk from `row` to the root can take: its depth when the tree is
    /// regular, else every entry (a walk stops at a repeat anyway).
    fn path_limit(&self, depth: Option<i64>) -> i64 {
        match (self.regular, depth) {
            (true, Some(d)) => d + 1,
            _ => self.entry_count + 1,
        }
    }

    /// The whole root-first path ending at `row`.
    pub fn path_to(&self, row: &Row) -> Result<Path> {
        self.walk_up(row.key, None, self.path_limit(row.depth))
    }

    /// pi's `getBranch(fromId)`: the path from the root to `from` (default: the last entry);
    /// empty for an unknown id.
    pub fn branch(&self, from: Option<&str>) -> Result<Path> {
        let start = match from {
            Some(id) => self.entry(id)?,
            None => self.last_entry()?,
        };
        match start {
            Some(row) => self.path_to(&row),
            None => Ok(Path { entries: Vec::new(), cycle: None }),
        }
    }

    /// The root-first path to entry `id` (empty for an unknown id) as keys, types and roles
    /// only: no line is read.
    pub fn branch_keys(&self, id: &str) -> Result<Vec<PathStep>> {
        // The start's key and depth only: its line is not read.
        let Some((key, d)) = self.db.store().entry_node(self.sid, id)? else { return Ok(Vec::new()) };
        let mut steps = self.db.store().walk_up_steps(key, self.path_limit(d.depth))?;
        cut_at_repeat(&mut steps, |s| s.key);
        steps.reverse();
        Ok(steps)
    }

    /// pi's `getChildren(id)`: entries whose parent is `id`, in first-occurrence order of their ids.
    pub fn children(&self, id: &str) -> Result<Vec<Row>> {
        if self.regular {
            return self.db.store().children(self.sid, id);
        }
        // Repeated ids: the later line's entry is the one that counts, at the first line's place.
        let all = self.all_entries()?;
        let mut order: IndexMap<Option<String>, usize> = IndexMap::new();
        for (i, r) in all.iter().enumerate() {
            order.insert(r.id.clone(), i);
        }
        Ok(order.values().map(|&i| &all[i]).filter(|r| r.parent_id.as_deref() == Some(id)).cloned().collect())
    }

    /// Every entry (header lines excluded) in file order.
    pub fn all_entries(&self) -> Result<Vec<Row>> {
        self.db.store().all_entries(self.sid)
    }

    /// Hands `f` the key and line of at most `limit` entries after storage key `after` (from
    /// the first for `None`), in file order, without copying the lines.
    pub fn lines_after(&self, after: Option<EntryKey>, limit: i64, f: &mut dyn FnMut(EntryKey, &[u8])) -> Result<()> {
        self.db.store().lines_from(self.sid, after.map_or(EntryKey::MIN, |k| k + 1), limit, f)
    }

    /// Labels resolved over all label lines in file order: target id → (label, timestamp), in
    /// the order they were set (a changed label keeps its place; cleared then set moves last).
    pub fn labels(&self) -> Result<IndexMap<String, (Value, Option<Value>)>> {
        let mut labels: IndexMap<String, (Value, Option<Value>)> = IndexMap::new();
        for row in self.db.store().label_entries(self.sid)? {
            let e = row.parse();
            let Some(target) = e.get("targetId").and_then(Value::as_str).map(str::to_owned) else { continue };
            match e.get("label") {
                Some(l) if l.is_truthy() => {
                    let ts = e.get("timestamp").cloned();
                    match labels.get_mut(&target) {
                        Some(slot) => *slot = (l.clone(), ts),
                        None => {
                            labels.insert(target, (l.clone(), ts));
                        }
                    }
                }
                _ => {
                    labels.shift_remove(&target);
                }
            }
        }
        Ok(labels)
    }

    /// pi's `getTree()`, flattened in pre-order. Iterative: trees are thousands of levels deep.
    pub fn tree(&self) -> Result<Vec<TreeNode>> {
        let all = self.all_entries()?;
        let labels = self.labels()?;
        // The node for an id is the later line's; every line places it under its own parent.
        let mut winner: HashMap<Option<&str>, usize> = HashMap::with_capacity(all.len());
        for (i, r) in all.iter().enumerate() {
            winner.insert(r.id.as_deref(), i);
        }
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); all.len()];
        let mut roots = Vec::new();
        for r in &all {
            let node = winner[&r.id.as_deref()];
            match r.parent_id.as_deref() {
                None => roots.push(node),
                Some(p) if Some(p) == r.id.as_deref() => roots.push(node),
                Some(p) => match winner.get(&Some(p)) {
                    Some(&parent) => children[parent].push(node),
                    None => roots.push(node),
                },
            }
        }
        for list in &mut children {
            v8_sort_by_time(list, &all);
        }
        // Repeated ids place one node under each of its lines' parents, and nested repeats
        // multiply: the tree pi's JSON would show can be exponential in the file's size. Past
        // a budget, each node's subtree is listed once (at its first place) and its other
        // places list the node alone.
        let budget = all.len().saturating_mul(2).saturating_add(10_000);
        let (out, complete) = self.flatten(&all, &roots, &children, &labels, Some(budget));
        if complete {
            return Ok(out);
        }
        Ok(self.flatten(&all, &roots, &children, &labels, None).0)
    }

    /// Pre-order nodes from `roots`: every subtree everywhere while at most `budget` nodes
    /// (false when that was exceeded), or with no budget each subtree once.
    fn flatten(
        &self,
        all: &[Row],
        roots: &[usize],
        children: &[Vec<usize>],
        labels: &IndexMap<String, (Value, Option<Value>)>,
        budget: Option<usize>,
    ) -> (Vec<TreeNode>, bool) {
        let mut out = Vec::with_capacity(all.len());
        // (node, depth, next child index); `on_path` guards against loops made by repeated ids.
        let mut stack: Vec<(usize, usize, usize)> = Vec::new();
        let mut on_path = vec![false; all.len()];
        let mut expanded = vec![false; all.len()];
        for &root in roots {
            out.push(self.node(&all[root], 0, children[root].len(), labels));
            if budget.is_none() && expanded[root] {
                continue;
            }
            stack.push((root, 0, 0));
            on_path[root] = true;
            expanded[root] = true;
            while let Some(top) = stack.last_mut() {
                let (node, depth, next) = *top;
                if next < children[node].len() {
                    top.2 += 1;
                    let child = children[node][next];
                    if on_path[child] {
                        continue;
                    }
                    out.push(self.node(&all[child], depth + 1, children[child].len(), labels));
                    if budget.is_some_and(|b| out.len() > b) {
                        return (out, false);
                    }
                    if budget.is_none() && expanded[child] {
                        continue;
                    }
                    expanded[child] = true;
                    on_path[child] = true;
                    stack.push((child, depth + 1, 0));
                } else {
                    on_path[node] = false;
                    stack.pop();
                }
            }
        }
        (out, true)
    }

    fn node(
        &self,
        row: &Row,
        depth: usize,
        child_count: usize,
        labels: &IndexMap<String, (Value, Option<Value>)>,
    ) -> TreeNode {
        let label = row.id.as_ref().and_then(|id| labels.get(id)).cloned();
        TreeNode { row: row.clone(), depth, child_count, label }
    }

    /// The entry a projection starts from.
    pub fn leaf_row(&self, leaf: &Leaf) -> Result<Option<Row>> {
        match leaf {
            Leaf::Null => Ok(None),
            Leaf::Last => self.last_entry(),
            Leaf::Id(id) => match self.entry(id)? {
                Some(r) => Ok(Some(r)),
                None => self.last_entry(),
            },
        }
    }

    /// Context entries and settings at `leaf` (pi's `buildContextEntries` + settings replay),
    /// reading only the rows the context holds when the tree is regular.
    pub fn context(&self, leaf: &Leaf) -> Result<Context> {
        let Some(leaf_row) = self.leaf_row(leaf)? else {
            return Ok(Context { entries: Vec::new(), settings: Settings::default(), cycle: None });
        };
        if !self.regular {
            let path = self.path_to(&leaf_row)?;
            let parsed: Vec<ParsedEntry<EntryKey>> = path.entries.iter().map(Row::parse).collect();
            let settings = Settings::from_path(&parsed);
            let entries = projection::context_entries(&parsed).into_iter().cloned().collect();
            return Ok(Context { entries, settings, cycle: path.cycle });
        }
        let settings = self.settings_at(&leaf_row)?;
        let Some(ckey) = leaf_row.compaction_key else {
            let path = self.path_to(&leaf_row)?;
            return Ok(Context { entries: path.entries.iter().map(Row::parse).collect(), settings, cycle: None });
        };
        // From the compaction to the leaf.
        let tail = self.walk_up(leaf_row.key, Some(ckey), leaf_row.depth.unwrap_or(0) + 1)?;
        let mut rows = tail.entries.into_iter();
        let Some(compaction_row) = rows.next().filter(|r| r.key == ckey) else {
            return Err(Error::InvalidArgument(format!("session {}: compaction {ckey} is not on the path", self.sid)));
        };
        let compaction = compaction_row.parse();
        let mut entries = vec![compaction.clone()];
        entries.extend(self.kept_before(&compaction_row, &compaction)?);
        entries.extend(rows.map(|r| r.parse()));
        Ok(Context { entries, settings, cycle: None })
    }

    /// Entries a compaction keeps from before it: from its `firstKeptEntryId` (when that is on
    /// the path) up to the compaction, system messages left out.
    fn kept_before(&self, crow: &Row, compaction: &ParsedEntry<EntryKey>) -> Result<Vec<ParsedEntry<EntryKey>>> {
        let Some(first) = compaction.get("firstKeptEntryId").and_then(Value::as_str) else { return Ok(Vec::new()) };
        let (Some(kept), Some(cdepth), Some(parent)) = (self.entry(first)?, crow.depth, crow.parent_key) else {
            return Ok(Vec::new());
        };
        let Some(kdepth) = kept.depth.filter(|&d| d < cdepth) else { return Ok(Vec::new()) };
        let walk = self.walk_up(parent, None, cdepth - kdepth)?;
        if walk.entries.first().map(|r| r.key) != Some(kept.key) {
            return Ok(Vec::new()); // not an ancestor
        }
        Ok(walk
            .entries
            .iter()
            .filter(|r| !(r.kind.as_deref() == Some("message") && r.role.as_deref() == Some("system")))
            .map(Row::parse)
            .collect())
    }

    /// Settings at an entry of a regular tree, from the nearest setting entries on its path.
    fn settings_at(&self, row: &Row) -> Result<Settings> {
        let mut s = Settings::default();
        let mut keys: Vec<EntryKey> = [row.thinking_key, row.model_key].into_iter().flatten().collect();
        keys.sort_unstable();
        keys.dedup();
        for k in keys {
            if let Some(r) = self.entry_at(k)? {
                s.apply(&r.parse());
            }
        }
        Ok(s)
    }

    /// pi's `buildSessionProjection` at `leaf`, and the repeated entry if a parent cycle cut
    /// the path.
    pub fn projection(&self, leaf: &Leaf) -> Result<(Value, Option<String>)> {
        let ctx = self.context(leaf)?;
        let refs: Vec<&ParsedEntry<EntryKey>> = ctx.entries.iter().collect();
        Ok((projection::projection(&refs, &ctx.settings), ctx.cycle))
    }
}

/// Context entries with the settings in force.
#[derive(Debug, Clone)]
pub struct Context {
    /// pi's `buildContextEntries` result.
    pub entries: Vec<ParsedEntry<EntryKey>>,
    /// Thinking level and model.
    pub settings: Settings,
    /// The repeated entry's id when the path was cut at a parent cycle.
    pub cycle: Option<String>,
}

/// Truncates a leaf-first walk before its first repeated entry (a parent cycle) and returns
/// that entry, if any.
fn cut_at_repeat<T>(walk: &mut Vec<T>, key: impl Fn(&T) -> EntryKey) -> Option<T> {
    let mut seen = HashSet::with_capacity(walk.len());
    let pos = walk.iter().position(|x| !seen.insert(key(x)))?;
    walk.truncate(pos + 1);
    walk.pop()
}

/// Sorts node indexes by entry time the way V8's `Array.prototype.sort` does with pi's
/// comparator `(a, b) => time(a) - time(b)`: for fewer than 64 elements V8's TimSort is one
/// run extended by binary insertion, reproduced here step by step so that invalid
/// timestamps (NaN comparisons) order exactly as in pi. Longer lists use a stable sort, which
/// agrees with V8 whenever the timestamps are valid.
pub fn v8_sort_by_time(list: &mut [usize], rows: &[Row]) {
    let time = |i: usize| rows[i].ts_ms.map_or(f64::NAN, |t| t as f64);
    let cmp = |a: usize, b: usize| time(a) - time(b);
    let n = list.len();
    if n < 2 {
        return;
    }
    if n >= 64 {
        list.sort_by(|&a, &b| cmp(a, b).partial_cmp(&0.0).unwrap_or(std::cmp::Ordering::Equal));
        return;
    }
    // CountAndMakeRun.
    let mut run = 2;
    let descending = cmp(list[1], list[0]) < 0.0;
    let mut prev = list[1];
    for &cur in &list[2..] {
        let order = cmp(cur, prev);
        if (descending && order >= 0.0) || (!descending && order < 0.0) {
            break;
        }
        prev = cur;
        run += 1;
    }
    if descending {
        list[..run].reverse();
    }
    // BinaryInsertionSort of the rest.
    for start in run..n {
        let pivot = list[start];
        let (mut left, mut right) = (0, start);
        while left < right {
            let mid = left + ((right - left) >> 1);
            if cmp(pivot, list[mid]) < 0.0 {
                right = mid;
            } else {
                left = mid + 1;
            }
        }
        list.copy_within(left..start, left + 1);
        list[left] = pivot;
    }
}
