//! Fitting the kernel figures of a GPU's calibration to measured kernel profiles: each
//! profile point is priced by the same functions the simulator's steps use.

use engine::hardware::{GpuSpec, Hardware};
use engine::model::{catalogue, hf, Dtype, Dtypes, Model};
use engine::timing::{Calibrated, Calibration, SeqWork};
use serde::Deserialize;
use serde_json::Value;

/// A catalogue GPU and the calibration being fitted for it.
struct CalibratedGpu {
    spec: GpuSpec,
    cal: Calibration,
}

/// The catalogue GPU `name` with calibration `cal`.
fn calibrated_gpu(name: &str, cal: &Calibration) -> CalibratedGpu {
    CalibratedGpu {
        spec: engine::hardware::lookup(name).expect("a catalogue GPU"),
        cal: cal.clone(),
    }
}

/// The step pricing of `model` on `tp` of `gpu`, with no all-reduce latency per layer (the
/// profiles time kernels, not a server's collectives).
fn timing(model: &Model, gpu: &CalibratedGpu, tp: u32) -> Calibrated {
    let hw = Hardware::tensor_parallel(gpu.spec.clone(), tp);
    Calibrated::new(model, &hw, Some(&gpu.cal), 0.0)
}

/// A table of latencies by token count, µs.
#[derive(Debug, Clone, Deserialize)]
struct ByTokens {
    tokens: Vec<f64>,
    latency_us: Vec<f64>,
}

/// One AIConfigurator per-layer profile (H100, vLLM 0.14 kernels).
#[derive(Debug, Clone, Deserialize)]
struct LayerProfile {
    name: String,
    tp: u32,
    gemm: ByTokens,
    logits_gemm: ByTokens,
    allreduce: ByTokens,
    context_attention: ContextAttention,
    generation_attention: GenerationAttention,
    config: Value,
}

#[derive(Debug, Clone, Deserialize)]
struct ContextAttention {
    batch_size: Vec<f64>,
    isl: Vec<f64>,
    /// `[isl][batch]`.
    latency_us: Vec<Vec<f64>>,
}

#[derive(Debug, Clone, Deserialize)]
struct GenerationAttention {
    tokens: Vec<f64>,
    context: Vec<f64>,
    /// `[context][tokens]`.
    latency_us: Vec<Vec<f64>>,
}

/// One Vidur operator profile row (times in ms).
#[derive(Debug, Clone, Deserialize)]
struct VidurRow {
    gpu: String,
    model: String,
    tp: u32,
    tokens: f64,
    ms: std::collections::BTreeMap<String, f64>,
}

/// A per-kernel profile of one GPU measured by LLMServingSim's profiler (vLLM 0.19): a
/// one-layer model's dense kernels by token count, its LM head by sequence count, and its
/// attention kernel over batches of one prefill chunk and `n` decodes.
#[derive(Debug, Clone, Deserialize)]
struct KernelProfile {
    /// The catalogue GPU it was measured on.
    gpu: String,
    /// The profiled model's shape (Hugging Face config fields, after the profiler's overrides).
    config: Value,
    tokens: Vec<f64>,
    /// Per kernel (`qkv_proj`, `o_proj`, `gate_up_proj`, `down_proj`, `layernorm`,
    /// `rotary_emb`, `act_fn`), µs at each of `tokens`.
    dense_us: std::collections::BTreeMap<String, Vec<f64>>,
    lm_head: LmHeadTable,
    /// Rows of `[prefill chunk, its KV prefix, decodes, each decode's KV length, µs]`.
    attention: Vec<[f64; 5]>,
}

#[derive(Debug, Clone, Deserialize)]
struct LmHeadTable {
    sequences: Vec<f64>,
    latency_us: Vec<f64>,
}

/// The per-kernel profile of vLLM 0.19 on the RTX PRO 6000 Blackwell (Server Edition).
fn rtx_pro_6000_profile() -> KernelProfile {
    serde_json::from_str(include_str!("../../data/kernels/rtx_pro_6000_vllm019.json"))
        .expect("rtx_pro_6000_vllm019.json is valid")
}

impl KernelProfile {
    /// The profiled one-layer model.
    fn model(&self) -> Model {
        let arch = hf::from_config_value(&self.config).expect("the profile's config imports");
        Model::new(format!("profiled layer on {}", self.gpu), arch)
    }

    /// The attention batch of one grid row: the chunk (if any), then the decodes.
    fn attention_batch(row: &[f64; 5]) -> Vec<SeqWork> {
        let [chunk, prefix, decodes, kv, _] = *row;
        let mut batch = Vec::with_capacity(decodes as usize + 1);
        if chunk > 0.0 {
            batch.push(SeqWork {
                new_tokens: chunk as u32,
                context: prefix as u32,
                decode: false,
            });
        }
        batch.extend(std::iter::repeat_n(
            SeqWork {
                new_tokens: 1,
                context: kv as u32,
                decode: true,
            },
            decodes as usize,
        ));
        batch
    }

