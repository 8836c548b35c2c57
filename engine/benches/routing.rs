//! Routing decision cost: 16 workers, a large global KV view, 100 000 decisions
//! of shared-prefix prompts with `max_prefix` and `prefix_load`, at two view
//! sizes 10× apart. The per-decision cost should not grow with the view.
//!
//! Run: `cargo bench -p opal-engine --bench routing`

use engine::kv_events::{KvChange, KvEvent, KvEventBatch, KvMedium};
use engine::offload::TierScope;
use engine::request::{PromptContent, Source};
use engine::rng::SimRng;
use engine::router::policy::{NoParams, PrefixLoadConfig};
use engine::router::{ClusterView, KvIndex, KvIndexLayout, PolicyConfig, RouteRequest, WorkerLoad};
use std::time::Instant;

const WORKERS: u32 = 16;
const BLOCK: u32 = 16;
const CHUNK: u32 = 256;
const GROUPS: u32 = 200;
const SYSTEM_TOKENS: u32 = 1024;
const TAIL_TOKENS: u32 = 512;
const DECISIONS: u64 = 100_000;

fn request_prompt(group: u32, id: u64) -> PromptContent {
    PromptContent::new()
        .with(Source::SystemPrompt(group), SYSTEM_TOKENS)
        .with(Source::Unique(id), TAIL_TOKENS)
}

fn stored(medium: KvMedium, hashes: impl Iterator<Item = u64>) -> Vec<KvEvent> {
    hashes
        .map(|hash| KvEvent {
            medium,
            change: KvChange::Stored,
            hash,
        })
        .collect()
}

/// A view where every group prefix sits on 1–3 workers (GPU and their DRAM tier, some
/// in the shared tier), padded with unrelated prompts until it holds `target_blocks` GPU blocks.
fn build_view(target_blocks: usize, rng: &mut SimRng) -> KvIndex {
    let mut kv = KvIndex::new(KvIndexLayout {
        block_size: BLOCK,
        chunk_size: CHUNK,
        tier_scopes: vec![TierScope::PerWorker, TierScope::Shared],
    });
    for g in 0..GROUPS {
        let p = request_prompt(g, u64::MAX - g as u64);
        for _ in 0..1 + rng.below(3) {
            let worker = rng.below(WORKERS as u64) as u32;
            let mut events = stored(KvMedium::Gpu, p.block_hashes(BLOCK));
            events.extend(stored(KvMedium::Tier(0), p.block_hashes(CHUNK)));
            if g % 4 == 0 {
                events.extend(stored(KvMedium::Tier(1), p.block_hashes(CHUNK)));
            }
            kv.apply(&KvEventBatch { worker, events });
        }
    }
    // Padding: 4096-token documents nobody will ask for (256 blocks each).
    let mut doc = 0u32;
    while kv.distinct_entries() < target_blocks {
        let p = PromptContent::new().with(Source::Document(doc), 4096);
        let worker = doc % WORKERS;
        let mut events = stored(KvMedium::Gpu, p.block_hashes(BLOCK));
        events.extend(stored(KvMedium::Tier(0), p.block_hashes(CHUNK)));
        kv.apply(&KvEventBatch { worker, events });
        doc += 1;
    }
    kv
}

/// Routes `DECISIONS` requests; returns (seconds, how many went to a worker with a prefix hit).
fn run(policy: &PolicyConfig, kv: &KvIndex) -> (f64, u64) {
    let mut p = policy.build(7);
    let mut rng = SimRng::stream(7, "bench.requests");
    let mut loads: Vec<WorkerLoad> = (0..WORKERS)
        .map(|id| WorkerLoad {
            id,
            outstanding: 0,
            kv_usage: 0.5,
            kv_blocks: 1000,
        })
        .collect();
    let mut hits = 0;
    let start = Instant::now();
    for id in 0..DECISIONS {
        let group = rng.below(GROUPS as u64) as u32;
        let prompt = request_prompt(group, id);
        let req = RouteRequest {
            id,
            session: None,
            prompt_len: prompt.len(),
            content: &prompt,
            now: id as f64 * 1e-3,
        };
        let view = ClusterView::new(&loads, kv).expect("16 workers");
        let d = p.choose(&req, &view);
        if d.candidates
            .iter()
            .any(|c| c.worker == d.worker && c.prefix.is_some_and(|m| m.tokens() > 0))
        {
            hits += 1;
        }
        // Keep loads moving: the chosen worker gains a request, a random one finishes one.
        loads[d.worker as usize].outstanding += 1;
        let done = rng.below(WORKERS as u64) as usize;
        loads[done].outstanding = loads[done].outstanding.saturating_sub(1);
    }
    (start.elapsed().as_secs_f64(), hits)
}

fn main() {
    let policies = [
        PolicyConfig::MaxPrefix(NoParams {}),
        PolicyConfig::PrefixLoad(PrefixLoadConfig::default()),
    ];
    let mut rng = SimRng::stream(1, "bench.view");
    println!(
        "routing: {WORKERS} workers, {GROUPS} prefix groups, prompts {SYSTEM_TOKENS}+{TAIL_TOKENS} tokens \
         ({} blocks, {} chunks), {DECISIONS} decisions per row",
        (SYSTEM_TOKENS + TAIL_TOKENS) / BLOCK,
        (SYSTEM_TOKENS + TAIL_TOKENS) / CHUNK
    );
    println!(
        "{:>14} {:>12} {:>14} {:>12} {:>10}",
        "view entries", "policy", "decisions/s", "ns/decision", "prefix hit"
    );
    let mut per_decision = Vec::new();

    for target in [200_000usize, 2_000_000] {
        let kv = build_view(target, &mut rng);
        for policy in &policies {
            // Best of three: the machine is shared, and the minimum is the least disturbed run.
            let (secs, hits) = (0..3)
                .map(|_| run(policy, &kv))
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .expect("three runs");
            let ns = secs * 1e9 / DECISIONS as f64;
            per_decision.push(ns);
            println!(
                "{:>14} {:>12} {:>14.0} {:>12.0} {:>9.1}%",
                kv.distinct_entries(),
                policy.name(),
                DECISIONS as f64 / secs,
                ns,
                100.0 * hits as f64 / DECISIONS as f64
            );
        }
    }
    println!(
        "cost ratio at 10x view size: max_prefix {:.2}x, prefix_load {:.2}x",
        per_decision[2] / per_decision[0],
        per_decision[3] / per_decision[1]
    );
}
