//! Windows and overload on hand-built request streams, every expectation worked out here.

use super::*;
use crate::stats::RequestRecord;

/// Request `id` of stage 0 arriving at `c`, served in `ttft` to its first token and
/// `e2e` to its last, with 10 output tokens.
fn served(id: u64, c: f64, ttft: f64, e2e: f64) -> RequestRecord {
    let mut r = RequestRecord::new(id, 0, c, 100);
    r.worker = Some(0);
    r.first_token = c + ttft;
    r.completion = c + e2e;
    r.output_tokens = 10;
    r
}

/// A deterministic single server: one request every `gap` seconds, each taking `service`
/// seconds, first come first served. With `service < gap` nobody waits; with
/// `service > gap` request i waits i·(service − gap).
fn single_server(n: u64, gap: f64, service: f64) -> Vec<RequestRecord> {
    let mut free = 0.0f64;
    (0..n)
        .map(|i| {
            let c = i as f64 * gap;
            let start = free.max(c);
            free = start + service;
            served(i, c, start - c + service / 10.0, free - c)
        })
        .collect()
}

#[test]
fn the_warmup_leaves_out_the_first_tenth_by_default() {
    // 100 arrivals 1 s apart: the window holds requests 10..=99, arriving at 10 s to 99 s,
    // so 89 gaps over 89 s: 1 req/s offered.
    let rs = single_server(100, 1.0, 0.5);
    let w = &measure(&MeasurementConfig::default(), &rs, 1, 1e9)[0];
    assert_eq!((w.warmup_requests, w.requests), (10, 90));
    assert_eq!((w.start, w.end), (10.0, 99.0));
    assert_eq!(w.offered_rps, 1.0);
    // Every request takes 0.5 s: the window moved by 0.5 s, [10.5, 99.5], sees the
    // completions of requests 10..=99.
    assert_eq!(w.served, 90);
    assert!(w.overload.is_none());
    // The midpoint is the 46th measured arrival (index 45): request 55.
    assert_eq!(w.midpoint, 55.0);
}

#[test]
fn spans_by_count_and_by_seconds() {
    let rs = single_server(100, 1.0, 0.5);
    let config = MeasurementConfig {
        warmup: Span::Seconds(20.0),
        cooldown: Span::Requests(5),
        ..MeasurementConfig::default()
    };
    let w = &measure(&config, &rs, 1, 1e9)[0];
    // Arrivals before 0 + 20 s: requests 0..=19; the last five (95..=99) cooled down.
    assert_eq!(
        (w.warmup_requests, w.cooldown_requests, w.requests),
        (20, 5, 75)
    );
    assert_eq!((w.start, w.end), (20.0, 94.0));
    // A warm-up longer than the stage still measures its last request.
    let config = MeasurementConfig {
        warmup: Span::Requests(1000),
        ..MeasurementConfig::default()
    };
    let w = &measure(&config, &rs, 1, 1e9)[0];
    assert_eq!((w.requests, w.start), (1, 99.0));
}

#[test]
fn a_server_slower_than_its_arrivals_is_overloaded_at_any_length() {
    // Arrivals every 1 s, 1.5 s of service: the server completes 2/3 req/s. Request i
    // waits 0.5·i s, so the queue and TTFT grow without bound.
    for n in [80, 200, 1000, 10_000] {
        let rs = single_server(n, 1.0, 1.5);
        let w = &measure(&MeasurementConfig::default(), &rs, 1, 1e12)[0];
        assert!(w.overload.is_some(), "{n} requests: {w:?}");
    }
    // 10,000 requests: the window (requests 1000..=9999) sees one completion every 1.5 s.
    let rs = single_server(10_000, 1.0, 1.5);
    let w = &measure(&MeasurementConfig::default(), &rs, 1, 1e12)[0];
    match w.overload {
        Some(Overload::Throughput {
            offered_rps,
            served_rps,
        }) => {
            assert_eq!(offered_rps, 1.0);
            assert!((served_rps - 2.0 / 3.0).abs() < 0.001, "{served_rps}");
        }
        ref o => panic!("{o:?}"),
    }
}

#[test]
fn a_server_just_fast_enough_keeps_up() {
    // Service 0.9375 s (binary-exact) per 1 s arrival: 94 % busy, nobody waits.
    for n in [80, 200, 1000, 10_000] {
        let rs = single_server(n, 1.0, 0.9375);
        let w = &measure(&MeasurementConfig::default(), &rs, 1, 1e12)[0];
        assert!(w.overload.is_none(), "{n} requests: {w:?}");
        assert_eq!(w.shortfall, 0.0);
    }
}

#[test]
fn a_growing_ttft_is_overload_even_when_throughput_looks_fine() {
    // 200 arrivals 1 s apart whose TTFT grows by 10 ms each while they complete on time
    // (a trend no throughput test sees): the window's eighths have rising medians (S = 28)
    // and the last is far above twice the first.
    let rs: Vec<RequestRecord> = (0..200)
        .map(|i| served(i, i as f64, 0.01 * i as f64, 0.5 + 0.01 * i as f64))
        .collect();
    let w = &measure(&MeasurementConfig::default(), &rs, 1, 1e9)[0];
    assert!(
        matches!(w.overload, Some(Overload::GrowingTtft { .. })),
        "{w:?}"
    );
    // The same TTFTs, shuffled in time by reversing them, fall instead: no overload.
    let rs: Vec<RequestRecord> = (0..200)
        .map(|i| served(i, i as f64, 0.01 * (200 - i) as f64, 2.5))
        .collect();
    assert!(measure(&MeasurementConfig::default(), &rs, 1, 1e9)[0]
        .overload
        .is_none());
}

#[test]
fn a_run_cut_off_by_time_is_judged_on_what_it_could_see() {
    // 100 arrivals 1 s apart, each done 5 s later, the run stopped at 100 s: requests
    // arriving after 95 s could not have finished. The run kept up all the same.
    let mut rs: Vec<RequestRecord> = (0..100).map(|i| served(i, i as f64, 0.1, 5.0)).collect();
    for r in &mut rs {
        if r.completion > 100.0 {
            r.completion = f64::NAN;
        }
    }
    let w = &measure(&MeasurementConfig::default(), &rs, 1, 100.0)[0];
    assert!(w.overload.is_none(), "{w:?}");
}

#[test]
fn pooled_rates_weigh_stages_by_their_spans() {
    // Stage 0: 11 arrivals over 10 s (1 req/s measured); stage 1: 41 over 10 s (4 req/s).
    // Pooled: 50 gaps over 20 s = 2.5 req/s, not the 52 / (first to last arrival).
    let w0 = MeasuredWindow {
        requests: 11,
        ..MeasuredWindow::spanning(0, 0.0, 10.0, 5.0)
    };
    let w1 = MeasuredWindow {
        requests: 41,
        ..MeasuredWindow::spanning(1, 100.0, 110.0, 105.0)
    };
    let p = Pooled::of(&[w0, w1]);
    assert_eq!((p.requests, p.seconds, p.offered_rps), (52, 20.0, 2.5));
}
