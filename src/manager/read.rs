//! The SessionManager's reads: the leaf, entries, children, labels, the branch, the tree and
//! the context pi builds from them, and the session's fields.

use super::*;

impl SessionManager {
    // ----- reads --------------------------------------------------------------------------

    /// pi's `getLeafId()`.
    pub fn leaf_id(&self) -> Option<&str> {
        self.leaf.as_deref()
    }

    /// pi's `getLeafEntry()`.
    pub fn leaf_entry(&self) -> Result<Option<Value>> {
        match self.leaf.as_deref() {
            Some(id) => self.entry(id),
            None => Ok(None),
        }
    }

    /// pi's `getEntry(id)`.
    pub fn entry(&self, id: &str) -> Result<Option<Value>> {
        Ok(self.tree()?.entry(id)?.map(|r| r.parse().value))
    }

    /// pi's `getChildren(id)`.
    pub fn children(&self, id: &str) -> Result<Vec<Value>> {
        Ok(self.tree()?.children(id)?.iter().map(|r| r.parse().value).collect())
    }

    /// pi's `getLabel(id)`.
    pub fn label(&self, id: &str) -> Option<&Value> {
        self.labels.get(id).map(|(l, _)| l)
    }

    /// pi's `getBranch(fromId?)` as parsed entries.
    fn branch_path(&self, from: Option<&str>) -> Result<Vec<ParsedEntry<EntryKey>>> {
        let start = from.map(str::to_owned).or_else(|| self.leaf.clone());
        let Some(start) = start else { return Ok(Vec::new()) };
        let t = self.tree()?;
        let path = t.branch(Some(&start))?;
        Ok(path.entries.iter().map(Row::parse).collect())
    }

    /// pi's `getBranch(fromId?)`: root first.
    pub fn get_branch(&self, from: Option<&str>) -> Result<Vec<Value>> {
        Ok(self.branch_path(from)?.into_iter().map(|e| e.value).collect())
    }

    /// pi's `getTree()`, flattened in pre-order (see [`TreeNode`]).
    pub fn tree_nodes(&self) -> Result<Vec<TreeNode>> {
        self.tree()?.tree()
    }

    /// pi's `getEntries()`.
    pub fn entries(&self) -> Result<Vec<Value>> {
        Ok(self.tree()?.all_entries()?.iter().map(|r| r.parse().value).collect())
    }

    /// pi's `getHeader()`.
    pub fn header(&self) -> Result<Value> {
        let h = self.db()?.store().session_row(self.sid)?.header;
        Ok(json::parse_or_raw(&h).unwrap_or(Value::Null))
    }

    /// pi's `getSessionName()`.
    pub fn session_name(&self) -> Result<Option<String>> {
        Ok(self.db()?.store().load_stats(self.sid)?.stats.name)
    }

    /// pi's `getSessionId()`.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// pi's `getSessionFile()`.
    pub fn session_file(&self) -> Option<&str> {
        self.persistence.file()
    }

    /// pi's `getCwd()`.
    pub fn cwd(&self) -> &str {
        &self.cwd
    }

    /// pi's `getSessionDir()`.
    pub fn session_dir(&self) -> &str {
        &self.session_dir
    }

    /// pi's `getEntryCount()`: distinct entry ids.
    pub fn entry_count(&self) -> Result<i64> {
        let write::StoredStats { stats, tree_ok: regular, .. } = self.db()?.store().load_stats(self.sid)?;
        if regular {
            return Ok(stats.entry_count); // ids are unique
        }
        self.db()?.store().distinct_entry_ids(self.sid)
    }

    /// pi's `isPersisted()`.
    pub fn is_persisted(&self) -> bool {
        self.persists()
    }

    /// True once the session is in the database (not staged, not in memory).
    pub fn is_saved(&self) -> bool {
        matches!(self.persistence, Persistence::Saved { .. })
    }

    /// What the constructors report.
    pub fn opened(&self) -> Opened {
        Opened {
            session_id: self.session_id.clone(),
            session_file: self.persistence.file().map(str::to_owned),
            cwd: self.cwd.clone(),
        }
    }

    fn leaf_arg(&self) -> Leaf {
        match &self.leaf {
            Some(id) => Leaf::Id(id.clone()),
            None => Leaf::Null,
        }
    }

    /// pi's `buildContextEntries()`.
    pub fn build_context_entries(&self) -> Result<Vec<Value>> {
        Ok(self.tree()?.context(&self.leaf_arg())?.entries.into_iter().map(|e| e.value).collect())
    }

    /// pi's `buildSessionProjection()`.
    pub fn build_session_projection(&self) -> Result<Value> {
        Ok(self.tree()?.projection(&self.leaf_arg())?.0)
    }

    /// pi's `buildSessionContext()`: `{messages, thinkingLevel, model}`.
    pub fn build_session_context(&self) -> Result<Value> {
        let p = self.build_session_projection()?;
        let mut out = Object::new();
        if let Value::Object(o) = p {
            for k in ["messages", "thinkingLevel", "model"] {
                if let Some(v) = o.get(k) {
                    out.set(k, v.clone());
                }
            }
        }
        Ok(Value::Object(out))
    }

    /// The database key of the current session (for export and tests).
    pub fn session_key(&self) -> SessionKey {
        self.sid
    }
}
