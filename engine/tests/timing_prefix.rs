//! A prefill chunk over a cached prefix (a prefix-cache hit, a later chunk of a long prompt,
//! a multi-turn session's next turn), priced by the calibrated model against what its
//! kernels must do: read the prefix's KV and compute its query-key pairs.
//!
//! Llama-3.1-8B on one H100 SXM (989.5 TFLOP/s bf16, 3.35 TB/s): 32 layers of 32 query and
//! 8 KV heads of 128, so per layer a query-key pair is 4·32·128 = 16,384 FLOPs and a cached
//! token 2·8·128·2 = 4,096 B of KV; a step reads 15.0 GB of weights (all but the embedding
//! table): 4.5 ms at 3.35 TB/s.

use engine::hardware::{Hardware, HardwareConfig};
use engine::model::Model;
use engine::timing::{h100_calibration, Calibrated, SeqWork};

fn gpu(name: &str) -> Hardware {
    HardwareConfig {
        gpu: name.into(),
        ..Default::default()
    }
    .resolve()
    .unwrap()
}

fn llama_8b(gpu_name: &str) -> Calibrated {
    let m = Model::from_catalogue("Llama-3.1-8B").unwrap();
    Calibrated::new(&m, &gpu(gpu_name), None, 0.0)
}

fn chunk(new_tokens: u32, context: u32) -> SeqWork {
    SeqWork {
        new_tokens,
        context,
        decode: false,
    }
}

fn decode(context: u32) -> SeqWork {
    SeqWork {
        new_tokens: 1,
        context,
        decode: true,
    }
}

const MS: f64 = 1e-3;

/// 16 new tokens over 32,768 cached ones do what a decode over the same KV does, plus 15
/// more rows through the GEMMs: read the weights (4.5 ms) and 32,768 · 4,096 B · 32 layers
/// = 4.3 GB of KV (1.3 ms at 3.35 TB/s), with 16 · 32,768 pairs (0.28 ms of FLOPs at peak)
/// hidden under that read. It was priced at 45.2 ms (38.9 ms of attention) when every pair
/// carried the short chunk's 83x penalty.
#[test]
fn a_short_chunk_over_a_long_prefix_costs_about_a_decode_over_the_same_kv() {
    let t = llama_8b("H100-SXM");
    let c = t.breakdown([chunk(16, 32_768)]);
    let d = t.breakdown([decode(32_768)]);
    // Per layer: max(8.8 GFLOP / (0.601 · 989.5 TFLOP/s) = 14.8 µs, 134 MB of prefix KV at
    // 0.955 · 3.35 TB/s = 42.0 µs) plus 11.8 µs fixed: 1.72 ms over 32 layers, as the
    // decode's 32,769 positions of KV.
    assert!(
        (c.attention / d.attention - 1.0).abs() < 0.02,
        "chunk {:.3} ms vs decode {:.3} ms",
        c.attention / MS,
        d.attention / MS
    );
    assert!(c.attention > 1.5 * MS && c.attention < 2.0 * MS);
    // The whole step: above the floor of reading weights and KV (5.8 ms), within 15 % of
    // the decode step (7.9 ms), not 6x it.
    let ratio = c.total() / d.total();
    assert!(
        (1.0..1.15).contains(&ratio),
        "chunk step {:.2} ms, decode step {:.2} ms",
        c.total() / MS,
        d.total() / MS
    );
    assert!(c.total() > 5.8 * MS && c.total() < 9.0 * MS);
}

/// The last 8 tokens of an 8,200-token prompt chunked at 8,192: 65,536 pairs and 34 MB of
/// KV per layer, under the weights' 4.8 ms. It was priced at 16.2 ms.
#[test]
fn the_tail_chunk_of_a_long_prompt_takes_a_few_ms() {
    let t = llama_8b("H100-SXM");
    let tail = t.breakdown([chunk(8, 8_192)]);
    let d = t.breakdown([decode(8_192)]);
    // Attention per layer: 8,192 · 4,096 B at 0.955 · 3.35 TB/s = 10.5 µs plus 11.8 µs:
    // 0.71 ms over 32 layers.
    assert!(
        tail.attention > 0.6 * MS && tail.attention < 0.85 * MS,
        "{:.3} ms",
        tail.attention / MS
    );
    assert!(
        tail.total() > 5.0 * MS && tail.total() < 8.0 * MS,
        "{:.2} ms",
        tail.total() / MS
    );
    assert!(tail.total() < 1.05 * d.total());
}