    /// The elementwise kernels of one layer at `tokens`, µs: two (fused residual-add) RMS
    /// norms, rotary embedding and the activation.
    fn elementwise_us(&self, i: usize) -> f64 {
        let d = &self.dense_us;
        2.0 * d["layernorm"][i] + d["rotary_emb"][i] + d["act_fn"][i]
    }

    /// The four GEMMs of one layer at `tokens`, µs.
    fn gemm_us(&self, i: usize) -> f64 {
        ["qkv_proj", "o_proj", "gate_up_proj", "down_proj"]
            .iter()
            .map(|k| self.dense_us[*k][i])
            .sum()
    }
}

/// AIConfigurator's per-operation measurements of vLLM's kernels on one GPU (written by
/// `extract.py --aiconfigurator`; times in µs): single GEMMs, attention kernels over
/// synthetic batches, and vLLM's custom all-reduce. See `extract.py` for what each row holds.
#[derive(Debug, Clone, Deserialize)]
struct OpTables {
    /// The catalogue GPU they were measured on.
    gpu: String,
    /// Rows of `[m, n, k, µs]`: one bf16 GEMM `[m × k] · [k × n]`.
    gemm: Vec<[f64; 4]>,
    /// Rows of `[dtype, m, n, k, µs]` (`fp8` per-tensor, `nvfp4`), not fitted on.
    gemm_check: Vec<(String, f64, f64, f64, f64)>,
    /// Rows of `[batch, isl, heads, KV heads, head size, µs]`: `batch` chunks of `isl` new
    /// tokens with no cached prefix.
    context_attention: Vec<[f64; 6]>,
    /// Rows of `[batch, kv, heads, KV heads, head size, µs]`: `batch` decodes, each over `kv`
    /// cached tokens (plus its own).
    generation_attention: Vec<[f64; 6]>,
    /// Rows of `[GPUs, bf16 elements, µs]`.
    allreduce: Vec<[f64; 3]>,
}

/// The per-operation tables shipped for `gpu` (a catalogue name), if any.
fn op_tables(gpu: &str) -> Option<OpTables> {
    let json = match gpu {
        "B200" => include_str!("../../data/kernels/aiconfigurator_b200_vllm019.json"),
        "B300" => include_str!("../../data/kernels/aiconfigurator_b300_vllm019.json"),
        "H200" => include_str!("../../data/kernels/aiconfigurator_h200_vllm014.json"),
        "A100-80GB" => include_str!("../../data/kernels/aiconfigurator_a100_vllm014.json"),
        "L40S" => include_str!("../../data/kernels/aiconfigurator_l40s_vllm014.json"),
        _ => return None,
    };
    let t: OpTables = serde_json::from_str(json).expect("the per-operation tables are valid");
    assert_eq!(t.gpu, gpu);
    Some(t)
}

/// A one-layer bf16 model with these attention shapes and hidden size (the MLP and vocabulary
/// only fill the architecture: its points time one kernel each).
fn synthetic_model(heads: f64, kv_heads: f64, head_dim: f64, hidden: f64) -> Model {
    let config = serde_json::json!({
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "num_hidden_layers": 1,
        "hidden_size": hidden as u64,
        "num_attention_heads": heads as u64,
        "num_key_value_heads": kv_heads as u64,
        "head_dim": head_dim as u64,
        "intermediate_size": 4 * hidden as u64,
        "vocab_size": 32000,
        "torch_dtype": "bfloat16",
    });
    let arch = hf::from_config_value(&config).expect("a synthetic config imports");
    Model::new(
        format!("synthetic {heads}/{kv_heads}×{head_dim}, hidden {hidden}"),
        arch,
    )
}

/// One held-out GEMM of another format, measured and priced.
#[derive(Debug, Clone)]
pub struct DtypeCheck {
    /// `fp8` or `nvfp4`.
    pub dtype: String,
    /// `m×n×k`.
    pub label: String,
    /// `m`.
    pub rows: f64,
    /// Measured, s.
    pub measured: f64,
    /// Priced, s.
    pub predicted: f64,
}

