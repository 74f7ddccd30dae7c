//! The benchmark's result: one flat object (JSON keys as in issue F, `null` for figures not
//! measurable yet) and its rendering as an aligned table.

use super::pending::pending;
use serde::Serialize;

/// Every figure of one benchmark run. Times are medians.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// What was measured.
    pub corpus: String,
    /// Session files in the corpus.
    pub sessions: u64,
    /// Entries imported (headers excluded).
    pub entries: u64,
    /// Corpus size (MiB).
    pub corpus_mib: f64,
    /// Project folders.
    pub cwds: u64,
    /// Sessions in the busiest project folder.
    pub busiest_cwd_sessions: u64,
    /// Entries of the largest session (by file size).
    pub largest_session_entries: u64,
    /// Size of the largest session (MiB).
    pub largest_session_mib: f64,
    /// Seconds spent generating a synthetic corpus.
    pub generation_seconds: Option<f64>,
    /// Minimum timed runs of fast figures.
    pub runs: u32,
    /// Timed runs of passes over the whole corpus (import, export).
    pub heavy_runs: u32,

    /// Import throughput: corpus MiB per second (fresh database, open to close).
    pub import_mib_per_s: Option<f64>,
    /// Import throughput: entries per second.
    pub import_entries_per_s: Option<f64>,
    /// Peak RSS during an import (MiB).
    pub import_peak_rss_mib: Option<f64>,
    /// Median import time (s).
    pub import_seconds: Option<f64>,
    /// Malformed lines the import skipped (0 expected).
    pub import_skipped_lines: u64,
    /// Files the import could not take (0 expected).
    pub import_failures: u64,
    /// Database size after the import (MiB).
    pub db_mib: Option<f64>,

    /// (a) open the database + resolve the largest session + its projection at the last entry.
    pub a_open_projection_largest_ms: Option<f64>,
    /// Of that: opening and closing the database alone.
    pub a_open_only_ms: Option<f64>,
    /// Entry rows that projection read.
    pub a_projection_rows_read: Option<u64>,
    /// Entries on the largest session's root→leaf path.
    pub a_projection_path_length: Option<u64>,
    /// Messages in that projection.
    pub a_projection_messages: Option<u64>,

    /// Projection at a leaf with a recent compaction on its path (largest session; no open).
    pub context_compacted_ms: Option<f64>,
    /// Entry rows it read.
    pub context_compacted_rows_read: Option<u64>,
    /// Entries on its root→leaf path.
    pub context_compacted_path_length: Option<u64>,
    /// Projection at a leaf with no compaction on its path (a session as long as the largest).
    pub context_full_path_ms: Option<f64>,
    /// Entry rows it read.
    pub context_full_path_rows_read: Option<u64>,
    /// Entries on its root→leaf path.
    pub context_full_path_length: Option<u64>,
    /// Peak RSS while measuring it (MiB; not part of `peak_rss_mib` when it is a generated session).
    pub context_full_path_peak_rss_mib: Option<f64>,
    /// How the no-compaction session was obtained.
    pub context_full_path_session: Option<String>,

    /// (b) find_by_id, mean over 50 random ids (µs).
    pub b_find_by_id_us: Option<f64>,
    /// (c) continue_recent for the busiest cwd (ms).
    pub c_continue_recent_ms: Option<f64>,
    /// (d) list for the busiest cwd (ms).
    pub d_list_cwd_ms: Option<f64>,
    /// (d) list of all sessions (ms).
    pub d_list_all_ms: Option<f64>,
    /// (e) durable append of a 1 KiB message: median (µs).
    pub e_append_us_p50: Option<f64>,
    /// (e) 99th percentile (µs).
    pub e_append_us_p99: Option<f64>,
    /// (e) appends per second.
    pub e_appends_per_s: Option<f64>,
    /// (g) forkFrom of the largest session (ms).
    pub g_fork_largest_ms: Option<f64>,
    /// (h) createBranchedSession at a mid-path leaf of the largest (ms).
    pub h_branched_session_mid_ms: Option<f64>,
    /// A search for a rare word (ms).
    pub search_ms: Option<f64>,
    /// The rare word searched for.
    pub search_word: Option<String>,
    /// Indexed texts containing it.
    pub search_word_texts: Option<u64>,
    /// A search for `session-manager.ts`, a term in every session (ms).
    pub search_common_ms: Option<f64>,
    /// A search for two words that occur together (`original file`), top 20 (ms).
    pub search_two_words_ms: Option<f64>,
    /// A search for a CJK phrase (`日本語`), top 20 (ms).
    pub search_cjk_ms: Option<f64>,
    /// `search --sessions` for the term in every session, top 20 sessions (ms).
    pub search_sessions_ms: Option<f64>,
    /// Building the search index after the import (s), texts indexed, peak RSS (MiB).
    pub search_index_seconds: Option<f64>,
    /// Texts the index build took in.
    pub search_index_texts: Option<u64>,
    /// Peak RSS while building the index (MiB).
    pub search_index_peak_rss_mib: Option<f64>,
    /// First sync of the corpus into a fresh database (MiB/s).
    pub sync_first_mib_per_s: Option<f64>,
    /// A second sync with nothing changed (ms).
    pub sync_no_change_ms: Option<f64>,
    /// Picking up one appended line with a full rescan (ms).
    pub sync_one_line_rescan_ms: Option<f64>,
    /// Picking up one appended line in the notified file only, as --watch does (ms).
    pub sync_one_line_watch_ms: Option<f64>,

    /// `export --all` throughput (MiB written per second).
    pub export_mib_per_s: Option<f64>,
    /// Highest peak RSS over the measured phases (MiB).
    pub peak_rss_mib: Option<f64>,
    /// Whether the peak could be reset between phases (else it covers the whole process).
    pub peak_rss_per_phase: bool,
    /// CPU time other processes used during the measurements, as a share of all CPUs.
    pub other_cpu_share: Option<f64>,
    /// The disk's speed for a 64 MiB sequential write with `fdatasync`, before the import (MiB/s).
    pub disk_write_mib_per_s: Option<f64>,
}

