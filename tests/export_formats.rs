//! `export --format markdown|html` on hostile sessions: markup, scripts, `javascript:` links,
//! backtick runs meant to close a fence, invalid UTF-8, a 10 MB line. The Markdown keeps
//! every planted text out of markup (no tag, no link, every fence closed where it was opened);
//! the HTML holds only the elements and attributes the renderer writes, loads nothing, and
//! has every planted text as text. jsonl stays byte for byte.

mod common;

use serde_json::json;
use std::path::Path;

const PWN: &str = "window.__pwned=1";

fn line(v: serde_json::Value) -> Vec<u8> {
    let mut l = serde_json::to_vec(&v).unwrap();
    l.push(b'\n');
    l
}

fn msg(id: &str, parent: Option<&str>, i: u32, message: serde_json::Value) -> Vec<u8> {
    line(json!({"type": "message", "id": id, "parentId": parent,
        "timestamp": format!("2026-01-01T00:00:{i:02}.000Z"), "message": message}))
}

/// A tool result text with runs of 3, 4 and 7 backticks: a fence of 8 holds it.
const BACKTICKS: &str = "```\nnot code\n````\n<script>window.__pwned=2</script>\n```````";

/// The hostile session: (file bytes).
fn hostile() -> Vec<u8> {
    let mut f = line(json!({"type": "session", "version": 3, "id": "hostile-export",
        "timestamp": "2026-01-01T00:00:00.000Z", "cwd": format!("/h/\"><script>{PWN}</script>")}));
    f.extend(line(json!({"type": "session_info", "id": "n1", "parentId": null,
        "timestamp": "2026-01-01T00:00:00.500Z", "name": format!("<img src=x onerror={PWN}> [x](javascript:{PWN})")})));
    f.extend(msg("u1", Some("n1"), 1, json!({"role": "user", "timestamp": 1,
        "content": format!("<script>{PWN}</script>\n[click](javascript:{PWN})\n<a href=\"javascript:{PWN}\">a</a>\n# not a heading\n    not code\n> not a quote\n&lt;entity&gt;\n1. not a list\n![img](http://example.com/x.png)")})));
    f.extend(msg("a1", Some("u1"), 2, json!({"role": "assistant", "provider": "p<script>", "model": format!("m\"><img src=x onerror={PWN}>"),
        "timestamp": 2, "stopReason": "toolUse",
        "usage": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3, "cost": {"total": 0.5}},
        "content": [
            {"type": "thinking", "thinking": "secret thoughts <svg onload=x>"},
            {"type": "text", "text": format!("<iframe src=\"javascript:{PWN}\"></iframe> ``` fence ```")},
            {"type": "toolCall", "id": "c1", "name": format!("<b onmouseover={PWN}>bash</b>"), "arguments": {"command": "echo '```'"}},
            {"type": "image", "mimeType": "image/svg+xml", "data": "PHN2Zz4="},
            {"type": "image", "mimeType": "image/png", "data": format!("x\" onerror=\"{PWN}")},
        ]})));
    f.extend(msg(
        "r1",
        Some("a1"),
        3,
        json!({"role": "toolResult", "toolCallId": "c1", "toolName": "bash",
        "isError": false, "timestamp": 3, "content": [{"type": "text", "text": BACKTICKS}]}),
    ));
    f.extend(line(json!({"type": "compaction", "id": "k1", "parentId": "r1", "timestamp": "2026-01-01T00:00:04.000Z",
        "summary": "<script>summary</script>", "firstKeptEntryId": "u1", "tokensBefore": 1234})));
    f.extend(line(
        json!({"type": "branch_summary", "id": "b1", "parentId": "k1", "timestamp": "2026-01-01T00:00:05.000Z",
        "fromId": "a1", "summary": "left a branch"}),
    ));
    // Invalid UTF-8 inside a message.
    let bad = msg("u2", Some("b1"), 6, json!({"role": "user", "timestamp": 6, "content": "bad bytes: @@"}));
    let at = bad.windows(2).position(|w| w == b"@@").unwrap();
    f.extend_from_slice(&bad[..at]);
    f.extend_from_slice(&[0xff, 0xfe, 0xc3]);
    f.extend_from_slice(&bad[at + 2..]);
    // A 10 MB message, the last entry; a side branch from u1 before it.
    f.extend(msg("side", Some("u1"), 8, json!({"role": "user", "timestamp": 8, "content": "the side branch"})));
    let big = format!("start {} end", "x".repeat(10 << 20));
    f.extend(msg("u3", Some("u2"), 7, json!({"role": "user", "timestamp": 7, "content": big})));
    f
}

