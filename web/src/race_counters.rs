//! A race's live counters: for each entrant, at any simulated time, what it has completed,
//! its TTFT so far and its GPU prefix-cache hit rate so far; which entrant leads each; and
//! where the entrants part ways.
//!
//! "So far" counts the requests completed by then, as the engine's stage tables count the
//! completed requests: at the end of a one-stage run the counters equal its table.

use engine::simulation::SimulationResults;
use engine::stats::LatencySummary;

/// One completed request, as the counters need it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Done {
    completion: f64,
    ttft: f64,
    gpu_cache: u64,
    prompt: u64,
}

/// One entrant's completed requests, by completion time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counters {
    done: Vec<Done>,
}

/// One entrant's counters at an instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CountersNow {
    /// Requests completed so far.
    pub completed: usize,
    /// TTFT of those requests (NaN before the first).
    pub ttft: LatencySummary,
    /// Share of their prompt tokens the GPU prefix cache served, 0–1 (NaN before the first).
    pub gpu_hit: f64,
}

impl Counters {
    /// Indexes a finished run.
    pub fn new(results: &SimulationResults) -> Self {
        let mut done: Vec<Done> = results
            .requests
            .iter()
            .filter(|r| r.is_completed())
            .map(|r| Done {
                completion: r.completion,
                ttft: r.ttft(),
                gpu_cache: u64::from(r.sources.gpu_cache),
                prompt: u64::from(r.sources.prompt_total()),
            })
            .collect();
        crate::order::sort_by_number(&mut done, |d| d.completion);
        Self { done }
    }

    /// The counters at simulated time `t` (requests completed at or before `t`).
    pub fn at(&self, t: f64) -> CountersNow {
        let n = self.done.partition_point(|d| d.completion <= t);
        let done = &self.done[..n];
        let (hit, prompt) = done
            .iter()
            .fold((0u64, 0u64), |(h, p), d| (h + d.gpu_cache, p + d.prompt));
        CountersNow {
            completed: n,
            ttft: LatencySummary::from_seconds(done.iter().map(|d| d.ttft).collect()),
            gpu_hit: if prompt > 0 {
                hit as f64 / prompt as f64
            } else {
                f64::NAN
            },
        }
    }

    /// Completion times, ascending.
    fn completions(&self) -> impl Iterator<Item = f64> + '_ {
        self.done.iter().map(|d| d.completion)
    }
}

/// Which entrant leads a counter: the index of the single best value, `None` on a tie or
/// when fewer than two entrants have a value (NaN). `higher` says which way is better.
pub fn leader(values: &[f64], higher: bool) -> Option<usize> {
    let known: Vec<(usize, f64)> = values
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, v)| !v.is_nan())
        .collect();
    if known.len() < 2 {
        return None;
    }
    let better = |a: f64, b: f64| if higher { a > b } else { a < b };
    let (best, v) = known
        .iter()
        .copied()
        .reduce(|a, b| if better(b.1, a.1) { b } else { a })?;
    let ties = known.iter().filter(|(_, x)| *x == v).count();
    (ties == 1).then_some(best)
}

/// The first routing decision the entrants disagree on: the request (same id, same arrival
/// in every entrant) and the worker each sent it to.
#[derive(Debug, Clone, PartialEq)]
pub struct RouteSplit {
    /// When the request arrived, simulated seconds.
    pub at_s: f64,
    /// Its id.
    pub request: u64,
    /// Each entrant's worker for it (`None`: never routed).
    pub workers: Vec<Option<u32>>,
}

/// Where the entrants' routing first differs, if it does (over the requests all of them
/// issued, in id order).
pub fn route_split(runs: &[&SimulationResults]) -> Option<RouteSplit> {
    let n = runs.iter().map(|r| r.requests.len()).min()?;
    (0..n).find_map(|i| {
        let first = &runs[0].requests[i];
        let workers: Vec<Option<u32>> = runs.iter().map(|r| r.requests[i].worker).collect();
        workers
            .iter()
            .any(|w| *w != workers[0])
            .then_some(RouteSplit {
                at_s: first.created,
                request: first.id,
                workers,
            })
    })
}

/// Most instants [`p99_lead_for_good`] compares the entrants at.
const MAX_SAMPLES: usize = 400;

