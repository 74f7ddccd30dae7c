//! Figures of issue F whose APIs do not exist yet. They are reported as `null` and listed here
//! with what they will time.
//!
//! **To add one** when its API lands: measure it in `figures.rs`, set its field in
//! `bench::run` (the block marked "PENDING FIGURES"), and remove its line below.

/// `(JSON key, what it will time)` for each figure not measurable yet.
pub const PENDING: &[(&str, &str)] = &[
    ("b_find_by_id_us", "find_by_id, mean over 50 random ids (needs the SessionManager find API)"),
    ("c_continue_recent_ms", "continue_recent for the busiest cwd, open included (needs SessionManager)"),
    ("d_list_cwd_ms", "list for the busiest cwd, full SessionInfo (needs the list API)"),
    ("d_list_all_ms", "list of all sessions, full SessionInfo (needs the list API)"),
    ("e_append_us_p50", "median of 10,000 durable appends of a 1 KiB assistant message (needs the append API)"),
    ("e_append_us_p99", "99th percentile of the same appends (needs the append API)"),
    ("e_appends_per_s", "appends per second over the same run (needs the append API)"),
    ("g_fork_largest_ms", "forkFrom of the largest session (needs SessionManager fork)"),
    ("h_branched_session_mid_ms", "createBranchedSession at a mid-path leaf of the largest (needs SessionManager)"),
    ("search_ms", "a search for a rare word (needs the search API)"),
];

/// What a pending figure will time, if `key` is one.
pub fn pending(key: &str) -> Option<&'static str> {
    PENDING.iter().find(|(k, _)| *k == key).map(|(_, what)| *what)
}
