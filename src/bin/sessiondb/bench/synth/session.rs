//! One synthetic session, entry by entry, as pi's SessionManager would append it: setup
//! entries, then turns of user prompt, assistant tool rounds and tool results, with occasional
//! model/thinking changes, names, labels, usage records, compactions and `/tree` branches.

use super::agent::{self, Model, MODELS, MODEL_CUM, THINKING};
use super::line::{self, Obj};
use super::rng::Rng;
use super::text::Text;
use sessiondb::internals::jstime::iso_from_ms;
use std::collections::HashSet;
use std::io::Write;

/// What to generate for one session.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Project directory (header `cwd`).
    pub cwd: String,
    /// Header time (Unix ms).
    pub start_ms: i64,
    /// Exact number of entries.
    pub entries: usize,
    /// Append compactions (about every 200 entries).
    pub compactions: bool,
}

/// Why generation stopped early.
#[derive(Debug)]
pub enum Stop {
    /// The planned number of entries is written.
    Done,
    /// Writing failed.
    Io(std::io::Error),
}

impl From<std::io::Error> for Stop {
    fn from(e: std::io::Error) -> Self {
        Stop::Io(e)
    }
}

type Step = Result<(), Stop>;

/// Writes the lines of one session and tracks the tree position.
pub struct SessionWriter<'a, W: Write> {
    out: W,
    rng: &'a mut Rng,
    text: &'a Text,
    sections: &'a str,
    ids: HashSet<String>,
    leaf: Option<String>,
    count: usize,
    target: usize,
    /// Virtual clock (Unix ms).
    pub now: i64,
}

/// A user message on the current path since the last compaction: its id, its parent and the
/// entry count when it was written.
struct PathUser {
    id: String,
    parent: Option<String>,
    at: usize,
}

impl<'a, W: Write> SessionWriter<'a, W> {
    /// A writer for `plan`, whose header is written first.
    pub fn new(out: W, rng: &'a mut Rng, text: &'a Text, sections: &'a str, plan: &Plan, id: &str) -> Self {
        SessionWriter {
            out,
            rng,
            text,
            sections,
            ids: HashSet::with_capacity(plan.entries),
            leaf: None,
            count: 0,
            target: plan.entries,
            now: plan.start_ms,
        }
        .with_header(plan, id)
    }

    fn with_header(mut self, plan: &Plan, id: &str) -> Self {
        let header = Obj::new()
            .str("type", "session")
            .int("version", 3)
            .str("id", id)
            .str("timestamp", &iso_from_ms(plan.start_ms))
            .str("cwd", &plan.cwd)
            .end();
        // An error here shows up again at the first entry's write.
        let _ = writeln!(self.out, "{header}");
        self
    }

    /// The output, once the session is written.
    pub fn into_inner(self) -> W {
        self.out
    }

    fn advance(&mut self, lo: f64, hi: f64) {
        self.now += self.rng.log_uniform(lo, hi);
    }

    fn new_id(&mut self) -> String {
        loop {
            let id = self.rng.hex(8);
            if self.ids.insert(id.clone()) {
                return id;
            }
        }
    }

    /// `type, id, parentId, timestamp` of a new entry under `parent`.
    fn head(&mut self, kind: &str, parent: Option<&str>) -> (String, Obj) {
        let id = self.new_id();
        let o = Obj::new()
            .str("type", kind)
            .str("id", &id)
            .str_or_null("parentId", parent)
            .str("timestamp", &iso_from_ms(self.now));
        (id, o)
    }

    /// Writes an entry and moves the leaf to it; `Stop::Done` once the session is full.
    fn push(&mut self, id: &str, entry: Obj) -> Step {
        writeln!(self.out, "{}", entry.end())?;
        self.leaf = Some(id.to_string());
        self.count += 1;
        if self.count >= self.target {
            return Err(Stop::Done);
        }
        Ok(())
    }

    fn append(&mut self, kind: &str, fill: impl FnOnce(Obj) -> Obj) -> Result<String, Stop> {
        let leaf = self.leaf.clone();
        let (id, o) = self.head(kind, leaf.as_deref());
        self.push(&id, fill(o))?;
        Ok(id)
    }

    fn message(&mut self, message: String) -> Result<String, Stop> {
        self.append("message", |o| o.raw("message", &message))
    }

    /// Generates the whole session.
    pub fn run(&mut self, plan: &Plan) -> Step {
        if self.target == 0 {
            return Ok(());
        }
        match self.turns(plan) {
            Err(Stop::Done) | Ok(()) => Ok(()),
            Err(e) => Err(e),
        }
    }

