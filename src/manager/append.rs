//! pi's `append*` methods: each builds its entry as pi does and writes it under the leaf.

use super::*;

impl SessionManager {
    // ----- appends ------------------------------------------------------------------------

    /// pi's `appendMessage(message)`; returns the entry id.
    pub fn append_message(&mut self, message: Value) -> Result<String> {
        let id = self.new_id()?;
        let e = build::message(&id, self.leaf.as_deref(), &jstime::now_iso(), Some(message));
        self.write_entry(e)
    }

    /// pi's `appendThinkingLevelChange(thinkingLevel)`.
    pub fn append_thinking_level_change(&mut self, level: Opt) -> Result<String> {
        let id = self.new_id()?;
        let e = build::thinking_level_change(&id, self.leaf.as_deref(), &jstime::now_iso(), level);
        self.write_entry(e)
    }

    /// pi's `appendModelChange(provider, modelId)`.
    pub fn append_model_change(&mut self, provider: Opt, model_id: Opt) -> Result<String> {
        let id = self.new_id()?;
        let e = build::model_change(&id, self.leaf.as_deref(), &jstime::now_iso(), provider, model_id);
        self.write_entry(e)
    }

    /// pi's `appendUsage(kind, provider, model, usage, note?)`; returns the entry.
    pub fn append_usage(&mut self, kind: Opt, provider: Opt, model: Opt, usage: Opt, note: Opt) -> Result<Value> {
        let id = self.new_id()?;
        let e = build::usage(&id, self.leaf.as_deref(), &jstime::now_iso(), kind, provider, model, usage, note);
        self.write_entry(e.clone())?;
        Ok(Value::Object(e))
    }

