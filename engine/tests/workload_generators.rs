//! Synthetic and RAG generators: rates, lengths, counts, prefixes, reproducibility.

use engine::request::Source;
use engine::workload::generator::{RequestGenerator, RequestSpec};
use engine::workload::{StageConfig, StageGenerator};

fn stage(json: &str) -> StageConfig {
    serde_json::from_str(json).unwrap()
}

fn requests(cfg: &StageConfig, seed: u64, index: usize) -> Box<dyn RequestGenerator> {
    match cfg.build(seed, index, None).unwrap() {
        StageGenerator::Requests(g) => g,
        other => panic!("expected an open-loop generator, got {other:?}"),
    }
}

fn take(g: &mut dyn RequestGenerator, n: u64) -> Vec<RequestSpec> {
    (0..n).map_while(|id| g.next_request(id)).collect()
}

fn mean_gap(specs: &[RequestSpec]) -> f64 {
    specs.iter().map(|s| s.gap).sum::<f64>() / specs.len() as f64
}

#[test]
fn uniform_rate_gives_exact_gaps_and_stops_at_total_requests() {
    let cfg = stage(
        r#"{"type":"UniformReqRate","request_rate":4,"total_requests":100,
            "input_length":{"type":"uniform","min":10,"max":20},
            "output_length":{"type":"constant","value":7}}"#,
    );
    let mut g = requests(&cfg, 1, 0);
    let specs = take(g.as_mut(), 1000);
    assert_eq!(specs.len(), 100);
    assert!(specs.iter().all(|s| s.gap == 0.25));
    for (id, s) in specs.iter().enumerate() {
        assert!((10..=20).contains(&s.prompt.len()));
        assert_eq!(s.output_len, 7);
        // No shared prefix: the whole prompt is this request's own tokens.
        assert_eq!(s.prompt.segments().len(), 1);
        assert_eq!(s.prompt.segments()[0].source, Source::Unique(id as u64));
    }
    assert_eq!(g.max_concurrent_requests(), None);
}

#[test]
fn poisson_and_gamma_arrivals_have_the_requested_mean_gap() {
    for json in [
        r#"{"type":"ExponentialReqRate","request_rate":10,"total_requests":20000}"#,
        r#"{"type":"ExponentialReqRate","request_rate":10,"jitter":0.3,"total_requests":20000}"#,
        r#"{"type":"Gamma","request_rate":10,"cv":3,"total_requests":20000}"#,
    ] {
        let specs = take(requests(&stage(json), 5, 0).as_mut(), 20000);
        assert_eq!(specs.len(), 20000);
        // Mean 0.1 s; gap std ≤ 0.1·cv = 0.3 s, so the standard error is ≤ 0.3/√20000
        // ≈ 2.1e-3 and 5 se ≈ 1.1e-2.
        let m = mean_gap(&specs);
        assert!((m - 0.1).abs() < 1.1e-2, "{json}: mean gap {m}");
    }
}

