//! The synthetic corpus of `sessiondb bench`: pi's layout and format, clean import, every
//! projection builds, exact export, determinism; and one tiny benchmark run end to end.

use crate::bench::synth::{generate, SynthOptions};
use crate::bench::{self, BenchOptions, Source};
use sessiondb::import::{collect_targets, import_targets, ImportOptions};
use sessiondb::tree::{Leaf, SessionTree};
use std::collections::BTreeMap;
use std::path::Path;

fn tiny(seed: u64) -> SynthOptions {
    SynthOptions { sessions: 8, entries: 40, huge: 700, seed, ..SynthOptions::default() }
}

/// Relative path → bytes of every file under `dir`.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let targets = collect_targets(&[dir.to_path_buf()]).unwrap();
    targets.into_iter().map(|t| (t.rel_path, std::fs::read(&t.path).unwrap())).collect()
}

#[test]
fn synthetic_corpus_imports_cleanly_and_projects() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = generate(&tmp.path().join("c"), &tiny(7)).unwrap();
    assert_eq!(corpus.files.len(), 9);
    // Ordinary sessions have at least 8 entries; the long one exactly 700.
    assert!(corpus.entries >= 8 * 8 + 700);
    assert!(corpus.bytes > 0);

    // pi's layout and header.
    for f in &corpus.files {
        let rel = f.strip_prefix(&corpus.sessions_dir).unwrap().to_string_lossy().into_owned();
        let (dir, name) = rel.split_once('/').unwrap();
        assert!(dir.starts_with("--") && dir.ends_with("--"), "{rel}");
        assert!(name.ends_with(".jsonl") && name.contains("Z_"), "{rel}");
        let text = std::fs::read_to_string(f).unwrap();
        let header = text.lines().next().unwrap();
        assert!(header.starts_with(r#"{"type":"session","version":3,"id":""#), "{header}");
        assert!(header.contains(r#","timestamp":""#) && header.contains(r#","cwd":"/"#), "{header}");
        let second = text.lines().nth(1).unwrap();
        assert!(second.starts_with(r#"{"type":"model_change","id":""#), "{second}");
        assert!(second.contains(r#","parentId":null,"timestamp":""#), "{second}");
    }

    let db_path = tmp.path().join("db.sqlite");
    let mut conn = sessiondb::db::open(&db_path).unwrap();
    let targets = collect_targets(std::slice::from_ref(&corpus.sessions_dir)).unwrap();
    let summary = import_targets(&mut conn, &targets, ImportOptions::default(), |_| {}).unwrap();
    assert_eq!((summary.failures, summary.skipped_lines, summary.blank_lines), (0, 0, 0));
    assert_eq!(summary.sessions, 9);
    assert_eq!(summary.entries, corpus.entries);

    let mut compacted = 0;
    for f in &corpus.files {
        let s = sessiondb::resolve::resolve(&conn, &f.to_string_lossy()).unwrap();
        let tree = SessionTree::open(&conn, s.sid).unwrap();
        let (projection, cycle) = tree.projection(&Leaf::Last).unwrap();
        assert!(cycle.is_none());
        let json = projection.to_json();
        assert!(json.contains(r#""role":"user""#), "{}", f.display());
        let ctx = tree.context(&Leaf::Last).unwrap();
        if ctx.entries.first().and_then(|e| e.kind()) == Some("compaction") {
            compacted += 1;
            // The compacted context holds far fewer entries than the path.
            assert!(ctx.entries.len() < tree.branch(None).unwrap().entries.len() / 2);
        }
        // Exact export: the file comes back byte for byte.
        let mut out = Vec::new();
        sessiondb::export::write_session(&conn, s.sid, &mut out).unwrap();
        assert!(out == std::fs::read(f).unwrap(), "{} does not round-trip", f.display());
    }
    assert_eq!(compacted, 1, "the 700-entry session has compactions");
}

#[test]
fn generator_is_deterministic() {
    let tmp = tempfile::tempdir().unwrap();
    let a = generate(&tmp.path().join("a"), &tiny(3)).unwrap();
    let b = generate(&tmp.path().join("b"), &tiny(3)).unwrap();
    let c = generate(&tmp.path().join("c"), &tiny(4)).unwrap();
    assert_eq!(a.bytes, b.bytes);
    let (sa, sb, sc) = (snapshot(&a.sessions_dir), snapshot(&b.sessions_dir), snapshot(&c.sessions_dir));
    assert!(sa == sb, "same seed, different bytes");
    assert!(sa != sc, "different seeds, same bytes");
    // A second run into an existing corpus is refused rather than mixed in.
    assert!(generate(&tmp.path().join("a"), &tiny(3)).is_err());
}

#[test]
fn tiny_benchmark_reports_every_key() {
    let opts = BenchOptions {
        source: Source::Synthetic(SynthOptions { sessions: 0, huge: 450, seed: 2, ..SynthOptions::default() }),
        runs: 1,
        heavy_runs: 1,
        keep_corpus: None,
    };
    let report = bench::run(&opts, &mut |_| {}).unwrap();
    assert_eq!((report.sessions, report.entries, report.import_failures, report.import_skipped_lines), (1, 450, 0, 0));
    let json = serde_json::to_value(&report).unwrap();
    for key in [
        "import_mib_per_s",
        "import_entries_per_s",
        "import_peak_rss_mib",
        "a_open_projection_largest_ms",
        "disk_write_mib_per_s",
    ] {
        assert!(json[key].as_f64().is_some_and(|x| x > 0.0), "{key}: {}", json[key]);
    }
    // A compacted leaf reads a few hundred rows at most; the twin without compactions reads its path.
    let rows = json["context_compacted_rows_read"].as_u64().unwrap();
    let path = json["context_compacted_path_length"].as_u64().unwrap();
    assert!(rows < path, "{rows} rows for a {path}-entry path");
    assert!(
        json["context_full_path_rows_read"].as_u64().unwrap() >= json["context_full_path_length"].as_u64().unwrap()
    );
    for (key, _) in bench::pending::PENDING {
        assert!(json[key].is_null(), "{key}");
    }
    for key in [
        "export_mib_per_s",
        "peak_rss_mib",
        "other_cpu_share",
        "b_find_by_id_us",
        "search_ms",
        "search_common_ms",
        "search_two_words_ms",
        "search_cjk_ms",
        "search_sessions_ms",
    ] {
        assert!(json.get(key).is_some(), "{key} missing");
    }
    // The rare word is a word of the corpus in few of its texts.
    let word = json["search_word"].as_str().unwrap();
    let (texts, all) = (json["search_word_texts"].as_u64().unwrap(), json["search_index_texts"].as_u64().unwrap());
    assert!(word.chars().count() >= 8 && texts >= 1 && texts * 10 < all, "{word}: {texts} of {all} texts");
    assert!(report.table().lines().any(|l| l.starts_with("a_open_projection_largest_ms")));
}
