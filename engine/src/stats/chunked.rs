//! [`Chunked`]: a list that grows without ever moving what it holds.
//!
//! A run keeps a record per request and per routing decision, millions of them. In one
//! `Vec` each growth copies the whole list into a larger allocation, both alive at once:
//! in WebAssembly, whose memory tops out at 4 GB and never shrinks, that copy is what a
//! large run could not fit (docs/robustness.md). Here the items live in chunks of
//! [`CHUNK`]; a full chunk is never touched again, so growing costs one chunk at a time
//! and the list needs no more than its items and one chunk's spare room.

use serde::{Serialize, Serializer};
use std::ops::{Index, IndexMut, Range};

/// Items a chunk holds (a power of two: an index splits into chunk and offset by shifts).
pub const CHUNK: usize = 1 << SHIFT;
const SHIFT: u32 = 16;

/// A growable list stored in chunks of [`CHUNK`] items; read like a slice, by index or in
/// order. Every chunk but the last is full.
#[derive(Clone, PartialEq)]
pub struct Chunked<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
}

impl<T> Chunked<T> {
    /// An empty list (allocates nothing).
    pub const fn new() -> Self {
        Self {
            chunks: Vec::new(),
            len: 0,
        }
    }

    /// Items held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends `item`. The first chunk grows as a `Vec` does (a short list takes little
    /// room); a full chunk is followed by a new one of [`CHUNK`] items.
    pub fn push(&mut self, item: T) {
        match self.chunks.last_mut() {
            Some(last) if last.len() < CHUNK => {
                if last.len() == last.capacity() {
                    let len = last.len();
                    last.reserve_exact(len.max(4).min(CHUNK - len));
                }
                last.push(item);
            }
            Some(_) => {
                let mut next = Vec::with_capacity(CHUNK);
                next.push(item);
                self.chunks.push(next);
            }
            None => {
                let mut first = Vec::with_capacity(4);
                first.push(item);
                self.chunks.push(first);
            }
        }
        self.len += 1;
    }

    /// The item at `index`, if there is one.
    pub fn get(&self, index: usize) -> Option<&T> {
        self.chunks
            .get(index >> SHIFT)
            .and_then(|c| c.get(index & (CHUNK - 1)))
    }

    /// The item at `index`, to change, if there is one.
    pub fn get_mut(&mut self, index: usize) -> Option<&mut T> {
        self.chunks
            .get_mut(index >> SHIFT)
            .and_then(|c| c.get_mut(index & (CHUNK - 1)))
    }

    /// The first item.
    pub fn first(&self) -> Option<&T> {
        self.chunks.first().and_then(|c| c.first())
    }

    /// The last item.
    pub fn last(&self) -> Option<&T> {
        self.chunks.last().and_then(|c| c.last())
    }

    /// Every item, in order.
    pub fn iter(&self) -> Iter<'_, T> {
        self.chunks.iter().flatten()
    }

    /// The items at `range` (clamped to the list), in order.
    pub fn range(&self, range: Range<usize>) -> impl DoubleEndedIterator<Item = &T> + Clone {
        self.slices(range).flatten()
    }

    /// The items at `range` (clamped to the list) as the slices of the chunks they are in.
    pub fn slices(&self, range: Range<usize>) -> impl DoubleEndedIterator<Item = &[T]> + Clone {
        let (start, end) = (range.start.min(self.len), range.end.min(self.len));
        let first = start >> SHIFT;
        let last = if start < end {
            (end - 1) >> SHIFT
        } else {
            first
        };
        let chunks = if start < end {
            &self.chunks[first..=last]
        } else {
            &[]
        };
        chunks.iter().enumerate().map(move |(i, c)| {
            let base = (first + i) << SHIFT;
            let from = start.saturating_sub(base);
            let to = (end - base).min(c.len());
            &c[from..to]
        })
    }
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Index<usize> for Chunked<T> {
    type Output = T;

    fn index(&self, index: usize) -> &T {
        match self.get(index) {
            Some(item) => item,
            None => panic!("index {index} out of a list of {}", self.len),
        }
    }
}

