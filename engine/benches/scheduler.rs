//! Scheduler throughput at saturation, and how step cost scales.
//!
//! One granite-3.3-8b worker on an H100 (roofline timing, prefix caching on) with a
//! deep queue of long-prompt requests: 256 sequences run at once. The same run with
//! a 10× longer waiting queue, and with a 50× larger KV pool (many more cached
//! blocks), should cost the same per step: a step touches the batch, the head of the
//! waiting queue and the blocks it allocates — never the whole queue or cache.
//!
//! Run: `cargo bench -p opal-engine --bench scheduler`

use engine::hardware::HardwareConfig;
use engine::model::Model;
use engine::request::{PromptContent, Request, Source};
use engine::worker::{NoOffload, Scheduler, SchedulerConfig, SchedulerOutput, StepOutcome};
use std::time::Instant;

const MEASURED_STEPS: u64 = 5_000;

fn request(id: u64) -> Request {
    // 512 tokens of one of 8 shared system prompts, then a 512-token document of its own
    // (a shareable source, so every full block enters the prefix-cache index and the
    // index grows with the pool, which is what the large-pool row must show); 128 out.
    let prompt = PromptContent::new()
        .with(Source::SystemPrompt((id % 8) as u32), 512)
        .with(Source::Document(id as u32), 512);
    Request::new(id, prompt, 128, 0.0)
}

struct Figures {
    steps_per_sec: f64,
    sim_per_wall: f64,
    mean_batch: f64,
    cached_blocks: usize,
    waiting_end: usize,
    completed: usize,
}

fn run(queue: u64, blocks_override: u32) -> Figures {
    let model = Model::from_catalogue("granite-3.3-8b-instruct").unwrap();
    let hw = HardwareConfig::default().resolve().unwrap();
    let cfg = SchedulerConfig {
        num_gpu_blocks_override: blocks_override,
        ..Default::default()
    };
    let mut s = Scheduler::new(0, &cfg, &model, &hw).unwrap();
    for id in 0..queue {
        s.add_request(request(id), 0.0).unwrap();
    }
    let mut now = 0.0;
    let (mut out, mut outcome) = (SchedulerOutput::default(), StepOutcome::default());
    // Warm up until the batch is full and the cache has turned over.
    while s.num_running() < 256 || s.steps() < 1_000 {
        s.schedule(now, &mut NoOffload, &mut out);
        now += s.step_time(&out);
        s.finish_step(now, &mut outcome);
    }
    let (sim_start, steps_start) = (now, s.steps());
    let mut batch = 0u64;
    let mut completed = 0usize;
    let wall = Instant::now();
    for _ in 0..MEASURED_STEPS {
        s.schedule(now, &mut NoOffload, &mut out);
        batch += out.scheduled.len() as u64;
        now += s.step_time(&out);
        s.finish_step(now, &mut outcome);
        completed += outcome.finished.len();
        // The router would drain these every kv_event_interval.
        s.take_kv_events();
    }
    let secs = wall.elapsed().as_secs_f64();
    Figures {
        steps_per_sec: (s.steps() - steps_start) as f64 / secs,
        sim_per_wall: (now - sim_start) / secs,
        mean_batch: batch as f64 / MEASURED_STEPS as f64,
        cached_blocks: s.block_pool().num_cached(),
        waiting_end: s.num_waiting(),
        completed,
    }
}

fn main() {
    println!("scheduler at saturation: granite-3.3-8b on H100, roofline, prefix caching on");
    println!("{MEASURED_STEPS} measured steps per row (after warm-up)\n");
    println!(
        "{:<34} {:>10} {:>12} {:>10} {:>10} {:>10} {:>9}",
        "case", "steps/s", "sim s/wall s", "mean batch", "cached blk", "waiting", "completed"
    );
    let cases = [
        ("queue 20k, 23k blocks (from memory)", 20_000, 0),
        ("queue 200k (10x), 23k blocks", 200_000, 0),
        ("queue 20k, 1.2M blocks override", 20_000, 1_200_000),
    ];
    for (name, queue, blocks) in cases {
        let f = run(queue, blocks);
        println!(
            "{:<34} {:>10.0} {:>12.1} {:>10.1} {:>10} {:>10} {:>9}",
            name,
            f.steps_per_sec,
            f.sim_per_wall,
            f.mean_batch,
            f.cached_blocks,
            f.waiting_end,
            f.completed
        );
    }
}
