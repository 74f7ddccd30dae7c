//! The HTML pages, written with maud (every interpolated value is escaped): the sessions list
//! with search, one session (transcript and tree), usage; and the parts they share.

pub mod chart;
pub mod format;
pub mod layout;
pub mod session;
pub mod sessions;
pub mod tree;
pub mod usage;
