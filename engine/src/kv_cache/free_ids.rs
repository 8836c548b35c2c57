//! The free queue of a pool without prefix caching: ids never used, then freed ids.
//!
//! With caching off no block holds content and none is shared: a block is in one request's
//! table or free, and the queue's order is all the state there is. The queue starts as
//! every id in order; those never handed out stay a range at its head, and freed ids queue
//! behind them in a ring of ids. A table is taken and handed back as slice copies, a few
//! instructions a block and no per-block branch: decode grows tables a block at a time,
//! interleaved across requests, so freed ids form runs only a few blocks long (storing
//! runs cost more per run than copying their ids). Memory follows the blocks a run touches.

use super::BlockId;
use std::collections::VecDeque;

/// A FIFO of free block ids: `next..end` (never used) ahead of `freed`.
#[derive(Debug, Clone, Default)]
pub(crate) struct FreeIds {
    next: BlockId,
    end: BlockId,
    freed: VecDeque<BlockId>,
}

impl FreeIds {
    /// The queue `0, 1, …, n − 1`.
    pub(crate) fn new(n: u32) -> Self {
        FreeIds {
            next: 0,
            end: n,
            freed: VecDeque::new(),
        }
    }

    /// Ids queued.
    pub(crate) fn len(&self) -> u32 {
        self.end - self.next + self.freed.len() as u32
    }

    /// Takes the first `n` ids (`n ≤ len`) onto `table`, head first.
    pub(crate) fn pop_front(&mut self, n: u32, table: &mut Vec<BlockId>) {
        debug_assert!(n <= self.len(), "{n} of {} free ids taken", self.len());
        let fresh = n.min(self.end - self.next);
        table.reserve(n as usize);
        // Written into a zeroed tail: a loop the compiler vectorises, unlike `extend`.
        let start = table.len();
        table.resize(start + fresh as usize, 0);
        let first = self.next;
        table[start..]
            .iter_mut()
            .zip(0..)
            .for_each(|(slot, j)| *slot = first + j);
        self.next += fresh;
        let n = (n - fresh) as usize;
        let (a, b) = self.freed.as_slices();
        let from_a = n.min(a.len());
        table.extend_from_slice(&a[..from_a]);
        table.extend_from_slice(&b[..n - from_a]);
        // Dropping a drain of `u32`s from the front only moves the head.
        self.freed.drain(..n);
    }

    /// Queues `id` at the tail.
    #[cfg(test)]
    pub(crate) fn push_back(&mut self, id: BlockId) {
        self.freed.push_back(id);
    }

    /// Queues `ids` at the tail, last first (a block table freed last block first).
    pub(crate) fn push_back_rev(&mut self, ids: &[BlockId]) {
        self.freed.extend(ids.iter().rev());
    }

    /// True when `id` is queued (O(ids)).
    pub(crate) fn contains(&self, id: BlockId) -> bool {
        (self.next..self.end).contains(&id) || self.freed.contains(&id)
    }

    /// The ids from head to tail (O(ids)).
    pub(crate) fn ids(&self) -> Vec<BlockId> {
        let mut out = Vec::with_capacity(self.len() as usize);
        out.extend(self.next..self.end);
        out.extend(&self.freed);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_leave_in_the_order_they_were_queued() {
        let mut q = FreeIds::new(6);
        let mut t = Vec::new();
        q.pop_front(4, &mut t);
        assert_eq!(t, [0, 1, 2, 3]);
        // Freed last block first, behind the never-used 4 and 5.
        for &id in t.iter().rev() {
            q.push_back(id);
        }
        assert_eq!(q.ids(), [4, 5, 3, 2, 1, 0]);
        q.push_back(9);
        q.push_back(7);
        assert_eq!(q.len(), 8);
        let mut u = Vec::new();
        // Straddles the never-used range and the freed ids.
        q.pop_front(3, &mut u);
        assert_eq!(u, [4, 5, 3]);
        assert_eq!(q.ids(), [2, 1, 0, 9, 7]);
        assert!(q.contains(0) && q.contains(7) && !q.contains(8) && !q.contains(4));
        q.pop_front(5, &mut u);
        assert_eq!(u, [4, 5, 3, 2, 1, 0, 9, 7]);
        assert_eq!((q.len(), q.ids()), (0, vec![]));
    }

    #[test]
    fn a_table_freed_at_once_queues_as_freed_one_by_one() {
        let tables: [&[BlockId]; 4] = [&[3, 4, 5, 9, 8, 7, 1], &[2], &[6, 6, 7], &[]];
        let (mut bulk, mut single) = (FreeIds::new(0), FreeIds::new(0));
        for t in tables {
            bulk.push_back_rev(t);
            t.iter().rev().for_each(|&id| single.push_back(id));
        }
        assert_eq!(bulk.ids(), [1, 7, 8, 9, 5, 4, 3, 2, 7, 6, 6]);
        assert_eq!((bulk.ids(), bulk.len()), (single.ids(), single.len()));
    }

    #[test]
    fn ids_taken_across_the_ring_wrap_keep_their_order() {
        // Queue and take so the ring wraps: ids then sit in two slices, and a take
        // spanning both must still hand them out head first.
        let mut q = FreeIds::new(2);
        let mut t = Vec::new();
        q.pop_front(2, &mut t); // 0, 1; nothing left never used
        q.push_back_rev(&[10, 11, 12, 13]); // queue: 13 12 11 10
        q.pop_front(3, &mut t); // 13 12 11
        q.push_back_rev(&[20, 21, 22, 23, 24, 25]); // queue: 10 25 24 23 22 21 20
        assert!(!q.freed.as_slices().1.is_empty(), "the ring wraps");
        q.pop_front(4, &mut t);
        assert_eq!(t, [0, 1, 13, 12, 11, 10, 25, 24, 23]);
        assert_eq!(q.ids(), [22, 21, 20]);
        q.pop_front(3, &mut t);
        assert_eq!(t[9..], [22, 21, 20]);
        assert_eq!(q.len(), 0);
    }
}
