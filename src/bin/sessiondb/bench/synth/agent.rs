//! What pi's agent records besides the conversation: the models it talks to (with prices and
//! id formats), its tool declarations, and the system prompt sections.

use super::line::{self, Obj};
use super::rng::Rng;
use super::text::Text;

/// How a provider formats tool-call and response ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdStyle {
    /// `toolu_01…` / `msg_01…`
    Anthropic,
    /// `call_…|fc_…` / `resp_…`
    OpenAi,
    /// short hex / base62
    Google,
}

/// A model with its provider, API, share of use and prices (USD per million tokens).
#[derive(Debug, Clone, Copy)]
pub struct Model {
    /// `provider`.
    pub provider: &'static str,
    /// `api`.
    pub api: &'static str,
    /// `model` / `modelId`.
    pub id: &'static str,
    /// Input, output, cache read, cache write prices.
    pub price: [f64; 4],
    /// Id formats.
    pub style: IdStyle,
}

/// The models sessions use.
pub const MODELS: &[Model] = &[
    Model {
        provider: "anthropic",
        api: "anthropic-messages",
        id: "claude-sonnet-4-5",
        price: [3.0, 15.0, 0.3, 3.75],
        style: IdStyle::Anthropic,
    },
    Model {
        provider: "anthropic",
        api: "anthropic-messages",
        id: "claude-opus-4-5",
        price: [5.0, 25.0, 0.5, 6.25],
        style: IdStyle::Anthropic,
    },
    Model {
        provider: "openai",
        api: "openai-responses",
        id: "gpt-5.1-codex",
        price: [1.25, 10.0, 0.125, 0.0],
        style: IdStyle::OpenAi,
    },
    Model {
        provider: "google",
        api: "google-generative-ai",
        id: "gemini-2.5-pro",
        price: [1.25, 10.0, 0.31, 0.0],
        style: IdStyle::Google,
    },
];
/// Cumulative weights of [`MODELS`] (45, 20, 25, 10).
pub const MODEL_CUM: &[f64] = &[45.0, 65.0, 90.0, 100.0];
/// pi's thinking levels.
pub const THINKING: &[&str] = &["off", "minimal", "low", "medium", "high"];

impl Model {
    /// A tool-call id in this provider's format.
    pub fn call_id(&self, rng: &mut Rng) -> String {
        match self.style {
            IdStyle::Anthropic => format!("toolu_01{}", rng.base62(22)),
            IdStyle::OpenAi => format!("call_{}|fc_{}", rng.base62(24), rng.hex(48)),
            IdStyle::Google => rng.hex(8),
        }
    }

    /// A response id in this provider's format.
    pub fn response_id(&self, rng: &mut Rng) -> String {
        match self.style {
            IdStyle::Anthropic => format!("msg_01{}", rng.base62(22)),
            IdStyle::OpenAi => format!("resp_{}", rng.hex(48)),
            IdStyle::Google => rng.base62(20),
        }
    }

    /// pi's `usage` object with cost for these token counts.
    pub fn usage(&self, input: i64, output: i64, cache_read: i64, cache_write: i64) -> String {
        let [pi, po, pr, pw] = self.price;
        let c = [
            (input as f64 * pi) / 1e6,
            (output as f64 * po) / 1e6,
            (cache_read as f64 * pr) / 1e6,
            (cache_write as f64 * pw) / 1e6,
        ];
        let cost = Obj::new()
            .num("input", c[0])
            .num("output", c[1])
            .num("cacheRead", c[2])
            .num("cacheWrite", c[3])
            .num("total", c[0] + c[1] + c[2] + c[3])
            .end();
        Obj::new()
            .int("input", input)
            .int("output", output)
            .int("cacheRead", cache_read)
            .int("cacheWrite", cache_write)
            .int("totalTokens", input + output + cache_read + cache_write)
            .raw("cost", &cost)
            .end()
    }
}

