//! Built-in scenarios: the example documents in `examples/`, compiled into the engine so the
//! app can offer them (with their data files) without a file picker.

use engine::scenario::{Scenario, ScenarioData};
use engine::validate::Problem;
use serde::Serialize;

/// A built-in scenario and the data files it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Preset {
    /// Stable identifier (the example's file stem), e.g. `"routing_prefix_vs_round_robin"`.
    pub id: &'static str,
    /// Short title for a menu.
    pub title: &'static str,
    /// One or two sentences: what it shows and what to change to see the effect.
    pub description: &'static str,
    /// The scenario document (our format, or Opal's for [`Preset::is_opal`] presets).
    pub json: &'static str,
    /// Data files the document names, as (name, text).
    pub files: &'static [(&'static str, &'static str)],
}

impl Preset {
    /// The data files as a [`ScenarioData`].
    pub fn data(&self) -> ScenarioData {
        self.files.iter().copied().collect()
    }

    /// True when `json` is an original Opal config (import it with
    /// [`super::import_opal`]) rather than a scenario document.
    pub fn is_opal(&self) -> bool {
        super::detect_format(self.json) == super::Format::Opal
    }

    /// The scenario, parsed (an Opal preset is imported), with its data files checked.
    pub fn scenario(&self) -> Result<Scenario, Vec<Problem>> {
        let scenario = if self.is_opal() {
            super::import_opal(self.json)?.0
        } else {
            super::parse(self.json)?
        };
        let problems = scenario.check_data(&self.data());
        if problems.is_empty() {
            Ok(scenario)
        } else {
            Err(problems)
        }
    }
}

const MOONCAKE_SMALL: (&str, &str) = (
    "traces/mooncake_small.jsonl",
    include_str!("../../../examples/traces/mooncake_small.jsonl"),
);
const SESSIONS_SMALL: (&str, &str) = (
    "traces/sessions_small.jsonl",
    include_str!("../../../examples/traces/sessions_small.jsonl"),
);

const DEFAULT_JSON: &str = include_str!("../../../examples/default.json");