fn setup() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let (dir, db, conn) = common::temp_db();
    drop(conn);
    let file = dir.path().join("sessions/--h--/2026-01-01T00-00-00-000Z_hostile-export.jsonl");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, hostile()).unwrap();
    let (code, _, err) = common::run(&db, &["import", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    (dir, db, file)
}

fn export(db: &Path, args: &[&str]) -> String {
    let mut all = vec!["export", "hostile-export"];
    all.extend_from_slice(args);
    let (code, out, err) = common::run(db, &all);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

/// The fenced blocks of `md` as CommonMark closes them (a backtick fence closes at a line of
/// at least as many backticks and nothing else), and the text outside them.
fn fences(md: &str) -> (Vec<String>, String) {
    let (mut blocks, mut outside) = (Vec::new(), String::new());
    let mut open: Option<(usize, String)> = None;
    for l in md.split('\n') {
        let ticks = l.len() - l.trim_start_matches('`').len();
        match &mut open {
            Some((n, body)) => {
                if ticks >= *n && l.trim_end().len() == ticks {
                    blocks.push(body.strip_suffix('\n').unwrap_or(body).to_string());
                    open = None;
                } else {
                    body.push_str(l);
                    body.push('\n');
                }
            }
            None if ticks >= 3 && !l[ticks..].contains('`') => open = Some((ticks, String::new())),
            None => {
                outside.push_str(l);
                outside.push('\n');
            }
        }
    }
    assert!(open.is_none(), "a fence left open");
    (blocks, outside)
}

#[test]
fn markdown_keeps_planted_text_out_of_markup_and_fences_intact() {
    let (_dir, db, _) = setup();
    let md = export(&db, &["--format", "markdown"]);
    let (blocks, outside) = fences(&md);
    // The tool result is one block, whole, its backtick runs inside.
    assert!(blocks.iter().any(|b| b == BACKTICKS), "{blocks:#?}");
    assert!(blocks.iter().any(|b| b == r#"{"command":"echo '```'"}"#), "{blocks:#?}");
    // Outside the fences: no tag, autolink or entity (`<` and `&` only as references), no link
    // or image (`[` only escaped), no code span (every backtick escaped).
    assert!(!outside.contains('<'), "{outside}");
    for (i, c) in outside.char_indices() {
        if matches!(c, '[' | ']' | '`') {
            assert_eq!(&outside[i - 1..i], "\\", "unescaped {c} at {i}: {}", &outside[i.saturating_sub(60)..i + 1]);
        }
        if c == '&' {
            let entity = &outside[i..];
            assert!(
                ["&lt;", "&gt;", "&amp;", "&#32;", "&#9;"].iter().any(|e| entity.starts_with(e)),
                "{}",
                entity.chars().take(20).collect::<String>()
            );
        }
    }
    // No line starts a heading, quote, list or indented code block but ours.
    let headings: Vec<&str> = outside.lines().filter(|l| l.starts_with('#')).collect();
    assert_eq!(headings.len(), 1 + 7, "{headings:#?}");
    assert!(outside.lines().all(|l| !l.starts_with("    ") && !l.starts_with('\t')));
    // Each rule between entries follows a blank line (under text it would be a heading).
    let lines: Vec<&str> = outside.lines().collect();
    let rules: Vec<usize> = (1..lines.len()).filter(|&i| lines[i] == "---").collect();
    assert_eq!(rules.len(), 8, "one per entry of the branch");
    assert!(rules.iter().all(|&i| lines[i - 1].is_empty()), "a rule under text");
    assert!(outside
        .lines()
        .filter(|l| l.starts_with('>'))
        .all(|l| l.contains("summary") || l.contains("branch") || l == ">"));
    // The session's facts and text, escaped.
    assert!(
        md.starts_with("# &lt;img src=x onerror=window.\\_\\_pwned=1&gt; \\[x\\](javascript:window.\\_\\_pwned=1)\n"),
        "{}",
        &md[..200]
    );
    assert!(outside.contains("&lt;script&gt;window.\\_\\_pwned=1&lt;/script&gt;\\\n\\[click\\](javascript:"));
    assert!(outside.contains("\\# not a heading\\\n&#32;&#32;&#32;&#32;not code\\\n&gt; not a quote\\\n&amp;lt;entity&amp;gt;\\\n1\\. not a list"));
    assert!(outside.contains("## Compaction: summary of the earlier conversation, 1,234 tokens before"));
    assert!(outside.contains("## Branch summary"));
    // Thinking only when asked; invalid UTF-8 as U+FFFD; the 10 MB message whole.
    assert!(!md.contains("secret thoughts"));
    assert!(export(&db, &["--format", "markdown", "--thinking"]).contains("> secret thoughts &lt;svg onload=x&gt;"));
    assert!(outside.contains("bad bytes: \u{FFFD}\u{FFFD}\u{FFFD}"));
    assert!(outside.contains(&format!("start {} end", "x".repeat(10 << 20))));
    // --leaf: the branch to that entry, as `context --leaf` picks it.
    let side = export(&db, &["--format", "markdown", "--leaf", "side"]);
    assert!(side.contains("the side branch") && !side.contains("start xxx") && !md.contains("the side branch"));
    assert_eq!(export(&db, &["--format", "markdown", "--leaf", "no-such-entry"]), md);
}

/// Tags the renderer writes; anything else in the file came from the session.
const TAGS: [&str; 25] = [
    "!DOCTYPE", "html", "head", "meta", "title", "style", "body", "main", "div", "dl", "dt", "dd", "section", "h1",
    "h2", "article", "header", "span", "time", "a", "code", "p", "details", "summary", "pre",
];

#[test]
fn html_holds_only_its_own_markup_and_loads_nothing() {
    let (dir, db, _) = setup();
    let out = dir.path().join("t.html");
    let (code, said, err) = common::run(
        &db,
        &["export", "hostile-export", "--format", "html", "-o", out.to_str().unwrap(), "--json", "--thinking"],
    );
    assert_eq!(code, 0, "{err}");
    let page = std::fs::read_to_string(&out).unwrap();
    let said: serde_json::Value = serde_json::from_str(&said).unwrap();
    assert_eq!(said["bytes"], page.len());
    assert!(page.contains(
        r#"<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">"#
    ));
    // Every element is one the renderer writes, with no event handler, no address but the
    // entries' own anchors.
    let mut rest = page.as_str();
    let mut elements = 0;
    while let Some(at) = rest.find('<') {
        let tag = &rest[at + 1..];
        let end = tag.find('>').expect("a tag is closed");
        let inner = &tag[..end];
        rest = &tag[end..];
        let closing = inner.starts_with('/');
        let inner = inner.strip_prefix('/').unwrap_or(inner);
        let name = inner.split([' ', '>']).next().unwrap();
        if name == "style" && !closing {
            // Our stylesheet: skip to its end.
            let close = rest.find("</style>").unwrap();
            assert!(rest[..close].contains("--accent"), "the stylesheet is ours");
            rest = &rest[close..];
        }
        assert!(TAGS.contains(&name), "element {name:?}: <{inner}>");
        let lower = inner.to_ascii_lowercase();
        assert!(!lower.contains(" on"), "<{inner}>");
        for attr in ["href=\"", "src=\""] {
            if let Some(v) = lower.split(attr).nth(1) {
                assert!(v.starts_with('#') || v.starts_with("data:image/png;base64,"), "<{inner}>");
            }
        }
        elements += 1;
    }
    assert!(elements > 50);
    assert!(!page.to_ascii_lowercase().contains("<script") && !page.contains("<img src=x"));
    // The planted text, as text.
    for planted in [
        "&lt;script&gt;window.__pwned=1&lt;/script&gt;",
        "[click](javascript:window.__pwned=1)",
        "&lt;iframe src=&quot;javascript:window.__pwned=1&quot;&gt;&lt;/iframe&gt;",
        "&lt;b onmouseover=window.__pwned=1&gt;bash&lt;/b&gt;",
        "secret thoughts &lt;svg onload=x&gt;",
        "bad bytes: \u{FFFD}\u{FFFD}\u{FFFD}",
        "/h/&quot;&gt;&lt;script&gt;",
    ] {
        assert!(page.contains(planted), "{planted}");
    }
    // Entries are anchors by id; the 10 MB message is in the file, its rest folded.
    assert!(page.contains(r#"<article class="entry kind-message role-user" id="u1""#));
    assert!(page.bytes().filter(|b| *b == b'x').count() >= 10 << 20);
    assert!(page.contains(" end</div></details>"));
    assert!(page.contains("<details class=\"fold\"><summary>Show the rest: "));
    // Thinking only when asked.
    assert!(!export(&db, &["--format", "html"]).contains("secret thoughts"));
}

#[test]
fn jsonl_stays_byte_for_byte_and_other_formats_refuse_all() {
    let (dir, db, file) = setup();
    // Lines are stored as decoded (invalid UTF-8 as U+FFFD), as `export` always wrote them.
    let want = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned().into_bytes();
    let plain = common::bin().args(["--db", db.to_str().unwrap(), "export", "hostile-export"]).output().unwrap().stdout;
    assert!(plain == want, "export differs from the file");
    let jsonl = common::bin()
        .args(["--db", db.to_str().unwrap(), "export", "hostile-export", "--format", "jsonl"])
        .output()
        .unwrap()
        .stdout;
    assert!(jsonl == want, "--format jsonl differs from the file");
    let out = dir.path().join("all");
    let (code, _, err) = common::run(&db, &["export", "--all", "--out", out.to_str().unwrap(), "--format", "html"]);
    assert_eq!(code, 2);
    assert!(err.contains("not --all"), "{err}");
    assert!(!out.exists());
    let (code, _, err) = common::run(&db, &["export", "hostile-export", "--leaf", "u1"]);
    assert_eq!(code, 2);
    assert!(err.contains("--format markdown or html"), "{err}");
}
