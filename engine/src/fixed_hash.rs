//! A fixed (unseeded) hasher for lookup-only maps keyed by integers.
//!
//! `std`'s `RandomState` differs per process; lookups do not care, but a fixed
//! function keeps every run identical and is cheaper for already-mixed keys.

use crate::rng::splitmix64;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hasher};

/// A lookup-only hash map with the fixed hasher.
pub type FixedHashMap<K, V> = HashMap<K, V, FixedState>;

/// A lookup-only hash set with the fixed hasher.
pub type FixedHashSet<K> = HashSet<K, FixedState>;

/// Builds [`FixedHasher`]s; use as `HashMap<K, V, FixedState>`.
#[derive(Debug, Clone, Copy, Default)]
pub struct FixedState;

impl BuildHasher for FixedState {
    type Hasher = FixedHasher;

    fn build_hasher(&self) -> FixedHasher {
        FixedHasher(0)
    }
}

/// SplitMix64 over the written words.
#[derive(Debug, Clone, Copy)]
pub struct FixedHasher(u64);

impl Hasher for FixedHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = splitmix64(self.0 ^ b as u64);
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = splitmix64(self.0 ^ x);
    }

    fn write_u32(&mut self, x: u32) {
        self.write_u64(x as u64);
    }

    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
}

/// Builds [`PreMixedHasher`]s, for maps keyed by block hashes (already uniformly mixed
/// 64-bit values): hashing them again would only cost time.
#[derive(Debug, Clone, Copy, Default)]
pub struct PreMixedState;

impl BuildHasher for PreMixedState {
    type Hasher = PreMixedHasher;

    fn build_hasher(&self) -> PreMixedHasher {
        PreMixedHasher(0)
    }
}

/// Passes a `u64` key through as its own hash (other writes are mixed in).
#[derive(Debug, Clone, Copy)]
pub struct PreMixedHasher(u64);

impl Hasher for PreMixedHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = splitmix64(self.0 ^ b as u64);
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 ^= x;
    }
}

/// A lookup-only map keyed by block hash.
pub type BlockHashMap<V> = HashMap<u64, V, PreMixedState>;

/// A lookup-only set of block hashes.
pub type BlockHashSet = HashSet<u64, PreMixedState>;