/// The fp8 and nvfp4 GEMM rows of `gpu`'s per-operation tables, priced under `cal` as the
/// simulator prices W8A8 and W4A4 checkpoints (weights and activations in the format, at
/// the GPU's FP8 or FP4 peak and `cal`'s efficiency for that format).
pub fn dtype_checks(gpu: &str, cal: &Calibration) -> Vec<DtypeCheck> {
    let Some(t) = op_tables(gpu) else {
        return Vec::new();
    };
    let model = synthetic_model(32.0, 8.0, 128.0, 4096.0);
    let at = |format: Dtype| {
        let dtypes = Dtypes {
            weight: format,
            activation: format,
            kv_cache: Dtype::Bfloat16,
        };
        let m = Model::with_dtypes(model.name.clone(), model.arch.clone(), dtypes);
        timing(&m, &calibrated_gpu(gpu, cal), 1)
    };
    let spec = engine::hardware::lookup(gpu).expect("a catalogue GPU");
    let fp8 = at(Dtype::Fp8);
    let fp4 = at(Dtype::Nvfp4);
    t.gemm_check
        .iter()
        .filter_map(|(dtype, m, n, k, us)| {
            let t = match dtype.as_str() {
                "fp8" => &fp8,
                "nvfp4" if spec.fp4_tflops > 0.0 => &fp4,
                _ => return None,
            };
            Some(DtypeCheck {
                dtype: dtype.clone(),
                label: format!("{m}×{n}×{k}"),
                rows: *m,
                measured: us * 1e-6,
                predicted: t.gemm_time(*m, *k, *n),
            })
        })
        .collect()
}

/// `cal` with the FP8 and FP4 GEMM efficiencies that best price `gpu`'s compute-bound fp8
/// and nvfp4 GEMM rows (m ≥ 4096; the smallest median absolute error over a 0.005 grid);
/// unchanged where it has none.
pub fn fit_format_efficiencies(gpu: &str, cal: &Calibration) -> Calibration {
    let mut out = cal.clone();
    for dtype in ["fp8", "nvfp4"] {
        let error = |e: f64| {
            let mut c = out.clone();
            match dtype {
                "fp8" => c.fp8_gemm_compute_efficiency = e,
                _ => c.fp4_gemm_compute_efficiency = e,
            }
            let errs: Vec<f64> = dtype_checks(gpu, &c)
                .iter()
                .filter(|r| r.dtype == dtype && r.rows >= 4096.0)
                .map(|r| ((r.predicted - r.measured) / r.measured).abs())
                .collect();
            (!errs.is_empty()).then(|| crate::report::median(errs))
        };
        let best = (1..=200)
            .map(|i| i as f64 * 0.005)
            .filter_map(|e| error(e).map(|err| (err, e)))
            .min_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((_, e)) = best {
            match dtype {
                "fp8" => out.fp8_gemm_compute_efficiency = e,
                _ => out.fp4_gemm_compute_efficiency = e,
            }
        }
    }
    out
}

/// Whole steps of Llama-3.1-8B (32 layers) on the RTX PRO 6000, priced two ways: summed
/// from the per-kernel profile of one of its layers (32 × the layer's GEMMs, attention and
/// elementwise kernels, plus the LM head, interpolated between profiled sequence counts) and
/// by the simulator under `cal` (the same kernels). Decode batches of 1–256 at 512–16384
/// tokens of context, single prefill chunks, and chunked-prefill steps (a 256-token chunk
/// with a 1024-token prefix plus 16 or 64 decodes at 2048).
pub fn rtx_step_checks(cal: &Calibration) -> Vec<StepCheck> {
    const LAYERS: u32 = 32;
    let p = rtx_pro_6000_profile();
    let mut model = p.model();
    model.arch.num_layers = LAYERS;
    let model = Model::new(model.name, model.arch);
    let t = timing(&model, &calibrated_gpu(&p.gpu, cal), 1);
    let mut out = Vec::new();
    for row in &p.attention {
        let [chunk, prefix, decodes, kv, us] = *row;
        let wanted = match (chunk > 0.0, decodes > 0.0) {
            (false, true) => {
                [1.0, 8.0, 32.0, 64.0, 128.0, 256.0].contains(&decodes)
                    && [512.0, 4096.0, 16384.0].contains(&kv)
            }
            (true, false) => prefix == 0.0 && [256.0, 1024.0, 2048.0].contains(&chunk),
            _ => {
                chunk == 256.0
                    && prefix == 1024.0
                    && [16.0, 64.0].contains(&decodes)
                    && kv == 2048.0
            }
        };
        if !wanted {
            continue;
        }
        let tokens = chunk + decodes;
        let seqs = decodes + if chunk > 0.0 { 1.0 } else { 0.0 };
        let (Some(i), Some(head)) = (
            p.tokens.iter().position(|&x| x == tokens),
            interpolate(&p.lm_head.sequences, &p.lm_head.latency_us, seqs),
        ) else {
            continue;
        };
        let layer = p.gemm_us(i) + us + p.elementwise_us(i);
        let profile = (LAYERS as f64 * layer + head) * 1e-6;
        let bd = t.breakdown(KernelProfile::attention_batch(row));
        let label = match (chunk > 0.0, decodes > 0.0) {
            (false, _) => format!("decode {decodes}×{kv}"),
            (true, false) => format!("prefill {chunk}"),
            _ => format!("chunk {chunk}+{prefix} & decode {decodes}×{kv}"),
        };
        out.push(StepCheck {
            label: format!("Llama-3.1-8B {label}"),
            profile,
            predicted: bd.gemm + bd.attention + bd.elementwise,
        });
    }
    out
}

