//! `sessiondb check`: SQLite's own integrity check plus the session-level problems a session
//! file can carry (orphans, self parents, parent cycles, repeated ids, compactions keeping
//! entries off their path, labels and context edits without a target, headers without cwd).
//!
//! Every session is checked from its stored rows in one pass over its parent links held in
//! memory: cycles are found by colouring, "is X on the path of Y" is answered from entry/exit
//! times of one depth-first walk. Nothing walks a path per entry, so a 100,000-entry session
//! costs what reading it costs.

use crate::error::Result;
use crate::js::json;
use crate::store::handle::Db;
use crate::store::interface::integrity::{is_corruption, CheckedEntry as EntryRow, CheckedSession as SessionRow};
use crate::store::keys::SessionKey;
use serde::Serialize;
use std::collections::HashMap;

/// At most this many rows of each SQLite check are reported.
const MAX_DB_FINDINGS: usize = 100;
/// Cycle members named in one finding.
const MAX_CYCLE_MEMBERS_SHOWN: usize = 8;

/// What kind of problem a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// `PRAGMA integrity_check` reported a problem in the database file.
    Integrity,
    /// `PRAGMA foreign_key_check` found a row pointing at a missing row.
    ForeignKey,
    /// A session's stored counters disagree with its stored lines.
    Counts,
    /// A session is marked as having a regular tree, but it does not.
    TreeFlag,
    /// The header has no string `cwd` (or an empty one).
    NoCwd,
    /// An entry has no string `id`.
    MissingId,
    /// Several entries share one id.
    DuplicateId,
    /// An entry's `parentId` names no entry.
    Orphan,
    /// An entry's `parentId` is its own id.
    SelfParent,
    /// Entries whose parent links form a loop of two or more.
    ParentCycle,
    /// A compaction's `firstKeptEntryId` is missing, unknown, or not on the compaction's path.
    CompactionFirstKept,
    /// A label's `targetId` names no entry.
    LabelTarget,
    /// A context edit's `targetId` names no entry.
    ContextEditTarget,
    /// A fork's row shares a line with a row that is missing or itself a copy.
    SharedLine,
    /// A stored (compressed) line cannot be read back as it was written.
    DamagedLine,
}

impl Kind {
    /// The kebab-case code printed for the kind.
    pub fn code(self) -> &'static str {
        match self {
            Kind::Integrity => "integrity",
            Kind::ForeignKey => "foreign-key",
            Kind::Counts => "counts",
            Kind::TreeFlag => "tree-flag",
            Kind::NoCwd => "no-cwd",
            Kind::MissingId => "missing-id",
            Kind::DuplicateId => "duplicate-id",
            Kind::Orphan => "orphan",
            Kind::SelfParent => "self-parent",
            Kind::ParentCycle => "parent-cycle",
            Kind::CompactionFirstKept => "compaction-first-kept",
            Kind::LabelTarget => "label-target",
            Kind::ContextEditTarget => "context-edit-target",
            Kind::SharedLine => "shared-line",
            Kind::DamagedLine => "damaged-line",
        }
    }
}

/// One problem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// What kind of problem.
    pub kind: Kind,
    /// Header id of the session (none for database-level problems).
    pub session_id: Option<String>,
    /// Path of the session's file.
    pub session_path: Option<String>,
    /// The entry concerned.
    pub entry_id: Option<String>,
    /// Line of the entry in the exported file (the header is line 1).
    pub line: Option<i64>,
    /// Plain explanation.
    pub message: String,
}

/// Outcome of a check run.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// True when SQLite's integrity and foreign-key checks passed.
    pub integrity_ok: bool,
    /// Sessions checked.
    pub sessions: u64,
    /// Entry lines checked.
    pub entries: u64,
    /// Every problem found.
    pub problems: Vec<Finding>,
}

impl Report {
    /// True when nothing was found.
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty()
    }
}

/// A problem of the database as a whole.
fn db_finding(kind: Kind, message: String) -> Finding {
    Finding { kind, session_id: None, session_path: None, entry_id: None, line: None, message }
}

