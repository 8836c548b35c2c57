//! Throughput of the workload generators and the statistics, printed as figures.
//!
//! `cargo bench -p opal-engine --bench workload`

use engine::rng::SimRng;
use engine::stats::{ItlHistogram, RequestRecord, StageStats};
use engine::workload::dist::Zipf;
use engine::workload::{StageConfig, StageGenerator};
use std::hint::black_box;
use std::time::Instant;

fn rate(label: &str, n: u64, f: impl FnOnce() -> u64) {
    let t = Instant::now();
    let check = f();
    let s = t.elapsed().as_secs_f64();
    println!(
        "{label:<48} {:>12.0} /s   ({n} in {:.3} s, check {check})",
        n as f64 / s,
        s
    );
}

fn generate(json: &str, n: u64) -> u64 {
    let cfg: StageConfig = serde_json::from_str(json).unwrap();
    let StageGenerator::Requests(mut g) = cfg.build(1, 0, None).unwrap() else {
        unreachable!()
    };
    let mut tokens = 0u64;
    for id in 0..n {
        tokens += g.next_request(id).unwrap().prompt.len() as u64;
    }
    tokens
}

fn main() {
    const N: u64 = 1_000_000;
    let z = Zipf::new(1_000_000, 1.1).unwrap();
    let mut r = SimRng::stream(1, "bench");
    rate("Zipf(n = 1e6, s = 1.1) draws", N, || {
        (0..N).map(|_| z.sample(&mut r) as u64).sum()
    });
    rate("ExponentialReqRate + lognormal lengths", N, || {
        generate(
            r#"{"type":"ExponentialReqRate","request_rate":10,
                "input_length":{"type":"lognormal","mean":800,"cv":1,"max":32000},
                "shared_prefix":{"groups":64,"popularity":{"type":"zipf","s":1}}}"#,
            N,
        )
    });
    rate("RAGWorkload (4 of 10k docs, Zipf 1)", N, || {
        generate(
            r#"{"type":"RAGWorkload","num_documents":10000,"docs_per_request":4}"#,
            N,
        )
    });

    // ITL: 10 M tokens from 100 k requests in steps of 256 requests sharing each gap.
    let mut h = ItlHistogram::new();
    let mut r = SimRng::stream(2, "bench.itl");
    rate("ITL (gap, count) inserts of 256 tokens", 40_000, || {
        for _ in 0..40_000 {
            h.add(0.010 + 1e-5 * r.below(3000) as f64, 256);
        }
        h.count()
    });
    let t = Instant::now();
    let p99 = black_box(h.percentile(99.0));
    println!(
        "ITL p99 over {} gaps ({} distinct): {:.1} µs, p99 = {:.4} s",
        h.count(),
        h.distinct(),
        t.elapsed().as_secs_f64() * 1e6,
        p99
    );

    // Stage summary over 100 k records.
    let mut stats = StageStats::new(0, 0.0);
    let records: Vec<RequestRecord> = (0..100_000u64)
        .map(|i| {
            let c = i as f64 * 0.01;
            let mut rec = RequestRecord::new(i, 0, c, 500);
            rec.worker_in = c;
            rec.first_scheduled = c + 0.05;
            rec.first_token = c + 0.2;
            rec.completion = c + 3.0;
            rec.output_tokens = 100;
            rec.sources.computed = 500;
            stats.on_tokens(c + 1.0, 100);
            rec
        })
        .collect();
    let t = Instant::now();
    let s = black_box(stats.summarize(1003.0, 3, &records));
    println!(
        "StageSummary over {} records: {:.1} ms (TTFT p99 {:.1} ms)",
        records.len(),
        t.elapsed().as_secs_f64() * 1e3,
        s.ttft.p99_ms
    );
}
