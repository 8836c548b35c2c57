//! Hash maps keyed by block hashes, with a fixed (never `RandomState`) hasher.
//!
//! Block hashes are already well-mixed 64-bit values (chained SplitMix64), so
//! the hasher passes them through unchanged: lookups are fast and identical on
//! every platform. These maps are used for lookups only; nothing iterates them
//! in a way that feeds results without sorting first.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// Passes a `u64` key through as its own hash.
#[derive(Debug, Default, Clone, Copy)]
pub struct PassThroughHasher(u64);

impl Hasher for PassThroughHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only reached for non-u64 keys: fold bytes in with the FNV-1a mix.
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// A map from block hash to `V` with the fixed pass-through hasher.
pub type HashMapU64<V> = HashMap<u64, V, BuildHasherDefault<PassThroughHasher>>;

/// A set of block hashes with the fixed pass-through hasher.
pub type HashSetU64 = HashSet<u64, BuildHasherDefault<PassThroughHasher>>;