/// `ys` at `x`, linear between the two nearest of the ascending `xs`; none outside them.
fn interpolate(xs: &[f64], ys: &[f64], x: f64) -> Option<f64> {
    let j = xs.iter().position(|&v| v >= x)?;
    if xs[j] == x {
        return Some(ys[j]);
    }
    let i = j.checked_sub(1)?;
    Some(ys[i] + (ys[j] - ys[i]) * (x - xs[i]) / (xs[j] - xs[i]))
}

/// What a profile point measured.
#[derive(Debug, Clone)]
enum Query {
    /// One dense layer's GEMMs.
    LayerGemm(f64),
    /// The LM head over rows.
    LmHead(f64),
    /// One layer's attention over a batch.
    Attention(Vec<SeqWork>),
    /// One all-reduce of this many tokens' hidden states.
    AllReduce(f64),
    /// One dense layer's elementwise kernels.
    Elementwise(f64),
    /// One GEMM `[m × k] · [k × n]`.
    Gemm(f64, f64, f64),
}

/// One measured kernel time and what the simulator must price to match it.
#[derive(Debug, Clone)]
pub struct Point {
    /// Which figures it constrains: `gemm`, `attention` (decode or prefill batches),
    /// `mixed attention` (both in one kernel), `allreduce` or `elementwise`.
    pub group: &'static str,
    /// Model, TP and shape, for reports.
    pub label: String,
    /// Measured, seconds.
    pub measured: f64,
    model: usize,
    query: Query,
}

/// A whole step priced two ways: summed from a per-layer profile's tables, and by the
/// simulator (its GPU kernels only: the profiles have no CPU or elementwise entries).
#[derive(Debug, Clone)]
pub struct StepCheck {
    /// Model, TP and batch.
    pub label: String,
    /// Σ over layers of the profile's GEMM, attention and 2 all-reduces, plus its LM head, s.
    pub profile: f64,
    /// The simulator's GEMM + MoE + attention + all-reduce time for the same batch, s.
    pub predicted: f64,
}

/// The grid of steps compared with the per-layer profiles: decode batches of 1–256
/// sequences at 512–4096 tokens of context, and single prefill chunks of 256–4096 tokens.
pub fn step_checks(cal: &Calibration) -> Vec<StepCheck> {
    step_grid(
        cal,
        &[1.0, 8.0, 32.0, 128.0, 256.0],
        &[512.0, 4096.0],
        &[256.0, 1024.0, 4096.0],
    )
}

/// Whole decode steps of every bf16 per-layer profile, `batches` × `contexts` (each ordered
/// by model, then context, then batch).
pub fn decode_step_checks(cal: &Calibration, batches: &[f64], contexts: &[f64]) -> Vec<StepCheck> {
    step_grid(cal, batches, contexts, &[])
}

/// Steps of every bf16 per-layer profile: decodes of `batches` × `contexts`, then single
/// prefill chunks of `chunks`, model by model.
fn step_grid(
    cal: &Calibration,
    batches: &[f64],
    contexts: &[f64],
    chunks: &[f64],
) -> Vec<StepCheck> {
    let layers: Vec<LayerProfile> =
        serde_json::from_str(include_str!("../../data/kernels/aiconfigurator_h100.json"))
            .expect("aiconfigurator_h100.json is valid");
    let gpu = calibrated_gpu("H100-SXM", cal);
    let at = |xs: &[f64], ys: &[f64], x: f64| xs.iter().position(|&v| v == x).map(|i| ys[i]);
    let mut out = Vec::new();
    for l in layers
        .iter()
        .filter(|l| !l.config.to_string().contains("quantization"))
    {
        let arch = hf::from_config_value(&l.config).expect("profile configs import");
        let model = Model::new(l.name.clone(), arch);
        let t = timing(&model, &gpu, l.tp);
        let n = model.arch.num_layers as f64;
        let step = |tokens: f64, seqs: f64, attention_us: f64| {
            let gemm = at(&l.gemm.tokens, &l.gemm.latency_us, tokens)?;
            let ar = if l.tp > 1 {
                at(&l.allreduce.tokens, &l.allreduce.latency_us, tokens)?
            } else {
                0.0
            };
            let head = at(&l.logits_gemm.tokens, &l.logits_gemm.latency_us, seqs)?;
            Some((n * (gemm + attention_us + 2.0 * ar) + head) * 1e-6)
        };
        let ga = &l.generation_attention;
        for &ctx in contexts {
            for &b in batches {
                let (Some(i), Some(j)) = (
                    ga.context.iter().position(|&c| c == ctx),
                    ga.tokens.iter().position(|&x| x == b),
                ) else {
                    continue;
                };
                let Some(profile) = step(b, b, ga.latency_us[i][j]) else {
                    continue;
                };
                let batch = vec![
                    SeqWork {
                        new_tokens: 1,
                        context: ctx as u32,
                        decode: true
                    };
                    b as usize
                ];
                let bd = t.breakdown(batch);
                out.push(StepCheck {
                    label: format!("{} tp{} decode {b}×{ctx}", l.name, l.tp),
                    profile,
                    predicted: bd.gemm + bd.moe + bd.attention + bd.allreduce,
                });
            }
        }
        let ca = &l.context_attention;
        for &isl in chunks {
            let (Some(i), Some(j)) = (
                ca.isl.iter().position(|&x| x == isl),
                ca.batch_size.iter().position(|&x| x == 1.0),
            ) else {
                continue;
            };
            let Some(profile) = step(isl, 1.0, ca.latency_us[i][j]) else {
                continue;
            };
            let bd = t.breakdown([SeqWork {
                new_tokens: isl as u32,
                context: 0,
                decode: false,
            }]);
            out.push(StepCheck {
                label: format!("{} tp{} prefill {isl}", l.name, l.tp),
                profile,
                predicted: bd.gemm + bd.moe + bd.attention + bd.allreduce,
            });
        }
    }
    out
}

