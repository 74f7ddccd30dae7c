//! Text for synthetic sessions: prose for messages and summaries, source code for `read`
//! results and `write` arguments, shell output for `bash` results. Long strings are cut from
//! pools built once from the seed, so a gigabyte of tool output is generated quickly. The pools
//! hold quotes, backslashes, tabs, newlines and non-ASCII text, so JSON escaping and UTF-8
//! decoding cost what they cost on real transcripts.

use super::rng::Rng;

#[rustfmt::skip]
const WORDS: &[&str] = &[
    "the", "a", "to", "of", "and", "in", "is", "it", "that", "for", "on", "with", "as", "this", "be", "are", "by",
    "from", "at", "or", "an", "not", "can", "we", "you", "file", "function", "session", "entry", "branch", "tree",
    "leaf", "parent", "compaction", "summary", "message", "user", "assistant", "tool", "result", "read", "write",
    "edit", "bash", "test", "build", "error", "config", "module", "import", "export", "type", "interface", "class",
    "method", "value", "key", "index", "list", "map", "set", "array", "string", "number", "object", "null",
    "undefined", "async", "await", "promise", "stream", "buffer", "line", "json", "parse", "serialize", "load",
    "save", "append", "open", "close", "create", "delete", "rename", "move", "copy", "path", "directory", "cwd",
    "header", "should", "would", "could", "need", "want", "check", "run", "fix", "add", "remove", "update",
    "change", "refactor", "implement", "handle", "return", "why", "how", "what", "when", "where", "which",
    "because", "so", "then", "also", "just", "only", "still", "already", "again", "maybe", "probably", "actually",
    "performance", "memory", "cache", "disk", "latency", "throughput", "benchmark", "median", "slow", "fast",
    "large", "small", "huge", "tiny", "quick", "rust", "node", "typescript", "sqlite", "jsonl", "schema",
    "migration", "version", "format", "field", "order", "stable", "compatible", "legacy", "let", "me", "look",
    "first", "see", "whether", "here", "now", "please", "make", "sure", "keep", "same", "behaviour", "tests",
    "pass", "green", "failing",
];
#[rustfmt::skip]
const IDENTS: &[&str] = &[
    "session", "entry", "leaf", "parent", "child", "branch", "tree", "node", "index", "cache", "buffer", "reader",
    "writer", "parser", "loader", "manager", "store", "repo", "context", "options", "config", "result", "error",
    "value", "item", "list", "map", "count", "size", "offset", "limit", "path", "file", "dir", "name", "id", "key",
    "label", "summary", "model", "provider", "usage", "cost", "tokens", "timestamp", "header", "version", "line",
    "chunk", "decoder", "encoder", "stream", "handle", "state", "queue", "lock", "timer", "stats", "metrics",
];
#[rustfmt::skip]
const TYPES: &[&str] = &[
    "string", "number", "boolean", "Entry", "SessionEntry", "Map<string, Entry>", "Buffer", "Promise<void>",
    "unknown",
];
/// Project files that tool calls read and edit.
#[rustfmt::skip]
pub const FILES: &[&str] = &[
    "src/core/session-manager.ts", "src/core/agent-session.ts", "src/core/compaction/compaction.ts",
    "src/utils/paths.ts", "src/modes/interactive/interactive-mode.ts", "src/cli/args.ts",
    "packages/ai/src/types.ts", "packages/agent/src/agent-loop.ts", "test/session-manager.test.ts",
    "test/compaction.test.ts", "README.md", "docs/session-format.md", "package.json", "src/lib.rs",
    "src/store/jsonl.rs", "src/store/sqlite.rs", "Cargo.toml", "scripts/release.mjs", "src/server/routes.ts",
    "src/db/migrations/003_add_index.sql",
];
#[rustfmt::skip]
const UNICODE: &[&str] = &[
    "→", "✓", "✗", "…", "—", "“quoted”", "naïve", "café", "日本語", "😀", "λ", "µs", "≥",
];
const POOL_BYTES: usize = 256 * 1024;

