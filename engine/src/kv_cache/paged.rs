//! A vector stored in fixed-size pages, for the block records every worker keeps.
//!
//! A pool's records follow the blocks it has in use, so they grow and shrink through a
//! run. As one vector each, every growth copied the records and left a hole of the old
//! size in the heap, and with many workers those holes of every size added up to more than
//! the records (the allocator seldom had a use for them). Pages never move, and a page
//! one worker frees is the size another worker's next page needs.
//!
//! Shrinking keeps a quarter more pages than the items need, at least four, and growing
//! back into kept pages leaves the items there as they were truncated (the pool truncates
//! only records as good as new): a pool's use swings by whole requests (~500 blocks, two
//! pages, each), and freeing, allocating and filling pages at every swing was a tenth of
//! its allocations' time at a million requests (cache misses on the fresh pages). With at
//! least one page kept rather than four, most requests still freed a page at their end and
//! had one allocated and filled at the next admission (p64-30k: 24.6k of 30k).

use std::ops::{Index, IndexMut};

/// Log2 of the items a page holds.
const PAGE_BITS: u32 = 8;
/// Items a page holds: 2 KB of 8-byte block records (a new page is filled whole).
const PAGE: usize = 1 << PAGE_BITS;

/// Items `0..len` in pages of [`PAGE`]; past the last item, at most [`Paged::slack`]
/// pages are kept.
#[derive(Debug, Clone)]
pub(crate) struct Paged<T> {
    pages: Vec<Box<[T; PAGE]>>,
    len: usize,
}

impl<T> Default for Paged<T> {
    fn default() -> Self {
        Self {
            pages: Vec::new(),
            len: 0,
        }
    }
}

impl<T: Copy> Paged<T> {
    /// How many items.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// True when there are none.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Item `i`, if `i < len`.
    pub(crate) fn get(&self, i: usize) -> Option<&T> {
        (i < self.len).then(|| &self[i])
    }

    /// Grows to `n` items (`n ≥ len`): those in kept pages as they were truncated away,
    /// those in new pages `fill`.
    pub(crate) fn extend_to(&mut self, n: usize, fill: T) {
        debug_assert!(n >= self.len);
        while self.pages.len() * PAGE < n {
            let page: Box<[T]> = vec![fill; PAGE].into_boxed_slice();
            let Ok(page) = page.try_into() else {
                unreachable!("a page holds PAGE items")
            };
            self.pages.push(page);
        }
        self.len = n;
    }

    /// Pages kept past the `used` that `n` items need: a quarter more, at least four (8 KB
    /// of block records), so a pool whose use swings about a size by a request or two does
    /// not free and refill pages at each swing.
    fn slack(used: usize) -> usize {
        (used / 4).max(4)
    }

    /// Shrinks to the first `n` items (`n ≤ len`), freeing the pages past them but the
    /// [`Paged::slack`]; the items past `n` in kept pages stay as they are.
    pub(crate) fn truncate(&mut self, n: usize) {
        debug_assert!(n <= self.len);
        self.len = n;
        let used = n.div_ceil(PAGE);
        self.pages.truncate(used + Self::slack(used));
    }

    /// The items in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.pages.iter().flat_map(|p| p.iter()).take(self.len)
    }
}

impl<T> Index<usize> for Paged<T> {
    type Output = T;
    #[inline]
    fn index(&self, i: usize) -> &T {
        debug_assert!(i < self.len, "item {i} of {}", self.len);
        &self.pages[i >> PAGE_BITS][i & (PAGE - 1)]
    }
}

impl<T> IndexMut<usize> for Paged<T> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut T {
        debug_assert!(i < self.len, "item {i} of {}", self.len);
        &mut self.pages[i >> PAGE_BITS][i & (PAGE - 1)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_grow_and_shrink_a_page_at_a_time() {
        let mut p = Paged::default();
        p.extend_to(3, 7u64);
        p[1] = 9;
        assert_eq!(p.iter().copied().collect::<Vec<_>>(), [7, 9, 7]);
        p.extend_to(6 * PAGE + 1, 5);
        assert_eq!((p.len(), p.pages.len()), (6 * PAGE + 1, 7));
        // The first page was made whole with the first fill.
        assert_eq!((p[1], p[2], p[3], p[PAGE], p[6 * PAGE]), (9, 7, 7, 5, 5));
        p[PAGE] = 1;
        p[6 * PAGE] = 1;
        // Four pages past the last item's stay (a quarter of two pages is none).
        p.truncate(PAGE + 1);
        assert_eq!((p.len(), p.pages.len(), p[PAGE]), (PAGE + 1, 6, 1));
        assert_eq!(p.get(PAGE + 1), None);
        p.truncate(PAGE);
        assert_eq!(p.pages.len(), 5);
        // Items truncated away in kept pages come back as they were; new pages as the fill.
        p.truncate(1);
        assert_eq!(p.pages.len(), 5);
        p.extend_to(6 * PAGE + 1, 0);
        assert_eq!((p[0], p[1], p[PAGE], p[6 * PAGE]), (7, 9, 1, 0));
        assert_eq!(p.iter().filter(|&&x| x == 7).count(), PAGE - 1);
        p.truncate(0);
        assert!(p.is_empty() && p.pages.len() == 4);
    }

    #[test]
    fn a_quarter_more_pages_are_kept_on_shrinking() {
        let mut p = Paged::default();
        p.extend_to(60 * PAGE, 3u8);
        // 32 pages in use: 8 more kept.
        p.truncate(32 * PAGE);
        assert_eq!(p.pages.len(), 40);
        // Growing back within them allocates nothing; past them, a filled page.
        p.extend_to(41 * PAGE, 4);
        assert_eq!((p.pages.len(), p[40 * PAGE - 1], p[40 * PAGE]), (41, 3, 4));
        // 20 pages and one item: 21 in use, 5 more kept.
        p.truncate(20 * PAGE + 1);
        assert_eq!(p.pages.len(), 26);
        // 8 pages: a quarter would be 2, but four are kept.
        p.truncate(8 * PAGE);
        assert_eq!(p.pages.len(), 12);
    }
}
