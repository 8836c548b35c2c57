//! The free queue of a pool without prefix caching, as runs of consecutive block ids.
//!
//! With caching off no block holds content and none is shared: a block is in one request's
//! table or free, and the queue's order is all the state there is. Tables are taken from
//! the head and handed back to the tail last block first, so ids travel in runs (ascending
//! or descending): a 16k-token prompt's 1000 blocks are a few runs, allocated and freed
//! without a visit to a record per block (which, over a pool larger than the CPU caches,
//! was a cache miss each).

use super::BlockId;
use std::collections::VecDeque;

/// Ids `first`, `first ± 1`, …, `last`: descending when `last < first`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    first: BlockId,
    last: BlockId,
}

impl Run {
    fn len(self) -> u32 {
        self.first.abs_diff(self.last) + 1
    }

    /// Appends `id` if it continues the run (a single id continues either way).
    fn extend(&mut self, id: BlockId) -> bool {
        let up = self.first <= self.last && self.last.checked_add(1) == Some(id);
        let down = self.first >= self.last && self.last.checked_sub(1) == Some(id);
        if up || down {
            self.last = id;
        }
        up || down
    }

    /// Puts the run's first `k` ids (`k ≤ len`) onto `table`, in order.
    fn put(self, k: u32, table: &mut Vec<BlockId>) {
        if self.first <= self.last {
            table.extend(self.first..self.first + k);
        } else {
            table.extend((self.first + 1 - k..=self.first).rev());
        }
    }

    /// The run without its first `k` ids (`k < len`).
    fn skip(self, k: u32) -> Run {
        let first = if self.first <= self.last {
            self.first + k
        } else {
            self.first - k
        };
        Run {
            first,
            last: self.last,
        }
    }

    fn contains(self, id: BlockId) -> bool {
        (self.first.min(self.last)..=self.first.max(self.last)).contains(&id)
    }
}

/// A FIFO of free block ids stored as runs.
#[derive(Debug, Clone, Default)]
pub(crate) struct FreeRuns {
    runs: VecDeque<Run>,
    len: u32,
}

impl FreeRuns {
    /// The queue `0, 1, …, n − 1`.
    pub(crate) fn new(n: u32) -> Self {
        let mut runs = VecDeque::new();
        if n > 0 {
            runs.push_back(Run {
                first: 0,
                last: n - 1,
            });
        }
        FreeRuns { runs, len: n }
    }

    /// Ids queued.
    pub(crate) fn len(&self) -> u32 {
        self.len
    }

    /// Takes the first `n` ids (`n ≤ len`) onto `table`, head first.
    pub(crate) fn pop_front(&mut self, mut n: u32, table: &mut Vec<BlockId>) {
        debug_assert!(n <= self.len, "{n} of {} free ids taken", self.len);
        self.len -= n;
        table.reserve(n as usize);
        while n > 0 {
            let run = self.runs.front_mut().expect("ids queued");
            let k = run.len().min(n);
            run.put(k, table);
            if k == run.len() {
                self.runs.pop_front();
            } else {
                *run = run.skip(k);
            }
            n -= k;
        }
    }

    /// Queues `id` at the tail.
    pub(crate) fn push_back(&mut self, id: BlockId) {
        self.len += 1;
        if let Some(run) = self.runs.back_mut() {
            if run.extend(id) {
                return;
            }
        }
        self.runs.push_back(Run {
            first: id,
            last: id,
        });
    }

    /// True when `id` is queued (O(runs)).
    pub(crate) fn contains(&self, id: BlockId) -> bool {
        self.runs.iter().any(|r| r.contains(id))
    }

    /// The ids from head to tail (O(ids)).
    pub(crate) fn ids(&self) -> Vec<BlockId> {
        let mut out = Vec::with_capacity(self.len as usize);
        for r in &self.runs {
            r.put(r.len(), &mut out);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_leave_in_the_order_they_were_queued() {
        let mut q = FreeRuns::new(6);
        let mut t = Vec::new();
        q.pop_front(4, &mut t);
        assert_eq!(t, [0, 1, 2, 3]);
        // Freed last block first: 3, 2, 1 (one descending run), then 0 continues it.
        for &id in t.iter().rev() {
            q.push_back(id);
        }
        assert_eq!(q.ids(), [4, 5, 3, 2, 1, 0]);
        assert_eq!(q.runs.len(), 2);
        q.push_back(9);
        q.push_back(7);
        assert_eq!(q.len(), 8);
        let mut u = Vec::new();
        q.pop_front(3, &mut u);
        assert_eq!(u, [4, 5, 3]);
        assert_eq!(q.ids(), [2, 1, 0, 9, 7]);
        assert!(q.contains(0) && q.contains(7) && !q.contains(8) && !q.contains(4));
        q.pop_front(5, &mut u);
        assert_eq!(u, [4, 5, 3, 2, 1, 0, 9, 7]);
        assert_eq!((q.len(), q.runs.len()), (0, 0));
    }

    #[test]
    fn a_single_id_run_continues_either_way() {
        let mut q = FreeRuns::new(0);
        for id in [5, 4, 3, 4, 5, 6, 0, 100, 1] {
            q.push_back(id);
        }
        assert_eq!(q.ids(), [5, 4, 3, 4, 5, 6, 0, 100, 1]);
        assert_eq!(q.runs.len(), 5); // 5..3, 4..6, 0, 100, 1
    }
}