/// One layer's attention for a batch of prefill chunks over a cached prefix on the H100,
/// priced two ways: by AIConfigurator's rule for a prefix (its measured zero-prefix table at
/// the whole length `n + c`, times the share of that length's causal pairs the chunk
/// computes, `((n + c)² − c²) / (n + c)²`, as its `query_context_attention` does) and by the
/// simulator under `cal`. No H100 table has a prefix, so the rule is AIConfigurator's model
/// built on its measurements, not a measurement. Where the chunk computes a good part of the
/// pairs (`share` ≥ 1/4) it prices them at the efficiency of the long causal kernel, which is
/// what the prefix's full tiles run at; where the share is small it scales the kernel's
/// launch and the prefix's KV read down with the pairs (1.8 µs for 16 tokens over 1,008),
/// below what reading that KV takes (`floor`), so those rows say what the rule misses.
#[derive(Debug, Clone)]
pub struct PrefixCheck {
    /// Model, TP, batch and chunk.
    pub label: String,
    /// The chunk's share of the pairs of its whole length.
    pub share: f64,
    /// AIConfigurator's rule, s.
    pub rule: f64,
    /// The simulator, s.
    pub predicted: f64,
    /// Reading the batch's KV (prefix and chunk) once from HBM at the datasheet bandwidth, s.
    pub floor: f64,
}

/// [`PrefixCheck`]s of every per-layer H100 profile (FP8 checkpoints' attention is bf16 as
/// the others'): batches of 1, 8 and 64 chunks of 16–2048 tokens whose whole length (chunk
/// and prefix) is one of the table's 1024–4096.
pub fn prefix_checks(cal: &Calibration) -> Vec<PrefixCheck> {
    let layers: Vec<LayerProfile> =
        serde_json::from_str(include_str!("../../data/kernels/aiconfigurator_h100.json"))
            .expect("aiconfigurator_h100.json is valid");
    let gpu = calibrated_gpu("H100-SXM", cal);
    let mut out = Vec::new();
    for l in &layers {
        let arch = hf::from_config_value(&l.config).expect("profile configs import");
        let kv_heads = (arch.num_kv_heads as f64 / l.tp as f64).max(1.0);
        let kv_bytes = 2.0 * kv_heads * arch.head_dim() as f64 * 2.0;
        let model = Model::new(l.name.clone(), arch);
        let t = timing(&model, &gpu, l.tp);
        let ca = &l.context_attention;
        for (i, &whole) in ca.isl.iter().enumerate() {
            if whole < 1024.0 {
                continue;
            }
            for (j, &b) in ca.batch_size.iter().enumerate() {
                if ![1.0, 8.0, 64.0].contains(&b) {
                    continue;
                }
                for n in [16.0, 64.0, 256.0, 1024.0, 2048.0] {
                    let c = whole - n;
                    if c <= 0.0 {
                        continue;
                    }
                    let share = (whole * whole - c * c) / (whole * whole);
                    let batch = vec![
                        SeqWork {
                            new_tokens: n as u32,
                            context: c as u32,
                            decode: false,
                        };
                        b as usize
                    ];
                    out.push(PrefixCheck {
                        label: format!("{} tp{} {b}x({n}+{c})", l.name, l.tp),
                        share,
                        rule: ca.latency_us[i][j] * share * 1e-6,
                        predicted: t.attention_time(batch),
                        floor: b * whole * kv_bytes / (gpu.spec.hbm_tbps * 1e12),
                    });
                }
            }
        }
    }
    out
}

