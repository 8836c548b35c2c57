//! The autoscaler rule over a sequence of per-second observations.

use engine::router::{Autoscaler, AutoscalerConfig, ScaleAction};

fn config() -> AutoscalerConfig {
    AutoscalerConfig {
        enabled: true,
        max_queue_threshold: 4,
        max_workers: 3,
        min_workers: 1,
        scale_latency: 5.0,
        scale_down_threshold: 1,
        cooldown: 10.0,
    }
}

#[test]
fn scales_up_one_at_a_time_up_to_max_workers() {
    let mut a = Autoscaler::new(config());
    // t=1: busiest has 4, not more than the threshold 4.
    assert_eq!(a.observe(1.0, &[(0, 4)], 1), ScaleAction::Hold);
    // t=2: 5 > 4 and 1 < 3 workers → scale up; ready at 2 + 5 = 7.
    assert_eq!(
        a.observe(2.0, &[(0, 5)], 1),
        ScaleAction::ScaleUp { ready_at: 7.0 }
    );
    // t=3..6: still overloaded, but one scale-up is in flight.
    for t in 3..=6 {
        assert_eq!(a.observe(t as f64, &[(0, 8)], 2), ScaleAction::Hold);
    }
    assert_eq!(a.pending_until(), Some(7.0));
    // t=7: the new worker is active; worker 0 still has 6 > 4 → the second scale-up, ready at 12.
    a.scale_up_done();
    assert_eq!(
        a.observe(7.0, &[(0, 6), (1, 0)], 2),
        ScaleAction::ScaleUp { ready_at: 12.0 }
    );
    a.scale_up_done();
    // t=13: three workers = max_workers: overload no longer adds any.
    assert_eq!(
        a.observe(13.0, &[(0, 9), (1, 9), (2, 9)], 3),
        ScaleAction::Hold
    );
    assert_eq!(a.pending_until(), None);
}

#[test]
fn a_quiet_period_lowers_to_min_workers_one_cooldown_at_a_time() {
    let mut a = Autoscaler::new(config());
    // Three workers, all at or below the low threshold (1) from t=20 on.
    let mut workers = 3;
    let mut actions = Vec::new();
    let mut loads = vec![(0u32, 1u32), (1, 0), (2, 0)];
    for t in 20..=60 {
        match a.observe(t as f64, &loads, workers) {
            ScaleAction::Hold => {}
            ScaleAction::ScaleDown { worker } => {
                actions.push((t, worker));
                loads.retain(|&(id, _)| id != worker);
                workers -= 1;
            }
            other => panic!("unexpected {other:?} at t={t}"),
        }
    }
    // Quiet since t=20 → first scale-down at 20 + 10 = 30, of the fewest-outstanding worker
    // with the highest id (1 and 2 have 0 → 2); the next after another cooldown at 40 (worker 1);
    // then worker 0 alone is min_workers, so nothing more.
    assert_eq!(actions, vec![(30, 2), (40, 1)]);
}

#[test]
fn a_load_spike_restarts_the_cooldown() {
    let mut a = Autoscaler::new(config());
    let quiet = [(0u32, 0u32), (1, 0)];
    for t in 0..=8 {
        assert_eq!(a.observe(t as f64, &quiet, 2), ScaleAction::Hold);
    }
    // t=9: 3 outstanding is above the low threshold (1) but not the high one (4): no action,
    // and the quiet period starts over.
    assert_eq!(a.observe(9.0, &[(0, 3), (1, 0)], 2), ScaleAction::Hold);
    for t in 10..=19 {
        assert_eq!(a.observe(t as f64, &quiet, 2), ScaleAction::Hold, "t={t}");
    }
    // Quiet again since t=10 → scale down at t=20.
    assert_eq!(
        a.observe(20.0, &quiet, 2),
        ScaleAction::ScaleDown { worker: 1 }
    );
}

#[test]
fn disabled_autoscaler_never_acts() {
    let mut a = Autoscaler::new(AutoscalerConfig {
        enabled: false,
        ..config()
    });
    assert_eq!(a.observe(1.0, &[(0, 100)], 1), ScaleAction::Hold);
    assert_eq!(a.observe(100.0, &[(0, 0), (1, 0)], 2), ScaleAction::Hold);
}
