//! KV cache sizing from GPU memory, configuration errors, and the size of a request record.

use engine::hardware::HardwareConfig;
use engine::model::{Model, ModelConfig};
use engine::request::{PromptContent, Request, Source};
use engine::worker::{num_gpu_blocks, MemoryError, Scheduler, SchedulerConfig};

fn hw(tp: u32) -> engine::hardware::Hardware {
    HardwareConfig {
        tp,
        ..Default::default()
    }
    .resolve()
    .unwrap()
}

#[test]
fn granite_on_one_h100_holds_23257_blocks() {
    // (80·2³⁰·0.9 − 16_341_729_280) / (16 · 163_840)
    // = (77_309_411_328 − 16_341_729_280) / 2_621_440 = 23_257.3 → 23_257.
    let m = Model::from_catalogue("granite-3.3-8b-instruct").unwrap();
    assert_eq!(num_gpu_blocks(&m, &hw(1), 16, 0.9, 0.0), Ok(23_257));
    // The spec's plain formula is what a worker gets with any timing model but the
    // calibrated one (which keeps vLLM's reserve back; see fidelity/tests/memory.rs).
    let roofline = SchedulerConfig {
        timing: engine::timing::TimingConfig {
            model: engine::timing::TimingKind::Roofline,
            ..Default::default()
        },
        ..Default::default()
    };
    let s = Scheduler::new(0, &roofline, &m, &hw(1)).unwrap();
    assert_eq!(s.block_pool().num_blocks(), 23_257);
}

#[test]
fn llama_70b_needs_tensor_parallelism_and_a_shorter_max_len() {
    let m = Model::from_catalogue("Llama-3.1-70B").unwrap();
    // 141.1 GB of weights > 72 GB usable on one H100.
    let err = num_gpu_blocks(&m, &hw(1), 16, 0.9, 0.0).unwrap_err();
    assert!(matches!(err, MemoryError::ModelDoesNotFit { .. }));
    assert!(err
        .to_string()
        .starts_with("model weights need 131.4 GB but only 72.0 GB"));
    // tp = 2: (154_618_822_656 − 141_107_412_992) / (16 · 327_680) = 2577 blocks, but one
    // 131072-token sequence needs 8192.
    assert_eq!(
        num_gpu_blocks(&m, &hw(2), 16, 0.9, 0.0),
        Err(MemoryError::NoSequenceFits {
            num_gpu_blocks: 2577,
            blocks_per_sequence: 8192,
            max_model_len: 131_072
        })
    );
    let short = ModelConfig {
        name: "Llama-3.1-70B".into(),
        max_model_len: 32_768,
        ..Default::default()
    }
    .resolve()
    .unwrap();
    assert_eq!(num_gpu_blocks(&short, &hw(2), 16, 0.9, 0.0), Ok(2577));
    // The scheduler reports the same problem as text, not a panic.
    let e = Scheduler::new(0, &SchedulerConfig::default(), &m, &hw(2)).unwrap_err();
    assert!(e.contains("needs 8192"), "{e}");
}

#[test]
fn invalid_scheduler_settings_are_reported_with_paths() {
    let cfg: SchedulerConfig = serde_json::from_str(
        r#"{"max_num_seqs": 0, "gpu_memory_utilization": 1.2, "timing": {"memory_efficiency": 0}}"#,
    )
    .unwrap();
    let mut p = engine::validate::Problems::new();
    cfg.validate("worker", &mut p);
    let paths: Vec<&str> = p.as_slice().iter().map(|x| x.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "worker.max_num_seqs",
            "worker.gpu_memory_utilization",
            "worker.timing.memory_efficiency"
        ]
    );
    assert!(serde_json::from_str::<SchedulerConfig>(r#"{"max_batch": 3}"#).is_err());
}

#[test]
fn a_finished_request_is_small() {
    // 100 000 requests with 16k-token prompts must fit a browser tab: a finished request
    // keeps a few segments and counters, never per-token or per-block arrays.
    let prompt = PromptContent::new()
        .with(Source::SystemPrompt(1), 2000)
        .with(Source::Document(7), 12_000)
        .with(Source::Unique(9), 2384);
    let r = Request::new(9, prompt, 500, 0.0);
    let heap = std::mem::size_of_val(r.prompt.segments());
    let total = std::mem::size_of::<Request>() + heap;
    assert!(total < 400, "{total} bytes");
    // So 100 000 of them take under 40 MB.
}

#[test]
fn data_parallel_ranks_split_the_experts_and_each_keeps_its_own_cache() {
    let m = Model::from_catalogue("Mixtral-8x7B").unwrap();
    let dp = |dp: u32| {
        HardwareConfig {
            dp,
            ..Default::default()
        }
        .resolve()
        .unwrap()
    };
    // All 46.7 B weights (87.0 GB of 2³⁰ bytes) do not fit one H100's 72 GB usable.
    assert!(matches!(
        num_gpu_blocks(&m, &dp(1), 16, 0.9, 0.0),
        Err(MemoryError::ModelDoesNotFit { .. })
    ));
    // Two ranks: each GPU holds the attention and router weights and half of the experts'
    // (32 layers × 8 experts × 3 × 4096 × 14336 bf16 weights, 84.0 GB of the 87.0).
    let experts = 32 * 8 * 3 * 4096 * 14336 * 2_u64;
    assert_eq!(m.expert_weight_bytes(), experts);
    let rank_weights = (m.weight_bytes - experts / 2) as f64;
    // KV: 32 layers × K and V × 8 heads × 128 × 2 B = 131,072 B a token, 16 a block.
    let per_rank =
        ((80.0 * (1u64 << 30) as f64 * 0.9 - rank_weights) / (16.0 * 131_072.0)).floor() as u32;
    assert_eq!(num_gpu_blocks(&m, &dp(2), 16, 0.9, 0.0), Ok(2 * per_rank));
    // The worker schedules for both ranks: twice vLLM's per-engine limits.
    let cfg = SchedulerConfig {
        timing: engine::timing::TimingConfig {
            model: engine::timing::TimingKind::Roofline,
            ..Default::default()
        },
        ..Default::default()
    };
    let limits = cfg.across_ranks(2);
    assert_eq!(limits.max_num_seqs, 2 * cfg.max_num_seqs);
    assert_eq!(
        limits.max_num_batched_tokens,
        2 * cfg.max_num_batched_tokens
    );
    let s = Scheduler::new(0, &cfg, &m, &dp(2)).unwrap();
    assert_eq!(s.block_pool().num_blocks(), 2 * per_rank);
}
