//! Checks that span sections: does the model fit the GPU, do the scheduler limits agree with
//! the model and the workload, does the autoscaler's range contain the starting cluster.
//!
//! Each section validates itself first; these checks run only on sections that resolved, so
//! one mistake is reported once, where it was made.

use super::sweep::Search;
use super::Scenario;
use crate::deployment::DeploymentConfig;
use crate::hardware::Hardware;
use crate::model::Model;
use crate::router::autoscaler::AutoscalerConfig;
use crate::timing::MAX_STEP_SECONDS;
use crate::timing::{SeqWork, TimingKind, TimingModel};
use crate::validate::{index, join, readable, Problems};
use crate::worker::MAX_WORKERS;
use crate::worker::{num_gpu_blocks, MemoryError};
use crate::workload::{GeneratorConfig, StageConfig};

/// GB as the memory formula counts it (2³⁰ bytes), for messages.
const GIB: f64 = (1u64 << 30) as f64;

/// Records every cross-section problem of `s`.
pub(super) fn validate(s: &Scenario, p: &mut Problems) {
    let model = s.model.resolve().ok();
    let hw = s.hardware.resolve().ok();
    if let (Some(model), Some(hw)) = (&model, &hw) {
        tensor_parallel(model, hw, p);
        data_parallel(model, hw, s.worker.timing.model, p);
        memory(s, model, hw, p);
        step_time(s, model, hw, p);
    }
    scheduler_limits(s, model.as_ref(), p);
    if let Some(model) = &model {
        for (i, stage) in s.workload.stages.iter().enumerate() {
            stage_fits_model(stage, &index("workload.stages", i), model, p);
        }
    }
    autoscaler(&s.router.autoscaler, s.simulation.num_workers, p);
    if let Some(d) = &s.deployment {
        deployment(s, d, p);
    }
    if !s.kv_cache.tiers.is_empty()
        && s.worker.block_size > 0
        && s.kv_cache.chunk_size % s.worker.block_size != 0
    {
        p.push(
            "kv_cache.chunk_size",
            format!(
                "must be a multiple of worker.block_size ({}): an offloaded chunk is a whole \
                 number of KV blocks",
                s.worker.block_size
            ),
        );
    }
}

/// vLLM shards attention heads over the tensor-parallel GPUs, so `tp` must divide them.
fn tensor_parallel(model: &Model, hw: &Hardware, p: &mut Problems) {
    if hw.tp > 1 && model.arch.num_heads % hw.tp != 0 {
        p.push(
            "hardware.tp",
            format!(
                "tp={} does not divide {}'s {} attention heads; use a divisor such as {}",
                hw.tp,
                model.name,
                model.arch.num_heads,
                largest_divisor_at_most(model.arch.num_heads, hw.tp)
            ),
        );
    }
}

/// Data-parallel attention and expert parallelism are ways of serving a mixture-of-experts
/// model, priced by the calibrated timing model; a dense model's data-parallel ranks are
/// independent replicas, which `num_workers` already expresses.
fn data_parallel(model: &Model, hw: &Hardware, timing: TimingKind, p: &mut Problems) {
    for (field, set) in [("dp", hw.dp > 1), ("expert_parallel", hw.expert_parallel)] {
        if !set {
            continue;
        }
        let at = join("hardware", field);
        if model.arch.num_experts == 0 {
            p.push(
                at,
                format!(
                    "{} is dense: its data-parallel ranks would be independent replicas;                      add workers (simulation.num_workers) instead",
                    model.name
                ),
            );
        } else if timing != TimingKind::Calibrated {
            p.push(
                at,
                "data and expert parallelism are priced by the calibrated timing model; set                  worker.timing.model to \"calibrated\"",
            );
        }
    }
}

fn largest_divisor_at_most(n: u32, at_most: u32) -> u32 {
    (1..=at_most.min(n)).rev().find(|d| n % d == 0).unwrap_or(1)
}

/// The weights must fit, and the KV cache must hold one sequence of the model's maximum length.
/// Gigabytes to one decimal, or as [`readable`] where that would say 0.0.
fn usable(gb: f64) -> String {
    if gb >= 0.05 {
        format!("{gb:.1}")
    } else {
        readable(gb)
    }
}

