//! Cross-section validation: every problem at once, each with its path and the numbers
//! behind it.

use opal::Problem;

fn problems(json: &str) -> Vec<Problem> {
    opal::parse_scenario(json).expect_err("the scenario should be rejected")
}

fn paths(p: &[Problem]) -> Vec<&str> {
    p.iter().map(|p| p.path.as_str()).collect()
}

#[test]
fn a_partial_document_is_valid() {
    assert!(opal::parse_scenario("{}").is_ok());
    assert!(opal::parse_scenario(r#"{"simulation": {"num_workers": 3}}"#).is_ok());
}

#[test]
fn weights_that_do_not_fit_are_reported_with_the_numbers() {
    // Llama-3.1-70B: 70_553_706_496 params · 2 bytes = 141_107_412_992 B = 131.4 GB (2³⁰);
    // one H100: 80 GB · 0.9 = 72.0 GB, less what vLLM keeps besides weights and KV: the
    // H100's 0.94 GB plus the activations of an 8192-token profiling step,
    // 8192 · (4·8192 + 3·28672) · 2 B + 256 seqs · 128_256 · 4 B (logits) = 2_077_491_200 B:
    // 2.9 GB in all, 69.1 GB usable.
    let p = problems(r#"{"model": {"name": "Llama-3.1-70B"}}"#);
    assert_eq!(paths(&p), ["hardware"]);
    assert_eq!(
        p[0].message,
        "Llama-3.1-70B needs 131.4 GB of weights but the H100-SXM at tp=1 has 69.1 GB usable \
         (80 GB × 1 GPU(s) × gpu_memory_utilization 0.9 less 2.9 GB per GPU the serving engine \
         keeps for activations and workspaces); raise tp, pick a larger GPU or a smaller model"
    );
    // The spec's plain formula (any timing model but the calibrated one) keeps nothing back.
    let p = problems(
        r#"{"model": {"name": "Llama-3.1-70B"}, "worker": {"timing": {"model": "roofline"}}}"#,
    );
    assert!(
        p[0].message
            .contains("has 72.0 GB usable (80 GB × 1 GPU(s) × gpu_memory_utilization 0.9);"),
        "{}",
        p[0].message
    );
}

#[test]
fn a_cache_too_small_for_one_max_length_sequence_names_the_length_that_fits() {
    // tp=2: 2 · 80 · 0.9 GB = 154_618_822_656 B; minus weights 141_107_412_992 leaves
    // 6_755_704_832 B per GPU. vLLM keeps (0.94 + 0.45 with TP) GB = 1_492_501_135 B and an
    // 8192-token step's activations, 8192 · (4·8192 + 3·14336) · 2 + 256 · 64_128 · 4 =
    // 1_307_181_056 B: 3_956_022_641 B left. A 16-token block holds 16 · 163_840 B per GPU
    // (half of 2·80 layers·8 kv heads·128·2 B) = 2_621_440 B → 1509 blocks = 24_144 tokens,
    // but 131_072 tokens need 8192 blocks.
    let p = problems(r#"{"model": {"name": "Llama-3.1-70B"}, "hardware": {"tp": 2}}"#);
    assert_eq!(paths(&p), ["model.max_model_len"]);
    assert!(
        p[0].message.starts_with(
            "one sequence of 131072 tokens needs 8192 KV blocks but the H100-SXM at tp=2 has \
             room for 1509 next to the weights; set model.max_model_len to at most 24144"
        ),
        "{}",
        p[0].message
    );
    // Taking the advice fixes it.
    assert!(opal::parse_scenario(
        r#"{"model": {"name": "Llama-3.1-70B", "max_model_len": 24144}, "hardware": {"tp": 2}}"#
    )
    .is_ok());
    // And so do four GPUs.
    assert!(
        opal::parse_scenario(r#"{"model": {"name": "Llama-3.1-70B"}, "hardware": {"tp": 4}}"#)
            .is_ok()
    );
}

#[test]
fn a_block_override_must_hold_one_max_length_sequence() {
    // 131_072 tokens / 16 = 8192 blocks.
    let p = problems(r#"{"worker": {"num_gpu_blocks_override": 1000}}"#);
    assert_eq!(paths(&p), ["worker.num_gpu_blocks_override"]);
    assert!(p[0].message.contains("(8192 blocks)"), "{}", p[0].message);
    assert!(opal::parse_scenario(
        r#"{"worker": {"num_gpu_blocks_override": 1000}, "model": {"max_model_len": 16000}}"#
    )
    .is_ok());
}

#[test]
fn tensor_parallelism_must_divide_the_attention_heads() {
    let p = problems(r#"{"hardware": {"tp": 3}}"#);
    assert_eq!(paths(&p), ["hardware.tp"]);
    assert_eq!(
        p[0].message,
        "tp=3 does not divide granite-3.3-8b-instruct's 32 attention heads; use a divisor such as 2"
    );
}

#[test]
fn scheduler_limits_follow_vllm_engine_argument_checks() {
    let p = problems(r#"{"worker": {"max_num_batched_tokens": 8}}"#);
    assert_eq!(
        paths(&p),
        [
            "worker.max_num_batched_tokens",
            "worker.max_num_batched_tokens"
        ]
    );
    assert!(p[0].message.contains("block_size (16)"));
    assert!(p[1].message.contains("max_num_seqs (256)"));
    // Without chunked prefill a max-length prompt must fit one step (131_072 > 8192).
    let p = problems(r#"{"worker": {"chunked_prefill": false}}"#);
    assert_eq!(paths(&p), ["worker.max_num_batched_tokens"]);
    assert!(p[0].message.contains("max_model_len (131072)"));
}

#[test]
fn an_enabled_autoscaler_must_contain_the_starting_cluster() {
    let p = problems(
        r#"{"simulation": {"num_workers": 10},
            "router": {"autoscaler": {"enabled": true, "min_workers": 12, "max_workers": 8}}}"#,
    );
    // max < min is the section's own problem; the other two relate it to num_workers.
    assert_eq!(
        paths(&p),
        [
            "router.autoscaler.max_workers",
            "router.autoscaler.max_workers",
            "router.autoscaler.min_workers"
        ]
    );
    assert_eq!(
        p[1].message,
        "must be >= simulation.num_workers (10), the cluster at the start"
    );
    // Disabled, the same numbers are only the section's own problem.
    let p = problems(
        r#"{"simulation": {"num_workers": 10},
            "router": {"autoscaler": {"min_workers": 12, "max_workers": 8}}}"#,
    );
    assert_eq!(paths(&p), ["router.autoscaler.max_workers"]);
}

#[test]
fn offload_chunks_are_whole_blocks() {
    let p = problems(r#"{"kv_cache": {"chunk_size": 100, "tiers": [{"preset": "cpu_dram"}]}}"#);
    assert_eq!(paths(&p), ["kv_cache.chunk_size"]);
    // Without tiers the chunk size is unused.
    assert!(opal::parse_scenario(r#"{"kv_cache": {"chunk_size": 100}}"#).is_ok());
}

#[test]
fn a_stage_whose_every_request_is_too_long_is_rejected() {
    // Shortest request: 4000 prefix + 128 input + 64 output = 4192 > 4096.
    let p = problems(
        r#"{"model": {"max_model_len": 4096},
            "workload": {"stages": [{"type": "UniformReqRate", "total_requests": 10,
              "input_length": {"type": "uniform", "min": 128, "max": 256},
              "output_length": {"type": "constant", "value": 64},
              "shared_prefix": {"groups": 2, "length": 4000}}]}}"#,
    );
    assert_eq!(paths(&p), ["workload.stages[0]"]);
    assert!(p[0].message.contains("4192 tokens"), "{}", p[0].message);
}

#[test]
fn every_problem_is_reported_at_once() {
    let p = problems(
        r#"{"version": 2,
            "simulation": {"num_workers": 0},
            "model": {"name": "gpt-5"},
            "hardware": {"gpu": "GB300"},
            "worker": {"block_size": 0, "gpu_memory_utilization": 1.5},
            "router": {"kv_event_interval": 0},
            "workload": {"stages": [{"type": "ExponentialReqRate", "request_rate": 0,
                                     "total_requests": 5},
                                    {"type": "Trace"}]}}"#,
    );
    assert_eq!(
        paths(&p),
        [
            "version",
            "simulation.num_workers",
            "model.name",
            "hardware.gpu",
            "worker.block_size",
            "worker.gpu_memory_utilization",
            "router.kv_event_interval",
            "workload.stages[0].request_rate",
            "workload.stages[1].trace_file",
        ]
    );
    assert!(p.iter().all(|p| !p.message.is_empty()));
}