/// Runs SQLite's `integrity_check` and `foreign_key_check`, and checks that forks' shared
/// lines are there and recorded. A file too damaged for them to finish is reported as an
/// integrity problem, not an error.
pub fn check_database(db: &Db) -> Result<Vec<Finding>> {
    let mut out = Vec::new();
    let mut limit = Limit::default();
    if let Err(e) =
        db.store().integrity_check(&mut |text| text == "ok" || limit.push(&mut out, db_finding(Kind::Integrity, text)))
    {
        out.push(db_finding(Kind::Integrity, format!("the integrity check stopped: {e}")));
    }
    let mut limit = Limit::default();
    if let Err(e) = db.store().foreign_key_check(&mut |p| {
        let row = p.rowid.map_or_else(|| "?".to_string(), |r| r.to_string());
        let message = format!("row {row} of table {} points at a missing row of {}", p.table, p.parent);
        limit.push(&mut out, db_finding(Kind::ForeignKey, message))
    }) {
        out.push(db_finding(Kind::ForeignKey, format!("the foreign-key check stopped: {e}")));
    }
    let mut limit = Limit::default();
    if let Err(e) = db.store().shared_line_check(&mut |p| {
        let (key, from) = (p.key, p.from);
        let message = if p.missing {
            format!("entry row {key} takes its line from row {from}, which is missing or itself a copy")
        } else {
            format!(
                "entry row {key} takes its line from row {from}, but session {} is not recorded as sharing \
                 lines of session {}: deleting that session would lose the line",
                key.session(),
                from.session()
            )
        };
        limit.push(&mut out, db_finding(Kind::SharedLine, message))
    }) {
        out.push(db_finding(Kind::Integrity, format!("the shared-line check stopped: {e}")));
    }
    Ok(out)
}

/// Keeps at most [`MAX_DB_FINDINGS`] findings of one check.
#[derive(Default)]
struct Limit(usize);

impl Limit {
    /// Adds `finding` unless the limit is reached; returns whether to read on.
    fn push(&mut self, out: &mut Vec<Finding>, finding: Finding) -> bool {
        self.0 += 1;
        if self.0 > MAX_DB_FINDINGS {
            return false;
        }
        out.push(finding);
        true
    }
}

/// Checks every session and the database; `progress` is called after each session.
pub fn check_all(db: &Db, mut progress: impl FnMut(u64)) -> Result<Report> {
    let mut problems = check_database(db)?;
    let integrity_ok = problems.is_empty();
    let mut report = Report { integrity_ok, ..Report::default() };
    let sessions = match db.store().checked_sessions() {
        Ok(s) => s,
        Err(e) if is_corruption(&e) => {
            problems.push(db_finding(Kind::Integrity, format!("the sessions cannot be listed: {e}")));
            report.problems = problems;
            return Ok(report);
        }
        Err(e) => return Err(e),
    };
    for s in &sessions {
        report.entries += check_readable(db, s, &mut problems)?;
        report.sessions += 1;
        progress(report.sessions);
    }
    report.problems = problems;
    Ok(report)
}

/// Checks one session (internal key `sid`) and the database.
pub fn check_session_and_database(db: &Db, sid: SessionKey) -> Result<Report> {
    let mut problems = check_database(db)?;
    let integrity_ok = problems.is_empty();
    let mut report = Report { integrity_ok, ..Report::default() };
    if let Some(s) = db.store().checked_session(sid)? {
        report.entries = check_readable(db, &s, &mut problems)?;
        report.sessions = 1;
    }
    report.problems = problems;
    Ok(report)
}

/// The session-level problems of session `sid` (no database-level checks).
pub fn check_session(db: &Db, sid: SessionKey) -> Result<Vec<Finding>> {
    let mut out = Vec::new();
    if let Some(s) = db.store().checked_session(sid)? {
        check_one(db, &s, &mut out)?;
    }
    Ok(out)
}

/// [`check_one`], reporting a session that a damaged file does not let it read.
fn check_readable(db: &Db, s: &SessionRow, out: &mut Vec<Finding>) -> Result<u64> {
    let mut found = Vec::new();
    match check_one(db, s, &mut found) {
        Ok(n) => {
            out.append(&mut found);
            Ok(n)
        }
        Err(e) if is_corruption(&e) => {
            out.push(Finding {
                kind: Kind::Integrity,
                session_id: Some(s.id.clone()),
                session_path: Some(s.path.clone()),
                entry_id: None,
                line: None,
                message: format!("the session's lines cannot be read: {e}"),
            });
            Ok(0)
        }
        Err(e) => Err(e),
    }
}

