//! A tier's transfer link: processor sharing of its bandwidth among concurrent
//! transfers, as a pure state machine.
//!
//! A transfer first waits for one of the tier's `concurrency` slots (FIFO),
//! then pays the tier's latency once (no bandwidth used meanwhile), then moves
//! its bytes at `bandwidth / n`, where `n` is the number of transfers moving
//! bytes at that moment. Every join or leave re-divides the bandwidth, so the
//! async loop sleeps until [`TransferLink::next_event_time`] (or until a new
//! transfer arrives), calls [`TransferLink::advance_to`] and re-plans.

use crate::offload::TierConfig;
use serde::Serialize;
use std::collections::VecDeque;

/// Caller-chosen identity of a transfer (e.g. the request id).
pub type TransferId = u64;

/// A finished transfer.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Completion {
    /// Which transfer.
    pub id: TransferId,
    /// Simulated time its last byte arrived.
    pub time: f64,
}

#[derive(Debug, Clone)]
struct Active {
    id: TransferId,
    /// Bytes still to move.
    remaining: f64,
    /// When its latency has been paid and bytes start to flow.
    data_from: f64,
}

/// One tier's link (per worker for a per-worker tier, one for a shared tier).
#[derive(Debug, Clone)]
pub struct TransferLink {
    bandwidth: f64,
    latency: f64,
    concurrency: usize,
    now: f64,
    /// Transfers holding a slot, in admission order (completion ties resolve in this order).
    active: Vec<Active>,
    /// Transfers waiting for a slot, FIFO.
    queue: VecDeque<(TransferId, f64)>,
    /// Completions found while advancing inside `start`, returned by the next `advance_to`.
    finished: Vec<Completion>,
}

impl TransferLink {
    /// A link of `bandwidth` bytes/s (> 0), `latency` s (≥ 0) and `concurrency` slots (≥ 1).
    pub fn new(bandwidth: f64, latency: f64, concurrency: u32) -> Self {
        Self {
            bandwidth,
            latency,
            concurrency: concurrency.max(1) as usize,
            now: 0.0,
            active: Vec::new(),
            queue: VecDeque::new(),
            finished: Vec::new(),
        }
    }

    /// The link of a configured tier.
    pub fn for_tier(tier: &TierConfig) -> Self {
        Self::new(
            tier.bandwidth_bytes_per_s(),
            tier.latency_s,
            tier.concurrency,
        )
    }

    /// The time the link has been advanced to.
    pub fn now(&self) -> f64 {
        self.now
    }

    /// Transfers holding a slot (paying latency or moving bytes).
    pub fn in_service(&self) -> usize {
        self.active.len()
    }

    /// Transfers waiting for a slot.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// True when nothing is in service, queued or awaiting collection.
    pub fn is_idle(&self) -> bool {
        self.active.is_empty() && self.queue.is_empty() && self.finished.is_empty()
    }

    /// Starts a transfer of `bytes` at `now` (not before [`TransferLink::now`]).
    /// Completions up to `now` are kept for the next [`TransferLink::advance_to`].
    pub fn start(&mut self, now: f64, id: TransferId, bytes: f64) {
        let done = self.advance_to(now);
        self.finished = done;
        let bytes = bytes.max(0.0);
        if self.active.len() < self.concurrency {
            self.active.push(Active {
                id,
                remaining: bytes,
                data_from: self.now + self.latency,
            });
        } else {
            self.queue.push_back((id, bytes));
        }
    }

    /// The next time the link's state changes by itself (a latency paid or a
    /// transfer finished), assuming no new transfer arrives.
    pub fn next_event_time(&self) -> Option<f64> {
        if let Some(c) = self.finished.first() {
            return Some(c.time);
        }
        self.next_internal_event().map(|(t, _)| t)
    }

    /// When and which transfer completes next, assuming no new transfer arrives.
    pub fn next_completion(&self) -> Option<(f64, TransferId)> {
        if let Some(c) = self.finished.first() {
            return Some((c.time, c.id));
        }
        let mut probe = self.clone();
        while probe.finished.is_empty() {
            let (t, _) = probe.next_internal_event()?;
            probe.step_to(t);
        }
        probe.finished.first().map(|c| (c.time, c.id))
    }

    /// Moves the link to `now` and returns the transfers that completed by then,
    /// in completion order (ties in admission order). A `now` earlier than the
    /// link's time is treated as the link's time.
    pub fn advance_to(&mut self, now: f64) -> Vec<Completion> {
        let now = now.max(self.now);
        loop {
            match self.next_internal_event() {
                Some((t, _)) if t <= now => self.step_to(t),
                _ => break,
            }
        }
        self.progress(now);
        std::mem::take(&mut self.finished)
    }

    /// Bandwidth each byte-moving transfer gets now.
    fn rate(&self) -> f64 {
        let moving = self
            .active
            .iter()
            .filter(|a| a.data_from <= self.now)
            .count();
        if moving == 0 {
            0.0
        } else {
            self.bandwidth / moving as f64
        }
    }

    /// Earliest latency end or completion after (or at) `self.now`, with the transfer's position.
    fn next_internal_event(&self) -> Option<(f64, usize)> {
        let rate = self.rate();
        let mut best: Option<(f64, usize)> = None;
        for (k, a) in self.active.iter().enumerate() {
            let t = if a.data_from <= self.now {
                self.now + a.remaining / rate
            } else {
                a.data_from
            };
            if best.is_none_or(|(bt, _)| t < bt) {
                best = Some((t, k));
            }
        }
        best
    }

    /// Moves bytes at the current rate until `t` (no event strictly before `t`).
    fn progress(&mut self, t: f64) {
        let rate = self.rate();
        let dt = t - self.now;
        if dt > 0.0 && rate > 0.0 {
            for a in self.active.iter_mut().filter(|a| a.data_from <= self.now) {
                a.remaining = (a.remaining - rate * dt).max(0.0);
            }
        }
        self.now = t;
    }

    /// Advances to event time `t`, completes every transfer due then, and admits queued ones.
    fn step_to(&mut self, t: f64) {
        // Bytes move at the rate in force *before* anyone leaves.
        let rate = self.rate();
        let start = self.now;
        let mut k = 0;
        while k < self.active.len() {
            let a = &mut self.active[k];
            if a.data_from <= start {
                // Due if its projected finish (computed exactly as in
                // `next_internal_event`) is `t`, or under a nanosecond of work is left.
                if start + a.remaining / rate <= t || a.remaining < rate * 1e-9 {
                    let a = self.active.remove(k);
                    self.finished.push(Completion { id: a.id, time: t });
                    continue;
                }
                a.remaining = (a.remaining - rate * (t - start)).max(0.0);
            }
            k += 1;
        }
        self.now = t;
        while self.active.len() < self.concurrency {
            let Some((id, bytes)) = self.queue.pop_front() else {
                break;
            };
            self.active.push(Active {
                id,
                remaining: bytes,
                data_from: t + self.latency,
            });
        }
    }
}
