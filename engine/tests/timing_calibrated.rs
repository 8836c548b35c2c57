//! The calibrated step time, priced by hand for simple calibrations: every kernel at its
//! roofline (efficiencies 1, a sharp knee, no fixed costs), so each term is bytes / bandwidth
//! or FLOPs / peak, summed over the kernels a vLLM step runs.

use engine::hardware::{Hardware, HardwareConfig};
use engine::model::{Dtype, Dtypes, Model};
use engine::timing::{Calibrated, Calibration, SeqWork};

/// Every kernel exactly at its roofline, nothing else.
fn ideal() -> Calibration {
    Calibration {
        gemm_compute_efficiency: 1.0,
        gemm_memory_efficiency: 1.0,
        gemm_knee: 64.0,
        gemm_fixed_us: 0.0,
        moe_compute_efficiency: 1.0,
        moe_memory_efficiency: 1.0,
        moe_knee: 64.0,
        prefill_attention_efficiency: 1.0,
        prefill_attention_half_tokens: 0.0,
        decode_attention_efficiency: 1.0,
        attention_fixed_us: 0.0,
        attention_per_seq_ns: 0.0,
        elementwise_fixed_us: 0.0,
        elementwise_efficiency: 1.0,
        allreduce_latency_us: 5.0,
        allreduce_latency_per_gpu_us: 0.0,
        allreduce_bus_gbps: 100.0,
        step_overhead_us: 0.0,
        step_overhead_per_seq_us: 0.0,
        step_overhead_per_gpu_us: 0.0,
        ..Calibration::default()
    }
}

fn h100(tp: u32) -> Hardware {
    HardwareConfig {
        tp,
        ..Default::default()
    }
    .resolve()
    .unwrap()
}

fn model(name: &str) -> Model {
    Model::from_catalogue(name).unwrap()
}

fn decode(context: u32) -> SeqWork {
    SeqWork {
        new_tokens: 1,
        context,
        decode: true,
    }
}

fn assert_close(got: f64, want: f64) {
    assert!(
        (got - want).abs() <= 1e-9 * want.abs().max(1e-12) + 1e-12,
        "got {got:e}, want {want:e}"
    );
}

#[test]
fn one_decode_of_llama_2_7b_streams_its_weights_and_kv() {
    let t = Calibrated::new(&model("Llama-2-7B"), &h100(1), Some(&ideal()), 0.0);
    let b = t.breakdown([decode(1000)]);
    let bw = 3.35e12;
    // Per layer, bf16 weights of qkv (4096×12288), o (4096×4096), gate_up (4096×22016) and
    // down (11008×4096): 2·4096·49408 = 404_750_336 B, plus one row in and out of each GEMM:
    // 2·(4096+12288 + 4096+4096 + 4096+22016 + 11008+4096) = 131_584 B. The LM head reads
    // 4096×32000 bf16 weights: 262_144_000 B, plus 2·(4096 + 32000) = 72_192 B.
    // Compute (2·4096·49408 FLOPs ≈ 0.4 µs) hides under memory time with a sharp knee.
    let layer_gemm = (404_750_336.0 + 131_584.0) / bw;
    let lm_head = (262_144_000.0 + 72_192.0) / bw;
    assert_close(b.gemm, 32.0 * layer_gemm + lm_head);
    // Attention reads the KV of 1001 positions: 2 (K, V) · 32 heads · 128 · 2 B = 16 384 B
    // per position per layer.
    assert_close(b.attention, 32.0 * 1001.0 * 16_384.0 / bw);
    // Elementwise: two fused add+norms (8·4096), rotary on q and k (2·128·64), SiLU-and-mul
    // (3·11008): 82_176 elements of 2 B per token per layer.
    assert_close(b.elementwise, 32.0 * 82_176.0 * 2.0 / bw);
    assert_eq!(b.allreduce, 0.0, "one GPU: no collectives");
    assert_eq!(b.moe, 0.0);
    // Total ≈ 4.10 ms.
    assert!((b.total() - 4.104e-3).abs() < 1e-5, "{}", b.total());
}