    fn turns(&mut self, plan: &Plan) -> Step {
        let mut model: Model = MODELS[self.rng.weighted(MODEL_CUM)];
        let mut thinking = *self.rng.pick(THINKING);
        let mut context: i64 = 3000;
        let mut compacted_at = 0usize;
        let mut next_compaction = self.rng.int(160, 240) as usize;
        let mut path_users: Vec<PathUser> = Vec::new();
        let mut recent: Vec<String> = Vec::new();
        let mut named = false;

        self.append("model_change", |o| o.str("provider", model.provider).str("modelId", model.id))?;
        self.advance(5.0, 200.0);
        self.append("thinking_level_change", |o| o.str("thinkingLevel", thinking))?;
        self.advance(1000.0, 60_000.0);
        let system = Obj::new()
            .str("role", "system")
            .str("content", "")
            .raw("sections", self.sections)
            .int("timestamp", self.now)
            .raw("toolsAdded", agent::TOOLS_ADDED)
            .end();
        self.message(system)?;

        for turn in 0.. {
            if turn > 0 {
                if !named && self.rng.chance(0.25) || named && self.rng.chance(0.005) {
                    self.advance(1000.0, 20_000.0);
                    let name = self.text.session_name(self.rng);
                    self.append("session_info", |o| o.str("name", &name))?;
                    named = true;
                }
                if self.rng.chance(0.03) {
                    self.advance(1000.0, 30_000.0);
                    model = MODELS[self.rng.weighted(MODEL_CUM)];
                    self.append("model_change", |o| o.str("provider", model.provider).str("modelId", model.id))?;
                }
                if self.rng.chance(0.03) {
                    self.advance(1000.0, 30_000.0);
                    thinking = *self.rng.pick(THINKING);
                    self.append("thinking_level_change", |o| o.str("thinkingLevel", thinking))?;
                }
                if self.rng.chance(0.03) {
                    self.advance(240_000.0, 290_000.0);
                    let usage = model.usage(0, 1, context * 95 / 100, 0);
                    let note = self.rng.chance(0.1);
                    self.append("usage", |o| {
                        let o = o.str("kind", "cache_warm").str("provider", model.provider).str("model", model.id);
                        let o = o.raw("usage", &usage);
                        if note {
                            o.str("note", "extension override")
                        } else {
                            o
                        }
                    })?;
                }
                if !recent.is_empty() && self.rng.chance(0.03) {
                    self.advance(2000.0, 60_000.0);
                    let from = recent.len().saturating_sub(12);
                    let target = recent[from + self.rng.index(recent.len() - from)].clone();
                    let label = self.text.label(self.rng);
                    self.append("label", |o| o.str("targetId", &target).str("label", &label))?;
                }
                if plan.compactions && self.count - compacted_at >= next_compaction {
                    self.compaction(&model, &mut path_users)?;
                    compacted_at = self.count;
                    next_compaction = self.rng.int(160, 240) as usize;
                    context = self.rng.int(12_000, 40_000);
                }
                if path_users.len() >= 2 && self.rng.chance(0.04) {
                    self.branch(&model, &mut path_users)?;
                }
            }
            self.advance(if turn == 0 { 5000.0 } else { 15_000.0 }, if turn == 0 { 60_000.0 } else { 600_000.0 });
            let text = self.text.user_text(self.rng);
            let user = Obj::new()
                .str("role", "user")
                .raw("content", &line::array([Obj::new().str("type", "text").str("text", &text).end()]))
                .int("timestamp", self.now)
                .end();
            let (at, parent) = (self.count, self.leaf.clone());
            let uid = self.message(user)?;
            path_users.push(PathUser { id: uid.clone(), parent, at });
            recent.push(uid);
            context += 150;
            self.agent_loop(&model, thinking, &mut context, &mut recent)?;
        }
        Ok(())
    }

    /// A compaction keeping the path from a user message at least 12 entries back.
    fn compaction(&mut self, model: &Model, path_users: &mut Vec<PathUser>) -> Step {
        self.advance(10_000.0, 90_000.0);
        let first_kept = path_users.iter().rev().find(|u| self.count - u.at >= 12).map(|u| u.id.clone());
        let summary = agent::compaction_summary(self.rng, self.text);
        let tokens_before = self.rng.int(120_000, 195_000);
        let details = agent::file_lists(self.rng, self.text);
        let (i, o, r) = (self.rng.int(20_000, 60_000), self.rng.int(800, 3000), self.rng.int(0, 100_000));
        let usage = model.usage(i, o, r, 0);
        let leaf = self.leaf.clone();
        let (id, head) = self.head("compaction", leaf.as_deref());
        let system = Obj::new()
            .str("role", "system")
            .str("content", "")
            .raw("sections", self.sections)
            .raw("toolsAdded", agent::TOOLS_ADDED)
            .int("timestamp", self.now)
            .end();
        let entry = head
            .str("summary", &summary)
            .str("firstKeptEntryId", first_kept.as_deref().unwrap_or(&id))
            .int("tokensBefore", tokens_before)
            .raw("details", &details)
            .raw("usage", &usage)
            .bool("fromHook", false)
            .raw("systemMessage", &system);
        path_users.clear();
        self.push(&id, entry)
    }

