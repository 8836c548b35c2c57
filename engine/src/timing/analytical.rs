//! The original Opal analytical step time, kept for side-by-side comparison.

use super::SeqWork;
use crate::hardware::Hardware;
use crate::model::Model;

/// Opal's formula: step = max(longest prefill, decode batch) + overhead, where a prefill
/// chunk p→n takes `L·[a·(n(n+1) − p(p+1))·d + b·(n − p)·d²] / (TFLOPS·10¹²·tp)` (a = 4,
/// b = 24) and the decode batch takes `W/(tp·BW) + Σ ctx·kv_bytes_per_token/(tp·BW)`.
#[derive(Debug, Clone, PartialEq)]
pub struct OpalAnalytical {
    layers: f64,
    hidden: f64,
    weight_bytes: f64,
    kv_bytes_per_token: f64,
    /// Peak FLOP/s of all tp GPUs.
    flops: f64,
    /// Bandwidth of all tp GPUs, bytes/s.
    bandwidth: f64,
    overhead: f64,
    a: f64,
    b: f64,
}

/// Opal's attention coefficient `a`.
pub(crate) const DEFAULT_A: f64 = 4.0;
/// Opal's dense-matmul coefficient `b` (24·d² FLOPs per token per layer).
pub(crate) const DEFAULT_B: f64 = 24.0;

impl OpalAnalytical {
    /// Prices steps of `model` on `hw`.
    pub fn new(model: &Model, hw: &Hardware, step_overhead: f64) -> Self {
        Self {
            layers: model.arch.num_layers as f64,
            hidden: model.arch.hidden_size as f64,
            weight_bytes: model.weight_bytes as f64,
            kv_bytes_per_token: model.kv_bytes_per_token as f64,
            flops: hw.peak_flops(),
            bandwidth: hw.bandwidth(),
            overhead: step_overhead,
            a: DEFAULT_A,
            b: DEFAULT_B,
        }
    }

    /// The same model with Opal's `a` and `b` set (an imported Opal config may change them).
    pub fn with_coefficients(mut self, a: f64, b: f64) -> Self {
        self.a = a;
        self.b = b;
        self
    }

    /// Prefill time of computing tokens `p+1..=n` of one sequence, seconds.
    pub fn prefill_time(&self, p: u32, n: u32) -> f64 {
        let (pf, nf, d) = (p as f64, n as f64, self.hidden);
        self.layers
            * (self.a * (nf * (nf + 1.0) - pf * (pf + 1.0)) * d + self.b * (nf - pf) * d * d)
            / self.flops
    }

    /// Duration of one step over `batch`, seconds (0 for an empty batch).
    pub fn step_time<I: IntoIterator<Item = SeqWork>>(&self, batch: I) -> f64 {
        let mut longest_prefill: f64 = 0.0;
        let mut decode_context = 0u64;
        let mut decodes = 0u32;
        let mut any = false;
        for w in batch {
            any = true;
            if w.decode {
                decodes += 1;
                decode_context += w.context as u64;
            } else {
                longest_prefill =
                    longest_prefill.max(self.prefill_time(w.context, w.context + w.new_tokens));
            }
        }
        if !any {
            return 0.0;
        }
        let decode = if decodes > 0 {
            self.weight_bytes / self.bandwidth
                + decode_context as f64 * self.kv_bytes_per_token / self.bandwidth
        } else {
            0.0
        };
        longest_prefill.max(decode) + self.overhead
    }
}