#[test]
fn tensor_parallel_splits_the_weights_and_adds_two_all_reduces_per_layer() {
    let one = Calibrated::new(&model("Llama-2-7B"), &h100(1), Some(&ideal()), 0.0);
    let two = Calibrated::new(&model("Llama-2-7B"), &h100(2), Some(&ideal()), 0.0);
    let batch: Vec<SeqWork> = (0..1000).map(|_| decode(0)).collect();
    let (b1, b2) = (one.breakdown(batch.clone()), two.breakdown(batch));
    // 1000 tokens' hidden states, 4096 × 2 B each: 8_192_000 B per all-reduce; a ring over
    // two GPUs moves 2·(2−1)/2 of it at 100 GB/s, after 5 µs: 86.92 µs, twice per layer.
    assert_close(b2.allreduce, 64.0 * (5e-6 + 8_192_000.0 / 100e9));
    // Each GPU reads half the KV heads' cache.
    assert_close(b2.attention, b1.attention / 2.0);
}

#[test]
fn a_single_mixtral_token_reads_only_the_two_experts_it_is_routed_to() {
    let t = Calibrated::new(&model("Mixtral-8x7B"), &h100(1), Some(&ideal()), 0.0);
    let b = t.breakdown([decode(0)]);
    // Uniform top-2 routing of one token touches 8·(1 − (6/8)¹) = 2 experts: their gate_up
    // (4096×28672) and down (14336×4096) weights, 2·3·4096·14336·2 B = 704_643_072 B, plus
    // the two routed rows in and out of both GEMMs, 2·(4096+28672+14336+4096)·2 = 204_800 B.
    assert_close(b.moe, 32.0 * (704_643_072.0 + 204_800.0) / 3.35e12);
}

#[test]
fn fp8_weights_use_the_fp8_matrix_units_and_half_the_bytes() {
    let bf16 = model("Llama-4-Scout-17B-16E");
    let fp8 = model("Llama-4-Scout-17B-16E-FP8");
    let hw = h100(2);
    let a = Calibrated::new(&bf16, &hw, Some(&ideal()), 0.0).dense_layer_gemm_time(8192.0);
    let b = Calibrated::new(&fp8, &hw, Some(&ideal()), 0.0).dense_layer_gemm_time(8192.0);
    // 8192 rows are compute-bound: twice the peak (1979 vs 989.5 TFLOP/s) halves the time.
    assert!((a / b - 2.0).abs() < 0.01, "{a} vs {b}");
}

#[test]
fn the_serving_engine_adds_its_cpu_time_per_step_and_per_sequence() {
    let cal = Calibration {
        step_overhead_us: 300.0,
        step_overhead_per_seq_us: 10.0,
        step_overhead_per_gpu_us: 200.0,
        ..ideal()
    };
    let t = Calibrated::new(&model("Llama-2-70B"), &h100(4), Some(&cal), 0.001);
    let b = t.breakdown((0..50).map(|_| decode(100)));
    // 300 µs + 3 extra GPUs · 200 µs + 50 sequences · 10 µs + the worker's own 1 ms.
    assert_close(b.cpu, (300.0 + 600.0 + 500.0) * 1e-6 + 0.001);
    assert_eq!(
        t.breakdown(std::iter::empty()).total(),
        0.0,
        "an empty batch is free"
    );
}

