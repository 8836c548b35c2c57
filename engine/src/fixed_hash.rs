//! Fixed (unseeded) hashers for lookup-only maps.
//!
//! `std`'s `RandomState` differs per process; lookups do not care, but a fixed function
//! keeps every run identical and is cheaper. Keys that are already uniformly mixed 64-bit
//! values (block hashes) pass through unhashed; anything else (request ids) goes through
//! SplitMix64 so sequential keys still spread over the table.

use crate::rng::splitmix64;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hasher};

/// Builds [`FixedHasher`]s; `PREMIXED` passes `u64` keys through as their own hash.
#[derive(Debug, Clone, Copy, Default)]
pub struct FixedBuild<const PREMIXED: bool>;

/// Mixes every key: for ids and other structured keys.
pub type FixedState = FixedBuild<false>;

/// Passes `u64` keys through: for block hashes, which are mixed already.
pub type PreMixedState = FixedBuild<true>;

impl<const PREMIXED: bool> BuildHasher for FixedBuild<PREMIXED> {
    type Hasher = FixedHasher<PREMIXED>;

    fn build_hasher(&self) -> Self::Hasher {
        FixedHasher(0)
    }
}

/// SplitMix64 over the written words (a `u64` passes through when `PREMIXED`).
#[derive(Debug, Clone, Copy)]
pub struct FixedHasher<const PREMIXED: bool>(u64);

impl<const PREMIXED: bool> Hasher for FixedHasher<PREMIXED> {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = splitmix64(self.0 ^ b as u64);
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = if PREMIXED {
            self.0 ^ x
        } else {
            splitmix64(self.0 ^ x)
        };
    }

    fn write_u32(&mut self, x: u32) {
        self.0 = splitmix64(self.0 ^ x as u64);
    }

    fn write_usize(&mut self, x: usize) {
        self.0 = splitmix64(self.0 ^ x as u64);
    }
}

/// A lookup-only hash map with the mixing hasher.
pub type FixedHashMap<K, V> = HashMap<K, V, FixedState>;

/// A lookup-only map keyed by block hash.
pub type BlockHashMap<V> = HashMap<u64, V, PreMixedState>;

/// A lookup-only set of block hashes.
pub type BlockHashSet = HashSet<u64, PreMixedState>;