impl<T> IndexMut<usize> for Chunked<T> {
    fn index_mut(&mut self, index: usize) -> &mut T {
        let len = self.len;
        match self.get_mut(index) {
            Some(item) => item,
            None => panic!("index {index} out of a list of {len}"),
        }
    }
}

impl<T> FromIterator<T> for Chunked<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        let mut list = Self::new();
        for item in items {
            list.push(item);
        }
        list
    }
}

impl<T> From<Vec<T>> for Chunked<T> {
    fn from(items: Vec<T>) -> Self {
        items.into_iter().collect()
    }
}

/// The items of a [`Chunked`] list, in order.
pub type Iter<'a, T> = std::iter::Flatten<std::slice::Iter<'a, Vec<T>>>;

impl<'a, T> IntoIterator for &'a Chunked<T> {
    type Item = &'a T;
    type IntoIter = Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// A [`Chunked`] list's items, taken in order (each chunk is freed once read through).
pub type IntoIter<T> = std::iter::Flatten<std::vec::IntoIter<Vec<T>>>;

impl<T> IntoIterator for Chunked<T> {
    type Item = T;
    type IntoIter = IntoIter<T>;

    fn into_iter(self) -> Self::IntoIter {
        self.chunks.into_iter().flatten()
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Chunked<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Serialize> Serialize for Chunked<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_back_what_was_pushed_across_chunk_boundaries() {
        let n = 3 * CHUNK + 17;
        let list: Chunked<usize> = (0..n).collect();
        assert_eq!(list.len(), n);
        assert!(list.iter().copied().eq(0..n));
        assert!(list.iter().rev().copied().eq((0..n).rev()));
        for i in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, n - 1] {
            assert_eq!((list[i], list.get(i)), (i, Some(&i)));
        }
        assert_eq!(list.get(n), None);
        assert_eq!(list.last(), Some(&(n - 1)));
        // Every chunk but the last is full.
        assert_eq!(list.chunks.len(), 4);
        assert!(list.chunks[..3].iter().all(|c| c.len() == CHUNK));
    }

    #[test]
    fn a_range_is_the_items_between_its_ends_whichever_chunks_hold_them() {
        let n = 2 * CHUNK + 5;
        let list: Chunked<usize> = (0..n).collect();
        for (a, b) in [
            (0, 0),
            (0, n),
            (3, 9),
            (CHUNK - 2, CHUNK + 2),
            (CHUNK, 2 * CHUNK),
            (CHUNK + 7, n),
            (n - 1, n),
            (5, 3),
            (n, n + 10),
            (10, n + 10),
        ] {
            let want: Vec<usize> = (a..b.min(n)).collect();
            let got: Vec<usize> = list.range(a..b).copied().collect();
            assert_eq!(got, want, "range {a}..{b}");
        }
        // A range within one chunk is one slice.
        assert_eq!(list.slices(CHUNK + 1..CHUNK + 4).count(), 1);
        assert_eq!(list.slices(CHUNK - 1..CHUNK + 1).count(), 2);
    }

    #[test]
    fn items_change_in_place_and_a_short_list_takes_little_room() {
        let mut list: Chunked<u32> = (0..10).collect();
        *list.get_mut(4).unwrap() = 40;
        assert_eq!(list[4], 40);
        assert!(list.get_mut(10).is_none());
        assert!(
            list.chunks[0].capacity() < 64,
            "{}",
            list.chunks[0].capacity()
        );
        // The first chunk fills exactly to CHUNK before the next begins.
        let big: Chunked<u8> = std::iter::repeat_n(1, CHUNK + 1).collect();
        assert_eq!(big.chunks[0].capacity(), CHUNK);
        assert_eq!(big.chunks[1].len(), 1);
    }

    #[test]
    fn serialises_and_compares_as_the_list_it_holds() {
        let list: Chunked<u32> = vec![3, 1, 2].into();
        assert_eq!(serde_json::to_string(&list).unwrap(), "[3,1,2]");
        assert_eq!(format!("{list:?}"), "[3, 1, 2]");
        assert_eq!(list, [3, 1, 2].into_iter().collect());
        assert!(Chunked::<u32>::new().is_empty());
    }
}
