//! Figures of issue F whose APIs do not exist yet. They are reported as `null` and listed here
//! with what they will time.
//!
//! **To add one** when its API lands: measure it in `figures.rs`, set its field in
//! `bench::run` (the block marked "PENDING FIGURES"), and remove its line below.

/// `(JSON key, what it will time)` for each figure not measurable yet.
pub const PENDING: &[(&str, &str)] = &[];

/// What a pending figure will time, if `key` is one.
pub fn pending(key: &str) -> Option<&'static str> {
    PENDING.iter().find(|(k, _)| *k == key).map(|(_, what)| *what)
}
