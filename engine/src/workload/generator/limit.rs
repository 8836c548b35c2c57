//! `total_requests`: stops an open-loop generator after a number of requests.

use super::{DataShape, RequestGenerator, RequestSpec};

/// Wraps a generator so it yields at most `remaining` more requests.
pub struct Limit<G> {
    inner: G,
    remaining: u64,
}

impl<G: RequestGenerator> Limit<G> {
    /// At most `total` requests from `inner`.
    pub fn new(inner: G, total: u64) -> Self {
        Self {
            inner,
            remaining: total,
        }
    }
}

impl<G: RequestGenerator> RequestGenerator for Limit<G> {
    fn next_request(&mut self, request_id: u64) -> Option<RequestSpec> {
        if self.remaining == 0 {
            return None;
        }
        let spec = self.inner.next_request(request_id)?;
        self.remaining -= 1;
        Some(spec)
    }

    fn max_concurrent_requests(&self) -> Option<usize> {
        self.inner.max_concurrent_requests()
    }

    fn data_shape(&self) -> Option<DataShape> {
        self.inner.data_shape()
    }

    fn data_warning(&self) -> Option<String> {
        self.inner.data_warning()
    }
}
