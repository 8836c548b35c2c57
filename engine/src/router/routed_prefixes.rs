//! What the router itself sent where: an approximate picture of each worker's prefix cache
//! kept without any event from the workers, as SGLang's cache-aware router keeps a radix
//! tree per worker of the prompts it routed there (and llm-d's "approximate" prefix scorer
//! an index of the blocks it sent each pod).
//!
//! Kept at the granularity of KV blocks: a prompt is its chain of block hashes, and since a
//! block's hash covers every token before it, a set of hashes per worker is a radix tree —
//! the longest run of a prompt's hashes a worker holds, from the first, is its tree match.

use crate::fixed_hash::BlockHashMap;
use crate::request::BlockHash;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

/// When a block was last routed to a worker, and how deep in its prompt it sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Touch {
    /// The router's decision counter at the last insert that touched it.
    seq: u64,
    /// Its block index in that prompt (a tree node's depth).
    depth: u32,
}

/// One worker's tree: its blocks, and the same blocks in eviction order (least recently
/// touched first, the deepest first among blocks touched together).
#[derive(Debug, Clone, Default)]
struct Tree {
    blocks: BlockHashMap<Touch>,
    order: BTreeSet<(u64, Reverse<u32>, BlockHash)>,
}

impl Tree {
    fn evict_to(&mut self, max_blocks: usize) {
        while self.blocks.len() > max_blocks {
            let Some((_, _, h)) = self.order.pop_first() else {
                break;
            };
            self.blocks.remove(&h);
        }
    }
}

/// The per-worker trees.
#[derive(Debug, Clone, Default)]
pub struct RoutedPrefixes {
    trees: BTreeMap<u32, Tree>,
    seq: u64,
}

impl RoutedPrefixes {
    /// Empty trees.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many of `hashes`, from the first, the tree of `worker` holds.
    pub fn matched_blocks(&self, worker: u32, hashes: &[BlockHash]) -> usize {
        self.trees.get(&worker).map_or(0, |t| {
            hashes
                .iter()
                .take_while(|h| t.blocks.contains_key(h))
                .count()
        })
    }

    /// Blocks in the tree of `worker`.
    pub fn size(&self, worker: u32) -> usize {
        self.trees.get(&worker).map_or(0, |t| t.blocks.len())
    }

    /// Records that a prompt of `hashes` was sent to `worker`: its blocks join the tree (or
    /// are touched, as a radix tree's insert refreshes the path it walks).
    pub fn insert(&mut self, worker: u32, hashes: &[BlockHash]) {
        self.seq += 1;
        let seq = self.seq;
        let tree = self.trees.entry(worker).or_default();
        for (depth, &h) in hashes.iter().enumerate() {
            let touch = Touch {
                seq,
                depth: depth as u32,
            };
            if let Some(old) = tree.blocks.insert(h, touch) {
                tree.order.remove(&(old.seq, Reverse(old.depth), h));
            }
            tree.order.insert((seq, Reverse(touch.depth), h));
        }
    }

    /// [`Self::insert`], then the tree of `worker` cut back to `max_blocks` at once (an LRU
    /// index of fixed capacity, as llm-d's approximate prefix scorer keeps per pod).
    pub fn insert_bounded(&mut self, worker: u32, hashes: &[BlockHash], max_blocks: usize) {
        self.insert(worker, hashes);
        if let Some(tree) = self.trees.get_mut(&worker) {
            tree.evict_to(max_blocks);
        }
    }

    /// Shrinks every tree to at most `max_blocks`, least recently touched first and, among
    /// blocks touched together, the deepest first (a radix tree evicts leaves).
    pub fn evict_to(&mut self, max_blocks: usize) {
        for tree in self.trees.values_mut() {
            tree.evict_to(max_blocks);
        }
    }

    /// Forgets `worker` (it left the cluster).
    pub fn remove_worker(&mut self, worker: u32) {
        self.trees.remove(&worker);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_match_is_the_run_of_blocks_from_the_first() {
        let mut t = RoutedPrefixes::new();
        t.insert(1, &[10, 11, 12]);
        assert_eq!(
            t.matched_blocks(1, &[10, 11, 99, 12]),
            2,
            "up to the first miss"
        );
        assert_eq!(t.matched_blocks(1, &[99, 10]), 0);
        assert_eq!(t.matched_blocks(2, &[10]), 0, "another worker's tree");
        assert_eq!(t.size(1), 3);
    }

    #[test]
    fn eviction_drops_the_least_recent_leaves_first() {
        let mut t = RoutedPrefixes::new();
        t.insert(0, &[1, 2, 3]); // older prompt
        t.insert(0, &[1, 4]); // shares block 1, touches it again
        t.evict_to(3);
        // 3 and 2 were touched first; 3 is the deeper of them.
        assert_eq!(t.matched_blocks(0, &[1, 2, 3]), 2);
        t.evict_to(2);
        assert_eq!(t.matched_blocks(0, &[1, 2]), 1);
        assert_eq!(t.matched_blocks(0, &[1, 4]), 2, "the recent prompt stays");
    }
}