    /// pi's `appendCompaction(summary, firstKeptEntryId, tokensBefore, details?, fromHook?, usage?)`;
    /// snapshots the current system message.
    #[allow(clippy::too_many_arguments)]
    pub fn append_compaction(
        &mut self,
        summary: Opt,
        first_kept_entry_id: Option<Value>,
        tokens_before: Opt,
        details: Opt,
        from_hook: Opt,
        usage: Opt,
    ) -> Result<String> {
        let ts = jstime::now_iso();
        let messages = match self.build_session_projection()? {
            Value::Object(o) => match o.get("messages") {
                Some(Value::Array(m)) => m.clone(),
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        let system_message = system::current_system_message(&messages).map(|mut sm| {
            let ms = jstime::parse_ms(&ts).map_or(Value::Null, |t| Value::Number(t as f64));
            sm.set("timestamp", ms);
            Value::Object(sm)
        });
        let id = self.new_id()?;
        let first_kept = match first_kept_entry_id {
            None | Some(Value::Null) => Value::String(id.as_str().into()),
            Some(v) => v,
        };
        let e = build::compaction(
            &id,
            self.leaf.as_deref(),
            &ts,
            build::CompactionFields {
                summary,
                first_kept_entry_id: first_kept,
                tokens_before,
                details,
                usage,
                from_hook,
                system_message,
            },
        );
        self.write_entry(e)
    }

    /// pi's `appendCustomEntry(customType, data?)`.
    pub fn append_custom_entry(&mut self, custom_type: Opt, data: Opt) -> Result<String> {
        let id = self.new_id()?;
        let e = build::custom(&id, self.leaf.as_deref(), &jstime::now_iso(), custom_type, data);
        self.write_entry(e)
    }

    /// pi's `appendSessionInfo(name)`: line breaks become spaces, then trimmed.
    pub fn append_session_info(&mut self, name: &str) -> Result<String> {
        let id = self.new_id()?;
        let e = build::session_info(&id, self.leaf.as_deref(), &jstime::now_iso(), &build::clean_session_name(name));
        self.write_entry(e)
    }

    /// pi's `appendCustomMessageEntry(customType, content, display, details?)`.
    pub fn append_custom_message_entry(
        &mut self,
        custom_type: Opt,
        content: Opt,
        display: Opt,
        details: Opt,
    ) -> Result<String> {
        let id = self.new_id()?;
        let e = build::custom_message(
            &id,
            self.leaf.as_deref(),
            &jstime::now_iso(),
            custom_type,
            content,
            display,
            details,
        );
        self.write_entry(e)
    }

    /// pi's `appendContextEdit(targetId, replacement)` with pi's validation.
    pub fn append_context_edit(&mut self, target_id: &str, replacement: Option<Value>) -> Result<String> {
        // `None` is a missing replacement (`undefined`), which pi rejects first.
        let valid = match &replacement {
            Some(Value::Null) => true,
            Some(Value::Object(o)) => matches!(o.get("content"), Some(Value::String(_) | Value::Array(_))),
            _ => false,
        };
        let Some(replacement) = replacement.filter(|_| valid) else {
            return Err(Error::InvalidArgument(
                "Context edit replacement must be null or contain string/array content".into(),
            ));
        };
        let t = self.tree()?;
        let target = t.entry(target_id)?.ok_or_else(|| not_found(target_id))?;
        if !self.on_active_branch(&t, &target)? {
            return Err(Error::InvalidArgument(format!("Entry {target_id} is not on the active branch")));
        }
        let kind = target.kind.as_deref();
        let role = target.role.as_deref();
        let editable = kind == Some("custom_message")
            || (kind == Some("message") && matches!(role, Some("user" | "assistant" | "toolResult")));
        if !editable {
            return Err(Error::InvalidArgument(format!(
                "Entry {target_id} does not contribute editable model content"
            )));
        }
        let target_role = if kind == Some("message") { role } else { Some("custom") };
        let normalized = match (&replacement, target_role) {
            (Value::Object(o), Some("assistant" | "toolResult"))
                if matches!(o.get("content"), Some(Value::String(_))) =>
            {
                let text = o.get("content").cloned().unwrap_or(Value::Null);
                let block = build::object(vec![("type", Some(build::s("text"))), ("text", Some(text))]);
                Value::Object(build::object(vec![("content", Some(Value::Array(vec![Value::Object(block)])))]))
            }
            _ => replacement,
        };
        let id = self.new_id()?;
        let e = build::context_edit(&id, self.leaf.as_deref(), &jstime::now_iso(), target_id, normalized);
        self.write_entry(e)
    }

    /// True when `target` is on the path from the root to the leaf.
    fn on_active_branch(&self, t: &SessionTree<'_>, target: &Row) -> Result<bool> {
        let Some(leaf) = self.leaf.as_deref() else { return Ok(false) };
        let Some(leaf_row) = t.entry(leaf)? else { return Ok(false) };
        let path = match (leaf_row.depth, target.depth) {
            // Regular trees: walk only as far up as the target's depth.
            (Some(ld), Some(td)) if t.is_regular() => {
                if td > ld {
                    return Ok(false);
                }
                t.walk_up(leaf_row.key, None, ld - td + 1)?
            }
            _ => t.path_to(&leaf_row)?,
        };
        Ok(path.entries.iter().any(|r| r.key == target.key))
    }

    /// pi's `appendLabelChange(targetId, label?)`: a truthy label sets, anything else clears.
    pub fn append_label_change(&mut self, target_id: &str, label: Opt) -> Result<String> {
        if !self.exists(target_id)? {
            return Err(not_found(target_id));
        }
        let id = self.new_id()?;
        let ts = jstime::now_iso();
        let e = build::label(&id, self.leaf.as_deref(), &build::s(&ts), target_id, label.clone());
        let id = self.write_entry(e)?;
        match label.filter(Value::is_truthy) {
            Some(l) => {
                let ts = Some(build::s(&ts));
                match self.labels.get_mut(target_id) {
                    Some(slot) => *slot = (l, ts),
                    None => {
                        self.labels.insert(target_id.to_string(), (l, ts));
                    }
                }
            }
            None => {
                self.labels.shift_remove(target_id);
            }
        }
        Ok(id)
    }
}
