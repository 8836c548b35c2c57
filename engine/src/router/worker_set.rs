//! A small sorted set of worker ids: the holders of one block in the global KV view.
//!
//! Most blocks live on one worker (unique tails); shared prefixes live on a
//! few. The one-holder case is stored inline so a large view costs little memory.

/// Sorted, duplicate-free set of worker ids.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum WorkerSet {
    /// Nobody holds the block.
    #[default]
    Empty,
    /// Exactly one worker holds it.
    One(u32),
    /// Two or more workers, ascending.
    Many(Vec<u32>),
}

impl WorkerSet {
    /// True when `worker` is in the set.
    pub fn contains(&self, worker: u32) -> bool {
        match self {
            WorkerSet::Empty => false,
            WorkerSet::One(w) => *w == worker,
            WorkerSet::Many(ws) => ws.binary_search(&worker).is_ok(),
        }
    }

    /// Adds `worker`; returns true if it was not there before.
    pub fn insert(&mut self, worker: u32) -> bool {
        match self {
            WorkerSet::Empty => {
                *self = WorkerSet::One(worker);
                true
            }
            WorkerSet::One(w) if *w == worker => false,
            WorkerSet::One(w) => {
                let (a, b) = if *w < worker {
                    (*w, worker)
                } else {
                    (worker, *w)
                };
                *self = WorkerSet::Many(vec![a, b]);
                true
            }
            WorkerSet::Many(ws) => match ws.binary_search(&worker) {
                Ok(_) => false,
                Err(at) => {
                    ws.insert(at, worker);
                    true
                }
            },
        }
    }

    /// Removes `worker`; returns true if it was there.
    pub fn remove(&mut self, worker: u32) -> bool {
        match self {
            WorkerSet::One(w) if *w == worker => {
                *self = WorkerSet::Empty;
                true
            }
            WorkerSet::Many(ws) => match ws.binary_search(&worker) {
                Ok(at) => {
                    ws.remove(at);
                    if ws.len() == 1 {
                        *self = WorkerSet::One(ws[0]);
                    }
                    true
                }
                Err(_) => false,
            },
            _ => false,
        }
    }

    /// True when nobody is in the set.
    pub fn is_empty(&self) -> bool {
        matches!(self, WorkerSet::Empty)
    }

    /// The ids, ascending.
    pub fn as_slice(&self) -> &[u32] {
        match self {
            WorkerSet::Empty => &[],
            WorkerSet::One(w) => std::slice::from_ref(w),
            WorkerSet::Many(ws) => ws,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stays_sorted_and_collapses_back_to_one() {
        let mut s = WorkerSet::default();
        assert!(s.insert(5));
        assert!(s.insert(2));
        assert!(s.insert(9));
        assert!(!s.insert(5));
        assert_eq!(s.as_slice(), &[2, 5, 9]);
        assert!(s.remove(5) && s.remove(2));
        assert_eq!(s, WorkerSet::One(9));
        assert!(!s.remove(3));
        assert!(s.remove(9) && s.is_empty());
    }
}