/// The RTX PRO 6000 Blackwell is chosen by name in a scenario and priced with the figures
/// fitted on vLLM 0.19's kernel profile of Llama-3.1-8B on it
/// (`fidelity/data/kernels/rtx_pro_6000_vllm019.json`): each kernel below is worked out by
/// hand from those figures and lands within 12 % of what the profile measured (the fit's
/// 90th-percentile GEMM error is 13.5 %).
#[test]
fn the_rtx_pro_6000_is_chosen_by_name_and_priced_from_its_kernel_profile() {
    let s = opal::parse_scenario(
        r#"{"model": {"name": "Llama-3.1-8B"}, "hardware": {"gpu": "rtx pro 6000 blackwell"}}"#,
    )
    .unwrap_or_else(|p| panic!("{p:?}"));
    let hw = s.hardware.resolve().unwrap();
    assert_eq!(hw.gpu.name, "RTX PRO 6000 Blackwell");
    assert_eq!(
        s.worker.timing.calibration(&hw),
        engine::timing::rtx_pro_6000_calibration()
    );
    let t = Calibrated::new(&s.model.resolve().unwrap(), &hw, None, 0.0);
    let (flops, bw) = (503.8e12 * 0.788, 1.792e12 * 0.891);
    let profiled = |got: f64, us: f64| {
        assert!(
            (got / (us * 1e-6) - 1.0).abs() < 0.12,
            "{got:e} s vs {us} µs"
        );
    };
    // LM head over one row: 4096×128256 bf16 weights plus a row in and out,
    // 2·(4096·128256 + 4096 + 128256) = 1_050_937_856 B at 0.891 of 1.792 TB/s; its 1.05
    // GFLOP at 0.788 of 503.8 TFLOP/s (2.6 µs) adds (1 + (2.6/658)^1.62)^(1/1.62), under
    // 1e-4; plus 6.56 µs. ≈ 664.8 µs; the profile: 714.0 µs.
    let lm = 1_050_937_856.0 / bw;
    let c = 2.0 * 4096.0 * 128_256.0 / flops;
    let want = lm * libm::pow(1.0 + libm::pow(c / lm, 1.62), 1.0 / 1.62) + 6.56e-6;
    assert_close(t.lm_head_time(1.0), want);
    profiled(want, 714.006);
    // Gate and up projections over 2048 rows, compute-bound: 2·2048·4096·28672 FLOPs at
    // 0.788 of peak (1211.7 µs), against 2·(4096·28672 + 2048·(4096 + 28672)) B at 0.891
    // of the bandwidth (231.2 µs), through the 1.62-norm knee, plus 6.56 µs ≈ 1268.7 µs;
    // the profile: 1152.8 µs.
    let (tc, tm) = (
        2.0 * 2048.0 * 4096.0 * 28672.0 / flops,
        2.0 * (4096.0 * 28672.0 + 2048.0 * (4096.0 + 28672.0)) / bw,
    );
    let want = tc * libm::pow(1.0 + libm::pow(tm / tc, 1.62), 1.0 / 1.62) + 6.56e-6;
    assert_close(t.gemm_time(2048.0, 4096.0, 28672.0), want);
    profiled(want, 1152.83);
    // One layer's attention for 256 decodes at 16384 tokens: 256·16385 positions of
    // 2·8·128·2 = 4096 B at 0.784 of 1.792 TB/s, plus 9.19 µs and 256·148 ns ≈ 12276 µs;
    // the profile: 11238.9 µs.
    let want = 256.0 * 16385.0 * 4096.0 / (1.792e12 * 0.784) + 9.19e-6 + 256.0 * 148e-9;
    assert_close(t.attention_time(vec![decode(16384); 256]), want);
    profiled(want, 11238.9);
    // With a 256-token chunk in the same kernel the decodes' KV reads slow by 1/0.538.
    let chunk = SeqWork {
        new_tokens: 256,
        context: 0,
        decode: false,
    };
    let alone = t.attention_time([chunk]);
    let mixed = t.attention_time([chunk, decode(16384)]);
    let decode_kv = 16385.0 * 4096.0 / (1.792e12 * 0.784);
    assert_close(mixed - alone, decode_kv / 0.538 + 148e-9);
    // One layer's norms, rotary and activation move (8·4096 + 2·5120 + 3·14336)·2 =
    // 172,032 B per token. 256 tokens (44.0 MB) fit in the 128 MiB L2: at 3.64 × 1.792
    // TB/s, 6.75 µs, plus 10.2 µs ≈ 16.95 µs; the profile: 17.45 µs.
    let want = 256.0 * 172_032.0 / (1.792e12 * 3.64) + 10.2e-6;
    assert_close(t.elementwise_time(256.0), want);
    profiled(want, 17.45);
    // 2048 tokens (352 MB): the first 128 MiB at 3.64 ×, the rest from HBM ≈ 152.5 µs; the
    // profile: 137.8 µs.
    let l2 = 128.0 * 1_048_576.0;
    let want = (2048.0 * 172_032.0 - l2 + l2 / 3.64) / 1.792e12 + 10.2e-6;
    assert_close(t.elementwise_time(2048.0), want);
    profiled(want, 137.78);
}