/// Pools of generated text and helpers that cut pieces from them.
#[derive(Debug, Clone)]
pub struct Text {
    prose: String,
    code: String,
    log: String,
}

/// One word of a list (a `&str`, for functions that take one).
fn pick(rng: &mut Rng, list: &[&'static str]) -> &'static str {
    list[rng.index(list.len())]
}

fn cap(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

fn camel(rng: &mut Rng) -> String {
    format!("{}{}", rng.pick(IDENTS), cap(pick(rng, IDENTS)))
}

/// A sentence of `lo..=hi` words with occasional identifiers, file names and non-ASCII words.
fn sentence(rng: &mut Rng, lo: i64, hi: i64) -> String {
    let n = rng.int(lo, hi);
    let mut words = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let r = rng.float();
        words.push(if r < 0.04 {
            format!("`{}()`", camel(rng))
        } else if r < 0.06 {
            rng.pick(FILES).to_string()
        } else if r < 0.065 {
            rng.pick(UNICODE).to_string()
        } else {
            rng.pick(WORDS).to_string()
        });
    }
    format!("{}{}", cap(&words.join(" ")), rng.pick(&[".", ".", ".", "?", "!", ":"]))
}

fn code_line(rng: &mut Rng, indent: usize) -> String {
    let tab = "\t".repeat(indent);
    let (a, b) = (camel(rng), camel(rng));
    let r = rng.float();
    if r < 0.1 {
        format!("{tab}// {}", sentence(rng, 4, 12))
    } else if r < 0.2 {
        format!("{tab}const {a} = {b}.get(\"{}\") ?? {};", rng.pick(IDENTS), rng.int(0, 4096))
    } else if r < 0.3 {
        format!("{tab}if (!{a} || {a}.length === 0) return {};", rng.pick(&["null", "undefined", "[]", "false"]))
    } else if r < 0.38 {
        format!("{tab}throw new Error(`{} ${{{a}}} not found in \"{}\"`);", cap(pick(rng, IDENTS)), rng.pick(FILES))
    } else if r < 0.46 {
        format!("{tab}for (const {} of {a}.{}) {{", rng.pick(IDENTS), rng.pick(&["entries()", "values()", "lines"]))
    } else if r < 0.54 {
        format!("{tab}{a}.push({{ type: \"{}\", id: {b}.id, parentId: {b}.parentId ?? null }});", rng.pick(IDENTS))
    } else if r < 0.6 {
        format!("{tab}const re = /^(?:[A-Za-z0-9_-]+)\\.jsonl$/; // matches \"<ts>_<id>.jsonl\"")
    } else if r < 0.7 {
        format!("{tab}export function {a}({b}: {}): {} {{", rng.pick(TYPES), rng.pick(TYPES))
    } else if r < 0.76 {
        format!("{tab}fn {}(&mut self, {}: &str) -> Result<usize> {{", a.to_lowercase(), b.to_lowercase())
    } else if r < 0.97 {
        format!("{tab}}}")
    } else {
        String::new()
    }
}

fn log_line(rng: &mut Rng) -> String {
    let f = rng.pick(FILES);
    let r = rng.float();
    if r < 0.25 {
        format!("{f}:{}:{}: {}", rng.int(1, 2400), rng.int(1, 80), code_line(rng, 0).trim())
    } else if r < 0.4 {
        format!("-rw-r--r--  1 dev  staff  {:>7} Nov {:>2} {f}", rng.int(80, 250_000), rng.int(1, 30))
    } else if r < 0.55 {
        format!(" {} {f} ({} tests) {}ms", if rng.chance(0.9) { "✓" } else { "✗" }, rng.int(1, 80), rng.int(2, 900))
    } else if r < 0.65 {
        format!(
            "{f}({},{}): error TS{}: Argument of type '{}' is not assignable.",
            rng.int(1, 900),
            rng.int(1, 60),
            rng.int(2000, 2800),
            rng.pick(TYPES)
        )
    } else if r < 0.75 {
        format!("   Compiling {} v0.{}.{}", camel(rng).to_lowercase(), rng.int(1, 30), rng.int(0, 9))
    } else if r < 0.85 {
        format!(
            "{{\"level\":\"info\",\"msg\":\"{}\",\"path\":\"C:\\\\Users\\\\dev\\\\{}\"}}",
            sentence(rng, 3, 9).replace('"', "'"),
            rng.pick(IDENTS)
        )
    } else {
        sentence(rng, 5, 16)
    }
}

fn build(rng: &mut Rng, mut line: impl FnMut(&mut Rng) -> String) -> String {
    let mut out = String::with_capacity(POOL_BYTES + 256);
    while out.len() < POOL_BYTES {
        out.push_str(&line(rng));
        out.push('\n');
    }
    out
}

/// A piece of about `len` bytes of `pool`, from a random place, cut on character boundaries.
fn cut(rng: &mut Rng, pool: &str, len: usize) -> String {
    let len = len.max(1);
    if len >= pool.len() {
        let long = pool.repeat(len / pool.len().max(1) + 1);
        return long[..floor_boundary(&long, len)].to_string();
    }
    let mut start = floor_boundary(pool, rng.index(pool.len() - len));
    let end = floor_boundary(pool, start + len);
    if end <= start {
        start = 0;
    }
    pool[start..end.max(start)].trim_start_matches('\n').to_string()
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

impl Text {
    /// Pools generated from `rng`.
    pub fn new(rng: &mut Rng) -> Self {
        let prose = build(rng, |r| {
            let s = sentence(r, 6, 22);
            if r.chance(0.08) {
                format!("\n## {}\n\n{s}", cap(&camel(r)))
            } else {
                s
            }
        });
        let mut indent = 0usize;
        let code = build(rng, |r| {
            let l = code_line(r, indent);
            if l.ends_with('{') {
                indent = (indent + 1).min(5);
            } else if l.trim() == "}" {
                indent = indent.saturating_sub(1);
            }
            l
        });
        let log = build(rng, log_line);
        Text { prose, code, log }
    }

    /// About `len` bytes of prose.
    pub fn prose(&self, rng: &mut Rng, len: i64) -> String {
        cut(rng, &self.prose, len.max(1) as usize).replace('\n', " ").trim().to_string()
    }

    /// About `len` bytes of prose, paragraphs kept.
    pub fn paragraphs(&self, rng: &mut Rng, len: i64) -> String {
        cut(rng, &self.prose, len.max(1) as usize)
    }

    /// About `len` bytes of source code.
    pub fn code(&self, rng: &mut Rng, len: i64) -> String {
        cut(rng, &self.code, len.max(1) as usize)
    }

    /// About `len` bytes of shell output.
    pub fn log(&self, rng: &mut Rng, len: i64) -> String {
        cut(rng, &self.log, len.max(1) as usize)
    }

    /// A user prompt of 50–500 characters.
    pub fn user_text(&self, rng: &mut Rng) -> String {
        let n = rng.int(50, 500);
        self.paragraphs(rng, n)
    }

    /// A short session name.
    pub fn session_name(&self, rng: &mut Rng) -> String {
        format!("{} {} {}", cap(pick(rng, WORDS)), rng.pick(IDENTS), rng.pick(IDENTS))
    }

    /// A label for an entry.
    pub fn label(&self, rng: &mut Rng) -> String {
        format!("{} {}", rng.pick(&["works", "checkpoint", "before refactor", "todo", "good"]), rng.int(1, 99))
    }

    /// A project file name.
    pub fn file(&self, rng: &mut Rng) -> String {
        rng.pick(FILES).to_string()
    }

    /// `n` characters of base64-looking signature data.
    pub fn blob(&self, rng: &mut Rng, n: i64) -> String {
        const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        (0..n.max(0)).map(|_| B64[rng.index(64)] as char).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_on_char_boundaries() {
        let mut rng = Rng::new(3);
        let t = Text::new(&mut rng);
        for n in [1, 7, 200, 20_000, 400_000] {
            let s = t.code(&mut rng, n);
            assert!(!s.is_empty());
            let p = t.prose(&mut rng, n);
            assert!(!p.contains('\n'));
        }
    }
}