fn memory(s: &Scenario, model: &Model, hw: &Hardware, p: &mut Problems) {
    let util = s.worker.gpu_memory_utilization;
    let block_size = s.worker.block_size;
    if !(util > 0.0 && util <= 1.0) || block_size == 0 {
        return; // reported by the worker section
    }
    let reserved = s.worker.memory_reserved(model, hw);
    let blocks = num_gpu_blocks(model, hw, block_size, util, reserved);
    match blocks {
        Err(MemoryError::ModelDoesNotFit {
            weight_bytes,
            usable_bytes,
        }) => {
            let reserve = if reserved > 0.0 {
                format!(
                    " less {:.1} GB per GPU the serving engine keeps for activations and \
                     workspaces",
                    reserved / GIB
                )
            } else {
                String::new()
            };
            // With data-parallel ranks, what one rank holds: its experts' share.
            let (whose, remedy) = if hw.dp > 1 {
                (" per data-parallel rank", "raise tp or dp")
            } else {
                ("", "raise tp")
            };
            p.push(
                "hardware",
                format!(
                    "{} needs {:.1} GB of weights{whose} but the {} at tp={} has {} GB usable \
                     ({} GB × {} GPU(s) × gpu_memory_utilization {}{reserve}); {remedy}, pick \
                     a larger GPU or a smaller model",
                    model.name,
                    weight_bytes as f64 / GIB,
                    hw.gpu.name,
                    hw.tp,
                    usable(usable_bytes / GIB),
                    readable(hw.gpu.memory_gb),
                    hw.tp,
                    readable(util),
                ),
            )
        }
        Err(MemoryError::NoSequenceFits {
            num_gpu_blocks,
            blocks_per_sequence,
            max_model_len,
        }) if s.worker.num_gpu_blocks_override == 0 => p.push(
            "model.max_model_len",
            format!(
                "one sequence of {max_model_len} tokens needs {blocks_per_sequence} KV blocks \
                 but the {} at tp={} has room for {num_gpu_blocks} next to the weights; set \
                 model.max_model_len to at most {} or add memory",
                hw.gpu.name,
                hw.tp,
                num_gpu_blocks * block_size as u64,
            ),
        ),
        _ => {}
    }
    let over = s.worker.num_gpu_blocks_override as u64;
    if over > 0 {
        let needed = (model.max_model_len() as u64).div_ceil(block_size as u64);
        if over < needed {
            p.push(
                "worker.num_gpu_blocks_override",
                format!(
                    "{over} blocks of {block_size} tokens cannot hold one sequence of \
                     max_model_len {} tokens ({needed} blocks); raise it or lower \
                     model.max_model_len",
                    model.max_model_len()
                ),
            );
        }
    }
}

/// A single one-token decode step must end, and within the hour: a GPU of next to no FLOP/s
/// or bandwidth would otherwise make every step take years (or forever).
fn step_time(s: &Scenario, model: &Model, hw: &Hardware, p: &mut Problems) {
    if s.worker.timing.model == TimingKind::Constant {
        return; // constant_step_time and step_overhead are bounded where they are set
    }
    let timing = TimingModel::new(&s.worker.timing, model, hw, s.worker.step_overhead);
    let t = timing.step_time([SeqWork {
        new_tokens: 1,
        context: 1,
        decode: true,
    }]);
    if t.is_nan() || t > MAX_STEP_SECONDS {
        p.push(
            "hardware",
            format!(
                "one decode step of {} would take {t:.1e} s on the {} at tp={} (a step must \
                 take at most {MAX_STEP_SECONDS} s); check peak_tflops and hbm_tbps",
                model.name, hw.gpu.name, hw.tp
            ),
        );
    }
}

/// vLLM's own engine-argument checks between the token budget, sequences and blocks.
fn scheduler_limits(s: &Scenario, model: Option<&Model>, p: &mut Problems) {
    let w = &s.worker;
    if w.block_size > 0 && w.max_num_batched_tokens > 0 && w.max_num_batched_tokens < w.block_size {
        p.push(
            "worker.max_num_batched_tokens",
            format!(
                "must be >= block_size ({}), or no step could fill a KV block",
                w.block_size
            ),
        );
    }
    if w.max_num_seqs > 0 && w.max_num_batched_tokens < w.max_num_seqs {
        p.push(
            "worker.max_num_batched_tokens",
            format!(
                "must be >= max_num_seqs ({}): every running sequence needs at least one token \
                 of the step's budget",
                w.max_num_seqs
            ),
        );
    }
    if let Some(model) = model {
        if !w.chunked_prefill && w.max_num_batched_tokens < model.max_model_len() {
            p.push(
                "worker.max_num_batched_tokens",
                format!(
                    "with chunked_prefill off, a whole prompt must fit one step: must be >= \
                     max_model_len ({}); raise it or lower model.max_model_len",
                    model.max_model_len()
                ),
            );
        }
    }
}

