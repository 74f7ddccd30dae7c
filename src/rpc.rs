//! `sessiondb rpc`: pi's `SessionManager` methods over JSON lines, so a host in any language
//! can use the database as its session store.
//!
//! Request: `{"id": <any>, "method": "<pi method>", "params": [<positional arguments>]}`.
//! Response: `{"id": <same>, "result": <value>}` or `{"id": <same>, "error": {"message": "…"}}`.
//! A `null` argument means "not given" (pi's `undefined`) except where pi accepts `null`.

use crate::error::{Error, Result};
use crate::js::json::{self, Object, Value};
use crate::manager::{NewSessionOptions, SessionManager};
use crate::read::discovery;
use crate::read::tree::TreeNode;
use crate::store::keys::SessionKey;
use std::path::{Path, PathBuf};

/// One connection's state: the database and the current manager.
pub struct RpcServer {
    db: PathBuf,
    current: Option<SessionManager>,
    /// The connection lookups (`list`, `listAll`) use, opened on first use.
    lookups: Option<crate::store::handle::Db>,
}

/// Positional arguments with pi's `undefined`/`null` rules.
struct Args<'a>(&'a [Value]);

impl<'a> Args<'a> {
    /// An optional argument: missing or `null` is `undefined`.
    fn opt(&self, i: usize) -> Option<Value> {
        match self.0.get(i) {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.clone()),
        }
    }
    /// An argument where `null` is a value of its own (missing is `undefined`).
    fn nullable(&self, i: usize) -> Option<Value> {
        self.0.get(i).cloned()
    }
    /// A required argument (`null` passes through as `null`).
    fn any(&self, i: usize) -> Value {
        self.0.get(i).cloned().unwrap_or(Value::Null)
    }
    fn opt_str(&self, i: usize, name: &str) -> Result<Option<String>> {
        match self.0.get(i) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.to_str().into_owned())),
            Some(_) => Err(Error::InvalidArgument(format!("{name} must be a string"))),
        }
    }
    fn str(&self, i: usize, name: &str) -> Result<String> {
        self.opt_str(i, name)?.ok_or_else(|| Error::InvalidArgument(format!("{name} is required")))
    }
    fn options(&self, i: usize) -> Result<NewSessionOptions> {
        let Some(Value::Object(o)) = self.opt(i) else { return Ok(NewSessionOptions::default()) };
        let field = |k: &str| -> Result<Option<String>> {
            match o.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.to_str().into_owned())),
                Some(_) => Err(Error::InvalidArgument(format!("options.{k} must be a string"))),
            }
        };
        Ok(NewSessionOptions { id: field("id")?, parent_session: field("parentSession")? })
    }
}

fn string_or_null(s: Option<&str>) -> Value {
    s.map_or(Value::Null, |s| Value::String(s.into()))
}

fn array(items: Vec<Value>) -> Value {
    Value::Array(items)
}

/// pi's nested `getTree()` shape written from the flattened pre-order nodes, without
/// recursion: `[{entry, children: [...], label?, labelTimestamp?}]`.
pub fn nested_tree_json(nodes: &[TreeNode]) -> String {
    let mut out = String::from("[");
    let mut suffixes: Vec<String> = Vec::new();
    let mut has_item: Vec<bool> = vec![false];
    for n in nodes {
        while suffixes.len() > n.depth {
            out.push(']');
            out.push_str(&suffixes.pop().unwrap_or_default());
            has_item.pop();
        }
        if has_item[n.depth] {
            out.push(',');
        }
        has_item[n.depth] = true;
        has_item.push(false);
        out.push_str("{\"entry\":");
        out.push_str(&n.row.parse().value.to_json());
        out.push_str(",\"children\":[");
        let mut suffix = String::new();
        if let Some((label, ts)) = &n.label {
            suffix.push_str(",\"label\":");
            suffix.push_str(&label.to_json());
            if let Some(ts) = ts {
                suffix.push_str(",\"labelTimestamp\":");
                suffix.push_str(&ts.to_json());
            }
        }
        suffix.push('}');
        suffixes.push(suffix);
    }
    while let Some(s) = suffixes.pop() {
        out.push(']');
        out.push_str(&s);
    }
    out.push(']');
    out
}