#[test]
fn same_seed_same_requests_other_seed_or_stage_other_requests() {
    let cfg = stage(r#"{"type":"ExponentialReqRate","request_rate":3,"total_requests":50}"#);
    let a = take(requests(&cfg, 42, 0).as_mut(), 50);
    let b = take(requests(&cfg, 42, 0).as_mut(), 50);
    let c = take(requests(&cfg, 43, 0).as_mut(), 50);
    let d = take(requests(&cfg, 42, 1).as_mut(), 50);
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert_ne!(a, d);
}

#[test]
fn changing_lengths_does_not_move_arrivals() {
    let a = stage(r#"{"type":"ExponentialReqRate","request_rate":3,"total_requests":50}"#);
    let b = stage(
        r#"{"type":"ExponentialReqRate","request_rate":3,"total_requests":50,
            "input_length":{"type":"lognormal","mean":900,"cv":1.5,"max":9000}}"#,
    );
    let ga: Vec<f64> = take(requests(&a, 7, 0).as_mut(), 50)
        .iter()
        .map(|s| s.gap)
        .collect();
    let gb: Vec<f64> = take(requests(&b, 7, 0).as_mut(), 50)
        .iter()
        .map(|s| s.gap)
        .collect();
    assert_eq!(ga, gb);
}

#[test]
fn zipf_prefix_groups_are_used_in_popularity_order() {
    let cfg = stage(
        r#"{"type":"UniformReqRate","request_rate":100,"total_requests":20000,
            "input_length":{"type":"constant","value":50},
            "shared_prefix":{"groups":5,"length":300,"popularity":{"type":"zipf","s":1.0}}}"#,
    );
    let mut counts = [0u32; 5];
    for (id, s) in take(requests(&cfg, 3, 0).as_mut(), 20000)
        .iter()
        .enumerate()
    {
        let seg = s.prompt.segments();
        assert_eq!(s.prompt.len(), 350); // 300 prefix + 50 own tokens
        let Source::SystemPrompt(g) = seg[0].source else {
            panic!("prefix first: {seg:?}")
        };
        assert_eq!(seg[0].len, 300);
        assert_eq!(seg[1].source, Source::Unique(id as u64));
        counts[g as usize] += 1;
    }
    // P(g) ∝ 1/(g+1): 0.438, 0.219, 0.146, 0.109, 0.088 → strictly decreasing counts.
    assert!(counts.windows(2).all(|w| w[0] > w[1]), "{counts:?}");
    // Group 0 share 1/H5 = 1/2.2833 = 0.438; se = √(0.438·0.562/20000) ≈ 0.0035.
    let share = counts[0] as f64 / 20000.0;
    assert!((share - 0.438).abs() < 0.0175, "{share}");
}

#[test]
fn uniform_prefix_groups_share_identical_leading_blocks() {
    let cfg = stage(
        r#"{"type":"UniformReqRate","request_rate":1,"total_requests":200,
            "shared_prefix":{"groups":2,"length":64}}"#,
    );
    let specs = take(requests(&cfg, 1, 0).as_mut(), 200);
    let first_block = |s: &RequestSpec| s.prompt.block_hashes(16).take(4).collect::<Vec<_>>();
    let groups: std::collections::BTreeSet<Vec<u64>> = specs.iter().map(first_block).collect();
    assert_eq!(
        groups.len(),
        2,
        "64-token prefixes of 2 groups give 2 distinct 4-block heads"
    );
}

#[test]
fn rag_requests_have_system_prompt_distinct_documents_and_a_query() {
    let cfg = stage(
        r#"{"type":"RAGWorkload","request_rate":5,"total_requests":2000,"num_documents":30,
            "docs_per_request":4,"document_size":256,"system_prompt_length":100,
            "query_length":{"type":"constant","value":40},"output_length":77,
            "max_concurrent_requests":8}"#,
    );
    let mut g = requests(&cfg, 11, 0);
    assert_eq!(g.max_concurrent_requests(), Some(8));
    let specs = take(g.as_mut(), 5000);
    assert_eq!(specs.len(), 2000);
    let mut doc_counts = [0u32; 30];
    for (id, s) in specs.iter().enumerate() {
        let seg = s.prompt.segments();
        assert_eq!(seg.len(), 6);
        assert_eq!((seg[0].source, seg[0].len), (Source::SystemPrompt(0), 100));
        let docs: Vec<u32> = seg[1..5]
            .iter()
            .map(|x| match x.source {
                Source::Document(d) if x.len == 256 => d,
                other => panic!("expected a 256-token document, got {other:?}"),
            })
            .collect();
        let mut distinct = docs.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 4, "documents repeat: {docs:?}");
        for d in docs {
            doc_counts[d as usize] += 1;
        }
        assert_eq!((seg[5].source, seg[5].len), (Source::Unique(id as u64), 40));
        assert_eq!(s.prompt.len(), 100 + 4 * 256 + 40);
        assert_eq!(s.output_len, 77);
    }
    // Default popularity is Zipf(1): the first documents are retrieved most.
    assert!(doc_counts[0] > doc_counts[1] && doc_counts[1] > doc_counts[5]);
    assert!(doc_counts[5] > doc_counts[29]);
    // rate 5 with jitter 1: mean gap 0.2 s, se 0.2/√2000 ≈ 4.5e-3.
    assert!((mean_gap(&specs) - 0.2).abs() < 0.0225);
}

