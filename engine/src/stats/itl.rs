//! Pooled inter-token latencies, kept as (gap, count) so memory stays small.
//!
//! In a vLLM-style engine every decoding request in a step gets its token at the same
//! instant, so most gaps are shared exactly by many requests: a run with millions of tokens
//! has only as many distinct gaps as distinct step spacings. Percentiles over the (gap,
//! count) map are exact — equal to the percentiles of the fully expanded list.

use super::percentile::{lerp, virtual_index, LatencySummary};
use std::borrow::Cow;

/// Additions buffered before they are merged into the sorted list: at least this many, or
/// a quarter of the list (so a merge, linear in the list, is paid for by a quarter as many
/// adds; a smaller fraction merges more often, a larger one holds more memory in the buffer).
const MIN_PENDING: usize = 1 << 14;

/// The buffer's first room, in additions (1 KB).
const FIRST_PENDING: usize = 64;

/// Inter-token gaps (seconds) with multiplicities, ordered by value.
///
/// A sorted vector of (order key, count) plus a small unsorted buffer of recent additions,
/// merged in place when it fills: 16 bytes per distinct gap (a B-tree spent more per entry,
/// and a long run has millions of distinct gaps) and cheap appends.
#[derive(Debug, Clone, Default)]
pub struct ItlHistogram {
    /// Distinct gaps by order key, ascending, with their counts.
    sorted: Vec<(u64, u64)>,
    /// Recent additions, unsorted, keys possibly repeated.
    pending: Vec<(u64, u64)>,
    total: u64,
    sum: f64,
}

impl PartialEq for ItlHistogram {
    fn eq(&self, other: &Self) -> bool {
        self.total == other.total && self.sum == other.sum && self.entries() == other.entries()
    }
}

/// Maps an f64 to a u64 whose unsigned order is the numeric order (IEEE total order).
fn key(x: f64) -> u64 {
    let b = (x + 0.0).to_bits(); // + 0.0 folds −0 into +0
    if b >> 63 == 1 {
        !b
    } else {
        b | 1 << 63
    }
}

