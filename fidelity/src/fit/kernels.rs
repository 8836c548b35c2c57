//! Fitting the kernel figures of a GPU's calibration to measured kernel profiles: each
//! profile point is priced by the same functions the simulator's steps use.

use engine::hardware::{GpuSpec, Hardware};
use engine::model::{catalogue, hf, Model};
use engine::timing::{Calibrated, Calibration, SeqWork};
use serde::Deserialize;
use serde_json::Value;

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
    /// Which figures it constrains: `gemm`, `attention`, `allreduce` or `elementwise`.
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
    let layers: Vec<LayerProfile> =
        serde_json::from_str(include_str!("../../data/kernels/aiconfigurator_h100.json"))
            .expect("aiconfigurator_h100.json is valid");
    let gpu = GpuSpec {
        calibration: cal.clone(),
        ..engine::hardware::lookup("H100-SXM").expect("the catalogue has the H100")
    };
    let at = |xs: &[f64], ys: &[f64], x: f64| xs.iter().position(|&v| v == x).map(|i| ys[i]);
    let mut out = Vec::new();
    for l in layers
        .iter()
        .filter(|l| !l.config.to_string().contains("quantization"))
    {
        let arch = hf::from_config_value(&l.config).expect("profile configs import");
        let model = Model::new(l.name.clone(), arch);
        let hw = Hardware {
            gpu: gpu.clone(),
            tp: l.tp,
            allreduce_latency_per_layer: 0.0,
        };
        let t = Calibrated::new(&model, &hw, None, 0.0);
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
        for &ctx in &[512.0, 4096.0] {
            for &b in &[1.0, 8.0, 32.0, 128.0, 256.0] {
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
        for &isl in &[256.0, 1024.0, 4096.0] {
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

/// The models and points of a GPU's kernel profiles.
pub struct Profiles {
    /// The catalogue GPU they were measured on.
    gpu: String,
    /// (model, tensor-parallel degree) of each point's `model` index.
    models: Vec<(Model, u32)>,
    /// Every point.
    pub points: Vec<Point>,
}

impl Profiles {
    /// The profiles of `gpu` (a catalogue name) shipped in `fidelity/data/kernels/`: for the
    /// H100, AIConfigurator's per-layer tables and Vidur's elementwise operators; for the
    /// A100, Vidur's GEMM and elementwise operators (the only A100 kernels measured).
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
            "A100-80GB" => "a100",
            _ => return p,
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
                        "gemm",
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
        let gpu = GpuSpec {
            calibration: cal.clone(),
            ..engine::hardware::lookup(&self.gpu).expect("a catalogue GPU")
        };
        let timing: Vec<Option<Calibrated>> = self
            .models
            .iter()
            .enumerate()
            .map(|(i, (model, tp))| {
                self.points
                    .iter()
                    .any(|p| p.model == i && p.group == group)
                    .then(|| {
                        let hw = Hardware {
                            gpu: gpu.clone(),
                            tp: *tp,
                            allreduce_latency_per_layer: 0.0,
                        };
                        Calibrated::new(model, &hw, None, 0.0)
                    })
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