    /// `/tree` navigation back before one of the last five prompts, plain or with a summary.
    fn branch(&mut self, model: &Model, path_users: &mut Vec<PathUser>) -> Step {
        self.advance(5000.0, 120_000.0);
        let k = path_users.len().saturating_sub(self.rng.int(1, 5) as usize);
        // Back to the parent of that prompt: the next prompt re-does it on a new branch.
        let from = path_users[k].parent.clone();
        path_users.truncate(k);
        if self.rng.chance(0.5) {
            self.leaf = from;
            return Ok(());
        }
        let n = self.rng.int(300, 1500);
        let summary = format!("The user explored a different direction.\n\n{}", self.text.prose(self.rng, n));
        let details = agent::file_lists(self.rng, self.text);
        let usage = model.usage(self.rng.int(5000, 40_000), self.rng.int(300, 1500), 0, 0);
        let old_leaf = self.leaf.clone().unwrap_or_else(|| "root".into());
        let (id, head) = self.head("branch_summary", from.as_deref());
        let entry = head
            .str("fromId", &old_leaf)
            .str("summary", &summary)
            .raw("details", &details)
            .raw("usage", &usage)
            .bool("fromHook", false);
        self.push(&id, entry)
    }

    /// Tool rounds (assistant + one result per call), then a final answer.
    fn agent_loop(&mut self, model: &Model, thinking: &str, context: &mut i64, recent: &mut Vec<String>) -> Step {
        let rounds = ((-(1.0 - self.rng.float()).ln() * 3.2).floor() as usize).min(14);
        for r in 0..=rounds {
            let last = r == rounds;
            let started = self.now;
            let duration = self.rng.log_uniform(1500.0, if last { 90_000.0 } else { 40_000.0 });
            let mut blocks = Vec::new();
            if thinking != "off" && self.rng.chance(0.6) {
                let n = self.rng.log_uniform(80.0, 3000.0);
                let mut th = Obj::new().str("type", "thinking").str("thinking", &self.text.prose(self.rng, n));
                if model.provider == "anthropic" {
                    let n = self.rng.int(300, 700);
                    th = th.str("thinkingSignature", &self.text.blob(self.rng, n));
                }
                blocks.push(th.end());
            }
            if last || self.rng.chance(0.5) {
                let n = if last { self.rng.log_uniform(60.0, 2500.0) } else { self.rng.log_uniform(20.0, 400.0) };
                blocks.push(Obj::new().str("type", "text").str("text", &self.text.paragraphs(self.rng, n)).end());
            }
            let mut calls = Vec::new();
            if !last {
                let n = if self.rng.chance(0.75) { 1 } else { self.rng.int(2, 3) };
                for _ in 0..n {
                    calls.push(self.tool_call(model));
                }
            }
            blocks.extend(calls.iter().map(|c| c.block.clone()));
            let content = line::array(blocks);
            let out_tokens = content.len() as i64 / 4;
            let (input, write) = (self.rng.int(1, 3000), self.rng.int(200, 4000));
            let usage = model.usage(input, out_tokens, *context, write);
            let aborted = last && self.rng.chance(0.01);
            let mut m = Obj::new()
                .str("role", "assistant")
                .raw("content", &content)
                .str("api", model.api)
                .str("provider", model.provider)
                .str("model", model.id)
                .raw("usage", &usage)
                .str(
                    "stopReason",
                    if aborted {
                        "aborted"
                    } else if last {
                        "stop"
                    } else {
                        "toolUse"
                    },
                )
                .int("timestamp", started);
            if aborted {
                m = m.str("errorMessage", "Request was aborted");
            }
            if model.provider == "anthropic" && thinking != "off" {
                m = m.str("providerThinkingLevel", if thinking == "minimal" { "low" } else { thinking });
            }
            let m = m
                .str("responseId", &model.response_id(self.rng))
                .int("durationMs", duration)
                .str("thinkingLevel", thinking);
            self.now += duration;
            let aid = self.message(m.end())?;
            recent.push(aid);
            *context += out_tokens;
            for call in calls {
                let tool_ms = self.rng.log_uniform(40.0, 60_000.0);
                self.now += tool_ms;
                let (result, len) = self.tool_result(&call, tool_ms);
                self.message(result)?;
                *context += len as i64 / 4;
            }
        }
        Ok(())
    }

