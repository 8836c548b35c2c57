//! A request's block table: its block ids in order, stored as runs of consecutive ids.
//!
//! With prefix caching on, a pool hands out never-used and dead blocks lowest id first, a
//! run at a time, so a table of ~500 blocks is a handful of runs (8 on average): stored
//! as runs it is ~70 bytes, not ~2 KB written at admission and read back at the end (with many
//! workers, each of those lines was a cache miss), and a finished request's dead blocks
//! are spared a run at a time rather than scanned id by id. With caching off, freed ids
//! come back in short runs (decode grows tables a block at a time, interleaved across
//! requests), so the pool keeps plain ids there: copying them costs less than finding runs.

use super::BlockId;
use std::ops::Range;

/// Ids `first..first + (end − previous end)`: the blocks at table positions from the
/// previous run's `end` up to this `end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    first: BlockId,
    /// The table position past this run's last block.
    end: u32,
}

/// A block table: plain ids (caching off) or runs of consecutive ids (caching on); the
/// pool that fills it uses one form only. Start one empty (`default`) or as
/// [`super::BlockPool::table_of`] some ids.
#[derive(Debug, Clone, Default)]
pub struct BlockTable {
    ids: Vec<BlockId>,
    runs: Vec<Run>,
}

impl BlockTable {
    /// A table of `ids` in runs form.
    pub(crate) fn from_ids_as_runs(ids: &[BlockId]) -> Self {
        let mut t = Self::default();
        for &id in ids {
            t.push(id);
        }
        t
    }

    /// A table of `ids` in plain form.
    pub(crate) fn from_ids(ids: &[BlockId]) -> Self {
        Self {
            ids: ids.to_vec(),
            runs: Vec::new(),
        }
    }

    /// How many blocks.
    #[inline]
    pub fn len(&self) -> usize {
        self.ids.len() + self.runs.last().map_or(0, |r| r.end as usize)
    }

    /// True when it holds no block.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops every block, keeping the memory.
    pub(crate) fn clear(&mut self) {
        self.ids.clear();
        self.runs.clear();
    }

    /// The plain ids (caching off).
    pub(crate) fn plain(&self) -> &[BlockId] {
        &self.ids
    }

    /// The plain ids, to append to (caching off).
    pub(crate) fn plain_mut(&mut self) -> &mut Vec<BlockId> {
        &mut self.ids
    }

    /// Room for `blocks` more plain ids, or `runs` more runs.
    pub(crate) fn reserve(&mut self, blocks: usize, runs: usize) {
        self.ids.reserve_exact(blocks);
        self.runs.reserve_exact(runs);
    }

    /// True when it has never reserved or held anything.
    pub(crate) fn unreserved(&self) -> bool {
        self.ids.capacity() == 0 && self.runs.capacity() == 0
    }

    /// Appends block `id` (runs form).
    #[inline]
    pub(crate) fn push(&mut self, id: BlockId) {
        self.push_run(id, 1);
    }

    /// Appends blocks `first..first + len` (runs form).
    #[inline]
    pub(crate) fn push_run(&mut self, first: BlockId, len: u32) {
        debug_assert!(self.ids.is_empty(), "a plain table grown by runs");
        if len == 0 {
            return;
        }
        let start = self.start_of_last();
        match self.runs.last_mut() {
            Some(last) if last.first.wrapping_add(last.end - start) == first => last.end += len,
            Some(last) => {
                let end = last.end + len;
                self.runs.push(Run { first, end });
            }
            None => self.runs.push(Run { first, end: len }),
        }
    }

    /// The table position of the last run's first block.
    #[inline]
    fn start_of_last(&self) -> u32 {
        match self.runs.len() {
            0 | 1 => 0,
            n => self.runs[n - 2].end,
        }
    }

    /// The runs of positions `range` (runs form), clipped to it, first to last: (first id,
    /// length). Nothing for a plain table.
    pub(crate) fn runs_in(
        &self,
        range: Range<usize>,
    ) -> impl DoubleEndedIterator<Item = (BlockId, u32)> + '_ {
        let (lo, hi) = (range.start as u32, range.end as u32);
        // (Every run, checked: a table is ~8 runs, and two binary searches for the ones in
        // range cost more than they spare.)
        (0..self.runs.len()).filter_map(move |r| {
            let from = if r == 0 { 0 } else { self.runs[r - 1].end };
            let to = self.runs[r].end;
            let (a, b) = (from.max(lo), to.min(hi));
            (a < b).then(|| (self.runs[r].first + (a - from), b - a))
        })
    }

    /// The ids at positions `range`, in order (either form).
    pub(crate) fn ids_in(
        &self,
        range: Range<usize>,
    ) -> impl DoubleEndedIterator<Item = BlockId> + '_ {
        debug_assert!(range.end <= self.len(), "positions past the table's end");
        let plain = self.ids.get(range.clone()).unwrap_or(&[]);
        plain.iter().copied().chain(
            self.runs_in(range)
                .flat_map(|(first, len)| first..first + len),
        )
    }

    /// Every id, in order.
    pub fn ids(&self) -> impl DoubleEndedIterator<Item = BlockId> + '_ {
        self.ids_in(0..self.len())
    }

    /// Every id, in order, collected.
    pub fn to_vec(&self) -> Vec<BlockId> {
        self.ids().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_ids_merge_into_runs_and_read_back_in_order() {
        let ids: Vec<BlockId> = (10..15).chain([3, 4]).chain([9]).chain(20..23).collect();
        let t = BlockTable::from_ids_as_runs(&ids);
        assert_eq!(t.runs.len(), 4);
        assert_eq!(t.len(), ids.len());
        assert_eq!(t.ids().collect::<Vec<_>>(), ids);
        assert_eq!(t.ids().rev().collect::<Vec<_>>(), {
            let mut r = ids.clone();
            r.reverse();
            r
        });
        for (i, &id) in ids.iter().enumerate() {
            assert_eq!(t.ids_in(i..i + 1).collect::<Vec<_>>(), [id]);
        }
        // Clipped to a range straddling runs, either way round.
        assert_eq!(
            t.runs_in(3..9).collect::<Vec<_>>(),
            [(13, 2), (3, 2), (9, 1), (20, 1)]
        );
        assert_eq!(
            t.ids_in(3..9).rev().collect::<Vec<_>>(),
            [20, 9, 4, 3, 14, 13]
        );
        assert_eq!(t.ids_in(4..4).count(), 0);
        // A run pushed whole merges with the one before it when it follows on.
        let mut u = BlockTable::default();
        u.push_run(5, 3);
        u.push_run(8, 2);
        u.push_run(0, 0);
        u.push(1);
        assert_eq!(u.runs.len(), 2);
        assert_eq!(u.ids().collect::<Vec<_>>(), [5, 6, 7, 8, 9, 1]);
    }

    #[test]
    fn a_plain_table_reads_as_its_ids() {
        let t = BlockTable::from_ids(&[4, 2, 3]);
        assert_eq!((t.len(), t.plain()), (3, &[4, 2, 3][..]));
        assert_eq!(t.ids_in(1..3).collect::<Vec<_>>(), [2, 3]);
        assert_eq!(t.runs_in(0..3).count(), 0);
        let mut t = t;
        t.clear();
        assert!(t.is_empty());
    }
}
