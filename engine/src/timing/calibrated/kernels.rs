//! The time of each kind of GPU kernel a transformer step runs, on one GPU, from its shape.
//!
//! Every kernel is bound either by the matrix units or by HBM traffic; the fitted
//! efficiencies say how close vLLM's kernels come to each bound, and fixed costs cover what
//! does not scale (launch, synchronisation, tail effects).

use super::Calibration;

/// One GPU's peaks and the fitted efficiencies of its kernels, in SI units.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Kernels {
    /// Peak FLOP/s of the GEMMs' format (bf16, or FP8 for W8A8, FP4 for W4A4).
    gemm_flops: f64,
    /// The fraction of it vLLM's GEMMs of that format reach once compute-bound.
    gemm_compute_efficiency: f64,
    /// Peak bf16 FLOP/s (attention runs in 16 bits).
    attention_flops: f64,
    /// HBM bytes/s.
    bandwidth: f64,
    /// L2 cache bytes.
    l2_bytes: f64,
    cal: Calibration,
}

/// A GEMM `[m × k] · [k × n]`: its FLOPs and the bytes it must move.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Gemm {
    /// Inner dimension (input features).
    pub k: f64,
    /// Output features (on this GPU).
    pub n: f64,
}

/// A mixture-of-experts layer's routed experts, on one GPU.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Experts {
    /// Experts per layer.
    pub count: f64,
    /// Experts each token is routed to.
    pub top_k: f64,
    /// One expert's gate and up projections, fused (`[h × 2f]`).
    pub up: Gemm,
    /// One expert's down projection (`[f × h]`).
    pub down: Gemm,
}

impl Kernels {
    /// Kernels of a GPU with the given peaks (per GPU, SI units).
    pub(super) fn new(
        (gemm_flops, gemm_compute_efficiency): (f64, f64),
        attention_flops: f64,
        bandwidth: f64,
        l2_bytes: f64,
        cal: &Calibration,
    ) -> Self {
        Self {
            gemm_flops,
            gemm_compute_efficiency,
            attention_flops,
            bandwidth,
            l2_bytes,
            cal: cal.clone(),
        }
    }

    /// The calibration in force.
    pub(super) fn calibration(&self) -> &Calibration {
        &self.cal
    }

    /// Seconds of `m` rows through GEMMs whose weights take `weight_bytes` per element and
    /// whose activations take `act_bytes`, for several GEMMs fused or launched back to back:
    /// the `p`-norm of compute and memory time (a roofline with a smooth knee).
    fn matmul(&self, flops: f64, bytes: f64, (compute_eff, memory_eff, p): (f64, f64, f64)) -> f64 {
        let tc = flops / (self.gemm_flops * compute_eff);
        let tm = bytes / (self.bandwidth * memory_eff);
        let (hi, lo) = if tc > tm { (tc, tm) } else { (tm, tc) };
        // hi·(1 + (lo/hi)^p)^(1/p), written so it cannot overflow.
        if lo == 0.0 {
            hi
        } else {
            hi * libm::pow(1.0 + libm::pow(lo / hi, p), 1.0 / p)
        }
    }

    /// Seconds of one GEMM over `m` rows.
    pub(super) fn gemm(&self, m: f64, g: Gemm, weight_bytes: f64, act_bytes: f64) -> f64 {
        if m == 0.0 {
            return 0.0;
        }
        let flops = 2.0 * m * g.k * g.n;
        let bytes = g.k * g.n * weight_bytes + m * (g.k + g.n) * act_bytes;
        let c = &self.cal;
        let fit = (
            self.gemm_compute_efficiency,
            c.gemm_memory_efficiency,
            c.gemm_knee,
        );
        self.matmul(flops, bytes, fit) + c.gemm_fixed_us * 1e-6
    }

    /// Seconds of a fused mixture-of-experts layer over `m` tokens: the expected number of
    /// experts touched follows from uniform routing, and each touched expert's weights are
    /// read once.
    pub(super) fn fused_moe(&self, m: f64, e: &Experts, weight_bytes: f64, act_bytes: f64) -> f64 {
        if m == 0.0 {
            return 0.0;
        }
        let (up, down) = (e.up, e.down);
        let touched = e.count * (1.0 - libm::pow(1.0 - e.top_k / e.count, m));
        let rows = m * e.top_k;
        let flops = 2.0 * rows * (up.k * up.n + down.k * down.n);
        let bytes = touched * (up.k * up.n + down.k * down.n) * weight_bytes
            + rows * (up.k + up.n + down.k + down.n) * act_bytes;
        let c = &self.cal;
        let fit = (
            c.moe_compute_efficiency,
            c.moe_memory_efficiency,
            c.moe_knee,
        );
        self.matmul(flops, bytes, fit) + 2.0 * c.gemm_fixed_us * 1e-6
    }

    /// Seconds of one layer's attention over the whole batch (one varlen kernel, as vLLM
    /// v1 runs prefill chunks and decodes together): `prefill_flops` for the chunks'
    /// query-key pairs, KV bytes read by the decodes, by the chunks for their own tokens and
    /// for their cached prefixes, `seqs` sequences. A prefix's KV is read as a decode reads
    /// its context (at the decode kernels' bandwidth); the chunks' FLOPs and their KV reads
    /// overlap.
    pub(super) fn attention(
        &self,
        prefill_flops: f64,
        decode_bytes: f64,
        prefill_bytes: f64,
        prefix_bytes: f64,
        seqs: f64,
    ) -> f64 {
        let c = &self.cal;
        let prefill = (prefill_flops / (self.attention_flops * c.prefill_attention_efficiency))
            .max(
                prefill_bytes / self.bandwidth
                    + prefix_bytes / (self.bandwidth * c.decode_attention_efficiency),
            );
        let mixed = if prefill_flops > 0.0 {
            c.mixed_decode_attention_factor
        } else {
            1.0
        };
        let decode = decode_bytes / (self.bandwidth * c.decode_attention_efficiency * mixed);
        prefill + decode + c.attention_fixed_us * 1e-6 + seqs * c.attention_per_seq_ns * 1e-9
    }

    /// Seconds of a layer's norms, rotary embedding, activation and residual adds, which
    /// move `bytes`: the first L2-sized part at `elementwise_l2_speedup` times the HBM rate.
    pub(super) fn elementwise(&self, bytes: f64) -> f64 {
        // Written as the bytes HBM saves, so a speedup of 1 leaves `bytes` exactly as it is.
        let saved = bytes.min(self.l2_bytes) * (1.0 - 1.0 / self.cal.elementwise_l2_speedup);
        (bytes - saved) / (self.bandwidth * self.cal.elementwise_efficiency)
            + self.cal.elementwise_fixed_us * 1e-6
    }

    /// Seconds of one all-reduce of `bytes` over `gpus` GPUs (0 for one GPU): a latency
    /// plus the ring's `2(n−1)/n` of the message at the bus bandwidth.
    pub(super) fn allreduce(&self, bytes: f64, gpus: u32) -> f64 {
        if gpus <= 1 {
            return 0.0;
        }
        let n = gpus as f64;
        let c = &self.cal;
        (c.allreduce_latency_us + c.allreduce_latency_per_gpu_us * (n - 2.0)) * 1e-6
            + bytes * 2.0 * (n - 1.0) / n / (c.allreduce_bus_gbps * 1e9)
    }
}