/// Every built-in scenario, the default first.
pub fn presets() -> Vec<Preset> {
    vec![
        Preset {
            id: "default",
            title: "Four H100s, shared system prompts",
            description: "300 Poisson requests over 4 granite-3.3-8b workers behind a round-robin \
                          router; each prompt starts with one of 4 system prompts of 1,024 \
                          tokens (Zipf popularity).",
            json: DEFAULT_JSON,
            files: &[],
        },
        Preset {
            id: "capacity_4xh100_ttft500",
            title: "How much load can 4 H100s take under a 500 ms p99 TTFT?",
            description: "The default traffic on 4 granite-3.3-8b workers: a search bisects the \
                          request rate (1 to 256 req/s, to within 1) for the highest one whose \
                          p99 TTFT stays within 500 ms and that the cluster sustains, each run \
                          long enough to judge and the answer confirmed 10 times longer. Change \
                          hardware.gpu or the SLO and search again.",
            json: include_str!("../../../examples/capacity_4xh100_ttft500.json"),
            files: &[],
        },
        Preset {
            id: "gpus_for_40rps_rr_vs_prefix",
            title: "Round robin vs prefix-aware: GPUs needed for 40 req/s",
            description: "40 req/s sharing 8 long system prompts, under p99 TTFT ≤ 500 ms and p99 \
                          TPOT ≤ 50 ms: the fewest workers (1 to 16) each routing policy needs, \
                          and what a million output tokens costs there.",
            json: include_str!("../../../examples/gpus_for_40rps_rr_vs_prefix.json"),
            files: &[],
        },
        Preset {
            id: "latency_vs_load_by_policy",
            title: "Latency vs load: round robin vs prefix-aware (24 runs)",
            description: "The default traffic (600 requests) at 25 to 300 req/s in 12 steps, \
                          under each routing policy: TTFT, TPOT and E2E percentiles, SLO \
                          attainment and goodput against the offered load, the knee where p99 \
                          TTFT passes 500 ms or the cluster stops keeping up (overloaded).",
            json: include_str!("../../../examples/latency_vs_load_by_policy.json"),
            files: &[],
        },
        Preset {
            id: "latency_vs_load_deployed_routers",
            title: "Latency vs load: llm-d, SGLang and Dynamo routers (25 runs)",
            description: "150 system prompts of 6,000 tokens (Zipf) on 8 H100s (Llama-3.1-8B) \
                          at 20 to 100 req/s, under round robin and the routers people deploy: \
                          llm-d's scheduler (precise and approximate prefix scorer), SGLang's \
                          cache-aware balancer and Dynamo's KV router. Where each keeps p99 TTFT \
                          under 1 s, and where round robin runs out.",
            json: include_str!("../../../examples/latency_vs_load_deployed_routers.json"),
            files: &[],
        },
        Preset {
            id: "disaggregation_long_prompts",
            title: "Prefill/decode disaggregation: long prompts (25 runs)",
            description: "Prompts of 3,000 to 6,000 tokens, replies of 50 to 150, on 4 H100s: \
                          mixed workers vs 1 prefill + 3 decode vs 2 + 2, with a 50 or 5 GB/s \
                          KV link, at 4 to 20 req/s. Disaggregation keeps TPOT flat; one \
                          prefill worker cannot keep up, and a slow link stalls the second token.",
            json: include_str!("../../../examples/disaggregation_long_prompts.json"),
            files: &[],
        },
        Preset {
            id: "disaggregation_long_outputs",
            title: "Prefill/decode disaggregation: long outputs (20 runs)",
            description: "Prompts of 100 to 400 tokens, replies of 400 to 800, on 4 H100s: mixed \
                          vs 1P:3D vs 2P:2D with a 50 or 5 GB/s KV link, at 20 to 80 req/s. \
                          Dedicated prefill halves TTFT; two decode workers run out of room.",
            json: include_str!("../../../examples/disaggregation_long_outputs.json"),
            files: &[],
        },
        Preset {
            id: "moe_parallelism_b200",
            title: "MoE on 8 B200s: tensor vs data and expert parallel (20 runs)",
            description: "Qwen3-235B-A22B in FP8 on one node of 8 B200s at 20 to 100 req/s: \
                          tensor parallel over all 8, or 8 (or 4) data-parallel attention ranks \
                          with the experts spread over every GPU, split or whole (expert \
                          parallel). One engine's 256 sequences cap TP 8 near 24 req/s; the \
                          ranks' own batches carry 60 and more.",
            json: include_str!("../../../examples/moe_parallelism_b200.json"),
            files: &[],
        },
        Preset {
            id: "routing_prefix_vs_round_robin",
            title: "Routing: round robin vs prefix-aware on shared prompts",
            description: "8 system prompts of 2,000 tokens with Zipf popularity over 4 workers, \
                          routed by longest cached prefix. Switch router.policy to round_robin \
                          and compare TTFT and the prefix-cache hit rate.",
            json: include_str!("../../../examples/routing_prefix_vs_round_robin.json"),
            files: &[],
        },
        Preset {
            id: "race_round_robin_vs_prefix",
            title: "Race: round robin vs prefix-aware, side by side",
            description: "32 system prompts of 8,000 tokens (Zipf) at 20 req/s on 4 workers, \
                          6,000 requests (5 simulated minutes), raced under both policies on the \
                          same arrivals and played back on one clock: completed requests, p99 \
                          TTFT and the GPU prefix-cache hit rate as they happen. Raced at 3 \
                          seeds: a winner is named only if it wins at each.",
            json: include_str!("../../../examples/race_round_robin_vs_prefix.json"),
            files: &[],
        },
        Preset {
            id: "race_deployed_routers",
            title: "Race: llm-d vs SGLang vs Dynamo routers, side by side",
            description: "150 system prompts of 6,000 tokens (Zipf) at 40 req/s on 8 H100s \
                          (Llama-3.1-8B), 8,000 requests, under the routers people deploy: \
                          llm-d's scheduler with its precise and its approximate prefix \
                          scorer, SGLang's cache-aware balancer and Dynamo's KV router, on the \
                          same arrivals at 3 seeds. Dynamo's cost weighs load against the \
                          prefix; raise its overlap_score_weight to see it follow the cache.",
            json: include_str!("../../../examples/race_deployed_routers.json"),
            files: &[],
        },
        Preset {
            id: "autoscaling_burst",
            title: "Autoscaling under a burst",
            description: "Quiet, a 15× burst, quiet again: the autoscaler adds workers (10 s to \
                          start) while queues exceed 24 and drains them after a 20 s cool-down.",
            json: include_str!("../../../examples/autoscaling_burst.json"),
            files: &[],
        },
        Preset {
            id: "chunked_prefill_off",
            title: "Chunked prefill vs not",
            description: "Long, heavy-tailed prompts with chunked prefill off: a long prefill \
                          stalls every decode in its step. Turn worker.chunked_prefill on and \
                          compare ITL and TPOT.",
            json: include_str!("../../../examples/chunked_prefill_off.json"),
            files: &[],
        },
        Preset {
            id: "rag_with_offload_tiers",
            title: "RAG with offload tiers",
            description: "Requests retrieve 4 of 1,000 documents (Zipf); the corpus outgrows GPU \
                          memory, so CPU DRAM, local NVMe and a shared file system serve the \
                          prefixes the GPU evicted.",
            json: include_str!("../../../examples/rag_with_offload_tiers.json"),
            files: &[],
        },
        Preset {
            id: "trace_replay",
            title: "Mooncake trace replay",
            description: "50 requests of a Mooncake-style trace whose hash ids share prefixes, \
                          on 2 workers with prefix-aware routing.",
            json: include_str!("../../../examples/trace_replay.json"),
            files: &[MOONCAKE_SMALL],
        },
        Preset {
            id: "sessions_replay",
            title: "Agentic sessions replay",
            description: "8 multi-turn sessions: each turn waits for the previous reply and \
                          resends the whole conversation, so session affinity keeps it cached.",
            json: include_str!("../../../examples/sessions_replay.json"),
            files: &[SESSIONS_SMALL],
        },
        Preset {
            id: "opal_defaults",
            title: "Original Opal defaults (import)",
            description: "An original Opal configs/defaults.json-style file: import it to see \
                          how each Opal setting maps onto this simulator.",
            json: include_str!("../../../examples/opal_defaults.json"),
            files: &[MOONCAKE_SMALL],
        },
    ]
}

/// The built-in preset called `id`.
pub fn preset(id: &str) -> Option<Preset> {
    presets().into_iter().find(|p| p.id == id)
}

/// The app's built-in scenario document (`examples/default.json`).
pub fn default_document() -> &'static str {
    DEFAULT_JSON
}