/// The time from which one entrant keeps the lowest p99 TTFT so far to the end, and who:
/// the moment the tail race is decided. `None` when it is tied at the end.
pub fn p99_lead_for_good(lanes: &[&Counters]) -> Option<(f64, usize)> {
    let mut times: Vec<f64> = lanes.iter().flat_map(|c| c.completions()).collect();
    times.sort_unstable_by(f64::total_cmp);
    times.dedup();
    // Evenly spaced samples of the completion times (always including the last).
    let step = times.len().div_ceil(MAX_SAMPLES).max(1);
    let last = *times.last()?;
    let mut samples: Vec<f64> = times.iter().copied().step_by(step).collect();
    if samples.last() != Some(&last) {
        samples.push(last);
    }
    let lead_at = |t: f64| {
        let p99: Vec<f64> = lanes.iter().map(|c| c.at(t).ttft.p99_ms).collect();
        leader(&p99, false)
    };
    let winner = lead_at(last)?;
    // Walk back from the end while the winner leads; the lead began at the earliest sample
    // of that final stretch.
    let mut since = last;
    for &t in samples.iter().rev() {
        if lead_at(t) != Some(winner) {
            break;
        }
        since = t;
    }
    Some((since, winner))
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::stats::RequestRecord;

    /// A completed request: created at `created`, first token after `ttft`, done at `done`,
    /// with `hit` of its 100 prompt tokens from the GPU prefix cache.
    fn done(id: u64, created: f64, ttft: f64, completion: f64, hit: u32) -> RequestRecord {
        let mut r = RequestRecord::new(id, 0, created, 100);
        r.worker = Some(0);
        r.first_token = created + ttft;
        r.completion = completion;
        r.sources.gpu_cache = hit;
        r.sources.computed = 100 - hit;
        r
    }

    fn results(requests: Vec<RequestRecord>) -> SimulationResults {
        let scenario = engine::scenario::Scenario::parse(r#"{"workload": {"stages": [{"type": "UniformReqRate", "request_rate": 1, "total_requests": 1}]}}"#).unwrap();
        let mut sim = engine::simulation::Simulation::new(&scenario, &Default::default()).unwrap();
        sim.run();
        let mut r = sim.results();
        r.requests = requests;
        r
    }

    #[test]
    fn counters_count_the_requests_completed_so_far() {
        // TTFTs 0.1, 0.3, 0.2 s done at 1, 2, 3 s; hits 50, 0, 100 of 100 prompt tokens.
        let c = Counters::new(&results(vec![
            done(0, 0.0, 0.1, 1.0, 50),
            done(1, 0.5, 0.3, 2.0, 0),
            done(2, 1.0, 0.2, 3.0, 100),
        ]));
        let before = c.at(0.5);
        assert_eq!(before.completed, 0);
        assert!(before.ttft.p99_ms.is_nan() && before.gpu_hit.is_nan());
        let mid = c.at(2.0);
        assert_eq!(mid.completed, 2);
        // p99 of [100, 300] ms: 100 + 200 · 0.99 = 298 ms; hits 50 of 200 tokens.
        assert!(
            (mid.ttft.p99_ms - 298.0).abs() < 1e-9,
            "{}",
            mid.ttft.p99_ms
        );
        assert_eq!(mid.gpu_hit, 0.25);
        let end = c.at(10.0);
        assert_eq!(end.completed, 3);
        assert!((end.ttft.mean_ms - 200.0).abs() < 1e-9);
        assert_eq!(end.gpu_hit, 0.5);
    }

    #[test]
    fn the_leader_is_the_single_best_known_value() {
        assert_eq!(leader(&[3.0, 5.0, 4.0], true), Some(1));
        assert_eq!(leader(&[3.0, 5.0, 4.0], false), Some(0));
        assert_eq!(leader(&[5.0, 5.0, 4.0], true), None, "a tie has no leader");
        assert_eq!(leader(&[f64::NAN, 2.0], true), None, "one value is no race");
        assert_eq!(leader(&[f64::NAN, 2.0, 1.0], false), Some(2));
    }

    #[test]
    fn routes_split_at_the_first_request_sent_to_different_workers() {
        let mut a = vec![done(0, 0.0, 0.1, 1.0, 0), done(1, 0.4, 0.1, 1.0, 0)];
        let mut b = a.clone();
        a[1].worker = Some(1);
        b[1].worker = Some(3);
        let (a, b) = (results(a), results(b));
        assert_eq!(
            route_split(&[&a, &b]),
            Some(RouteSplit {
                at_s: 0.4,
                request: 1,
                workers: vec![Some(1), Some(3)]
            })
        );
        assert_eq!(route_split(&[&a, &a]), None);
    }

    #[test]
    fn the_tail_race_is_decided_when_the_winner_takes_the_lead_for_good() {
        // A: TTFTs 0.1 s at t = 1, 0.5 s at t = 3. B: 0.2 s at t = 2, 0.3 s at t = 4.
        // p99 so far: at 2, A 100 ms vs B 200 → A leads; at 3, A 496 vs B 200 → B leads
        // and keeps it (at 4, A 496 vs B 299): decided at t = 3.
        let a = Counters::new(&results(vec![
            done(0, 0.0, 0.1, 1.0, 0),
            done(1, 0.0, 0.5, 3.0, 0),
        ]));
        let b = Counters::new(&results(vec![
            done(0, 0.0, 0.2, 2.0, 0),
            done(1, 0.0, 0.3, 4.0, 0),
        ]));
        assert_eq!(p99_lead_for_good(&[&a, &b]), Some((3.0, 1)));
        assert_eq!(p99_lead_for_good(&[&a, &a]), None, "a tie decides nothing");
    }
}
