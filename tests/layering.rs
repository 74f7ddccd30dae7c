//! The shape of the source tree, checked so that it stays true (ARCHITECTURE.md describes it):
//! the library's folders are layers and every import points down the order below; no two
//! modules import each other, directly or through a loop, in the library or the binary; and
//! SQL text appears only in the two backends' folders (`src/store/sqlite/`,
//! `src/store/postgres/`, and in migrations); no module outside them names a database driver or
//! asks which backend a database is; no key is packed or unpacked outside `store::keys`, and
//! no key is a raw integer, and SQL shifts a key by 32 only in the backends' folders; no file
//! under `src/` is over 800 lines; only `src/hash.rs` hashes with a crate, no file with a hasher
//! of its own; and the Node binding takes nothing from `sessiondb::internals` but `sessions`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The library's top-level modules from the bottom up. A module may import only from folders
/// of a lower rank; folders of one rank know nothing of each other.
const LAYERS: &[&[&str]] =
    &[&["error", "hash"], &["js"], &["pi", "jsonl"], &["store"], &["read", "ingest"], &["manager"], &["rpc"]];

/// One crate's source files by module path (`store::db`; the root is `""`).
struct Crate {
    files: BTreeMap<String, String>,
}

fn rs_files(dir: &Path, skip: Option<&Path>, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if Some(p.as_path()) == skip {
            continue;
        }
        if p.is_dir() {
            rs_files(&p, skip, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code of a file without comments and without its `#[cfg(test)] mod tests { .. }` (a
/// file's unit tests may import what they test from anywhere).
fn code_of(text: &str) -> String {
    let mut out = String::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut in_tests = false;
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        if t == "#[cfg(test)]" && lines.get(i + 1).is_some_and(|n| n.starts_with("mod tests {")) {
            in_tests = true;
        }
        if in_tests {
            in_tests = *line != "}";
            continue;
        }
        if t.starts_with("//") {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn load(root: &Path, skip: Option<&Path>) -> Crate {
    let mut paths = Vec::new();
    rs_files(root, skip, &mut paths);
    let mut files = BTreeMap::new();
    for p in paths {
        let rel = p.strip_prefix(root).unwrap().with_extension("");
        let mut parts: Vec<String> = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
        if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
            parts.pop();
        }
        files.insert(parts.join("::"), code_of(&std::fs::read_to_string(&p).unwrap()));
    }
    Crate { files }
}

/// The module a path names: its longest prefix that is a module of the crate.
fn resolve(c: &Crate, segments: &[&str]) -> Option<String> {
    (1..=segments.len()).rev().map(|n| segments[..n].join("::")).find(|m| c.files.contains_key(m))
}

fn ident_path(s: &str) -> Vec<&str> {
    let end = s.find(|ch: char| !(ch.is_alphanumeric() || ch == '_' || ch == ':')).unwrap_or(s.len());
    s[..end].split("::").filter(|x| !x.is_empty()).collect()
}

/// Module → the modules it names through `crate::`, `super::` and `self::` paths (the root
/// module, a crate's facade, is left out: it re-exports, nobody imports it for code).
fn imports(c: &Crate) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph = BTreeMap::new();
    for (module, code) in &c.files {
        if module.is_empty() {
            continue;
        }
        let parent: Vec<&str> = module.split("::").collect::<Vec<_>>()[..module.split("::").count() - 1].to_vec();
        let mut to = BTreeSet::new();
        for prefix in ["crate::", "super::", "self::"] {
            for (at, _) in code.match_indices(prefix) {
                if code[..at].ends_with(|ch: char| ch.is_alphanumeric() || ch == '_' || ch == ':') {
                    continue;
                }
                let rest = ident_path(&code[at + prefix.len()..]);
                let mut full: Vec<&str> = match prefix {
                    "crate::" => Vec::new(),
                    "super::" => parent.clone(),
                    _ => module.split("::").collect(),
                };
                full.extend(rest.iter().copied().take_while(|s| *s != "super"));
                if let Some(target) = resolve(c, &full) {
                    if !target.is_empty() && &target != module && !module.starts_with(&format!("{target}::")) {
                        to.insert(target);
                    }
                }
            }
        }
        graph.insert(module.clone(), to);
    }
    graph
}

/// The loops of a graph (strongly connected components of more than one node).
fn loops(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Kosaraju: order by finish time, then collect components on the reversed graph.
    fn visit(n: &str, g: &BTreeMap<String, BTreeSet<String>>, seen: &mut BTreeSet<String>, order: &mut Vec<String>) {
        if !seen.insert(n.to_owned()) {
            return;
        }
        for m in g.get(n).into_iter().flatten() {
            visit(m, g, seen, order);
        }
        order.push(n.to_owned());
    }
    let mut seen = BTreeSet::new();
    let mut order = Vec::new();
    for n in graph.keys() {
        visit(n, graph, &mut seen, &mut order);
    }
    let mut reversed: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (a, bs) in graph {
        for b in bs {
            reversed.entry(b.clone()).or_default().insert(a.clone());
        }
    }
    let mut assigned = BTreeSet::new();
    let mut found = Vec::new();
    for n in order.iter().rev() {
        let mut component = Vec::new();
        visit(n, &reversed, &mut assigned, &mut component);
        if component.len() > 1 {
            component.sort();
            found.push(component);
        }
    }
    found
}

fn folder_graph(graph: &BTreeMap<String, BTreeSet<String>>) -> BTreeMap<String, BTreeSet<String>> {
    let top = |m: &str| m.split("::").next().unwrap().to_owned();
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (a, bs) in graph {
        let entry = g.entry(top(a)).or_default();
        entry.extend(bs.iter().map(|b| top(b)).filter(|b| *b != top(a)));
    }
    g
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn library() -> Crate {
    load(&src(), Some(&src().join("bin")))
}

fn binary() -> Crate {
    load(&src().join("bin").join("sessiondb"), None)
}

/// Every problem of the import graph of `c`, as lines.
fn import_problems(c: &Crate, layers: Option<&[&[&str]]>) -> Vec<String> {
    let graph = imports(c);
    let mut problems: Vec<String> =
        loops(&graph).into_iter().map(|l| format!("modules import each other: {}", l.join(" ↔ "))).collect();
    let folders = folder_graph(&graph);
    problems.extend(loops(&folders).into_iter().map(|l| format!("folders import each other: {}", l.join(" ↔ "))));
    if let Some(layers) = layers {
        let rank = |f: &str| layers.iter().position(|l| l.contains(&f));
        for (a, bs) in &folders {
            let Some(ra) = rank(a) else {
                problems.push(format!("src/{a} is in no layer of tests/layering.rs (and ARCHITECTURE.md)"));
                continue;
            };
            for b in bs {
                match rank(b) {
                    Some(rb) if rb < ra => {}
                    _ => problems.push(format!("{a} imports {b}, which is not below it")),
                }
            }
        }
    }
    problems
}

/// Every `crate::` path of a module naming what the crate root re-exports (`crate::Error`,
/// `crate::SessionManager`) rather than the module that defines it: the root sits above every
/// layer, so such a path is an arrow running back up.
fn root_reexports_named(c: &Crate) -> Vec<String> {
    let mut problems = Vec::new();
    for (module, code) in &c.files {
        if module.is_empty() {
            continue;
        }
        for (at, _) in code.match_indices("crate::") {
            if code[..at].ends_with(|ch: char| ch.is_alphanumeric() || matches!(ch, '_' | ':' | '$')) {
                continue;
            }
            let rest = ident_path(&code[at + "crate::".len()..]);
            let Some(first) = rest.first() else { continue };
            if !c.files.contains_key(*first) {
                problems
                    .push(format!("{module} names crate::{first}, a re-export of lib.rs: import it from its module"));
            }
        }
    }
    problems
}

/// Modules outside `store/` that name the append journal: how an append is made durable is
/// the store's business (SQLite's journal is `store::sqlite::journal`).
fn journal_named_above_store(c: &Crate) -> Vec<String> {
    c.files
        .iter()
        .filter(|(module, _)| !module.is_empty() && *module != "store" && !module.starts_with("store::"))
        .filter(|(_, code)| code.contains("journal::") || code.contains("Journal"))
        .map(|(module, _)| format!("{module} names the append journal, which is the store's"))
        .collect()
}

/// Files of `store/` (outside the interface and the backends) whose job is to give a capability
/// a second name: they re-export an interface module, and every function they have only hands
/// over to the store's method (`db.store().x(…)`). Callers use the trait, `db.store().x(…)`.
fn store_facades(c: &Crate) -> Vec<String> {
    let mut found = Vec::new();
    for (module, code) in &c.files {
        let Some(rest) = module.strip_prefix("store::") else { continue };
        if ["interface", "sqlite", "postgres"].iter().any(|b| rest == *b || rest.starts_with(&format!("{b}::"))) {
            continue;
        }
        if !code.contains("pub use crate::store::interface::") {
            continue;
        }
        let bodies: Vec<&str> = code.split("fn ").skip(1).collect();
        let forwards = |b: &&str| {
            let body = b.split_once('{').map_or("", |(_, rest)| rest).trim_start();
            body.starts_with("db.store().") && body.lines().nth(1).is_some_and(|next| next.trim() == "}")
        };
        if bodies.iter().all(forwards) {
            found.push(format!(
                "src/store/{}.rs re-exports the interface and only forwards to it",
                rest.replace("::", "/")
            ));
        }
    }
    found
}

#[test]
fn library_imports_point_down_without_loops() {
    let library = library();
    let mut problems = import_problems(&library, Some(LAYERS));
    problems.extend(root_reexports_named(&library));
    problems.extend(journal_named_above_store(&library));
    problems.extend(store_facades(&library));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn binary_modules_do_not_import_each_other() {
    let problems = import_problems(&binary(), None);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// SQL keywords as statements start, upper case as sessiondb writes them.
const SQL: &[&str] = &[
    "SELECT ",
    "INSERT INTO",
    "INSERT OR ",
    "DELETE FROM",
    "UPDATE ",
    "CREATE TABLE",
    "CREATE INDEX",
    "CREATE VIRTUAL",
    "CREATE TRIGGER",
    "DROP TABLE",
    "PRAGMA ",
    "BEGIN IMMEDIATE",
    "WITH RECURSIVE",
    "ATTACH ",
];

/// The SQL-looking string literals of `code` (text between double quotes; a raw string's
/// quotes count too).
fn sql_literals(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut in_str = false;
    let mut cur = String::new();
    let mut chars = code.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '\\' if in_str => {
                cur.push(ch);
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            '\'' if !in_str => {
                // A char literal such as '"' must not open a string.
                let mut ahead = chars.clone();
                let (a, b) = (ahead.next(), ahead.next());
                if a == Some('"') && b == Some('\'') {
                    chars.next();
                    chars.next();
                }
            }
            '"' => {
                if in_str && SQL.iter().any(|k| cur.contains(k)) {
                    found.push(cur.lines().next().unwrap_or("").to_owned());
                }
                in_str = !in_str;
                cur.clear();
            }
            _ if in_str => cur.push(ch),
            _ => {}
        }
    }
    found
}

#[test]
fn sql_only_in_the_backends() {
    let mut problems = Vec::new();
    for (label, c) in [("src", library()), ("src/bin/sessiondb", binary())] {
        for (module, code) in &c.files {
            if label == "src" && in_backend(module) {
                continue;
            }
            for s in sql_literals(code) {
                problems.push(format!(
                    "{label}/{}: SQL outside src/store/sqlite/ and src/store/postgres/: {s}",
                    module.replace("::", "/")
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Whether `module` is one of the two backends' folders (or below them).
fn in_backend(module: &str) -> bool {
    ["store::sqlite", "store::postgres"].iter().any(|b| module == *b || module.starts_with(&format!("{b}::")))
}

/// `code` with the text of its string literals blanked (SQL may pack keys; Rust may not).
fn without_strings(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut in_str = false;
    let mut chars = code.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '\\' if in_str => {
                chars.next();
            }
            '\'' if !in_str => {
                out.push(ch);
                let mut ahead = chars.clone();
                let (a, b) = (ahead.next(), ahead.next());
                if a == Some('"') && b == Some('\'') {
                    chars.next();
                    chars.next();
                }
            }
            '"' => {
                in_str = !in_str;
                out.push(ch);
            }
            _ if in_str => {}
            _ => out.push(ch),
        }
    }
    out
}

/// The words of `code` that start a word (not the tail of a longer name or path).
fn word_starts<'a>(code: &'a str, word: &str) -> Vec<&'a str> {
    code.match_indices(word)
        .filter(|(at, _)| !code[..*at].ends_with(|ch: char| ch.is_alphanumeric() || ch == '_' || ch == ':'))
        .map(|(at, _)| code[at..].lines().next().unwrap_or(""))
        .collect()
}

/// The library modules outside `src/store/sqlite/` and `src/store/postgres/` that name a
/// database driver (rusqlite, the postgres crate), take the SQLite connection out of a `Db`,
/// or ask which backend a `Db` is.
fn drivers_outside_backends(c: &Crate) -> Vec<String> {
    let mut problems = Vec::new();
    for (module, code) in &c.files {
        if in_backend(module) {
            continue;
        }
        let code = without_strings(code);
        let mut words = vec![
            "rusqlite",
            ".sqlite(",
            ".sqlite_mut(",
            ".into_sqlite(",
            "from_sqlite(",
            ".pg()",
            ".conn()",
            "postgres::",
        ];
        // `Db::backend` names the backend for messages: only the interface that defines it and
        // the handle read it.
        if module != "store::handle" && module != "store::backend" {
            words.extend([".backend()", "Backend::"]);
        }
        for word in words {
            // A method call is found by its dot; a name only where a word starts.
            let found: Vec<&str> = if word.starts_with('.') {
                code.match_indices(word).map(|(at, _)| code[at + 1..].lines().next().unwrap_or("")).collect()
            } else {
                word_starts(&code, word)
            };
            for line in found {
                problems.push(format!("src/{}: `{word}` outside the backends: {line}", module.replace("::", "/")));
            }
        }
    }
    problems.extend(backend_modules_named_above_store(c));
    problems.sort();
    problems.dedup();
    problems
}

/// The library modules above `store/` (the crate root aside, which re-exports for the tests)
/// that name a backend's folder (`store::sqlite`, `store::postgres`) in code.
fn backend_modules_named_above_store(c: &Crate) -> Vec<String> {
    let mut problems = Vec::new();
    for (module, code) in &c.files {
        if module.is_empty() || module == "store" || module.starts_with("store::") {
            continue;
        }
        let code = without_strings(code);
        for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for folder in ["store::sqlite", "store::postgres"] {
                if line.contains(folder) {
                    problems.push(format!(
                        "src/{}: `{folder}` above store/: {}",
                        module.replace("::", "/"),
                        line.trim()
                    ));
                }
            }
        }
    }
    problems
}

#[test]
fn drivers_and_backend_questions_only_in_the_backends() {
    let mut problems = drivers_outside_backends(&library());
    // The binary is above every layer of the library: it goes through its interface.
    problems
        .extend(drivers_outside_backends(&binary()).into_iter().map(|p| p.replacen("src/", "src/bin/sessiondb/", 1)));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The library modules other than `store::keys` that pack or unpack a key by hand (a shift by
/// 32 or a mask of the low 32 bits, outside SQL text).
fn keys_by_hand(c: &Crate) -> Vec<String> {
    let mut problems = Vec::new();
    for (module, code) in &c.files {
        if module == "store::keys" {
            continue;
        }
        let code = without_strings(code).to_ascii_lowercase();
        for word in ["<< 32", ">> 32", "<<= 32", ">>= 32", "0xffff_ffff", "0xffffffff", "4294967295", "u32::max as i64"]
        {
            for (at, _) in code.match_indices(word) {
                // A longer literal (`0xffff_ffff_ffff`, a 48-bit mask) is another number.
                if code[at + word.len()..].starts_with(|ch: char| ch.is_alphanumeric() || ch == '_') {
                    continue;
                }
                let line = code[at..].lines().next().unwrap_or("");
                problems.push(format!("src/{}: a key packed by hand: {word} {line}", module.replace("::", "/")));
            }
        }
    }
    problems
}

#[test]
fn keys_are_packed_only_in_store_keys() {
    let mut problems = keys_by_hand(&library());
    problems.extend(keys_by_hand(&binary()).into_iter().map(|p| p.replacen("src/", "src/bin/sessiondb/", 1)));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The library modules outside the two backends' folders whose SQL text shifts a key by 32
/// (statements computing a session's key range): SQL packs keys only where its backend does.
fn key_shifts_in_sql_outside_backends(c: &Crate) -> Vec<String> {
    let mut problems = Vec::new();
    for (module, code) in &c.files {
        if in_backend(module) || module == "store::keys" {
            continue;
        }
        for word in ["<< 32", ">> 32"] {
            for (at, _) in code.match_indices(word) {
                let line = code[at..].lines().next().unwrap_or("");
                problems.push(format!("src/{}: a key shifted outside the backends: {line}", module.replace("::", "/")));
            }
        }
    }
    problems
}

#[test]
fn sql_shifts_keys_only_in_the_backends() {
    let mut problems = key_shifts_in_sql_outside_backends(&library());
    problems.extend(
        key_shifts_in_sql_outside_backends(&binary()).into_iter().map(|p| p.replacen("src/", "src/bin/sessiondb/", 1)),
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// What the Node binding may take from `sessiondb::internals` (the rest of what it uses is the
/// public API): `sessions`, to delete a session by its path.
const BINDING_INTERNALS: &[&str] = &["sessions"];

/// The names the Node binding's code takes from `sessiondb::internals` beyond
/// [`BINDING_INTERNALS`].
fn binding_internals_beyond_allowed(c: &Crate) -> Vec<String> {
    let mut problems = Vec::new();
    for (module, code) in &c.files {
        for (at, word) in code.match_indices("internals::") {
            let rest = &code[at + word.len()..];
            let name: String = rest.chars().take_while(|ch| ch.is_alphanumeric() || *ch == '_').collect();
            if !BINDING_INTERNALS.contains(&name.as_str()) {
                let line = rest.lines().next().unwrap_or("");
                problems.push(format!("bindings/node/src/{module}: sessiondb::internals::{line}"));
            }
        }
    }
    problems
}

#[test]
fn the_node_binding_uses_the_public_api_and_internals_sessions_only() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("bindings").join("node").join("src");
    let binding = load(&root, None);
    assert!(binding.files.values().any(|code| code.contains("sessiondb::")), "the binding's code was not found");
    let problems = binding_internals_beyond_allowed(&binding);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The names a session or entry key goes by (`sid`, `skey`, `key`, `owner`, `parent_key`,
/// `keys`, `local_sid`, ...).
fn names_a_key(name: &str) -> bool {
    ["sid", "skey", "sids", "skeys", "key", "keys", "owner"].contains(&name)
        || name.ends_with("_sid")
        || name.ends_with("_key")
        || name.ends_with("_keys")
}

/// The parameters, fields and bindings of `c` named as keys ([`names_a_key`]) whose type is a
/// raw integer (`i64`, `Option<i64>`, `&[i64]`, `Vec<i64>`, ...) rather than `SessionKey` or
/// `EntryKey`.
fn raw_integer_keys(c: &Crate) -> Vec<String> {
    let mut problems = Vec::new();
    for (module, code) in &c.files {
        if module == "store::keys" {
            continue;
        }
        let code = without_strings(code);
        for (at, _) in code.match_indices(':') {
            let before = &code[..at];
            let name_start = before.rfind(|ch: char| !(ch.is_alphanumeric() || ch == '_')).map_or(0, |i| i + 1);
            let name = &before[name_start..];
            if name.is_empty() || code[at + 1..].starts_with(':') || before.ends_with(':') || !names_a_key(name) {
                continue;
            }
            let ty = code[at + 1..].trim_start();
            let ty = ty.trim_start_matches(|ch: char| "&[(<".contains(ch) || ch == ' ');
            let ty = ["mut ", "Option<", "Vec<", "HashSet<"].iter().fold(ty, |t, p| t.trim_start_matches(p));
            let ty = ty.trim_start_matches(|ch: char| "&[(<".contains(ch));
            if ty.starts_with("i64") && !ty[3..].starts_with(|ch: char| ch.is_alphanumeric() || ch == '_') {
                let line = code[name_start..].lines().next().unwrap_or("").trim();
                problems.push(format!("src/{}: a key as a raw integer: {line}", module.replace("::", "/")));
            }
        }
    }
    problems
}

#[test]
fn keys_are_typed_everywhere() {
    let mut problems = raw_integer_keys(&library());
    problems.extend(raw_integer_keys(&binary()).into_iter().map(|p| p.replacen("src/", "src/bin/sessiondb/", 1)));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The modules other than `hash` that name a hashing crate or write a hasher of their own
/// (`impl Hasher for`): `src/hash.rs` owns the one rule.
fn hashing_outside_hash_rs(c: &Crate) -> Vec<String> {
    let mut problems = Vec::new();
    for (module, code) in &c.files {
        if module == "hash" {
            continue;
        }
        let code = without_strings(code);
        for word in ["rustc_hash", "fnv::", "ahash", "foldhash", "Hasher for "] {
            let found: Vec<&str> = if word == "Hasher for " {
                code.match_indices(word).map(|(at, _)| code[at..].lines().next().unwrap_or("")).collect()
            } else {
                word_starts(&code, word)
            };
            for line in found {
                problems.push(format!("src/{}: hashing outside src/hash.rs: {line}", module.replace("::", "/")));
            }
        }
    }
    problems
}

#[test]
fn one_hashing_rule_in_hash_rs() {
    let mut problems = hashing_outside_hash_rs(&library());
    problems
        .extend(hashing_outside_hash_rs(&binary()).into_iter().map(|p| p.replacen("src/", "src/bin/sessiondb/", 1)));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Longest a file under `src/` may be.
const MAX_LINES: usize = 800;

/// The files under `src/` longer than [`MAX_LINES`].
fn long_files(dir: &Path) -> Vec<String> {
    let mut paths = Vec::new();
    rs_files(dir, None, &mut paths);
    paths
        .into_iter()
        .filter_map(|p| {
            let n = std::fs::read_to_string(&p).unwrap().lines().count();
            (n > MAX_LINES).then(|| format!("{}: {n} lines (at most {MAX_LINES})", p.display()))
        })
        .collect()
}

#[test]
fn no_source_file_is_over_800_lines() {
    let problems = long_files(&src());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The checks above can fail: a planted loop and planted SQL are found.
#[test]
fn the_checks_find_planted_violations() {
    let mut c = library();
    let code = c.files.get_mut("js::json").unwrap();
    code.push_str("\nuse crate::store::db;\n");
    let problems = import_problems(&c, Some(LAYERS));
    assert!(problems.iter().any(|p| p.contains("js imports store")), "{problems:?}");
    assert!(problems.iter().any(|p| p.contains("folders import each other")), "{problems:?}");

    let mut c = library();
    c.files.get_mut("read::tree").unwrap().push_str("\nuse crate::read::search::x;\n");
    c.files.get_mut("read::search").unwrap().push_str("\nuse super::tree::y;\n");
    let problems = import_problems(&c, Some(LAYERS));
    assert!(problems.iter().any(|p| p == "modules import each other: read::search ↔ read::tree"), "{problems:?}");

    assert_eq!(sql_literals("let q = \"SELECT id FROM entries\";"), ["SELECT id FROM entries"]);
    assert!(sql_literals("let q = '\"'; let s = \"UPDATE the docs\";").len() == 1);
    assert!(sql_literals("let q = \"select a thing\";").is_empty());

    let mut c = library();
    c.files.get_mut("read::tree").unwrap().push_str("\nfn f(c: &rusqlite::Connection) {}\n");
    c.files.get_mut("manager").unwrap().push_str("\nfn h(e: postgres::Error) {}\n");
    c.files.get_mut("read::tree").unwrap().push_str("\nfn g(db: &Db) { db.sqlite(); }\n");
    c.files
        .get_mut("read::search")
        .unwrap()
        .push_str("\nfn k(db: &Db) -> bool { db.backend() == Backend::Postgres }\n");
    c.files
        .get_mut("store::interface::entries")
        .unwrap()
        .push_str("\nconst Q: &str = \"x\"; use crate::store::postgres::Pg;\n");
    c.files.get_mut("ingest::import").unwrap().push_str("\nuse crate::store::sqlite::bulk::BulkJournal;\n");
    let problems = drivers_outside_backends(&c);
    assert!(problems.iter().any(|p| p.starts_with("src/read/tree: `rusqlite`")), "{problems:?}");
    assert!(problems.iter().any(|p| p.starts_with("src/manager: `postgres::`")), "{problems:?}");
    assert!(problems.iter().any(|p| p.starts_with("src/read/tree: `.sqlite(`")), "{problems:?}");
    assert!(problems.iter().any(|p| p.starts_with("src/read/search: `.backend()`")), "{problems:?}");
    assert!(problems.iter().any(|p| p.starts_with("src/read/search: `Backend::`")), "{problems:?}");
    assert!(problems.iter().any(|p| p.starts_with("src/ingest/import: `store::sqlite` above store/")), "{problems:?}");
    assert_eq!(problems.len(), 6, "{problems:?}");
    let mut b = binary();
    b.files.get_mut("cli::output").unwrap().push_str("\nfn f(e: &rusqlite::Error, db: &mut Db) { db.sqlite_mut(); }\n");
    let problems = drivers_outside_backends(&b);
    assert!(problems.iter().any(|p| p.starts_with("src/cli/output: `rusqlite`")), "{problems:?}");
    assert!(problems.iter().any(|p| p.starts_with("src/cli/output: `.sqlite_mut(`")), "{problems:?}");

    let mut c = library();
    c.files
        .get_mut("read::search")
        .unwrap()
        .push_str("\nfn s(k: i64) -> i64 { k >> 32 }\nfn t(k: i64) -> i64 { k & 0xFFFF_FFFF }\n");
    c.files.get_mut("read::tree").unwrap().push_str("\nconst Q: &str = \"SELECT key >> 32 FROM entries\";\n");
    let problems = keys_by_hand(&c);
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems.iter().all(|p| p.starts_with("src/read/search: a key packed by hand")), "{problems:?}");

    let mut c = library();
    c.files.get_mut("read::tree").unwrap().push_str("\nconst Q: &str = \"SELECT key >> 32 FROM entries\";\n");
    c.files.get_mut("store::sqlite::entries").unwrap().push_str("\nconst R: &str = \"SELECT ?1 << 32\";\n");
    let problems = key_shifts_in_sql_outside_backends(&c);
    assert!(problems.len() == 1 && problems[0].starts_with("src/read/tree: a key shifted"), "{problems:?}");

    let mut files = BTreeMap::new();
    files.insert("".to_owned(), "use sessiondb::internals::sessions;\nuse sessiondb::internals::journal;\n".to_owned());
    let problems = binding_internals_beyond_allowed(&Crate { files });
    assert!(problems.len() == 1 && problems[0].ends_with("internals::journal;"), "{problems:?}");

    let mut c = library();
    c.files.get_mut("read::tree").unwrap().push_str(
        "\npub fn a(sid: i64, parent_key: Option<i64>, keys: &[i64], n: i64) {}\nstruct S { skey: Vec<i64>, k: SessionKey, key: EntryKey, seq: i64 }\nfn b(x: &str) { let q = \"sid: i64\"; let key: i64 = 1; }\n",
    );
    let problems = raw_integer_keys(&c);
    assert_eq!(problems.len(), 5, "{problems:?}");
    assert!(problems.iter().all(|p| p.starts_with("src/read/tree: a key as a raw integer")), "{problems:?}");

    let mut c = library();
    c.files.get_mut("manager::lazy").unwrap().push_str(
        "\nstruct H(u64);\nimpl std::hash::Hasher for H { fn write(&mut self, b: &[u8]) {} fn finish(&self) -> u64 { 0 } }\ntype M = rustc_hash::FxHashMap<u8, u8>;\n",
    );
    let problems = hashing_outside_hash_rs(&c);
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems.iter().all(|p| p.starts_with("src/manager/lazy: hashing outside src/hash.rs")), "{problems:?}");

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("long.rs"), "\n".repeat(MAX_LINES + 1)).unwrap();
    std::fs::write(dir.path().join("short.rs"), "\n".repeat(MAX_LINES)).unwrap();
    let long = long_files(dir.path());
    assert!(long.len() == 1 && long[0].contains("long.rs"), "{long:?}");
}