/// The models and points of a GPU's kernel profiles.
pub struct Profiles {
    /// The catalogue GPU they were measured on.
    gpu: String,
    /// (model, tensor-parallel degree) of each point's `model` index.
    models: Vec<(Model, u32)>,
    /// Every point.
    pub points: Vec<Point>,
}

/// The group of Vidur's A100 GEMM operators (Llama-3-8B at tp 1–8): held out of the fit,
/// which takes the A100's GEMM figures from AIConfigurator's vLLM 0.14 table; `fit` prints
/// how those figures price them.
pub const VIDUR_A100_GEMM: &str = "gemm (Vidur, held out)";

/// The group of the L40S's all-reduces on 4 and 8 GPUs: held out of the fit. Its table's 2-GPU
/// rows (vLLM's custom all-reduce, ~19 GB/s of bus bandwidth over PCIe) and its 4- and 8-GPU
/// rows (2.5 and 4.8x the latency of small messages, 3.7 and 2.0 GB/s) fit no single latency
/// and bus bandwidth: vLLM runs its custom all-reduce on at most two PCIe-only GPUs and NCCL
/// beyond; the fit takes the two-GPU rows.
pub const L40S_ALLREDUCE_BEYOND_2: &str = "allreduce (4-8 GPUs, held out)";

impl Profiles {
    /// The profiles of `gpu` (a catalogue name) shipped in `fidelity/data/kernels/`: for the
    /// H100, AIConfigurator's per-layer tables and Vidur's elementwise operators; for the
    /// A100, AIConfigurator's per-operation tables (GEMM, attention, all-reduce) and Vidur's
    /// elementwise operators, with Vidur's GEMMs held out ([`VIDUR_A100_GEMM`]); for the RTX
    /// PRO 6000 Blackwell, LLMServingSim's per-kernel profile of vLLM 0.19; for the B200,
    /// B300, H200 and L40S, AIConfigurator's per-operation tables.
    pub fn for_gpu(gpu: &str) -> Self {
        let vidur: Vec<VidurRow> =
            serde_json::from_str(include_str!("../../data/kernels/vidur.json"))
                .expect("vidur.json is valid");
        let mut p = Self {
            gpu: gpu.to_string(),
            models: Vec::new(),
            points: Vec::new(),
        };
        let vidur_gpu = match gpu {
            "H100-SXM" => {
                p.add_layer_profiles();
                "h100"
            }
            "A100-80GB" => {
                p.add_op_tables(&op_tables(gpu).expect("shipped for this GPU"));
                "a100"
            }
            "B200" | "B300" | "H200" | "L40S" => {
                p.add_op_tables(&op_tables(gpu).expect("shipped for this GPU"));
                return p;
            }
            _ => {
                let k = rtx_pro_6000_profile();
                if k.gpu == gpu {
                    p.add_kernel_profile(&k);
                }
                return p;
            }
        };
        for r in vidur.iter().filter(|r| r.gpu == vidur_gpu) {
            let Some(arch) = catalogue::lookup(&r.model) else {
                continue;
            };
            let m = p.models.len();
            let tp = r.tp as f64;
            let (h, hd) = (arch.hidden_size as f64, arch.head_dim() as f64);
            let (q, kv, ffn) = (
                arch.num_heads as f64 * hd / tp,
                arch.num_kv_heads as f64 * hd / tp,
                arch.intermediate_size as f64 / tp,
            );
            let label = format!("{} tp{} m={}", r.model, r.tp, r.tokens);
            if vidur_gpu == "a100" {
                for (op, k, n) in [
                    ("attn_pre_proj", h, q + 2.0 * kv),
                    ("attn_post_proj", q, h),
                    ("mlp_up_proj", h, 2.0 * ffn),
                    ("mlp_down_proj", ffn, h),
                ] {
                    p.push(
                        VIDUR_A100_GEMM,
                        format!("{label} {op}"),
                        r.ms[op] * 1e3,
                        m,
                        Query::Gemm(r.tokens, k, n),
                    );
                }
            }
            p.models.push((Model::new(r.model.clone(), arch), r.tp));
            // Two residual adds, two norms, rotary and the activation of one layer.
            let ms: f64 = [
                "input_layernorm",
                "post_attention_layernorm",
                "attn_rope",
                "mlp_act",
            ]
            .iter()
            .map(|o| r.ms[*o])
            .sum::<f64>()
                + 2.0 * r.ms["add"];
            p.push(
                "elementwise",
                format!("{label} elementwise"),
                ms * 1e3,
                m,
                Query::Elementwise(r.tokens),
            );
        }
        p
    }

