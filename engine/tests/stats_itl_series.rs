//! Pooled ITL percentiles and the per-second series.

use engine::rng::SimRng;
use engine::stats::{percentile_sorted, ItlHistogram, SecondSeries};

#[test]
fn weighted_percentiles_equal_those_of_the_expanded_list() {
    let mut r = SimRng::stream(9, "itl");
    let mut h = ItlHistogram::new();
    let mut expanded = Vec::new();
    for _ in 0..300 {
        // Few distinct values with large counts, as steps shared by many requests give.
        let gap = 0.01 * (1 + r.below(20)) as f64;
        let count = 1 + r.below(50);
        h.add(gap, count);
        expanded.extend(std::iter::repeat_n(gap, count as usize));
    }
    expanded.sort_by(f64::total_cmp);
    assert_eq!(h.count(), expanded.len() as u64);
    assert!(h.distinct() <= 20);
    for p in [0.0, 1.0, 25.0, 50.0, 90.0, 99.0, 99.9, 100.0] {
        assert_eq!(h.percentile(p), percentile_sorted(&expanded, p), "p{p}");
    }
    let mean = expanded.iter().sum::<f64>() / expanded.len() as f64;
    assert!((h.mean() - mean).abs() < 1e-12);
}

#[test]
fn percentile_between_two_distinct_gaps_interpolates() {
    // Expanded: [0.1, 0.1, 0.1, 0.4]; median h = 1.5 (0.1, 0.1) → 0.1;
    // p90 h = 2.7 between 0.1 and 0.4: 0.4 − 0.3·0.3 = 0.31.
    let mut h = ItlHistogram::new();
    h.add(0.4, 1);
    h.add(0.1, 3);
    assert_eq!(h.percentile(50.0), 0.1);
    assert!((h.percentile(90.0) - 0.31).abs() < 1e-12);
    let mut m = ItlHistogram::new();
    m.merge(&h);
    m.merge(&h);
    assert_eq!(m.count(), 8);
    assert_eq!(m.distinct(), 2);
}

#[test]
fn busy_time_splits_across_a_second_boundary() {
    let mut s = SecondSeries::new();
    // Worker 1: a step 0.8 → 1.3 puts 0.2 s in second 0 and 0.3 s in second 1;
    // then 1.5 → 3.25 fills [1.5, 2) = 0.5 of second 1, all of second 2, 0.25 of second 3.
    s.on_busy(1, 0.8, 1.3, 0.5, 1.0);
    s.on_busy(1, 1.5, 3.25, 0.2, 0.0);
    let c = s.finish(4.0);
    assert_eq!(c.points, 4);
    assert_eq!(c.workers.len(), 2); // worker 0 never busy: all zeros
    assert_eq!(c.workers[0].busy_fraction, vec![0.0; 4]);
    let b = &c.workers[1].busy_fraction;
    assert!((b[0] - 0.2).abs() < 1e-12);
    assert!((b[1] - 0.8).abs() < 1e-12); // 0.3 + 0.5
    assert_eq!(b[2], 1.0);
    assert!((b[3] - 0.25).abs() < 1e-12);
    // Utilisation weighs each part by its step's share of peak: second 1 holds 0.3 s at
    // 50 % of peak FLOP/s and 0.5 s at 20 %: 0.3·0.5 + 0.5·0.2 = 0.25. Bandwidth: only the
    // first step used it (100 %), 0.3 s of second 1.
    let (cu, mu) = (
        &c.workers[1].compute_utilization,
        &c.workers[1].memory_utilization,
    );
    assert!((cu[0] - 0.1).abs() < 1e-12); // 0.2 s · 0.5
    assert!((cu[1] - 0.25).abs() < 1e-12);
    assert!((cu[2] - 0.2).abs() < 1e-12);
    assert!((mu[1] - 0.3).abs() < 1e-12);
    assert_eq!(mu[2], 0.0);
}

#[test]
fn last_partial_second_is_a_fraction_of_its_covered_part() {
    let mut s = SecondSeries::new();
    // The run ends at 2.5: second 2 covers 0.5 s, of which the worker was busy 0.25 s.
    s.on_busy(0, 2.0, 2.25, 0.0, 0.0);
    let c = s.finish(2.5);
    assert_eq!(c.points, 3);
    assert_eq!(c.workers[0].busy_fraction[2], 0.5);
}

#[test]
fn counters_land_in_their_second_and_columns_line_up() {
    let mut s = SecondSeries::new();
    s.on_arrival(0.0);
    s.on_arrival(0.999);
    s.on_arrival(1.0);
    s.on_completion(2.5);
    s.on_tokens(2.5, 7);
    s.on_tokens(2.9, 3);
    s.sample_active_workers(1, 2);
    s.sample_workers(2, [(1, 4, 8, 120)]);
    let c = s.finish(3.0);
    assert_eq!(c.arrivals, vec![2, 1, 0]);
    assert_eq!(c.completions, vec![0, 0, 1]);
    assert_eq!(c.output_tokens, vec![0, 0, 10]);
    // A sample holds until the next one: nothing was sampled before second 1, and the
    // sample of second 1 still holds in second 2.
    assert_eq!(c.active_workers, vec![0, 2, 2]);
    assert_eq!(c.workers[1].waiting, vec![0, 0, 4]);
    assert_eq!(c.workers[1].running, vec![0, 0, 8]);
    assert_eq!(c.workers[1].kv_blocks, vec![0, 0, 120]);
    assert_eq!(c.workers[0].kv_blocks.len(), 3);
}

#[test]
fn itl_distribution_lists_each_distinct_gap_once_in_order() {
    let mut h = ItlHistogram::new();
    h.add(0.02, 3);
    h.add(0.01, 5);
    h.add(0.02, 1);
    // 0.01 s five times, then 0.02 s four times (3 + 1).
    assert_eq!(h.iter().collect::<Vec<_>>(), vec![(0.01, 5), (0.02, 4)]);
}