/// A GPU that carries the H100's MoE efficiencies over carries the knee they were fitted
/// with: the RTX PRO 6000's fused-MoE price is what its figures give with the H100's knee
/// (6.69), whatever its own GEMMs' knee (1.62), while its dense GEMMs follow their own.
#[test]
fn the_moe_kernel_keeps_the_knee_its_efficiencies_were_fitted_with() {
    let s = opal::parse_scenario(
        r#"{"model": {"name": "Mixtral-8x7B"}, "hardware": {"gpu": "RTX PRO 6000 Blackwell", "tp": 2}}"#,
    )
    .unwrap_or_else(|p| panic!("{p:?}"));
    let (model, hw) = (s.model.resolve().unwrap(), s.hardware.resolve().unwrap());
    let own = s.worker.timing.calibration(&hw);
    assert_eq!(own.moe_knee, 6.69);
    let sharp_gemms = Calibration {
        gemm_knee: 6.69,
        ..own.clone()
    };
    let t = Calibrated::new(&model, &hw, Some(&own), 0.0);
    let sharp = Calibrated::new(&model, &hw, Some(&sharp_gemms), 0.0);
    // 1024 tokens: the experts' compute and weight reads are within a factor of a few, where
    // the knee decides.
    assert_eq!(t.experts_time(1024.0), sharp.experts_time(1024.0));
    assert!(t.gemm_time(1024.0, 4096.0, 28672.0) > sharp.gemm_time(1024.0, 4096.0, 28672.0));
}

fn gpu(name: &str) -> Hardware {
    HardwareConfig {
        gpu: name.into(),
        ..Default::default()
    }
    .resolve()
    .unwrap()
}

fn with_weights(name: &str, weight: Dtype) -> Model {
    let m = model(name);
    let dtypes = Dtypes::resolve(weight, Dtype::Auto, Dtype::Auto, m.arch.bytes_per_param);
    Model::with_dtypes(m.name, m.arch, dtypes)
}

#[test]
fn one_nvfp4_decode_reads_four_and_a_half_bits_a_weight() {
    let m = with_weights("Llama-2-7B", Dtype::Nvfp4);
    let t = Calibrated::new(&m, &h100(1), Some(&ideal()), 0.0);
    let bw = 3.35e12;
    // As the bf16 decode above, with each linear weight 4 bits plus an FP8 scale per 16:
    // 4096·49408 weights a layer · 0.5625 B = 113_836_032 B; the LM head stays 16-bit.
    let layer_gemm = (113_836_032.0 + 131_584.0) / bw;
    let lm_head = (262_144_000.0 + 72_192.0) / bw;
    assert_close(
        t.breakdown([decode(1000)]).gemm,
        32.0 * layer_gemm + lm_head,
    );
}