    /// Every point of a per-kernel profile: its four GEMMs and the LM head, the layer's
    /// elementwise kernels, and the attention grid.
    fn add_kernel_profile(&mut self, k: &KernelProfile) {
        let model = k.model();
        let a = &model.arch;
        let (h, hd) = (a.hidden_size as f64, a.head_dim() as f64);
        let (q, kv, ffn) = (
            a.num_heads as f64 * hd,
            a.num_kv_heads as f64 * hd,
            a.intermediate_size as f64,
        );
        let m = self.models.len();
        self.models.push((model, 1));
        for (i, &t) in k.tokens.iter().enumerate() {
            for (op, kk, n) in [
                ("qkv_proj", h, q + 2.0 * kv),
                ("o_proj", q, h),
                ("gate_up_proj", h, 2.0 * ffn),
                ("down_proj", ffn, h),
            ] {
                self.push(
                    "gemm",
                    format!("{op} m={t}"),
                    k.dense_us[op][i],
                    m,
                    Query::Gemm(t, kk, n),
                );
            }
            self.push(
                "layer elementwise",
                format!("elementwise m={t}"),
                k.elementwise_us(i),
                m,
                Query::Elementwise(t),
            );
        }
        for (s, us) in k.lm_head.sequences.iter().zip(&k.lm_head.latency_us) {
            self.push("gemm", format!("LM head m={s}"), *us, m, Query::LmHead(*s));
        }
        for row in &k.attention {
            let [c, pre, n, kvd, us] = *row;
            // A chunk and decodes in one kernel: the decodes run slower than alone, fitted
            // apart (after the decode and prefill figures) as one factor.
            let group = if c > 0.0 && n > 0.0 {
                "mixed attention"
            } else {
                "attention"
            };
            self.push(
                group,
                format!("attention chunk {c}+{pre}, {n} decodes × {kvd}"),
                us,
                m,
                Query::Attention(KernelProfile::attention_batch(row)),
            );
        }
    }

    /// Every point of a GPU's per-operation tables: each bf16 GEMM, each attention kernel on
    /// a one-layer model of its heads at tp 1, each all-reduce on a model of 4,096 hidden
    /// units (a message of `e` elements is `e / 4096` tokens' hidden states) at tp = its GPUs.
    fn add_op_tables(&mut self, t: &OpTables) {
        let gemm_model = self.models.len();
        self.models
            .push((synthetic_model(32.0, 8.0, 128.0, 4096.0), 1));
        for &[m, n, k, us] in &t.gemm {
            self.push(
                "gemm",
                format!("GEMM {m}×{n}×{k}"),
                us,
                gemm_model,
                Query::Gemm(m, k, n),
            );
        }
        let mut attention_models: Vec<([u64; 3], usize)> = Vec::new();
        let rows = t
            .context_attention
            .iter()
            .map(|r| (false, r))
            .chain(t.generation_attention.iter().map(|r| (true, r)));
        for (decode, &[b, len, heads, kv_heads, hd, us]) in rows {
            let key = [heads as u64, kv_heads as u64, hd as u64];
            let model = match attention_models.iter().find(|(k, _)| *k == key) {
                Some(&(_, i)) => i,
                None => {
                    let i = self.models.len();
                    self.models
                        .push((synthetic_model(heads, kv_heads, hd, heads * hd), 1));
                    attention_models.push((key, i));
                    i
                }
            };
            let seq = if decode {
                SeqWork {
                    new_tokens: 1,
                    context: len as u32,
                    decode: true,
                }
            } else {
                SeqWork {
                    new_tokens: len as u32,
                    context: 0,
                    decode: false,
                }
            };
            let what = if decode { "decode" } else { "prefill" };
            self.push(
                "attention",
                format!("{heads}/{kv_heads}×{hd} {what} {b}x{len}"),
                us,
                model,
                Query::Attention(vec![seq; b as usize]),
            );
        }
        const HIDDEN: f64 = 4096.0;
        let mut allreduce_models: Vec<(u32, usize)> = Vec::new();
        for &[gpus, elements, us] in &t.allreduce {
            let tp = gpus as u32;
            let model = match allreduce_models.iter().find(|(g, _)| *g == tp) {
                Some(&(_, i)) => i,
                None => {
                    let i = self.models.len();
                    self.models
                        .push((synthetic_model(32.0, 8.0, 128.0, HIDDEN), tp));
                    allreduce_models.push((tp, i));
                    i
                }
            };
            let group = if t.gpu == "L40S" && gpus > 2.0 {
                L40S_ALLREDUCE_BEYOND_2
            } else {
                "allreduce"
            };
            self.push(
                group,
                format!("all-reduce {gpus} GPUs {elements} elements"),
                us,
                model,
                Query::AllReduce(elements / HIDDEN),
            );
        }
    }