impl RpcServer {
    /// A server on the database at `db`.
    pub fn new(db: &Path) -> Self {
        RpcServer { db: db.to_path_buf(), current: None, lookups: None }
    }

    /// The current manager, for hosts that read it directly (the Node binding's caches).
    pub fn current(&self) -> Option<&SessionManager> {
        self.current.as_ref()
    }

    /// The current manager, for hosts that call it directly (the Node binding's appends).
    pub fn current_mut(&mut self) -> Option<&mut SessionManager> {
        self.current.as_mut()
    }

    /// Handles one request line; returns the response line (without `\n`).
    pub fn handle_line(&mut self, line: &str) -> String {
        let request = match json::parse(line.as_bytes()) {
            Ok(Value::Object(o)) => o,
            Ok(_) => return error_response(&Value::Null, "request must be a JSON object"),
            Err(e) => return error_response(&Value::Null, &format!("invalid JSON: {e}")),
        };
        let id = request.get("id").cloned().unwrap_or(Value::Null);
        let Some(method) = request.get("method").and_then(Value::as_str) else {
            return error_response(&id, "method must be a string");
        };
        let params = match request.get("params") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a.clone(),
            Some(_) => return error_response(&id, "params must be an array"),
        };
        match self.call(method, &Args(&params)) {
            Ok(result) => {
                let mut o = Object::new();
                o.set("id", id);
                o.set("result", result);
                Value::Object(o).to_json()
            }
            Err(e) => error_response(&id, &e.to_string()),
        }
    }

    fn manager(&mut self) -> Result<&mut SessionManager> {
        self.current.as_mut().ok_or_else(|| {
            Error::InvalidArgument(
                "no current session: call create, open, continueRecent, forkFrom or inMemory first".into(),
            )
        })
    }

    /// The connection list and listAll read through, with every append settled (this
    /// process's and any other's), as a fresh open would have them.
    fn lookup_conn(&mut self) -> Result<&crate::store::handle::Db> {
        if let Some(m) = &self.current {
            m.settle()?;
        }
        match &self.lookups {
            None => self.lookups = Some(crate::store::db::open(&self.db)?),
            Some(conn) => conn.store().settle_appends()?,
        }
        self.lookups.as_ref().ok_or_else(|| Error::InvalidArgument("no database connection".into()))
    }

    /// pi's `list(cwd, sessionDir?)` (`cwd` given) or `listAll(sessionDir?)`, without filling
    /// in `allMessagesText`: the Node binding reads the texts (`messagesTexts`) only when one is
    /// looked at, by each info's `sid` and `last_seq`.
    pub fn session_infos(
        &mut self,
        cwd: Option<&str>,
        session_dir: Option<&str>,
    ) -> Result<Vec<discovery::SessionInfo>> {
        let conn = self.lookup_conn()?;
        match (cwd, session_dir) {
            (Some(cwd), _) => {
                let dir = discovery::session_dir_for(cwd, session_dir);
                let filter = discovery::cwd_filter(cwd, session_dir, &dir);
                discovery::list_dir(conn, &dir, filter.as_deref())
            }
            // pi 1.6.0's listAll(sessionDir?): a folder given lists that folder, unfiltered.
            (None, Some(d)) => discovery::list_dir(conn, &discovery::session_dir_for("", Some(d)), None),
            (None, None) => discovery::list_all(conn),
        }
    }

    fn install(&mut self, m: SessionManager) -> Result<Value> {
        let o = m.opened();
        self.current = Some(m);
        let mut out = Object::new();
        out.set("sessionId", Value::String(o.session_id.as_str().into()));
        out.set("sessionFile", string_or_null(o.session_file.as_deref()));
        out.set("cwd", Value::String(o.cwd.as_str().into()));
        Ok(Value::Object(out))
    }

    fn call(&mut self, method: &str, a: &Args<'_>) -> Result<Value> {
        let db = self.db.clone();
        match method {
            // Static methods.
            "create" => {
                let m = SessionManager::create(
                    &db,
                    &a.str(0, "cwd")?,
                    a.opt_str(1, "sessionDir")?.as_deref(),
                    a.options(2)?,
                )?;
                self.install(m)
            }
            "open" => {
                let m = SessionManager::open(
                    &db,
                    &a.str(0, "path")?,
                    a.opt_str(1, "sessionDir")?.as_deref(),
                    a.opt_str(2, "cwdOverride")?.as_deref(),
                )?;
                self.install(m)
            }
            "continueRecent" => {
                let m =
                    SessionManager::continue_recent(&db, &a.str(0, "cwd")?, a.opt_str(1, "sessionDir")?.as_deref())?;
                self.install(m)
            }
            "forkFrom" => {
                let m = SessionManager::fork_from(
                    &db,
                    &a.str(0, "sourcePath")?,
                    &a.str(1, "targetCwd")?,
                    a.opt_str(2, "sessionDir")?.as_deref(),
                    a.options(3)?,
                )?;
                self.install(m)
            }
            "inMemory" => {
                let entries = match a.opt(2) {
                    None => Vec::new(),
                    Some(Value::Array(items)) => items,
                    Some(_) => return Err(Error::InvalidArgument("entries must be an array".into())),
                };
                let m =
                    SessionManager::in_memory_with_entries(a.opt_str(0, "cwd")?.as_deref(), a.options(1)?, &entries)?;
                self.install(m)
            }
            "findById" => {
                let p = SessionManager::find_by_id(
                    &db,
                    &a.str(0, "cwd")?,
                    &a.str(1, "id")?,
                    a.opt_str(2, "sessionDir")?.as_deref(),
                )?;
                Ok(string_or_null(p.as_deref()))
            }
            "list" => {
                let cwd = a.str(0, "cwd")?;
                let dir_arg = a.opt_str(1, "sessionDir")?;
                let conn = self.lookup_conn()?;
                let dir = discovery::session_dir_for(&cwd, dir_arg.as_deref());
                let filter = discovery::cwd_filter(&cwd, dir_arg.as_deref(), &dir);
                let mut infos = discovery::list_dir(conn, &dir, filter.as_deref())?;
                discovery::fill_all_text(conn, &mut infos)?;
                Ok(array(infos.iter().map(discovery::SessionInfo::to_value).collect()))
            }
            "listAll" => {
                // pi 1.6.0's listAll(sessionDir?): a folder given lists that folder, unfiltered.
                let dir_arg = a.opt_str(0, "sessionDir")?;
                let conn = self.lookup_conn()?;
                let mut infos = match dir_arg {
                    Some(d) => discovery::list_dir(conn, &discovery::session_dir_for("", Some(&d)), None)?,
                    None => discovery::list_all(conn)?,
                };
                discovery::fill_all_text(conn, &mut infos)?;
                Ok(array(infos.iter().map(discovery::SessionInfo::to_value).collect()))
            }
            "messagesTexts" => {
                let Value::Array(items) = a.any(0) else {
                    return Err(Error::InvalidArgument("sessions must be an array of [sid, lastSeq]".into()));
                };
                let pair = |v: &Value| -> Option<(SessionKey, i64)> {
                    let Value::Array(p) = v else { return None };
                    match (p.first()?, p.get(1)?) {
                        (Value::Number(sid), Value::Number(seq)) => Some((SessionKey(*sid as i64), *seq as i64)),
                        _ => None,
                    }
                };
                let sessions = items
                    .iter()
                    .map(|v| {
                        pair(v).ok_or_else(|| Error::InvalidArgument("each session must be [sid, lastSeq]".into()))
                    })
                    .collect::<Result<Vec<_>>>()?;
                let conn = self.lookup_conn()?;
                let texts = discovery::texts_of(conn, &sessions)?;
                Ok(array(texts.into_iter().map(|t| Value::String(t.as_str().into())).collect()))
            }
            _ => self.call_instance(method, a),
        }
    }

    fn call_instance(&mut self, method: &str, a: &Args<'_>) -> Result<Value> {
        // Each arm asks for the manager first, so that an unknown method is reported as such
        // even when no session is open.
        let m = self.manager();
        let id = |r: Result<String>| r.map(|s| Value::String(s.into()));
        match method {
            "appendMessage" => id(m?.append_message(a.any(0))),
            "appendThinkingLevelChange" => id(m?.append_thinking_level_change(a.nullable(0))),
            "appendModelChange" => id(m?.append_model_change(a.nullable(0), a.nullable(1))),
            "appendUsage" => m?.append_usage(a.nullable(0), a.nullable(1), a.nullable(2), a.nullable(3), a.opt(4)),
            "appendCompaction" => {
                let m = m?;
                id(m.append_compaction(a.nullable(0), a.nullable(1), a.nullable(2), a.opt(3), a.opt(4), a.opt(5)))
            }
            "appendCustomEntry" => id(m?.append_custom_entry(a.nullable(0), a.opt(1))),
            "appendSessionInfo" => {
                let m = m?;
                let name = a.str(0, "name")?;
                id(m.append_session_info(&name))
            }
            "appendCustomMessageEntry" => {
                let m = m?;
                id(m.append_custom_message_entry(a.nullable(0), a.nullable(1), a.nullable(2), a.opt(3)))
            }
            "appendContextEdit" => {
                let m = m?;
                let target = a.str(0, "targetId")?;
                id(m.append_context_edit(&target, a.nullable(1)))
            }
            "appendLabelChange" => {
                let m = m?;
                let target = a.str(0, "targetId")?;
                id(m.append_label_change(&target, a.opt(1)))
            }
            "branch" => {
                let m = m?;
                let target = a.str(0, "branchFromId")?;
                m.branch(&target).map(|_| Value::Null)
            }
            "resetLeaf" => {
                let m = m?;
                m.reset_leaf();
                Ok(Value::Null)
            }
            "branchWithSummary" => {
                let m = m?;
                let from = a.opt_str(0, "branchFromId")?;
                id(m.branch_with_summary(from.as_deref(), a.nullable(1), a.opt(2), a.opt(3), a.opt(4)))
            }
            "createBranchedSession" => {
                let m = m?;
                let leaf = a.opt_str(0, "leafId")?;
                Ok(string_or_null(m.create_branched_session(leaf.as_deref())?.as_deref()))
            }
            "getLeafId" => Ok(string_or_null(m?.leaf_id())),
            "getLeafEntry" => Ok(m?.leaf_entry()?.unwrap_or(Value::Null)),
            "getEntry" => Ok(m?.entry(&a.str(0, "id")?)?.unwrap_or(Value::Null)),
            "getChildren" => Ok(array(m?.children(&a.str(0, "parentId")?)?)),
            "getLabel" => Ok(m?.label(&a.str(0, "id")?).cloned().unwrap_or(Value::Null)),
            "getBranch" => Ok(array(m?.get_branch(a.opt_str(0, "fromId")?.as_deref())?)),
            "getTree" => Ok(Value::Raw(nested_tree_json(&m?.tree_nodes()?))),
            "getEntries" => Ok(array(m?.entries()?)),
            "getHeader" => m?.header(),
            "getSessionName" => Ok(string_or_null(m?.session_name()?.as_deref())),
            "getSessionId" => Ok(Value::String(m?.session_id().into())),
            "getSessionFile" => Ok(string_or_null(m?.session_file())),
            "getSessionDir" => Ok(Value::String(m?.session_dir().into())),
            "getCwd" => Ok(Value::String(m?.cwd().into())),
            "getEntryCount" => Ok(Value::Number(m?.entry_count()? as f64)),
            "isPersisted" => Ok(Value::Bool(m?.is_persisted())),
            "buildContextEntries" => Ok(array(m?.build_context_entries()?)),
            "buildSessionProjection" => m?.build_session_projection(),
            "buildSessionContext" => m?.build_session_context(),
            other => Err(Error::InvalidArgument(format!("unknown method: {other}"))),
        }
    }
}

fn error_response(id: &Value, message: &str) -> String {
    let mut err = Object::new();
    err.set("message", Value::String(message.into()));
    let mut o = Object::new();
    o.set("id", id.clone());
    o.set("error", Value::Object(err));
    Value::Object(o).to_json()
}