/// Checks one session, appending findings; returns the number of lines read.
fn check_one(db: &Db, s: &SessionRow, out: &mut Vec<Finding>) -> Result<u64> {
    let lines = db.store().checked_entries(s.sid)?;
    let read = lines.len() as u64;
    let finding = |kind, entry: Option<&EntryRow>, message: String| Finding {
        kind,
        session_id: Some(s.id.clone()),
        session_path: Some(s.path.clone()),
        entry_id: entry.and_then(|e| e.id.clone()),
        line: entry.map(|e| e.seq + 1),
        message,
    };

    // Stored counters against stored lines.
    let max_seq = lines.last().map_or(0, |l| l.seq);
    let entries: Vec<&EntryRow> = lines.iter().filter(|l| l.kind.as_deref() != Some("session")).collect();
    if s.last_seq != max_seq || lines.len() as i64 != max_seq || s.entry_count != entries.len() as i64 {
        out.push(finding(
            Kind::Counts,
            None,
            format!(
                "the session row says {} entries and {} lines, but {} lines ({} entries, last line number {}) \
                 are stored; re-import the file (--force)",
                s.entry_count,
                s.last_seq,
                lines.len(),
                entries.len(),
                max_seq
            ),
        ));
    }
    match s.cwd.as_deref() {
        None => out.push(finding(
            Kind::NoCwd,
            None,
            "the header has no cwd: pi lists the session with an empty cwd and no project finds it".into(),
        )),
        Some("") => {
            out.push(finding(Kind::NoCwd, None, "the header's cwd is empty: no project finds the session".into()))
        }
        Some(_) => {}
    }

    for l in &lines {
        if let Some(why) = &l.damaged {
            let message =
                format!("the stored line cannot be read back as it was written ({why}); re-import the file (--force)");
            out.push(finding(Kind::DamagedLine, Some(l), message));
        }
    }

    let tree = Tree::build(&entries);
    let mut irregular = false;

    for (i, &e) in entries.iter().enumerate() {
        if e.id.is_none() {
            irregular = true;
            out.push(finding(
                Kind::MissingId,
                Some(e),
                "the entry has no string id: no other entry can name it as parent or target".into(),
            ));
        }
        if let Some(first) = tree.first_of_repeat(i) {
            irregular = true;
            let (count, lines) = tree.repeats(first);
            out.push(finding(
                Kind::DuplicateId,
                Some(e),
                format!(
                    "{count} entries share this id (lines {lines}): the last one wins, the others are \
                     hidden from paths, the tree and lookups"
                ),
            ));
        }
        match &tree.link[i] {
            Link::SelfParent => {
                irregular = true;
                out.push(finding(
                    Kind::SelfParent,
                    Some(e),
                    "the entry names itself as its parent: pi shows it as a root, and its path ends at it".into(),
                ));
            }
            Link::Orphan(p) => out.push(finding(
                Kind::Orphan,
                Some(e),
                format!("its parent {p} names no entry: pi shows it as a root, and its path ends at it"),
            )),
            Link::Parent(p) if *p > i => irregular = true,
            _ => {}
        }
        if let Some(c) = tree.cycle_of[i] {
            if tree.cycles[c][0] == i {
                let members = &tree.cycles[c];
                let mut names: Vec<&str> = members
                    .iter()
                    .take(MAX_CYCLE_MEMBERS_SHOWN)
                    .map(|&m| entries[m].id.as_deref().unwrap_or("?"))
                    .collect();
                if members.len() > MAX_CYCLE_MEMBERS_SHOWN {
                    names.push("…");
                }
                out.push(finding(
                    Kind::ParentCycle,
                    Some(e),
                    format!(
                        "parent cycle of {} entries ({} → back): no root can be reached from them or \
                         their descendants; sessiondb ends such paths before the first repeated \
                         entry (pi would loop forever) and the tree leaves them out",
                        members.len(),
                        names.join(" → ")
                    ),
                ));
            }
        }
        // A damaged line's targets are unknown: it is reported as damaged only.
        match e.kind.as_deref().filter(|_| e.damaged.is_none()) {
            Some("compaction") => {
                if let Some(message) = tree.compaction_problem(i, e) {
                    out.push(finding(Kind::CompactionFirstKept, Some(e), message));
                }
            }
            Some(kind @ ("label" | "context_edit")) => {
                let what = if kind == "label" { "label" } else { "context edit" };
                let target = e.body.as_deref().and_then(|b| member_str(b, "targetId"));
                let message = match target {
                    None => Some(format!("the {what} has no string targetId: it applies to nothing")),
                    Some(t) if !tree.by_id.contains_key(t.as_str()) => {
                        Some(format!("the {what}'s target {t} names no entry: it applies to nothing"))
                    }
                    Some(_) => None,
                };
                if let Some(m) = message {
                    let k = if kind == "label" { Kind::LabelTarget } else { Kind::ContextEditTarget };
                    out.push(finding(k, Some(e), m));
                }
            }
            _ => {}
        }
    }
    if s.tree_ok && irregular {
        out.push(finding(
            Kind::TreeFlag,
            None,
            "the session is stored as a regular tree but its ids repeat, are missing, or name a later \
             parent: tree queries take shortcuts that are wrong here; re-import the file (--force)"
                .into(),
        ));
    }
    Ok(read)
}