#[test]
fn fp4_gemms_run_on_blackwell_fp4_units_and_at_16_bit_speed_elsewhere() {
    let bf16 = model("Llama-2-7B");
    let fp4 = with_weights("Llama-2-7B", Dtype::Nvfp4);
    assert_eq!(
        fp4.dtypes.activation,
        Dtype::Nvfp4,
        "NVFP4 checkpoints are W4A4"
    );
    let time = |m: &Model, hw: &Hardware| {
        Calibrated::new(m, hw, Some(&ideal()), 0.0).dense_layer_gemm_time(8192.0)
    };
    // 8192 rows are compute-bound on both GPUs: the B200's FP4 peak is 4x its bf16 one
    // (9000 vs 2250 TFLOP/s); the H100 has no FP4 units, so the same GEMMs take as long as
    // bf16 ones.
    let (b200, h100) = (gpu("B200"), h100(1));
    let ratio = time(&bf16, &b200) / time(&fp4, &b200);
    assert!((ratio - 4.0).abs() < 0.04, "B200 bf16 / NVFP4: {ratio}");
    let ratio = time(&bf16, &h100) / time(&fp4, &h100);
    assert!((ratio - 1.0).abs() < 0.01, "H100 bf16 / NVFP4: {ratio}");
    // MXFP4 weights compute in 16-bit unless asked (vLLM's default for gpt-oss).
    let mx = with_weights("Llama-2-7B", Dtype::Mxfp4);
    assert_eq!(mx.dtypes.activation, Dtype::Bfloat16);
    assert_eq!(mx.dtypes.kv_cache, Dtype::Bfloat16);
    let ratio = time(&bf16, &b200) / time(&mx, &b200);
    assert!(
        (ratio - 1.0).abs() < 0.01,
        "B200 bf16 / MXFP4 W4A16: {ratio}"
    );
}

fn parallel(tp: u32, dp: u32, expert_parallel: bool) -> Hardware {
    HardwareConfig {
        tp,
        dp,
        expert_parallel,
        ..Default::default()
    }
    .resolve()
    .unwrap()
}

#[test]
fn data_parallel_ranks_share_the_batch_and_the_experts_span_every_gpu() {
    let m = model("Mixtral-8x7B");
    let price = |hw: &Hardware| {
        Calibrated::new(&m, hw, Some(&ideal()), 0.0).breakdown((0..100).map(|_| decode(1000)))
    };
    let (one, tp2, dp2) = (
        price(&parallel(1, 1, false)),
        price(&parallel(2, 1, false)),
        price(&parallel(1, 2, false)),
    );
    // Each rank runs attention over its 50 sequences' KV: half of one GPU's.
    assert_close(dp2.attention, one.attention / 2.0);
    // The experts are split over both ranks' GPUs, as over two tensor-parallel GPUs.
    assert_close(dp2.moe, tp2.moe);
    // No all-reduce inside a one-GPU rank; each MoE layer gathers the 100 tokens' hidden
    // states (100 × 4096 × 2 B) to the experts and scatters the sums back: as an all-reduce
    // over 2 GPUs, 5 µs + 819_200 B × 2·(2−1)/2 / 100 GB/s, in each of 32 layers.
    assert_close(dp2.allreduce, 32.0 * (5e-6 + 819_200.0 / 100e9));
}

#[test]
fn with_expert_parallelism_a_layer_waits_for_the_busiest_gpu() {
    let m = model("Mixtral-8x7B");
    let moe = |hw: &Hardware, tokens: u32| {
        Calibrated::new(&m, hw, Some(&ideal()), 0.0)
            .breakdown((0..tokens).map(|_| decode(0)))
            .moe
    };
    let ep = parallel(1, 8, true);
    // One token sends its 2 pairs to 2 of 8 GPUs, one expert each: the busiest GPU reads a
    // whole expert (3 × 4096 × 14336 bf16 weights, 352_321_536 B) and moves the token's row
    // in and out of its two GEMMs ((4096 + 28672 + 14336 + 4096) × 2 B), in all 32 layers.
    assert_close(moe(&ep, 1), 32.0 * (352_321_536.0 + 102_400.0) / 3.35e12);
    // Split over 8 GPUs instead, each reads an eighth of both experts: a quarter as much.
    let split = moe(&parallel(1, 8, false), 1);
    assert!(moe(&ep, 1) / split > 3.9, "{} vs {split}", moe(&ep, 1));
    // With 4096 tokens each GPU gets 1024 pairs on average and the busiest about
    // sqrt(2 ln 8 × 1024 × 7/8) = 61 more: the experts' compute takes ~6 % longer than an
    // even split would.
    let (ep, split) = (moe(&ep, 4096), moe(&parallel(1, 8, false), 4096));
    assert!((ep / split - 1.06).abs() < 0.01, "{ep} vs {split}");
}