#[test]
fn rag_takes_every_document_when_asked_for_all_under_steep_zipf() {
    // Rejection sampling would rarely find the tail documents; the exact fallback must.
    let cfg = stage(
        r#"{"type":"RAGWorkload","total_requests":50,"num_documents":12,"docs_per_request":12,
            "document_popularity":{"type":"zipf","s":4.0}}"#,
    );
    for s in take(requests(&cfg, 2, 0).as_mut(), 50) {
        let mut docs: Vec<u32> = s
            .prompt
            .segments()
            .iter()
            .filter_map(|x| match x.source {
                Source::Document(d) => Some(d),
                _ => None,
            })
            .collect();
        docs.sort();
        assert_eq!(docs, (0..12).collect::<Vec<_>>());
    }
}

#[test]
fn a_zipf_too_steep_for_rejection_picks_in_time_independent_of_the_corpus() {
    // Found by the fuzz driver: s = 1.7e12 over 355,484 documents put all the probability on
    // document 0, and the fallback scanned the corpus for each later pick (2 s for 400
    // requests). Every other document's probability underflows to 0, so the picks after
    // the first are the most popular of the rest: documents 0, 1, 2, 3.
    let cfg = stage(
        r#"{"type":"RAGWorkload","total_requests":400,"num_documents":1000000,
            "docs_per_request":4,"document_popularity":{"type":"zipf","s":1.7e12}}"#,
    );
    let started = std::time::Instant::now();
    for s in take(requests(&cfg, 5, 0).as_mut(), 400) {
        let docs: Vec<u32> = s
            .prompt
            .segments()
            .iter()
            .filter_map(|x| match x.source {
                Source::Document(d) => Some(d),
                _ => None,
            })
            .collect();
        assert_eq!(docs, [0, 1, 2, 3]);
    }
    assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
}

#[test]
fn picking_outside_a_set_follows_the_popularity_of_the_rest() {
    use engine::rng::SimRng;
    use engine::workload::generator::{Picker, Popularity};
    // Zipf(1) over 4 items: weights 1, 1/2, 1/3, 1/4 (sum 25/12). Without item 0 the rest
    // weigh 1/2 : 1/3 : 1/4 = 6 : 4 : 3 of 13.
    let p = Picker::new(4, Popularity::Zipf { s: 1.0 }).unwrap();
    let mut rng = SimRng::stream(3, "pick_excluding");
    let mut counts = [0u32; 4];
    const N: u32 = 130_000;
    for _ in 0..N {
        counts[p.pick_excluding(&mut rng, &[0]) as usize] += 1;
    }
    assert_eq!(counts[0], 0);
    // Each share within 5 standard errors (√(p(1−p)/N) ≤ 1.4e-3).
    for (i, want) in [(1, 6.0 / 13.0), (2, 4.0 / 13.0), (3, 3.0 / 13.0)] {
        let got = counts[i] as f64 / N as f64;
        assert!((got - want).abs() < 7e-3, "item {i}: {got} vs {want}");
    }
    // Uniform: the free items in turn, each equally likely.
    let u = Picker::new(5, Popularity::Uniform).unwrap();
    for _ in 0..100 {
        let d = u.pick_excluding(&mut rng, &[1, 3]);
        assert!([0, 2, 4].contains(&d));
    }
}
