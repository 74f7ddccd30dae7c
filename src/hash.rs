//! Hashing, one rule for the whole crate (no other file names a hashing crate):
//!
//! - **Stable**: FNV-1a 64 ([`fnv1a`], [`fnv1a_more`], the `fnv` crate), for every hash that is
//!   stored or sent: a push's lines hash (kept by the server, continued by the next push), the
//!   append journal's record checksums, the tail hash of a sync position, a push's advisory
//!   lock. Its values must never change: tests pin them (here, `ingest::push`,
//!   `store::sqlite::journal`, `jsonl::signature`).
//! - **Fast**: FxHash ([`FxHashMap`], [`FxBuildHasher`], the `rustc-hash` crate),
//!   for tables in memory whose keys are our own data (tokens, entry ids, keys), no one's
//!   attack surface: the standard library's SipHash cost a tenth of an index build.
//!
//! Neither is for security.

use std::hash::Hasher;

pub use rustc_hash::{FxBuildHasher, FxHashMap};

/// FNV-1a 64 of the concatenation of `parts`.
pub fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h = fnv::FnvHasher::default();
    for part in parts {
        h.write(part);
    }
    h.finish()
}

/// FNV-1a 64 continued from the hash `state` of earlier bytes over `bytes`: `fnv1a(&[a, b])`
/// is `fnv1a_more(fnv1a(&[a]), b)`.
pub fn fnv1a_more(state: u64, bytes: &[u8]) -> u64 {
    let mut h = fnv::FnvHasher::with_key(state);
    h.write(bytes);
    h.finish()
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_values() {
        // The published FNV-1a 64 test vectors.
        assert_eq!(super::fnv1a(&[]), 0xcbf2_9ce4_8422_2325);
        assert_eq!(super::fnv1a(&[b"a"]), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(super::fnv1a(&[b"foo", b"bar"]), super::fnv1a(&[b"foobar"]));
        assert_eq!(super::fnv1a(&[b"foobar"]), 0x85944171f73967e8);
        // The PostgreSQL advisory lock of a push's origin (`store::postgres::push`).
        assert_eq!(super::fnv1a(&[b"sessiondb push ", b"laptop"]) as i64, 6897266436257663197);
        assert_eq!(super::fnv1a_more(super::fnv1a(&[b"foo"]), b"bar"), super::fnv1a(&[b"foobar"]));
        assert_eq!(super::fnv1a_more(super::fnv1a(&[]), b""), super::fnv1a(&[]));
    }
}
