//! A session's tree as a page draws it beside a transcript: the roots, branch points, leaves
//! and labelled entries in pre-order, indented only where the tree branches, with the active
//! path marked. Built from the entries' ids and parent ids alone (no line is read), without
//! recursion (real trees are thousands of levels deep), at most `limit` nodes.

use crate::error::Result;
use crate::js::json::Value;
use crate::read::tree::SessionTree;
use crate::store::handle::Db;
use crate::store::keys::{EntryKey, SessionKey};
use std::collections::HashMap;

pub use crate::store::interface::entries::Kind;

/// One node the outline shows.
#[derive(Debug, Clone)]
pub struct OutlineNode {
    /// Storage key.
    pub key: EntryKey,
    /// Entry id.
    pub id: Option<String>,
    /// Branch points above it (the indent).
    pub depth: usize,
    /// Number of children.
    pub children: usize,
    /// On the path from the root to the active leaf.
    pub on_path: bool,
    /// The active leaf itself.
    pub active: bool,
    /// Its label, when it has one.
    pub label: Option<String>,
    /// Type, role and time.
    pub kind: Option<Kind>,
}

/// What the outline shows of a session's tree.
#[derive(Debug, Clone, Default)]
pub struct Outline {
    /// Shown nodes in pre-order.
    pub nodes: Vec<OutlineNode>,
    /// Entries in the session.
    pub entries: usize,
    /// Leaves in the session.
    pub leaves: usize,
    /// Branch points in the session.
    pub branch_points: usize,
    /// Nodes that would be shown past `limit`.
    pub omitted: usize,
    /// Entries on the active path.
    pub path_len: usize,
}

/// The outline of session `sid` with the path to `active` (a storage key) marked, at most
/// `limit` nodes. Where ids repeat, the later line is the node (as pi's tree); a parent cycle
/// is left out (no root reaches it).
pub fn outline(db: &Db, sid: SessionKey, active: Option<EntryKey>, limit: usize) -> Result<Outline> {
    let links = db.store().links(sid)?;
    let tree = SessionTree::open(db, sid)?;
    let labels = tree.labels()?;
    let n = links.len();
    let mut by_id: HashMap<&str, usize> = HashMap::with_capacity(n);
    for (i, l) in links.iter().enumerate() {
        if let Some(id) = l.id {
            by_id.insert(id, i);
        }
    }
    let is_node = |i: usize| links.id(i).is_none_or(|id| by_id[id] == i);
    let parent_of = |i: usize| -> Option<usize> {
        let p = *by_id.get(links.parent_id(i)?)?;
        (p != i).then_some(p)
    };
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut roots = Vec::new();
    for i in (0..n).filter(|&i| is_node(i)) {
        match parent_of(i) {
            Some(p) => children[p].push(i),
            None => roots.push(i),
        }
    }
    let mut on_path = vec![false; n];
    let active_index = active.and_then(|k| links.keys().binary_search(&k).ok());
    let mut path_len = 0;
    let mut at = active_index;
    while let Some(i) = at {
        if on_path[i] {
            break;
        }
        on_path[i] = true;
        path_len += 1;
        at = parent_of(i);
    }
    let mut out = Outline {
        entries: n,
        leaves: (0..n).filter(|&i| is_node(i) && children[i].is_empty()).count(),
        branch_points: children.iter().filter(|c| c.len() > 1).count(),
        path_len,
        ..Outline::default()
    };
    // Pre-order, children in file order; the indent grows below a branch point.
    let mut stack: Vec<(usize, usize)> = roots.iter().rev().map(|&r| (r, 0)).collect();
    while let Some((i, depth)) = stack.pop() {
        let kids = &children[i];
        let label = links.id(i).and_then(|id| labels.get(id)).map(|(l, _)| match l {
            Value::String(s) => s.to_str().into_owned(),
            other => other.to_json(),
        });
        let shown = parent_of(i).is_none() || kids.len() != 1 || label.is_some() || Some(i) == active_index;
        if shown {
            if out.nodes.len() < limit {
                out.nodes.push(OutlineNode {
                    key: links.key(i),
                    id: links.id(i).map(str::to_owned),
                    depth,
                    children: kids.len(),
                    on_path: on_path[i],
                    active: Some(i) == active_index,
                    label,
                    kind: None,
                });
            } else {
                out.omitted += 1;
            }
        }
        let below = if kids.len() > 1 { depth + 1 } else { depth };
        stack.extend(kids.iter().rev().map(|&c| (c, below)));
    }
    for node in &mut out.nodes {
        node.kind = db.store().entry_kind(node.key)?;
    }
    Ok(out)
}