/// A stage whose every request is longer than the model's maximum length would only fail.
fn stage_fits_model(stage: &StageConfig, path: &str, model: &Model, p: &mut Problems) {
    let max_len = model.max_model_len() as u64;
    // Saturating: every term is a u32 the user typed, and their sum may not fit a u64.
    let sum = |terms: &[u64]| terms.iter().fold(0u64, |a, t| a.saturating_add(*t));
    let shortest = match &stage.generator {
        GeneratorConfig::UniformReqRate(c)
        | GeneratorConfig::ExponentialReqRate(c)
        | GeneratorConfig::Gamma(c) => sum(&[
            c.shared_prefix.as_ref().map_or(0, |sp| sp.length as u64),
            c.input_length.bounds().0 as u64,
            c.output_length.bounds().0 as u64,
        ]),
        GeneratorConfig::RagWorkload(c) => sum(&[
            c.system_prompt_length as u64,
            (c.docs_per_request as u64).saturating_mul(c.document_size as u64),
            c.query_length.bounds().0 as u64,
            c.output_length as u64,
        ]),
        GeneratorConfig::SyntheticSessions(c) => sum(&[
            c.system_prompt_length as u64,
            c.input_length.bounds().0 as u64,
            c.output_length.bounds().0 as u64,
        ]),
        GeneratorConfig::Trace(_) | GeneratorConfig::Sessions(_) => return,
    };
    if shortest > max_len {
        p.push(
            path.to_string(),
            format!(
                "its shortest request (prompt + output) is {shortest} tokens, longer than \
                 {}'s max_model_len of {max_len}: every request would be rejected",
                model.name
            ),
        );
    }
}

/// When enabled, the autoscaler's range must contain the starting cluster.
fn autoscaler(a: &AutoscalerConfig, num_workers: u32, p: &mut Problems) {
    let path = "router.autoscaler";
    if a.max_workers > MAX_WORKERS {
        p.push(
            join(path, "max_workers"),
            format!("must be at most {MAX_WORKERS}"),
        );
    }
    if !a.enabled {
        return;
    }
    if a.max_workers < num_workers {
        p.push(
            join(path, "max_workers"),
            format!("must be >= simulation.num_workers ({num_workers}), the cluster at the start"),
        );
    }
    if a.min_workers > num_workers {
        p.push(
            join(path, "min_workers"),
            format!("must be <= simulation.num_workers ({num_workers}), the cluster at the start"),
        );
    }
}

/// A deployment's pools pass the same checks as the top-level sections with their own
/// hardware and worker limits; the cluster-wide autoscaler and worker count give way to
/// the pools'.
fn deployment(s: &Scenario, d: &DeploymentConfig, p: &mut Problems) {
    if s.router.autoscaler.enabled {
        p.push(
            "router.autoscaler.enabled",
            "with a deployment each pool scales on its own: set deployment.pools[i].autoscaler \
             instead",
        );
    }
    if let Some(Search::MinWorkers { .. }) = s.sweep.as_ref().and_then(|w| w.search.as_ref()) {
        p.push(
            "sweep.search",
            "min_workers varies simulation.num_workers, which a deployment does not use; vary \
             deployment.pools[i].num_workers instead",
        );
    }
    for (i, pool) in d.pools.iter().enumerate() {
        if pool.hardware.is_none() && pool.worker.is_none() {
            continue; // the top-level checks cover it
        }
        let (Ok(hardware), Ok(worker)) = (
            pool.effective_hardware(&s.hardware),
            pool.effective_worker(&s.worker),
        ) else {
            continue; // reported by the deployment section
        };
        let mut q = s.clone();
        q.hardware = hardware;
        q.worker = worker;
        q.deployment = None;
        q.sweep = None;
        q.router.autoscaler = AutoscalerConfig::default();
        let mut sub = Problems::new();
        validate(&q, &mut sub);
        let at = index("deployment.pools", i);
        for problem in sub.into_vec() {
            let own = ["hardware", "worker"]
                .iter()
                .any(|f| problem.path == *f || problem.path.starts_with(&format!("{f}.")));
            let path = if own {
                join(&at, &problem.path)
            } else {
                problem.path.clone()
            };
            let message = format!("in pool \"{}\": {}", pool.display_name(), problem.message);
            if !p
                .as_slice()
                .iter()
                .any(|x| x.path == path && x.message == problem.message)
            {
                p.push(path, message);
            }
        }
    }
}
