//! Seeded random streams: one per component, all derived from the scenario seed.
//!
//! Every stream is a PCG generator seeded from `(scenario seed, stream name)`
//! through a fixed mixing function, so adding a component never shifts the
//! numbers another component draws, and results are bit-identical natively and
//! in WebAssembly. Only integer arithmetic and exact float scaling are used
//! here; distributions that need `ln`/`exp` use `libm` (see `workload::dist`).

use rand::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// A deterministic random stream for one component.
#[derive(Debug, Clone)]
pub struct SimRng {
    inner: Pcg64Mcg,
}

impl SimRng {
    /// The stream named `name` (e.g. `"router.random"`, `"workload.stage.0"`) of scenario `seed`.
    pub fn stream(seed: u64, name: &str) -> Self {
        let mut h = fnv1a(name.as_bytes());
        h ^= splitmix64(seed);
        let lo = splitmix64(h);
        let hi = splitmix64(lo ^ 0x9e37_79b9_7f4a_7c15);
        Self {
            inner: with_second_word(Pcg64Mcg::seed_from_u64(lo), hi),
        }
    }

    /// A uniform 64-bit integer.
    pub fn next_u64(&mut self) -> u64 {
        self.inner.next_u64()
    }

    /// A uniform float in [0, 1) with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A uniform float in (0, 1], safe to take the logarithm of.
    pub fn next_f64_open0(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// One of `items` (not empty), uniformly: how a policy breaks a tie.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }

    /// A uniform integer in `0..n` (`n > 0`), without modulo bias.
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        // Lemire's multiply-shift with rejection.
        let mut m = (self.next_u64() as u128) * (n as u128);
        if (m as u64) < n {
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = (self.next_u64() as u128) * (n as u128);
            }
        }
        (m >> 64) as u64
    }

    /// A uniform integer in `lo..=hi`.
    pub fn range_inclusive(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        lo + self.below(hi - lo + 1)
    }
}

/// Mixes a second word into a generator's state, so 128 bits of seed are used.
fn with_second_word(mut rng: Pcg64Mcg, extra: u64) -> Pcg64Mcg {
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&rng.next_u64().to_le_bytes());
    bytes[8..].copy_from_slice(&extra.to_le_bytes());
    Pcg64Mcg::from_seed(bytes)
}

/// SplitMix64 finaliser: a fixed, well-mixed 64-bit permutation.
pub fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// FNV-1a over bytes: fixed, so names hash the same on every platform.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_and_name_give_the_same_stream() {
        let mut a = SimRng::stream(7, "router.random");
        let mut b = SimRng::stream(7, "router.random");
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn streams_differ_by_name_and_seed() {
        let x = SimRng::stream(7, "a").next_u64();
        assert_ne!(x, SimRng::stream(7, "b").next_u64());
        assert_ne!(x, SimRng::stream(8, "a").next_u64());
    }

    #[test]
    fn known_first_value_is_stable_across_platforms() {
        // Pinned so that a dependency or platform change that alters streams is caught.
        let v = SimRng::stream(42, "workload.stage.0").next_u64();
        assert_eq!(v, 17_966_413_607_783_629_522);
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut r = SimRng::stream(1, "t");
        let mut seen = [false; 5];
        for _ in 0..1000 {
            let v = r.below(5) as usize;
            seen[v] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn unit_floats_are_in_range() {
        let mut r = SimRng::stream(3, "u");
        for _ in 0..10_000 {
            let a = r.next_f64();
            let b = r.next_f64_open0();
            assert!((0.0..1.0).contains(&a));
            assert!(b > 0.0 && b <= 1.0);
        }
    }
}
