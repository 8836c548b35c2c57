//! The waiting queue, as vLLM's `request_queue.py`: FIFO under `fcfs`, ordered by
//! (priority, arrival) under `priority`.

use super::SchedulingPolicy;
use std::collections::{BTreeMap, VecDeque};

/// A request's place in a priority queue: priority, then arrival time, then id (a total
/// order, so equal keys never depend on insertion order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct QueueKey {
    priority: i32,
    /// Arrival time as order-preserving bits (`f64::total_cmp` order).
    arrival: u64,
    id: u64,
}

impl QueueKey {
    /// The key of request `id` with `priority`, arrived at `arrival` seconds.
    pub(super) fn new(priority: i32, arrival: f64, id: u64) -> Self {
        let bits = arrival.to_bits();
        // Flip so that unsigned order is total_cmp order.
        let arrival = if bits >> 63 == 1 {
            !bits
        } else {
            bits | 1 << 63
        };
        Self {
            priority,
            arrival,
            id,
        }
    }

    /// Priority then arrival: a larger rank is preempted first.
    pub(super) fn rank(&self) -> (i32, u64) {
        (self.priority, self.arrival)
    }
}

/// Waiting requests (scheduler slots) in the order they are considered for admission.
#[derive(Debug)]
pub(crate) enum RequestQueue {
    Fcfs(VecDeque<u32>),
    Priority(BTreeMap<QueueKey, u32>),
}

impl RequestQueue {
    pub(super) fn new(policy: SchedulingPolicy) -> Self {
        match policy {
            SchedulingPolicy::Fcfs => Self::Fcfs(VecDeque::new()),
            SchedulingPolicy::Priority => Self::Priority(BTreeMap::new()),
        }
    }

    /// The request considered next.
    pub(super) fn peek(&self) -> Option<u32> {
        match self {
            Self::Fcfs(q) => q.front().copied(),
            Self::Priority(q) => q.first_key_value().map(|(_, &s)| s),
        }
    }

    /// Removes the request [`RequestQueue::peek`] returned.
    pub(super) fn pop(&mut self) {
        match self {
            Self::Fcfs(q) => {
                q.pop_front();
            }
            Self::Priority(q) => {
                q.pop_first();
            }
        }
    }

    /// A new arrival.
    pub(super) fn add(&mut self, slot: u32, key: QueueKey) {
        match self {
            Self::Fcfs(q) => q.push_back(slot),
            Self::Priority(q) => {
                q.insert(key, slot);
            }
        }
    }

    /// A preempted request: first in line under `fcfs`, at its key under `priority`.
    pub(super) fn prepend(&mut self, slot: u32, key: QueueKey) {
        match self {
            Self::Fcfs(q) => q.push_front(slot),
            Self::Priority(q) => {
                q.insert(key, slot);
            }
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(super) fn len(&self) -> usize {
        match self {
            Self::Fcfs(q) => q.len(),
            Self::Priority(q) => q.len(),
        }
    }

    /// The queue in admission order.
    pub(super) fn iter(&self) -> Box<dyn Iterator<Item = u32> + '_> {
        match self {
            Self::Fcfs(q) => Box::new(q.iter().copied()),
            Self::Priority(q) => Box::new(q.values().copied()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_order_by_priority_then_arrival_then_id() {
        let k = QueueKey::new;
        let mut keys = [
            k(1, 2.0, 0),
            k(0, 5.0, 1),
            k(1, -1.0, 2),
            k(1, 2.0, 3),
            k(-3, 9.0, 4),
        ];
        keys.sort();
        let ids: Vec<u64> = keys.iter().map(|k| k.id).collect();
        assert_eq!(ids, [4, 1, 2, 0, 3]);
    }

    #[test]
    fn fcfs_prepends_preempted_requests() {
        let mut q = RequestQueue::new(SchedulingPolicy::Fcfs);
        q.add(1, QueueKey::new(0, 0.0, 1));
        q.add(2, QueueKey::new(0, 1.0, 2));
        q.prepend(3, QueueKey::new(0, 5.0, 3));
        assert_eq!(q.iter().collect::<Vec<_>>(), [3, 1, 2]);
        q.pop();
        assert_eq!((q.peek(), q.len()), (Some(1), 2));
    }
}
