//! How a posting list is stored: the keys of the entries holding a token, ascending,
//! delta-encoded as varints (7 bits a byte, low first).

use crate::store::keys::EntryKey;

/// Appends `v` to `out` as a varint (7 bits a byte, low first).
pub(in crate::store) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends the keys of a posting blob to `out` (ascending within the blob).
pub(in crate::store) fn decode_into(blob: &[u8], out: &mut Vec<EntryKey>) {
    keys_upto(blob, EntryKey::MAX, |k| out.push(k));
}

/// Calls `f` with each key of a posting blob up to `last`, ascending.
pub fn keys_upto(blob: &[u8], last: EntryKey, mut f: impl FnMut(EntryKey)) {
    let mut key: u64 = 0;
    let mut v: u64 = 0;
    let mut shift = 0;
    for &b in blob {
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            key = key.wrapping_add(v);
            if key as i64 > last.0 {
                return;
            }
            f(EntryKey(key as i64));
            v = 0;
            shift = 0;
        } else {
            shift += 7;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn posting_blobs_round_trip() {
        let k = |s: i64, seq: i64| crate::store::keys::SessionKey(s).entry(seq);
        let keys = [k(1, 1), k(1, 2), k(1, 300), k(7, 5), k(1 << 30, 9)];
        let mut blob = Vec::new();
        let mut last = 0u64;
        for k in keys {
            put_varint(&mut blob, (k.0 as u64).wrapping_sub(last));
            last = k.0 as u64;
        }
        let mut out = Vec::new();
        decode_into(&blob, &mut out);
        assert_eq!(out, keys);
    }
}
