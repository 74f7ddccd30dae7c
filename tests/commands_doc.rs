//! docs/commands.md is the command reference: every subcommand of `sessiondb --help` has a
//! section there, and every option its `--help` lists is named in that section. A command or
//! option added without its documentation fails here.

use std::collections::BTreeSet;
use std::process::Command;

fn help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_sessiondb")).args(args).arg("--help").output().expect("run sessiondb");
    assert!(out.status.success(), "sessiondb {args:?} --help failed");
    String::from_utf8(out.stdout).expect("help is UTF-8")
}

/// The names listed under `Commands:`, without clap's own `help`.
fn subcommands(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.trim_end() == "Commands:" {
            inside = true;
        } else if inside && line.starts_with("  ") {
            let name = line.split_whitespace().next().unwrap_or_default();
            if name != "help" {
                names.push(name.to_string());
            }
        } else if inside && !line.trim().is_empty() {
            break;
        }
    }
    names
}

/// Every `--long` option a help text lists, with its short form if it has one (without
/// `--help`/`--version`, which every command has).
fn options(text: &str) -> BTreeSet<(String, Option<String>)> {
    let mut found = BTreeSet::new();
    for line in text.lines() {
        let t = line.trim_start();
        // An option line is `  -x, --long` or `      --long`; a wrapped description is indented further.
        if !t.starts_with('-') || line.len() - t.len() > 6 {
            continue;
        }
        let words: Vec<&str> = t.split([' ', ',', '=', '<', '[']).filter(|w| !w.is_empty()).take(2).collect();
        let short = words.first().filter(|w| w.len() == 2 && !w.starts_with("--")).map(|w| w.to_string());
        if let Some(name) = words.iter().find_map(|w| w.strip_prefix("--")) {
            if name != "help" && name != "version" {
                found.insert((format!("--{name}"), short));
            }
        }
    }
    found
}

/// The `##` sections of docs/commands.md, heading and body.
fn sections(doc: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in doc.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            out.push((h.to_string(), String::new()));
        } else if let Some((_, body)) = out.last_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    out
}

/// The section documenting `name`: its heading names `sessiondb name` or `` `name` ``.
fn section_of<'a>(all: &'a [(String, String)], name: &str) -> Option<&'a (String, String)> {
    all.iter().find(|(h, _)| {
        h.contains(&format!("`sessiondb {name}`"))
            || h.contains(&format!("`sessiondb {name} "))
            || h.contains(&format!("`{name}`"))
            || h.contains(&format!("`{name} "))
    })
}

#[test]
fn every_command_and_option_is_in_docs_commands_md() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/commands.md")).expect("docs/commands.md");
    let all = sections(&doc);
    let top = help(&[]);
    let commands = subcommands(&top);
    assert!(commands.len() > 10, "no commands parsed from:\n{top}");
    let mut missing = Vec::new();
    for name in &commands {
        let Some((heading, body)) = section_of(&all, name) else {
            missing.push(format!("`sessiondb {name}` has no section"));
            continue;
        };
        for (option, short) in options(&help(&[name.as_str()])) {
            // `--db` is every command's and documented once at the top.
            if option == "--db" {
                continue;
            }
            let named = |o: &str| heading.contains(o) || body.contains(o);
            if !named(&option) && !short.as_deref().is_some_and(|s| named(&format!("{s} "))) {
                missing.push(format!("`sessiondb {name} {option}` is not in its section ({heading})"));
            }
        }
    }
    assert!(doc.contains("--db"), "the global --db is not documented");
    assert!(missing.is_empty(), "docs/commands.md lacks:\n{}", missing.join("\n"));
}

#[test]
fn the_option_parser_of_this_test_finds_options() {
    let found = options("Options:\n  -o, --output <FILE>  Write it\n      --all            Every one\n          --not-an-option in a description\n  -h, --help  Print help\n");
    let want = [("--output", Some("-o")), ("--all", None)].map(|(l, s)| (l.to_string(), s.map(str::to_string)));
    assert_eq!(found, BTreeSet::from(want));
}