fn f(v: Option<f64>) -> String {
    match v {
        None => "null".into(),
        Some(x) if x.abs() >= 100.0 => format!("{x:.0}"),
        Some(x) if x.abs() >= 10.0 => format!("{x:.1}"),
        Some(x) if x.abs() >= 1.0 => format!("{x:.2}"),
        Some(x) => format!("{x:.3}"),
    }
}

fn n(v: Option<u64>) -> String {
    v.map_or_else(|| "null".into(), |x| x.to_string())
}

impl Report {
    /// `(section or key, value, note)` rows in table order.
    fn rows(&self) -> Vec<(&'static str, String, String)> {
        let share = self.other_cpu_share.map(|s| format!("{:.1}%", s * 100.0));
        let mut rows = vec![
            ("corpus", self.corpus.clone(), String::new()),
            (
                "sessions",
                self.sessions.to_string(),
                format!("{} cwds, busiest holds {}", self.cwds, self.busiest_cwd_sessions),
            ),
            ("entries", self.entries.to_string(), String::new()),
            ("corpus_mib", f(Some(self.corpus_mib)), String::new()),
            (
                "largest_session_entries",
                self.largest_session_entries.to_string(),
                format!("{} MiB", f(Some(self.largest_session_mib))),
            ),
            (
                "import_mib_per_s",
                f(self.import_mib_per_s),
                format!("median of {} imports into a fresh database", self.heavy_runs),
            ),
            ("import_entries_per_s", f(self.import_entries_per_s), format!("{} s per import", f(self.import_seconds))),
            ("import_peak_rss_mib", f(self.import_peak_rss_mib), String::new()),
            (
                "import_skipped_lines",
                self.import_skipped_lines.to_string(),
                format!("{} failed files", self.import_failures),
            ),
            ("db_mib", f(self.db_mib), String::new()),
            (
                "a_open_projection_largest_ms",
                f(self.a_open_projection_largest_ms),
                format!("open db + resolve + projection; open + close alone {} ms", f(self.a_open_only_ms)),
            ),
            (
                "a_projection_rows_read",
                n(self.a_projection_rows_read),
                format!(
                    "of a {}-entry path; {} messages",
                    n(self.a_projection_path_length),
                    n(self.a_projection_messages)
                ),
            ),
            ("context_compacted_ms", f(self.context_compacted_ms), self.compacted_note()),
            ("context_full_path_ms", f(self.context_full_path_ms), self.full_path_note()),
            ("export_mib_per_s", f(self.export_mib_per_s), "export --all".into()),
            (
                "peak_rss_mib",
                f(self.peak_rss_mib),
                if self.peak_rss_per_phase { "highest phase peak".into() } else { "whole process".into() },
            ),
            ("other_cpu_share", share.unwrap_or_else(|| "null".into()), "other processes' CPU while measuring".into()),
            (
                "disk_write_mib_per_s",
                f(self.disk_write_mib_per_s),
                "64 MiB written + fdatasync, before the import".into(),
            ),
        ];
        rows.push(("search_common_ms", f(self.search_common_ms), "session-manager.ts: a term in every session".into()));
        rows.push((
            "search_two_words_ms",
            f(self.search_two_words_ms),
            "original file: two words, both must occur".into(),
        ));
        rows.push(("search_cjk_ms", f(self.search_cjk_ms), "日本語: CJK, no word boundaries".into()));
        rows.push((
            "search_sessions_ms",
            f(self.search_sessions_ms),
            "search --sessions session-manager.ts: best hit and count per session".into(),
        ));
        rows.push((
            "search_index_seconds",
            f(self.search_index_seconds),
            format!("{} texts; peak RSS {} MiB", n(self.search_index_texts), f(self.search_index_peak_rss_mib)),
        ));
        rows.push(("sync_first_mib_per_s", f(self.sync_first_mib_per_s), "first sync into a fresh database".into()));
        rows.push((
            "sync_no_change_ms",
            f(self.sync_no_change_ms),
            "second sync, nothing changed (no file opened)".into(),
        ));
        rows.push((
            "sync_one_line_rescan_ms",
            f(self.sync_one_line_rescan_ms),
            "one appended line, full rescan".into(),
        ));
        rows.push((
            "sync_one_line_watch_ms",
            f(self.sync_one_line_watch_ms),
            "one appended line, notified file only".into(),
        ));
        let pending_keys = [
            ("b_find_by_id_us", self.b_find_by_id_us),
            ("c_continue_recent_ms", self.c_continue_recent_ms),
            ("d_list_cwd_ms", self.d_list_cwd_ms),
            ("d_list_all_ms", self.d_list_all_ms),
            ("e_append_us_p50", self.e_append_us_p50),
            ("e_append_us_p99", self.e_append_us_p99),
            ("e_appends_per_s", self.e_appends_per_s),
            ("g_fork_largest_ms", self.g_fork_largest_ms),
            ("h_branched_session_mid_ms", self.h_branched_session_mid_ms),
            ("search_ms", self.search_ms),
        ];
        for (key, value) in pending_keys {
            let note = match (value, pending(key)) {
                (None, Some(what)) => format!("not measurable yet: {what}"),
                (Some(_), _) if key == "search_ms" => format!(
                    "{:?}, a rare word: in {} texts",
                    self.search_word.as_deref().unwrap_or_default(),
                    n(self.search_word_texts)
                ),
                _ => String::new(),
            };
            rows.push((key, f(value), note));
        }
        rows
    }

