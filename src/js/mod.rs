//! JavaScript's semantics where pi's behaviour depends on them: JSON as `JSON.parse` and
//! `JSON.stringify` see it, `Date`, and `localeCompare` ordering. Knows nothing of pi.

pub mod canonical;
pub mod collate;
pub mod json;
pub mod jstime;
