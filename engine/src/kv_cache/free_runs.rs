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
        // Written into a zeroed tail: a loop the compiler vectorises, unlike `extend`.
        let start = table.len();
        table.resize(start + k as usize, 0);
        let out = table[start..].iter_mut().zip(0..);
        if self.first <= self.last {
            out.for_each(|(slot, j)| *slot = self.first + j);
        } else {
            out.for_each(|(slot, j)| *slot = self.first - j);
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

    /// Queues `ids` at the tail, last first (a block table freed last block first),
    /// a run at a time.
    pub(crate) fn push_back_rev(&mut self, ids: &[BlockId]) {
        let mut rest = ids;
        while let Some((&id, more)) = rest.split_last() {
            self.push_back(id);
            rest = more;
            let run = self.runs.back_mut().expect("just queued");
            // Which way the run goes: its own, or (a single id) the next id's.
            let up = match (run.first.cmp(&run.last), rest.last()) {
                (std::cmp::Ordering::Less, _) => true,
                (std::cmp::Ordering::Greater, _) => false,
                (_, Some(&next)) if next == id.wrapping_add(1) => true,
                (_, Some(&next)) if next == id.wrapping_sub(1) => false,
                _ => continue,
            };
            // The ids that continue it, in one pass over the table.
            let k = if up {
                rest.iter()
                    .rev()
                    .zip(1..)
                    .take_while(|&(&b, j)| b == id.wrapping_add(j))
                    .count()
            } else {
                rest.iter()
                    .rev()
                    .zip(1..)
                    .take_while(|&(&b, j)| b == id.wrapping_sub(j))
                    .count()
            };
            if k > 0 {
                run.last = if up { id + k as u32 } else { id - k as u32 };
                self.len += k as u32;
                rest = &rest[..rest.len() - k];
            }
        }
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
    fn a_table_freed_at_once_queues_as_freed_one_by_one() {
        let tables: [&[BlockId]; 4] = [&[3, 4, 5, 9, 8, 7, 1], &[2], &[6, 6, 7], &[]];
        let (mut bulk, mut single) = (FreeRuns::new(0), FreeRuns::new(0));
        for t in tables {
            bulk.push_back_rev(t);
            t.iter().rev().for_each(|&id| single.push_back(id));
        }
        assert_eq!(bulk.ids(), [1, 7, 8, 9, 5, 4, 3, 2, 7, 6, 6]);
        assert_eq!((bulk.ids(), bulk.len()), (single.ids(), single.len()));
        assert_eq!(bulk.runs, single.runs);
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