    fn compacted_note(&self) -> String {
        match self.context_compacted_rows_read {
            Some(rows) => format!("reads {rows} rows of a {}-entry path", n(self.context_compacted_path_length)),
            None => "no compaction on the largest session's path".into(),
        }
    }

    fn full_path_note(&self) -> String {
        let Some(rows) = self.context_full_path_rows_read else { return String::new() };
        let mut note = format!("reads {rows} rows of a {}-entry path", n(self.context_full_path_length));
        if let Some(s) = &self.context_full_path_session {
            note.push_str(&format!(" ({s}"));
            if let Some(p) = self.context_full_path_peak_rss_mib {
                note.push_str(&format!("; peak RSS {} MiB", f(Some(p))));
            }
            note.push(')');
        }
        note
    }

    /// The report as an aligned three-column table.
    pub fn table(&self) -> String {
        let rows = self.rows();
        let w0 = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
        // The first row (the corpus) is free text: the columns align the figures after it.
        let w1 = rows.iter().skip(1).map(|r| r.1.chars().count()).max().unwrap_or(0);
        let mut out = String::new();
        for (i, (k, v, note)) in rows.into_iter().enumerate() {
            let line = if i == 0 { format!("{k:<w0$}  {v}") } else { format!("{k:<w0$}  {v:>w1$}  {note}") };
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}
