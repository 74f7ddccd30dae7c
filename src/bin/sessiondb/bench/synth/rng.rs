//! A tiny seeded PRNG (xorshift64*): the same seed gives the same corpus on every machine.

/// Deterministic pseudo-random numbers; not for anything secret.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator for `seed` (any value, 0 included).
    pub fn new(seed: u64) -> Self {
        // SplitMix64 scrambles the seed so that nearby seeds give unrelated streams.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        Rng { state: if z == 0 { 0x2545_F491_4F6C_DD1D } else { z } }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `[0, 1)`.
    pub fn float(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform integer in `lo..=hi` (`lo` when `hi < lo`).
    pub fn int(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        let span = (hi - lo) as u64 + 1;
        lo + (self.next_u64() % span) as i64
    }

    /// Uniform index in `0..n` (0 when `n` is 0).
    pub fn index(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.float() < p
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.index(items.len())]
    }

    /// Log-uniform integer in `[lo, hi)`: small values common, large ones rare.
    pub fn log_uniform(&mut self, lo: f64, hi: f64) -> i64 {
        (lo.ln() + self.float() * (hi.ln() - lo.ln())).exp().floor() as i64
    }

    /// An index drawn from cumulative weights (`cum` ascending, last = total).
    pub fn weighted(&mut self, cum: &[f64]) -> usize {
        let total = cum.last().copied().unwrap_or(0.0);
        let x = self.float() * total;
        cum.iter().position(|&c| x < c).unwrap_or(cum.len().saturating_sub(1))
    }

    /// `n` lowercase hex characters.
    pub fn hex(&mut self, n: usize) -> String {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        (0..n).map(|_| HEX[(self.next_u64() >> 60) as usize] as char).collect()
    }

    /// `n` characters of `[0-9A-Za-z]`.
    pub fn base62(&mut self, n: usize) -> String {
        const B62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        (0..n).map(|_| B62[self.index(62)] as char).collect()
    }

    /// A UUIDv7 string for the time `ms` (as pi's session ids), random bits from this generator.
    pub fn uuid_v7(&mut self, ms: i64) -> String {
        let ms = (ms.max(0) as u64) & 0xFFFF_FFFF_FFFF;
        let a = self.next_u64();
        let b = self.next_u64();
        let rand_a = a & 0x0FFF;
        let rand_b = b & 0x3FFF_FFFF_FFFF_FFFF;
        format!(
            "{:08x}-{:04x}-7{:03x}-{:04x}-{:012x}",
            ms >> 16,
            ms & 0xFFFF,
            rand_a,
            0x8000 | (rand_b >> 48),
            rand_b & 0xFFFF_FFFF_FFFF
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_in_range() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        for _ in 0..1000 {
            assert_eq!(a.next_u64(), b.next_u64());
            let x = a.int(3, 9);
            assert!((3..=9).contains(&x));
            b.int(3, 9);
            let f = a.float();
            assert!((0.0..1.0).contains(&f));
            b.float();
        }
        let id = Rng::new(1).uuid_v7(1_790_946_482_149);
        assert_eq!(id.len(), 36);
        assert!(id.starts_with("01a0fcba-97e5-7"), "{id}");
        assert!(sessiondb::internals::ids::is_valid_session_id(&id));
    }
}