/// The `toolsAdded` declarations of pi's four built-in tools.
pub const TOOLS_ADDED: &str = concat!(
    r#"[{"name":"read","description":"Read the contents of a file. Supports text files and images. For text files, output is truncated to 2000 lines or 50KB. Use offset/limit for large files.","#,
    r#""parameters":{"type":"object","required":["path"],"properties":{"path":{"type":"string","description":"Path to the file to read (relative or absolute)"},"#,
    r#""offset":{"type":"number","description":"Line number to start reading from (1-indexed)"},"limit":{"type":"number","description":"Maximum number of lines to read"}}},"#,
    r#""constrainedSampling":{"type":"json_schema","strict":"prefer"}},"#,
    r#"{"name":"bash","description":"Execute a bash command in the current working directory. Returns stdout and stderr. Output is truncated to the last 2000 lines or 50KB.","#,
    r#""parameters":{"type":"object","required":["command"],"properties":{"command":{"type":"string","description":"Shell command to execute"},"#,
    r#""timeout":{"type":"number","description":"Timeout in seconds (optional, no default timeout)"}}},"constrainedSampling":{"type":"json_schema","strict":"prefer"}},"#,
    r#"{"name":"edit","description":"Edit a single file using exact text replacement. Every edits[].oldText must match a unique, non-overlapping region of the original file.","#,
    r#""parameters":{"type":"object","required":["path","edits"],"properties":{"path":{"type":"string","description":"Path to the file to edit (relative or absolute)"},"#,
    r#""edits":{"type":"array","items":{"type":"object","required":["oldText","newText"],"properties":{"oldText":{"type":"string","description":"Exact text for one targeted replacement."},"#,
    r#""newText":{"type":"string","description":"Replacement text for this targeted edit."}}},"description":"One or more targeted replacements."}}},"#,
    r#""constrainedSampling":{"type":"json_schema","strict":"prefer"}},"#,
    r#"{"name":"write","description":"Write content to a file. Creates the file if it doesn't exist, overwrites if it does. Automatically creates parent directories.","#,
    r#""parameters":{"type":"object","required":["path","content"],"properties":{"path":{"type":"string","description":"Path to the file to write (relative or absolute)"},"#,
    r#""content":{"type":"string","description":"Content to write to the file"}}},"constrainedSampling":{"type":"json_schema","strict":"prefer"}}]"#
);

/// The system prompt `sections` object for a project (70% of projects have an AGENTS.md).
pub fn system_sections(cwd: &str, seed: u64, text: &Text) -> String {
    let mut rng = Rng::new(seed ^ (cwd.len() as u64).wrapping_mul(131) ^ 0x5EC7);
    let name = cwd.rsplit('/').next().unwrap_or(cwd);
    let mut o = Obj::new()
        .str(
            "preamble",
            "You are a coding assistant running inside pi, a coding agent harness. Help users inspect files, run commands, and modify code.",
        )
        .str(
            "tools",
            "<tools>\n- read: Read file contents\n- bash: Execute bash commands (ls, grep, find, etc.)\n- edit: Make precise file edits with exact text replacement\n- write: Create or overwrite files\n\nAdditional tools may be available.\n</tools>",
        )
        .str(
            "rules",
            "<rules>\n- Use bash for file operations like ls, rg, find\n- Use read to examine files instead of cat or sed.\n- Use edit for targeted changes. Batch changes to one file in a single call.\n- Use write only for new files or complete rewrites.\n- Be concise in your responses\n- Show file paths clearly when working with files\n</rules>",
        )
        .str("docs", &format!("<docs>\n{}\n</docs>", text.paragraphs(&mut rng, 1200)));
    if rng.chance(0.7) {
        let n = rng.int(400, 4000);
        let body = text.paragraphs(&mut rng, n);
        o = o.str(
            "project_context",
            &format!(
                "<project_context>\nProject-specific instructions and guidelines:\n\n<project_instructions path=\"{cwd}/AGENTS.md\">\n# {name}\n\n{body}\n</project_instructions>\n</project_context>"
            ),
        );
    }
    o.str("cwd", &format!("<cwd>\n{cwd}\n</cwd>")).end()
}

/// Summary text of a compaction (1.5–5 KB of headed sections).
pub fn compaction_summary(rng: &mut Rng, text: &Text) -> String {
    let mut out = String::new();
    for (title, lo, hi) in [("Goal", 120, 500), ("Constraints & Preferences", 80, 400)] {
        let n = rng.int(lo, hi);
        out.push_str(&format!("## {title}\n{}\n\n", text.prose(rng, n)));
    }
    out.push_str("## Progress\n### Done\n");
    for _ in 0..rng.int(2, 7) {
        let n = rng.int(40, 160);
        out.push_str(&format!("- [x] {}\n", text.prose(rng, n)));
    }
    for (title, lo, hi) in [("Key Decisions", 150, 900), ("Next Steps", 100, 600), ("Critical Context", 200, 1500)] {
        let n = rng.int(lo, hi);
        out.push_str(&format!("\n## {title}\n{}\n", text.prose(rng, n)));
    }
    out
}

/// `{readFiles, modifiedFiles}` details of a compaction or branch summary.
pub fn file_lists(rng: &mut Rng, text: &Text) -> String {
    let pick = |rng: &mut Rng, lo: i64, hi: i64| {
        let mut files: Vec<String> = Vec::new();
        for _ in 0..rng.int(lo, hi) {
            let f = text.file(rng);
            if !files.contains(&f) {
                files.push(f);
            }
        }
        line::str_array(&files)
    };
    let read = pick(rng, 3, 18);
    let modified = pick(rng, 0, 7);
    Obj::new().raw("readFiles", &read).raw("modifiedFiles", &modified).end()
}
