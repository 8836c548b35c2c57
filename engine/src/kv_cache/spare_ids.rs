//! The spare block ids of a pool with prefix caching: ids that stand for no queue entry
//! (their blocks are dead or were never used), one bit each, handed out lowest first a run
//! at a time (a worker may have had thousands of blocks in use at once).

use super::BlockId;

/// A set of block ids, one bit each, taken lowest first.
#[derive(Debug, Clone, Default)]
pub(super) struct SpareIds {
    words: Vec<u64>,
    pub(super) len: u32,
    /// No id is set in the words before this one.
    first_word: usize,
}

impl SpareIds {
    /// Adds `ids` (none of them spare yet), a run at a time.
    #[cfg(test)]
    fn insert_all(&mut self, ids: &[BlockId]) {
        use super::table::BlockTable;
        for (first, len) in BlockTable::from_ids_as_runs(ids).runs_in(0..ids.len()) {
            self.insert_run(first, first + len);
        }
    }

    /// Adds the ids `start..end` (`start < end`).
    pub(super) fn insert_run(&mut self, start: BlockId, end: BlockId) {
        let (first, last) = (start as usize / 64, (end - 1) as usize / 64);
        if last >= self.words.len() {
            self.words.resize(last + 1, 0);
        }
        for w in first..=last {
            let lo = if w == first { start % 64 } else { 0 };
            let hi = if w == last { (end - 1) % 64 + 1 } else { 64 };
            // Bits lo..hi (hi − lo ≥ 1), without a shift by 64.
            let mask = (u64::MAX >> (64 - (hi - lo))) << lo;
            debug_assert!(
                self.words[w] & mask == 0,
                "an id in {start}..{end} spared twice"
            );
            self.words[w] |= mask;
        }
        self.len += end - start;
        self.first_word = self.first_word.min(first);
    }

    /// True when `id` is spare.
    pub(super) fn contains(&self, id: BlockId) -> bool {
        let w = id as usize / 64;
        w < self.words.len() && self.words[w] >> (id % 64) & 1 != 0
    }

    /// Removes the run of spare ids that ends at `end − 1` (no id at or above `end` is
    /// spare); where it starts.
    pub(super) fn trim_tail(&mut self, end: BlockId) -> BlockId {
        let mut start = end;
        while start > 0 {
            let w = (start - 1) as usize / 64;
            // The word's bits below `start`, moved to its top: the run is its leading ones.
            let valid = (start - 1) % 64 + 1;
            let ones = (self.words[w] << (64 - valid)).leading_ones();
            start -= ones;
            if ones < valid {
                break;
            }
        }
        let w = start as usize / 64;
        self.words.truncate((start as usize).div_ceil(64));
        if start % 64 != 0 {
            self.words[w] &= (1 << (start % 64)) - 1;
        }
        self.len -= end - start;
        if self.len == 0 {
            self.first_word = 0;
        }
        start
    }

    /// Takes the lowest `k` ids (or all, if fewer), handing them to `push` as runs
    /// (first, length), ascending; how many.
    pub(super) fn take_lowest(&mut self, k: u32, mut push: impl FnMut(BlockId, u32)) -> u32 {
        let n = k.min(self.len);
        let mut left = n;
        let mut w = self.first_word;
        while left > 0 {
            let mut bits = self.words[w];
            // A run of set bits at a time (a dead table's ids are mostly runs).
            while bits != 0 && left > 0 {
                let low = bits.trailing_zeros();
                let len = (bits >> low).trailing_ones().min(left);
                let base = (w * 64) as BlockId + low;
                push(base, len);
                // Bits low..low + len (len = 64 only for a whole word, from bit 0).
                bits &= !(u64::MAX >> (64 - len) << low);
                left -= len;
            }
            self.words[w] = bits;
            if bits == 0 {
                w += 1;
            }
        }
        self.len -= n;
        self.first_word = if self.len == 0 { 0 } else { w };
        n
    }

    /// The ids, ascending.
    pub(super) fn ids(&self) -> impl Iterator<Item = BlockId> + '_ {
        self.words.iter().enumerate().flat_map(|(w, &bits)| {
            (0..64)
                .filter(move |b| bits >> b & 1 != 0)
                .map(move |b| (w * 64 + b) as BlockId)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spare_ids_are_set_by_runs_and_taken_lowest_first_a_word_at_a_time() {
        let mut spare = SpareIds::default();
        // Runs 3..70 (across a word boundary) and 130..260 (two full words, 192..256, and
        // parts of two more), in a table's order, with loose ids between them.
        let mut ids: Vec<BlockId> = (130..260).collect();
        ids.push(1);
        ids.extend(3..70);
        ids.push(100);
        spare.insert_all(&ids);
        assert_eq!(spare.len, 130 + 1 + 67 + 1);
        let all: Vec<BlockId> = spare.ids().collect();
        let mut want = ids.clone();
        want.sort_unstable();
        assert_eq!(all, want);
        // The lowest 70: 1, 3..70 and 100, 130; then 200 more: 131..260 and nothing past.
        let mut table = Vec::new();
        assert_eq!(spare.take_lowest(70, |f, l| table.extend(f..f + l)), 70);
        let mut first = vec![1];
        first.extend(3..70);
        first.extend([100, 130]);
        assert_eq!(table, first);
        table.clear();
        assert_eq!(spare.take_lowest(200, |f, l| table.extend(f..f + l)), 129);
        assert_eq!(table, (131..260).collect::<Vec<_>>());
        assert_eq!((spare.len, spare.ids().count()), (0, 0));
        // A full word is taken whole only when all 64 are wanted.
        spare.insert_all(&(64..128).collect::<Vec<_>>());
        table.clear();
        spare.take_lowest(63, |f, l| table.extend(f..f + l));
        assert_eq!(table, (64..127).collect::<Vec<_>>());
        assert_eq!(spare.ids().collect::<Vec<_>>(), [127]);
    }

    #[test]
    fn ids_are_taken_a_run_at_a_time_from_scattered_bits() {
        // Runs within a word, across a word boundary, and single ids, taken in pieces
        // that end inside runs: the ids come out ascending, each exactly once.
        let mut spare = SpareIds::default();
        let ids: Vec<BlockId> = [2..5, 9..10, 60..70, 128..192, 200..201]
            .into_iter()
            .flatten()
            .collect();
        spare.insert_all(&ids);
        let mut table = Vec::new();
        for k in [2, 3, 7, 60, 100] {
            spare.take_lowest(k, |f, l| table.extend(f..f + l));
        }
        assert_eq!(table, ids);
        assert_eq!(spare.len, 0);
    }

    #[test]
    fn spare_runs_are_trimmed_from_the_top_across_words() {
        let mut spare = SpareIds::default();
        spare.insert_all(&[3, 5, 6, 7]);
        spare.insert_run(60, 200);
        assert_eq!(spare.trim_tail(200), 60);
        assert_eq!(spare.ids().collect::<Vec<_>>(), [3, 5, 6, 7]);
        assert_eq!((spare.len, spare.words.len()), (4, 1));
        assert_eq!(spare.trim_tail(8), 5);
        assert_eq!(spare.ids().collect::<Vec<_>>(), [3]);
        assert_eq!(spare.trim_tail(4), 3);
        assert_eq!((spare.len, spare.first_word), (0, 0));
        spare.insert_run(0, 128);
        assert_eq!(spare.trim_tail(128), 0);
        assert_eq!((spare.len, spare.words.len()), (0, 0));
    }
}
