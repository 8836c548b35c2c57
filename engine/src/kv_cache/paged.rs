//! A vector stored in fixed-size pages, for the block records every worker keeps.
//!
//! A pool's records follow the blocks it has in use, so they grow and shrink through a
//! run. As one vector each, every growth copied the records and left a hole of the old
//! size in the heap, and with many workers those holes of every size added up to more than
//! the records (the allocator seldom had a use for them). Pages never move, and a page
//! one worker frees is the size another worker's next page needs.

use std::ops::{Index, IndexMut};

/// Log2 of the items a page holds.
const PAGE_BITS: u32 = 8;
/// Items a page holds: 2 KB of 8-byte block records (a new page is filled whole).
const PAGE: usize = 1 << PAGE_BITS;

/// Items `0..len` in pages of [`PAGE`]; at most one page past the last item is kept.
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
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Item `i`, if `i < len`.
    pub(crate) fn get(&self, i: usize) -> Option<&T> {
        (i < self.len).then(|| &self[i])
    }

    /// Grows to `n` items (`n ≥ len`), the new ones `fill`.
    pub(crate) fn extend_to(&mut self, n: usize, fill: T) {
        debug_assert!(n >= self.len);
        // Past the last item, a kept page holds what was truncated away: one fill (a
        // vectorised store loop) per page touched.
        let end = n.min(self.pages.len() * PAGE);
        let mut i = self.len;
        while i < end {
            let at = i & (PAGE - 1);
            let k = (PAGE - at).min(end - i);
            self.pages[i >> PAGE_BITS][at..at + k].fill(fill);
            i += k;
        }
        while self.pages.len() * PAGE < n {
            let page: Box<[T]> = vec![fill; PAGE].into_boxed_slice();
            let Ok(page) = page.try_into() else {
                unreachable!("a page holds PAGE items")
            };
            self.pages.push(page);
        }
        self.len = n;
    }

    /// Shrinks to the first `n` items (`n ≤ len`), freeing the pages past them but one: a
    /// pool whose use hovers about a page boundary would otherwise free and refill a page
    /// each time.
    pub(crate) fn truncate(&mut self, n: usize) {
        debug_assert!(n <= self.len);
        self.len = n;
        self.pages.truncate(n.div_ceil(PAGE) + 1);
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
        p.extend_to(2 * PAGE + 1, 5);
        assert_eq!((p.len(), p.pages.len()), (2 * PAGE + 1, 3));
        assert_eq!((p[1], p[2], p[3], p[2 * PAGE]), (9, 7, 5, 5));
        p[PAGE] = 1;
        p[2 * PAGE] = 1;
        // One page past the last item stays.
        p.truncate(PAGE + 1);
        assert_eq!((p.len(), p.pages.len(), p[PAGE]), (PAGE + 1, 3, 1));
        assert_eq!(p.get(PAGE + 1), None);
        p.truncate(PAGE);
        assert_eq!(p.pages.len(), 2);
        // Items truncated away come back as the fill, not as they were.
        p.truncate(1);
        assert_eq!(p.pages.len(), 2);
        p.extend_to(2 * PAGE + 1, 0);
        assert_eq!((p[0], p[1], p[PAGE], p[2 * PAGE]), (7, 0, 0, 0));
        assert_eq!(p.iter().filter(|&&x| x != 0).count(), 1);
        p.truncate(0);
        assert!(p.is_empty() && p.pages.len() == 1);
    }
}