/// The string member `key` of a JSON object line.
fn member_str(body: &str, key: &str) -> Option<String> {
    json::scan_object(body.as_bytes()).ok().flatten().and_then(|o| o.get_str(key))
}

/// Where an entry's `parentId` leads.
enum Link {
    /// `parentId` null, missing, not a string, or `""`: a root.
    Root,
    /// `parentId` is the entry's own id.
    SelfParent,
    /// `parentId` names no entry.
    Orphan(String),
    /// The entry (index) that `parentId` names: the last one with that id.
    Parent(usize),
}

/// The parent links of a session's entries, in memory.
struct Tree<'a> {
    /// Id → index of the last entry with it (the one pi keeps).
    by_id: HashMap<&'a str, usize>,
    /// Id → indexes of every entry with it, for repeated ids only.
    repeated: HashMap<&'a str, Vec<usize>>,
    ids: Vec<Option<&'a str>>,
    link: Vec<Link>,
    /// Cycle number of each entry on a cycle.
    cycle_of: Vec<Option<usize>>,
    /// Members of each cycle, the first in file order first.
    cycles: Vec<Vec<usize>>,
    /// Depth-first entry/exit times over the forest whose roots are root entries and cycle
    /// members (a cycle member's link to the next member is left out).
    enter: Vec<usize>,
    exit: Vec<usize>,
    /// The cycle an entry's parent links run into, if any.
    reaches_cycle: Vec<Option<usize>>,
    seqs: Vec<i64>,
}

