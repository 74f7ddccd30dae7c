//! pi's rules, without storage: ids, entry kinds as pi's append methods build them, where pi
//! keeps session files, migration of old versions, the projection of entries into the
//! model's context, and what pi's tree selector reads of an assistant.

pub mod entries;
pub mod ids;
pub mod layout;
pub mod migrate;
pub mod projection;
pub mod system;
pub mod tree_row;
