//! FNV-1a, 64-bit: a fast checksum of bytes, for the append journal's records and the tail
//! of a file a sync compares before reading only what was appended. Not for security.

/// FNV-1a of the concatenation of `parts`.
pub fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in *part {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
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
    }
}