impl<'a> Tree<'a> {
    fn build(entries: &[&'a EntryRow]) -> Self {
        let n = entries.len();
        let ids: Vec<Option<&'a str>> = entries.iter().map(|e| e.id.as_deref()).collect();
        let mut by_id: HashMap<&'a str, usize> = HashMap::with_capacity(n);
        let mut repeated: HashMap<&'a str, Vec<usize>> = HashMap::new();
        for (i, id) in ids.iter().enumerate() {
            if let Some(id) = *id {
                if let Some(prev) = by_id.insert(id, i) {
                    repeated.entry(id).or_insert_with(|| vec![prev]).push(i);
                }
            }
        }
        let link: Vec<Link> = entries
            .iter()
            .map(|e| match e.parent_id.as_deref() {
                None | Some("") => Link::Root,
                Some(p) if Some(p) == e.id.as_deref() => Link::SelfParent,
                Some(p) => match by_id.get(p) {
                    Some(&j) => Link::Parent(j),
                    None => Link::Orphan(p.to_string()),
                },
            })
            .collect();
        let parent = |i: usize| match link[i] {
            Link::Parent(j) => Some(j),
            _ => None,
        };

        // Colouring: 0 unseen, 1 on the current walk, 2 done. Each entry is walked once.
        let mut state = vec![0u8; n];
        let mut pos = vec![0usize; n];
        let mut walk: Vec<usize> = Vec::new();
        let mut cycle_of: Vec<Option<usize>> = vec![None; n];
        let mut cycles: Vec<Vec<usize>> = Vec::new();
        for start in 0..n {
            let mut cur = Some(start);
            while let Some(i) = cur {
                match state[i] {
                    0 => {
                        state[i] = 1;
                        pos[i] = walk.len();
                        walk.push(i);
                        cur = parent(i);
                    }
                    1 => {
                        let mut members = walk[pos[i]..].to_vec();
                        // Start the loop at its first entry in file order, keeping link order.
                        let first = members.iter().enumerate().min_by_key(|(_, &m)| m).map_or(0, |(k, _)| k);
                        members.rotate_left(first);
                        for &m in &members {
                            cycle_of[m] = Some(cycles.len());
                        }
                        cycles.push(members);
                        cur = None;
                    }
                    _ => cur = None,
                }
            }
            for &i in &walk {
                state[i] = 2;
            }
            walk.clear();
        }

        // Children in the forest (cycle members become roots of their own subtrees).
        let mut first_child = vec![usize::MAX; n];
        let mut next_sibling = vec![usize::MAX; n];
        let mut roots = Vec::new();
        for i in (0..n).rev() {
            match parent(i) {
                Some(p) if cycle_of[i].is_none() => {
                    next_sibling[i] = first_child[p];
                    first_child[p] = i;
                }
                _ => roots.push(i),
            }
        }
        roots.reverse();
        let mut enter = vec![0usize; n];
        let mut exit = vec![0usize; n];
        let mut reaches_cycle: Vec<Option<usize>> = vec![None; n];
        let mut clock: usize = 0;
        let mut stack: Vec<(usize, usize)> = Vec::new(); // (node, next child to visit)
        for &root in &roots {
            let into = cycle_of[root];
            enter[root] = clock;
            clock += 1;
            reaches_cycle[root] = into;
            stack.push((root, first_child[root]));
            while let Some(top) = stack.last_mut() {
                let (node, child) = *top;
                if child == usize::MAX {
                    exit[node] = clock;
                    clock += 1;
                    stack.pop();
                } else {
                    top.1 = next_sibling[child];
                    enter[child] = clock;
                    clock += 1;
                    reaches_cycle[child] = into;
                    stack.push((child, first_child[child]));
                }
            }
        }
        let seqs = entries.iter().map(|e| e.seq).collect();
        Tree { by_id, repeated, ids, link, cycle_of, cycles, enter, exit, reaches_cycle, seqs }
    }

    /// For the first entry of a repeated id, that id.
    fn first_of_repeat(&self, i: usize) -> Option<&'a str> {
        let id = self.ids[i]?;
        let all = self.repeated.get(id)?;
        (all.first() == Some(&i)).then_some(id)
    }

    /// How many entries share `id`, and their lines.
    fn repeats(&self, id: &str) -> (usize, String) {
        let all = self.repeated.get(id).map_or(&[][..], Vec::as_slice);
        let mut lines: Vec<String> = all.iter().take(10).map(|&i| (self.seqs[i] + 1).to_string()).collect();
        if all.len() > 10 {
            lines.push("…".into());
        }
        (all.len(), lines.join(", "))
    }

    /// True when `a` is a proper ancestor of `b` (on the path from `b` to its root, or on the
    /// cycle `b`'s path runs into).
    fn is_ancestor(&self, a: usize, b: usize) -> bool {
        if a == b {
            return false;
        }
        let in_subtree = self.enter[a] <= self.enter[b] && self.exit[b] <= self.exit[a];
        in_subtree || (self.cycle_of[a].is_some() && self.cycle_of[a] == self.reaches_cycle[b])
    }

    /// What is wrong with compaction `i`'s `firstKeptEntryId`, if anything.
    fn compaction_problem(&self, i: usize, e: &EntryRow) -> Option<String> {
        let Some(first) = e.body.as_deref().and_then(|b| member_str(b, "firstKeptEntryId")) else {
            return Some("the compaction has no string firstKeptEntryId: nothing before it is kept".into());
        };
        // Its own id means "keep nothing" (what pi writes for a null firstKeptEntryId).
        if Some(first.as_str()) == e.id.as_deref() {
            return None;
        }
        match self.by_id.get(first.as_str()) {
            None => Some(format!(
                "the compaction keeps entries from {first}, which names no entry: nothing before it is kept"
            )),
            Some(&k) if !self.is_ancestor(k, i) => Some(format!(
                "the compaction keeps entries from {first}, which is not on its path: nothing before it is kept"
            )),
            Some(_) => None,
        }
    }
}