fn value(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// Sorts `v` by key and adds up the counts of equal keys.
fn coalesce(v: &mut Vec<(u64, u64)>) {
    super::radix::sort_by_key(v, |e| e.0);
    dedup(v);
}

/// [`coalesce`] with the caller's scratch for the sort (at least as long as `v`).
fn coalesce_in(v: &mut Vec<(u64, u64)>, scratch: &mut [(u64, u64)]) {
    super::radix::sort_by_key_in(v, scratch, |e| e.0);
    dedup(v);
}

/// Adds up the counts of equal keys of the sorted `v`.
fn dedup(v: &mut Vec<(u64, u64)>) {
    v.dedup_by(|later, kept| {
        let same = later.0 == kept.0;
        if same {
            kept.1 += later.1;
        }
        same
    });
}

/// Merges the coalesced `add` into the coalesced `into`, in place (from the back, so no
/// second copy of the list is ever held).
fn merge_into(into: &mut Vec<(u64, u64)>, add: &[(u64, u64)]) {
    let n = into.len();
    into.reserve_exact(add.len());
    into.resize(n + add.len(), (0, 0));
    merge_into_room(into, n, add);
}

/// [`merge_into`] for an `into` whose first `n` entries are the list, followed by at least
/// `add.len()` entries of room (their contents are overwritten; what is not used is cut).
fn merge_into_room(into: &mut Vec<(u64, u64)>, n: usize, add: &[(u64, u64)]) {
    let m = add.len();
    into.truncate(n + m);
    let (mut i, mut w) = (n, n + m);
    // w − i = entries of `add` still to place + keys merged so far ≥ 0, so a block moved
    // up never lands on an entry not yet read.
    for &(b, bc) in add.iter().rev() {
        // The entries above `b` move up as one block (a flush adds one key per ~8 kept).
        let above = into[..i].iter().rev().take_while(|e| e.0 > b).count();
        into.copy_within(i - above..i, w - above);
        (i, w) = (i - above, w - above);
        w -= 1;
        if i > 0 && into[i - 1].0 == b {
            into[w] = (b, into[i - 1].1 + bc);
            i -= 1;
        } else {
            into[w] = (b, bc);
        }
    }
    if w > i {
        into.copy_within(w.., i);
        into.truncate(n + m - (w - i));
    }
}

impl ItlHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `count` gaps of `gap` seconds (NaN is ignored).
    pub fn add(&mut self, gap: f64, count: u64) {
        if gap.is_nan() || count == 0 {
            return;
        }
        let limit = MIN_PENDING.max(self.sorted.len() / 4);
        if self.pending.len() == self.pending.capacity() {
            // Doubling from a small start, up to the flush threshold and never past it: a
            // histogram that sees a few gaps (a stage of one request, of thousands) keeps a
            // few hundred bytes, not the threshold's 256 KB, and a full buffer no more
            // room than a flush takes.
            let room = (2 * self.pending.capacity()).clamp(FIRST_PENDING, limit);
            self.pending
                .reserve_exact(room.max(self.pending.len() + 1) - self.pending.len());
        }
        self.pending.push((key(gap), count));
        if self.pending.len() >= limit {
            self.flush();
        }
        self.total += count;
        self.sum += gap * count as f64;
    }

    /// Merges the buffered additions into the sorted list.
    pub(crate) fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        // The room the merge needs at the list's end is the sort's scratch meanwhile (a
        // new scratch every time was cleared by the kernel page by page).
        let (n, m) = (self.sorted.len(), self.pending.len());
        self.sorted.reserve_exact(m);
        self.sorted.resize(n + m, (0, 0));
        coalesce_in(&mut self.pending, &mut self.sorted[n..]);
        merge_into_room(&mut self.sorted, n, &self.pending);
        self.pending.clear();
    }

    /// Merges the buffered additions and lets go of the memory kept for the next ones: the
    /// buffer, and the room past the list's end (together up to half the list: the report
    /// of a run's end, its largest moment, then does without them).
    pub(crate) fn flush_and_trim(&mut self) {
        self.flush();
        self.pending = Vec::new();
        self.sorted.shrink_to_fit();
    }

    /// Every distinct gap as (order key, count), ascending: the sorted list itself once
    /// flushed, else a merged copy.
    fn entries(&self) -> Cow<'_, [(u64, u64)]> {
        if self.pending.is_empty() {
            return Cow::Borrowed(&self.sorted);
        }
        let mut pending = self.pending.clone();
        coalesce(&mut pending);
        let mut all = self.sorted.clone();
        merge_into(&mut all, &pending);
        Cow::Owned(all)
    }

    /// Adds every gap of `other`.
    pub fn merge(&mut self, other: &ItlHistogram) {
        for &(k, c) in other.entries().iter() {
            self.add(value(k), c);
        }
    }

    /// Every distinct gap (seconds) with how many times it occurred, ascending.
    pub fn iter(&self) -> impl Iterator<Item = (f64, u64)> + '_ {
        let entries = self.entries();
        (0..entries.len()).map(move |i| (value(entries[i].0), entries[i].1))
    }

    /// Every distinct gap (seconds) with its count, ascending, taking the list's memory.
    pub fn into_gaps(mut self) -> Vec<(f64, u64)> {
        self.flush();
        self.sorted
            .into_iter()
            .map(|(k, c)| (value(k), c))
            .collect()
    }

    /// Number of gaps recorded.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// Number of distinct gap values (the memory it uses).
    pub fn distinct(&self) -> usize {
        self.entries().len()
    }

    /// Mean gap, seconds (NaN when empty).
    pub fn mean(&self) -> f64 {
        if self.total == 0 {
            f64::NAN
        } else {
            self.sum / self.total as f64
        }
    }

    /// The `i`-th smallest gap (0-based) of the expanded list, and the one after it.
    fn at(entries: &[(u64, u64)], i: u64) -> (f64, f64) {
        let mut seen = 0;
        let mut it = entries.iter();
        for &(k, c) in it.by_ref() {
            seen += c;
            if i < seen {
                let v = value(k);
                if i + 1 < seen {
                    return (v, v);
                }
                let next = it.next().map_or(v, |&(k2, _)| value(k2));
                return (v, next);
            }
        }
        (f64::NAN, f64::NAN)
    }

    /// Percentile `p` in seconds, numpy-linear over the expanded list (NaN when empty).
    pub fn percentile(&self, p: f64) -> f64 {
        self.percentile_of(&self.entries(), p)
    }

    fn percentile_of(&self, entries: &[(u64, u64)], p: f64) -> f64 {
        if self.total == 0 {
            return f64::NAN;
        }
        let (i, g) = virtual_index(self.total, p);
        let (a, b) = Self::at(entries, i);
        if g == 0.0 {
            a
        } else {
            lerp(a, b, g)
        }
    }

    /// Mean / median / p90 / p99 in ms.
    pub fn summary(&self) -> LatencySummary {
        if self.total == 0 {
            return LatencySummary::empty();
        }
        let entries = self.entries();
        LatencySummary::from_parts(self.total, self.mean(), |p| self.percentile_of(&entries, p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn a_merge_moves_blocks_up_and_adds_the_counts_of_equal_keys() {
        // Below, between, equal to and above the kept keys, and all of them at once.
        let mut into = vec![(3, 1), (5, 1), (9, 1), (10, 1)];
        merge_into(&mut into, &[(1, 1), (5, 2), (6, 1), (7, 1), (12, 4)]);
        assert_eq!(
            into,
            [
                (1, 1),
                (3, 1),
                (5, 3),
                (6, 1),
                (7, 1),
                (9, 1),
                (10, 1),
                (12, 4)
            ]
        );
        let mut into = vec![(4, 1)];
        merge_into(&mut into, &[(4, 1)]);
        assert_eq!(into, [(4, 2)]);
        let mut into = vec![];
        merge_into(&mut into, &[(2, 1), (8, 1)]);
        assert_eq!(into, [(2, 1), (8, 1)]);
    }

    #[test]
    fn merged_buffers_equal_a_plain_count_by_value() {
        // 200,000 adds over 3,000 distinct gaps force several in-place merges.
        let mut h = ItlHistogram::new();
        let mut expected: BTreeMap<u64, u64> = BTreeMap::new();
        let mut x: u64 = 12345;
        for _ in 0..200_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let gap = ((x >> 33) % 3000) as f64 * 1e-4;
            let count = 1 + (x >> 60);
            h.add(gap, count);
            *expected.entry(gap.to_bits()).or_default() += count;
        }
        let want: Vec<(f64, u64)> = expected
            .iter()
            .map(|(&b, &c)| (f64::from_bits(b), c))
            .collect();
        assert_eq!(h.iter().collect::<Vec<_>>(), want, "before a final merge");
        let total: u64 = want.iter().map(|e| e.1).sum();
        assert_eq!(h.count(), total);
        // The smallest and largest gaps of the expanded list.
        assert_eq!(h.percentile(0.0), want[0].0);
        assert_eq!(h.percentile(100.0), want[want.len() - 1].0);
        let before = h.clone();
        h.flush();
        assert_eq!(h, before);
        assert_eq!(h.into_gaps(), want);
    }
}
