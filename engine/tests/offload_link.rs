//! A tier's transfer link: latency once, bandwidth shared by processor sharing.

use engine::offload::{Completion, TierConfig, TransferLink};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

fn done(link: &mut TransferLink, until: f64) -> Vec<(u64, f64)> {
    link.advance_to(until)
        .into_iter()
        .map(|Completion { id, time }| (id, time))
        .collect()
}

#[test]
fn an_idle_tier_takes_latency_plus_size_over_bandwidth() {
    // Local NVMe: 10 GB/s, 10 µs. 1 GB takes 10e-6 + 1e9 / 1e10 = 0.10001 s.
    let mut link = TransferLink::for_tier(&TierConfig::local_nvme());
    link.start(0.0, 1, 1e9);
    let (t, id) = link.next_completion().unwrap();
    assert_eq!(id, 1);
    assert!(close(t, 0.10001), "{t}");
    assert!(done(&mut link, 0.1).is_empty());
    let d = done(&mut link, 1.0);
    assert_eq!(d.len(), 1);
    assert!(close(d[0].1, 0.10001));
    assert!(link.is_idle());
}

#[test]
fn two_concurrent_transfers_each_take_twice_as_long() {
    // 1 GB/s, 1 ms latency, 100 MB each: alone 0.001 + 0.1; together each gets 0.5 GB/s
    // after the shared latency, so both finish at 0.001 + 0.2 = 0.201.
    let mut link = TransferLink::new(1e9, 1e-3, 10);
    link.start(0.0, 1, 1e8);
    link.start(0.0, 2, 1e8);
    let d = done(&mut link, 1.0);
    assert_eq!(d.iter().map(|c| c.0).collect::<Vec<_>>(), vec![1, 2]);
    assert!(d.iter().all(|c| close(c.1, 0.201)), "{d:?}");
}

#[test]
fn a_transfer_joining_midway_redivides_the_bandwidth() {
    // 1 GB/s, no latency. A: 1 GB from t=0 (alone it would end at 1.0).
    // B: 200 MB at t=0.5. At 0.5, A has 500 MB left; both now get 500 MB/s.
    // B ends after 200/500 = 0.4 s → 0.9. A then has 500 − 200 = 300 MB, alone → 0.3 s → 1.2.
    let mut link = TransferLink::new(1e9, 0.0, 10);
    link.start(0.0, 1, 1e9);
    assert!(close(link.next_completion().unwrap().0, 1.0));
    assert!(done(&mut link, 0.5).is_empty());
    link.start(0.5, 2, 2e8);
    let (t, id) = link.next_completion().unwrap();
    assert_eq!(id, 2);
    assert!(close(t, 0.9), "{t}");
    let d = done(&mut link, 2.0);
    assert_eq!(d[0].0, 2);
    assert!(close(d[0].1, 0.9));
    assert_eq!(d[1].0, 1);
    assert!(close(d[1].1, 1.2), "{d:?}");
}

#[test]
fn a_joining_transfer_uses_no_bandwidth_while_paying_its_latency() {
    // 1 GB/s, 0.1 s latency. A: 1 GB at t=0 → data flows from 0.1.
    // B: 200 MB at t=0.5 → its data flows from 0.6. A alone from 0.1 to 0.6 moves 500 MB
    // (500 MB left). Then 500 MB/s each: B ends 0.4 s later at 1.0; A has 300 MB left → 1.3.
    let mut link = TransferLink::new(1e9, 0.1, 10);
    link.start(0.0, 1, 1e9);
    link.start(0.5, 2, 2e8);
    // The next internal change is B's latency ending at 0.6.
    assert!(close(link.next_event_time().unwrap(), 0.6));
    let d = done(&mut link, 2.0);
    assert_eq!(d.len(), 2);
    assert!(close(d[0].1, 1.0) && d[0].0 == 2, "{d:?}");
    assert!(close(d[1].1, 1.3) && d[1].0 == 1, "{d:?}");
}

#[test]
fn the_concurrency_limit_queues_the_extra_transfer_fifo() {
    // One slot, 1 GB/s, 10 ms latency, 100 MB each. A: 0.01 + 0.1 = 0.11.
    // B waits for the slot, then pays its own latency: 0.11 + 0.01 + 0.1 = 0.22.
    // C waits for B: 0.22 + 0.11 = 0.33.
    let mut link = TransferLink::new(1e9, 0.01, 1);
    for id in 1..=3 {
        link.start(0.0, id, 1e8);
    }
    assert_eq!((link.in_service(), link.queued()), (1, 2));
    let d = done(&mut link, 1.0);
    let expect = [(1, 0.11), (2, 0.22), (3, 0.33)];
    assert_eq!(d.len(), 3);
    for (got, want) in d.iter().zip(expect) {
        assert!(got.0 == want.0 && close(got.1, want.1), "{d:?}");
    }
}

#[test]
fn completions_before_a_new_start_are_not_lost() {
    // A (100 MB at 1 GB/s, no latency) ends at 0.1; B starts at 0.5 without the caller
    // having advanced in between. A is still reported, at its true time.
    let mut link = TransferLink::new(1e9, 0.0, 4);
    link.start(0.0, 1, 1e8);
    link.start(0.5, 2, 1e8);
    assert_eq!(link.next_completion().map(|c| c.1), Some(1));
    let d = done(&mut link, 0.5);
    assert_eq!(d.len(), 1);
    assert!(d[0].0 == 1 && close(d[0].1, 0.1));
    // B alone: 0.5 + 0.1.
    let d = done(&mut link, 1.0);
    assert!(d[0].0 == 2 && close(d[0].1, 0.6));
}

#[test]
fn an_empty_transfer_costs_only_the_latency() {
    let mut link = TransferLink::new(1e9, 0.25, 4);
    link.start(1.0, 9, 0.0);
    let d = done(&mut link, 5.0);
    assert!(d.len() == 1 && close(d[0].1, 1.25), "{d:?}");
}