    fn tool_call(&mut self, model: &Model) -> ToolCall {
        let id = model.call_id(self.rng);
        let path = self.text.file(self.rng);
        let r = self.rng.float();
        let mut edit_count = 1;
        let (name, args) = if r < 0.4 {
            let mut a = Obj::new().str("path", &path);
            if self.rng.chance(0.2) {
                a = a.int("offset", self.rng.int(1, 800)).int("limit", *self.rng.pick(&[50, 100, 200, 400]));
            }
            ("read", a.end())
        } else if r < 0.75 {
            let cmd = *self.rng.pick(&[
                "npm test 2>&1 | tail -80",
                "git status --short && git diff --stat",
                "cargo build --release 2>&1 | tail -40",
                "rg -n \"parentId\" src",
                "ls -la src/core",
            ]);
            let mut a = Obj::new().str("command", cmd);
            if self.rng.chance(0.15) {
                a = a.int("timeout", *self.rng.pick(&[30, 60, 120, 600]));
            }
            ("bash", a.end())
        } else if r < 0.93 {
            let n = if self.rng.chance(0.7) { 1 } else { self.rng.int(2, 3) };
            edit_count = n as usize;
            let edits: Vec<String> = (0..n)
                .map(|_| {
                    let (a, b) = (self.rng.log_uniform(30.0, 400.0), self.rng.log_uniform(30.0, 600.0));
                    Obj::new()
                        .str("oldText", &self.text.code(self.rng, a))
                        .str("newText", &self.text.code(self.rng, b))
                        .end()
                })
                .collect();
            ("edit", Obj::new().str("path", &path).raw("edits", &line::array(edits)).end())
        } else {
            let n = self.rng.log_uniform(200.0, 8000.0);
            ("write", Obj::new().str("path", &path).str("content", &self.text.code(self.rng, n)).end())
        };
        let block = Obj::new().str("type", "toolCall").str("id", &id).str("name", name).raw("arguments", &args).end();
        ToolCall { id, name, path, block, edits: edit_count }
    }

    /// A toolResult message for `call` and the length of its text.
    fn tool_result(&mut self, call: &ToolCall, duration: i64) -> (String, usize) {
        let mut details = None;
        let mut is_error = false;
        let text = match call.name {
            "read" => {
                let n = self.rng.log_uniform(200.0, 20_000.0);
                self.text.code(self.rng, n)
            }
            "bash" => {
                is_error = self.rng.chance(0.06);
                let n = self.rng.log_uniform(200.0, 20_000.0);
                let mut t = self.text.log(self.rng, n);
                if is_error {
                    t.push_str(&format!("\n\nCommand exited with code {}", self.rng.pick(&[1, 1, 2, 101, 127])));
                }
                t
            }
            "edit" => {
                let n = self.rng.log_uniform(200.0, 4000.0);
                let diff: Vec<String> = self
                    .text
                    .code(self.rng, n)
                    .lines()
                    .enumerate()
                    .map(|(i, l)| format!("{}{:>4} {l}", ["+", "-", " "][i % 3], i + 1))
                    .collect();
                let diff = diff.join("\n");
                let (a, b) = (self.rng.int(1, 400), self.rng.int(1, 400));
                let patch = format!("--- {p}\n+++ {p}\n@@ -{a},7 +{b},9 @@\n{diff}", p = call.path);
                let first = self.rng.int(1, 900);
                details = Some(Obj::new().str("diff", &diff).str("patch", &patch).int("firstChangedLine", first).end());
                format!("Successfully replaced {} block(s) in {}.", call.edits, call.path)
            }
            _ => format!("Successfully wrote to {}", call.path),
        };
        let content = line::array([Obj::new().str("type", "text").str("text", &text).end()]);
        let mut m = Obj::new()
            .str("role", "toolResult")
            .str("toolCallId", &call.id)
            .str("toolName", call.name)
            .raw("content", &content);
        if let Some(d) = details {
            m = m.raw("details", &d);
        }
        let m = m.bool("isError", is_error).int("durationMs", duration).int("timestamp", self.now);
        (m.end(), text.len())
    }
}

/// A tool call made by an assistant message.
struct ToolCall {
    id: String,
    name: &'static str,
    path: String,
    block: String,
    edits: usize,
}