    fn add_layer_profiles(&mut self) {
        let layers: Vec<LayerProfile> =
            serde_json::from_str(include_str!("../../data/kernels/aiconfigurator_h100.json"))
                .expect("aiconfigurator_h100.json is valid");
        let p = self;
        for l in &layers {
            let arch = hf::from_config_value(&l.config)
                .unwrap_or_else(|e| panic!("profile {}: {e}", l.name));
            let model = Model::new(l.name.clone(), arch);
            let fp8 = model.dtypes.weight.bytes() < 2.0;
            let m = p.models.len();
            p.models.push((model, l.tp));
            let label = |what: String| format!("{} tp{} {what}", l.name, l.tp);
            // FP8 checkpoints' GEMMs and the MoE model's dense/expert split are priced by
            // other parts of the model; their attention and collectives are ordinary.
            if !fp8 {
                for (t, us) in l.gemm.tokens.iter().zip(&l.gemm.latency_us) {
                    p.push(
                        "gemm",
                        label(format!("layer GEMMs m={t}")),
                        *us,
                        m,
                        Query::LayerGemm(*t),
                    );
                }
                for (t, us) in l.logits_gemm.tokens.iter().zip(&l.logits_gemm.latency_us) {
                    p.push(
                        "gemm",
                        label(format!("LM head m={t}")),
                        *us,
                        m,
                        Query::LmHead(*t),
                    );
                }
            }
            for (t, us) in l.allreduce.tokens.iter().zip(&l.allreduce.latency_us) {
                if *us > 0.0 {
                    p.push(
                        "allreduce",
                        label(format!("all-reduce m={t}")),
                        *us,
                        m,
                        Query::AllReduce(*t),
                    );
                }
            }
            let ca = &l.context_attention;
            for (i, &isl) in ca.isl.iter().enumerate() {
                for (j, &b) in ca.batch_size.iter().enumerate() {
                    let seq = SeqWork {
                        new_tokens: isl as u32,
                        context: 0,
                        decode: false,
                    };
                    let batch = vec![seq; b as usize];
                    p.push(
                        "attention",
                        label(format!("prefill {b}x{isl}")),
                        ca.latency_us[i][j],
                        m,
                        Query::Attention(batch),
                    );
                }
            }
            let ga = &l.generation_attention;
            for (i, &ctx) in ga.context.iter().enumerate() {
                for (j, &b) in ga.tokens.iter().enumerate() {
                    let seq = SeqWork {
                        new_tokens: 1,
                        context: ctx as u32,
                        decode: true,
                    };
                    let batch = vec![seq; b as usize];
                    p.push(
                        "attention",
                        label(format!("decode {b}x{ctx}")),
                        ga.latency_us[i][j],
                        m,
                        Query::Attention(batch),
                    );
                }
            }
        }
    }

    /// True when some point is a prefill chunk over a cached prefix.
    pub fn has_prefix_chunks(&self) -> bool {
        self.points.iter().any(|p| match &p.query {
            Query::Attention(batch) => batch.iter().any(|w| !w.decode && w.context > 0),
            _ => false,
        })
    }

    /// True when the fitted all-reduce points span more than one GPU count (else the
    /// latency's per-GPU term is not constrained).
    pub fn has_allreduce_gpu_counts(&self) -> bool {
        let mut tps = self
            .points
            .iter()
            .filter(|p| p.group == "allreduce")
            .map(|p| self.models[p.model].1);
        tps.next().is_some_and(|first| tps.any(|tp| tp != first))
    }

    fn push(&mut self, group: &'static str, label: String, us: f64, model: usize, query: Query) {
        self.points.push(Point {
            group,
            label,
            measured: us * 1e-6,
            model,
            query,
        });
    }

    /// The simulator's time for every point of `group` under `cal`, seconds, in order.
    pub fn predict(&self, cal: &Calibration, group: &str) -> Vec<(f64, &Point)> {
        let gpu = calibrated_gpu(&self.gpu, cal);
        let timing: Vec<Option<Calibrated>> = self
            .models
            .iter()
            .enumerate()
            .map(|(i, (model, tp))| {
                self.points
                    .iter()
                    .any(|p| p.model == i && p.group == group)
                    .then(|| timing(model, &gpu, *tp))
            })
            .collect();
        self.points
            .iter()
            .filter(|p| p.group == group)
            .map(|p| {
                let t = timing[p.model].as_ref().expect("built for this group");
                let s = match &p.query {
                    Query::LayerGemm(m) => t.dense_layer_gemm_time(*m),
                    Query::LmHead(m) => t.lm_head_time(*m),
                    Query::Attention(batch) => t.attention_time(batch.iter().copied()),
                    Query::AllReduce(m) => t.allreduce_time(*m),
                    Query::Elementwise(m) => t.elementwise_time(*m),
                    Query::Gemm(m, k, n) => t.gemm_time(*m, *k, *n),
                };
                (s, p)
            })
            .collect()
    }
}