/// A long chunk over a prefix is bound by its FLOPs, which grow with the prefix: 2,048 new
/// tokens over 6,144 cached compute 2,048 · 6,144 pairs against the prefix at the long-chunk
/// efficiency, besides their own causal part priced as a 2,048-token prefill's.
#[test]
fn a_long_chunk_over_a_prefix_pays_for_its_pairs_at_full_tiles() {
    let t = llama_8b("H100-SXM");
    let cal = h100_calibration();
    let rate = 989.5e12 * cal.prefill_attention_efficiency;
    let alone = t.attention_time([chunk(2048, 0)]);
    let over = t.attention_time([chunk(2048, 6144)]);
    let prefix_pairs = 2048.0 * 6144.0 * 16_384.0 / rate;
    assert!(
        ((over - alone) / prefix_pairs - 1.0).abs() < 1e-9,
        "{over:e} - {alone:e} vs {prefix_pairs:e}"
    );
}

/// Without a prefix nothing changed: a chunk's pairs are `n(n+1)/2 · (n + n½)/n` at the
/// prefill efficiency, its own KV read at HBM bandwidth, whichever is longer, plus the fixed
/// costs (the formula the H100's fit and its real runs were priced with).
#[test]
fn a_chunk_without_a_prefix_is_priced_as_before() {
    let t = llama_8b("H100-SXM");
    let cal = h100_calibration();
    let rate = 989.5e12 * cal.prefill_attention_efficiency;
    for n in [1.0, 16.0, 512.0, 2048.0, 8200.0] {
        let pairs = (0.0 + n * (n + 1.0) / 2.0) * (n + cal.prefill_attention_half_tokens) / n;
        let want = (pairs * 16_384.0 / rate).max(n * 4096.0 / 3.35e12)
            + cal.attention_fixed_us * 1e-6
            + cal.attention_per_seq_ns * 1e-9;
        let got = t.attention_time([chunk(n as u32, 0)]);
        assert!((got / want - 1.0).abs() < 1e-12, "{n}: {got:e} vs {want:e}");
    }
}

/// On the RTX PRO 6000 (vLLM 0.19's FlashAttention 2, no split of a chunk's KV) a short
/// chunk's pass over a prefix runs one tile of one head per SM: every chunk of up to ~270
/// tokens over 16,384 cached costs the same, 369 µs per layer in LLMServingSim's profile,
/// 6x a decode over that KV (62 µs).
#[test]
fn without_a_kv_split_short_chunks_cost_a_full_pass_of_tiles() {
    let t = llama_8b("RTX PRO 6000 Blackwell");
    let per_layer = |w: SeqWork| t.attention_time([w]);
    for (n, profiled_us) in [(16, 369.3), (128, 370.0), (256, 368.0)] {
        let got = per_layer(chunk(n, 16_384)) * 1e6;
        assert!(
            (got / profiled_us - 1.0).abs() < 0.15,
            "{n} over 16384: {got:.0} µs vs {profiled_us}"
        );
    }
    // Past the floor the pairs decide: 2,048 tokens over 16,384, 2,138 µs in the profile.
    let got = per_layer(chunk(2048, 16_384)) * 1e6;
    assert!((got / 2138.0 - 1.0).abs() < 0.25, "{got:.0} µs");
    // Two short chunks share the SMs the first left idle: about one pass, not two.
    let two = t.attention_time([chunk(16, 16_384), chunk(16, 16_384)]);
    assert!(two < 1.05 * per_layer(chunk(16, 16_384)));
    // On the H100 (FlashAttention 3 splits the KV) a short chunk reads the prefix as a
    // decode does.
    let h100 = llama_8b("H100-SXM");
    let ratio = h100.attention_time([chunk(16, 16_384)]) / h100.attention_time([decode(16_384)]);
    assert!((ratio - 1.0).abs() < 0.02, "{ratio}");
}
