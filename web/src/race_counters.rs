//! A race's live counters: for each entrant, at any simulated time, what it has completed,
//! its TTFT so far and its GPU prefix-cache hit rate so far; which entrant leads each; and
//! where the entrants part ways; and the race's verdict over its seeds.
//!
//! "So far" counts the requests completed by then, as the engine's stage tables count the
//! completed requests: at the end of a one-stage run the counters equal its table.

use opal::router::{Basis, CandidateScore, RoutingDecision};
use opal::simulation::SimulationResults;
use opal::stats::LatencySummary;

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

/// The first routing decision the entrants disagree on for a reason: the request (same id,
/// same arrival in every entrant), the worker each sent it to, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct RouteSplit {
    /// When the request arrived, simulated seconds.
    pub at_s: f64,
    /// Its id.
    pub request: u64,
    /// Each entrant's worker for it (`None`: never routed).
    pub workers: Vec<Option<u32>>,
    /// Each entrant's reason for its worker: the basis of a decision that singled it out
    /// (`None`: a turn, a draw, a tie, or no decision kept).
    pub reasons: Vec<Option<Basis>>,
}

/// Whether a routing decision singled its worker out: a session's worker, or a best score
/// no other candidate shares. A round robin turn, a random draw and a tie (broken at random
/// or by the lowest id) are not reasons, nor is a decision whose scores were not kept.
pub fn chose_for_a_reason(d: &RoutingDecision) -> bool {
    if d.basis == Basis::SessionWorker {
        return true;
    }
    let Some(chosen) = d.candidates.iter().find(|c| c.worker == d.worker) else {
        return false;
    };
    let beats = |key: fn(&CandidateScore) -> f64, lower: bool| {
        d.candidates
            .iter()
            .filter(|o| o.worker != d.worker)
            .all(|o| {
                if lower {
                    key(&chosen) < key(&o)
                } else {
                    key(&chosen) > key(&o)
                }
            })
    };
    match d.basis {
        Basis::ItsTurn | Basis::Drawn => false,
        Basis::SessionWorker => unreachable!("answered above"),
        // Its scores only mark the choice: the outstanding requests show a tie.
        Basis::SessionLeastLoaded => beats(|c| f64::from(c.outstanding), true),
        Basis::Outstanding
        | Basis::OutstandingOfTwo
        | Basis::KvUsage
        | Basis::TreeSize
        | Basis::DynamoCost => beats(|c| c.score, true),
        Basis::PrefixFraction | Basis::PrefixLoad | Basis::TreeMatch | Basis::Scorers => {
            beats(|c| c.score, false)
        }
    }
}

/// Each of the first `n` requests' routing decision (the last made for it).
fn decision_by_request(run: &SimulationResults, n: usize) -> Vec<Option<&RoutingDecision>> {
    let mut by = vec![None; n];
    for d in &run.decisions {
        if let Some(slot) = by.get_mut(d.request as usize) {
            *slot = Some(&d.decision);
        }
    }
    by
}

/// Where the entrants' routing first differs for a reason, if it does (over the requests
/// all of them issued, in id order): the first request they send to different workers
/// where at least one of them [chose for a reason](chose_for_a_reason). A split made only
/// of turns, draws and ties is the arrivals' luck, not the policies parting ways.
pub fn route_split(runs: &[&SimulationResults]) -> Option<RouteSplit> {
    let n = runs.iter().map(|r| r.requests.len()).min()?;
    let decisions: Vec<_> = runs.iter().map(|r| decision_by_request(r, n)).collect();
    (0..n).find_map(|i| {
        let first = &runs[0].requests[i];
        let workers: Vec<Option<u32>> = runs.iter().map(|r| r.requests[i].worker).collect();
        if workers.iter().all(|w| *w == workers[0]) {
            return None;
        }
        let reasons: Vec<Option<Basis>> = decisions
            .iter()
            .map(|d| d[i].filter(|d| chose_for_a_reason(d)).map(|d| d.basis))
            .collect();
        reasons.iter().any(Option::is_some).then_some(RouteSplit {
            at_s: first.created,
            request: first.id,
            workers,
            reasons,
        })
    })
}

/// Most instants [`p99_lead_for_good`] compares the entrants at.
const MAX_SAMPLES: usize = 400;

/// Where a run's warm-up ends: its first measurement window's start (the first arrival
/// measured), 0 when no window has one.
pub fn warmup_end(results: &SimulationResults) -> f64 {
    results
        .windows
        .iter()
        .map(|w| w.start)
        .find(|s| s.is_finite())
        .unwrap_or(0.0)
}

/// The time from which one entrant keeps the lowest p99 TTFT so far to the end, and who:
/// the moment the tail race is decided, never before `from` (the warm-up's end: a lead
/// held since earlier is decided at `from`). `None` when it is tied at the end.
pub fn p99_lead_for_good(lanes: &[&Counters], from: f64) -> Option<(f64, usize)> {
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
    // of that final stretch, and counts from the warm-up's end at the earliest.
    let mut since = last;
    for &t in samples.iter().rev() {
        if lead_at(t) != Some(winner) {
            break;
        }
        since = t;
        if t <= from {
            break;
        }
    }
    Some((since.max(from), winner))
}

/// How the tail race went at one seed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SeedOutcome {
    /// Some entrant is still simulating.
    Running,
    /// Some entrant could not run.
    Failed,
    /// p99 TTFT ends tied.
    Tied,
    /// `entrant` ends with the lowest p99 TTFT, held since `decided_s` (after the warm-up).
    Won {
        /// Lane index.
        entrant: usize,
        /// When it took the lead for good.
        decided_s: f64,
    },
}

/// A marker of the race view: when (where to jump, if anywhere) and what it says.
pub type Marker = (Option<f64>, String);

/// The race's verdict on p99 TTFT over its seeds; the first seed is the one played back.
/// `None` while the first seed runs. A winner is settled only when it wins at every seed.
pub fn verdict(outcomes: &[SeedOutcome], labels: &[&str]) -> Option<Marker> {
    let first = *outcomes.first()?;
    let n = outcomes.len();
    let decided = |t: f64| format!("decided at {}, after the warm-up", seconds(t));
    let first_time = match first {
        SeedOutcome::Running => return None,
        SeedOutcome::Won { decided_s, .. } => Some(decided_s),
        _ => None,
    };
    let first_words = match first {
        SeedOutcome::Won { entrant, decided_s } => format!(
            "{} leads p99 TTFT at the played seed ({})",
            labels[entrant],
            decided(decided_s)
        ),
        SeedOutcome::Tied => "p99 TTFT ends tied at the played seed".into(),
        _ => "an entrant could not run at the played seed".into(),
    };
    if n == 1 {
        return Some((
            first_time,
            format!(
                "{first_words}; one seed settles nothing: set race.seeds to see whether it holds."
            ),
        ));
    }
    let running = outcomes
        .iter()
        .filter(|o| **o == SeedOutcome::Running)
        .count();
    if running > 0 {
        return Some((
            first_time,
            format!(
                "{first_words}; checking {running} more seed{}…",
                if running == 1 { "" } else { "s" }
            ),
        ));
    }
    let mut wins = vec![0usize; labels.len()];
    for o in outcomes {
        if let SeedOutcome::Won { entrant, .. } = o {
            wins[*entrant] += 1;
        }
    }
    if let (SeedOutcome::Won { entrant, decided_s }, true) = (first, wins.contains(&n)) {
        return Some((
            Some(decided_s),
            format!(
                "{} leads p99 TTFT in {n} of {n} seeds ({}).",
                labels[entrant],
                decided(decided_s)
            ),
        ));
    }
    let mut parts: Vec<String> = wins
        .iter()
        .enumerate()
        .filter(|(_, w)| **w > 0)
        .map(|(i, w)| format!("{} in {w}", labels[i]))
        .collect();
    let tied = outcomes.iter().filter(|o| **o == SeedOutcome::Tied).count();
    let failed = outcomes
        .iter()
        .filter(|o| **o == SeedOutcome::Failed)
        .count();
    if tied > 0 {
        parts.push(format!("tied in {tied}"));
    }
    if failed > 0 {
        parts.push(format!("{failed} could not run"));
    }
    if let Some(p) = parts.first_mut() {
        p.push_str(&format!(" of {n} seeds"));
    }
    Some((
        first_time,
        format!("no consistent winner: {}.", parts.join(", ")),
    ))
}

/// Simulated seconds for a sentence: one decimal below 10 s, whole seconds above.
fn seconds(t: f64) -> String {
    if t < 10.0 {
        format!("{t:.1} s")
    } else {
        format!("{t:.0} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opal::simulation::RoutingRecord;
    use opal::stats::RequestRecord;

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
        let scenario = opal::parse_scenario(r#"{"workload": {"stages": [{"type": "UniformReqRate", "request_rate": 1, "total_requests": 1}]}}"#).unwrap();
        let mut sim = opal::simulation::Simulation::new(&scenario, &Default::default()).unwrap();
        sim.run();
        let mut r = sim.results();
        r.requests = requests.into();
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

    /// A decision for `request` sending it to `worker` of workers 0–3 scored `scores`.
    fn decided(request: u64, worker: u32, basis: Basis, scores: [f64; 4]) -> RoutingRecord {
        let candidates: Vec<CandidateScore> = (0..4)
            .map(|k| CandidateScore {
                worker: k,
                score: scores[k as usize],
                outstanding: 0,
                kv_usage: 0.0,
                prefix: None,
            })
            .collect();
        RoutingRecord {
            request,
            time: 0.0,
            decision: RoutingDecision {
                worker,
                basis,
                candidates: candidates.into(),
            },
        }
    }

    #[test]
    fn a_decision_has_a_reason_when_its_score_alone_is_best() {
        let reason =
            |worker, basis, scores| chose_for_a_reason(&decided(0, worker, basis, scores).decision);
        let pf = Basis::PrefixFraction;
        assert!(reason(2, pf, [0.0, 0.5, 0.9, 0.0]), "the longest prefix");
        assert!(
            !reason(2, pf, [0.0, 0.0, 0.0, 0.0]),
            "no match anywhere: a draw"
        );
        assert!(
            !reason(1, pf, [0.0, 0.9, 0.9, 0.0]),
            "two share the longest"
        );
        assert!(
            reason(3, Basis::Outstanding, [2.0, 1.0, 4.0, 0.0]),
            "fewest outstanding"
        );
        assert!(
            !reason(0, Basis::Outstanding, [1.0, 1.0, 4.0, 2.0]),
            "lowest id breaks the tie"
        );
        assert!(
            !reason(1, Basis::ItsTurn, [0.0, 1.0, 0.0, 0.0]),
            "round robin's turn"
        );
        assert!(
            !reason(1, Basis::Drawn, [0.0, 1.0, 0.0, 0.0]),
            "a random draw"
        );
        assert!(reason(1, Basis::SessionWorker, [0.0, 1.0, 0.0, 0.0]));
        let mut kept_none = decided(0, 2, pf, [0.0, 0.5, 0.9, 0.0]).decision;
        kept_none.candidates = Default::default();
        assert!(
            !chose_for_a_reason(&kept_none),
            "no scores, no reason shown"
        );
    }

    #[test]
    fn routes_split_at_the_first_request_sent_elsewhere_for_a_reason() {
        // Round robin sends requests 0, 1, 2 to workers 0, 1, 2. Prefix-aware sends request
        // 0 to worker 3 on a tie (nobody holds its prefix), request 1 to worker 1 (the
        // longest prefix, as round robin's turn), request 2 to worker 3 (the longest
        // prefix, 0.8): the routes split for a reason at request 2, at t = 0.8.
        let reqs = || {
            vec![
                done(0, 0.0, 0.1, 1.0, 0),
                done(1, 0.4, 0.1, 1.0, 0),
                done(2, 0.8, 0.1, 1.0, 0),
            ]
        };
        let (mut a, mut b) = (reqs(), reqs());
        for (i, w) in [0, 1, 2].into_iter().enumerate() {
            a[i].worker = Some(w);
        }
        for (i, w) in [3, 1, 3].into_iter().enumerate() {
            b[i].worker = Some(w);
        }
        let turn = |i: u64, w: u32| {
            let mut s = [0.0; 4];
            s[w as usize] = 1.0;
            decided(i, w, Basis::ItsTurn, s)
        };
        let pf = Basis::PrefixFraction;
        let mut a = results(a);
        a.decisions = vec![turn(0, 0), turn(1, 1), turn(2, 2)].into();
        let mut b = results(b);
        b.decisions = vec![
            decided(0, 3, pf, [0.0; 4]),
            decided(1, 1, pf, [0.0, 0.5, 0.0, 0.0]),
            decided(2, 3, pf, [0.2, 0.0, 0.0, 0.8]),
        ]
        .into();
        assert_eq!(
            route_split(&[&a, &b]),
            Some(RouteSplit {
                at_s: 0.8,
                request: 2,
                workers: vec![Some(2), Some(3)],
                reasons: vec![None, Some(pf)],
            })
        );
        assert_eq!(route_split(&[&a, &a]), None);
        // Request 2 on a tie as well: the routes differ only by luck.
        b.decisions[2] = decided(2, 3, pf, [0.8, 0.0, 0.0, 0.8]);
        assert_eq!(route_split(&[&a, &b]), None);
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
        assert_eq!(p99_lead_for_good(&[&a, &b], 0.0), Some((3.0, 1)));
        assert_eq!(
            p99_lead_for_good(&[&a, &a], 0.0),
            None,
            "a tie decides nothing"
        );
        // A warm-up ending after the lead was taken moves the moment to its end; one
        // ending before it changes nothing.
        assert_eq!(p99_lead_for_good(&[&a, &b], 3.5), Some((3.5, 1)));
        assert_eq!(p99_lead_for_good(&[&a, &b], 2.5), Some((3.0, 1)));
    }

    #[test]
    fn a_lead_taken_during_the_warm_up_decides_nothing_before_its_end() {
        // A: TTFTs 0.1 s at t = 1, 0.2 s at 2, 0.2 s at 3, 0.2 s at 4. B: 0.3 s at t = 1.5,
        // 0.3 s at 2.5, 0.3 s at 3.5, 0.3 s at 4.5. At t = 1 only A has a p99 (no race);
        // from t = 1.5 (B's first) to the end A leads, 100–200 ms against 300. Without a
        // warm-up it is decided at t = 1.5; with the warm-up ending at t = 2.2 the lead
        // counts from 2.2, though A held it before.
        let a = Counters::new(&results(
            (0..4)
                .map(|i| done(i, 0.0, if i == 0 { 0.1 } else { 0.2 }, 1.0 + i as f64, 0))
                .collect(),
        ));
        let b = Counters::new(&results(
            (0..4)
                .map(|i| done(i, 0.0, 0.3, 1.5 + i as f64, 0))
                .collect(),
        ));
        assert_eq!(p99_lead_for_good(&[&a, &b], 0.0), Some((1.5, 0)));
        assert_eq!(p99_lead_for_good(&[&a, &b], 2.2), Some((2.2, 0)));
    }

    const LABELS: [&str; 2] = ["round robin", "prefix-aware"];

    fn won(entrant: usize, decided_s: f64) -> SeedOutcome {
        SeedOutcome::Won { entrant, decided_s }
    }

    #[test]
    fn a_winner_is_named_only_when_every_seed_agrees() {
        assert_eq!(
            verdict(&[won(1, 97.2), won(1, 120.0), won(1, 88.0)], &LABELS),
            Some((
                Some(97.2),
                "prefix-aware leads p99 TTFT in 3 of 3 seeds (decided at 97 s, after the warm-up)."
                    .into()
            ))
        );
        assert_eq!(
            verdict(&[won(0, 2.54), won(1, 50.0), won(1, 60.0)], &LABELS),
            Some((
                Some(2.54),
                "no consistent winner: round robin in 1 of 3 seeds, prefix-aware in 2.".into()
            ))
        );
        assert_eq!(
            verdict(
                &[won(1, 9.0), SeedOutcome::Tied, SeedOutcome::Failed],
                &LABELS
            ),
            Some((
                Some(9.0),
                "no consistent winner: prefix-aware in 1 of 3 seeds, tied in 1, 1 could not run."
                    .into()
            ))
        );
    }

    #[test]
    fn one_seed_or_seeds_still_running_settle_nothing() {
        assert_eq!(verdict(&[SeedOutcome::Running, won(1, 3.0)], &LABELS), None);
        assert_eq!(
            verdict(&[won(0, 2.54)], &LABELS),
            Some((
                Some(2.54),
                "round robin leads p99 TTFT at the played seed (decided at 2.5 s, after the \
                 warm-up); one seed settles nothing: set race.seeds to see whether it holds."
                    .into()
            ))
        );
        assert_eq!(
            verdict(&[won(1, 97.0), SeedOutcome::Running, won(1, 90.0)], &LABELS),
            Some((
                Some(97.0),
                "prefix-aware leads p99 TTFT at the played seed (decided at 97 s, after the \
                 warm-up); checking 1 more seed…"
                    .into()
            ))
        );
    }

    /// The race preset, as the app judges it: each seed's entrants run to their end, the
    /// tail race decided after the warm-up, the verdict over the seeds.
    fn preset_verdict() -> (Vec<SeedOutcome>, Option<Marker>, Option<RouteSplit>) {
        let preset = opal::document::presets()
            .into_iter()
            .find(|p| p.id == "race_round_robin_vs_prefix")
            .unwrap();
        let scenario = opal::parse_scenario(preset.json).unwrap();
        let mut split = None;
        let outcomes = (0..opal::race::seeds(&scenario))
            .map(|k| {
                let runs: Vec<SimulationResults> = opal::race::entrants_at_seed(&scenario, k)
                    .into_iter()
                    .map(|(_, s)| {
                        let mut sim =
                            opal::simulation::Simulation::new(&s.unwrap(), &Default::default())
                                .unwrap();
                        sim.run();
                        sim.results()
                    })
                    .collect();
                if k == 0 {
                    split = route_split(&runs.iter().collect::<Vec<_>>());
                }
                let counters: Vec<Counters> = runs.iter().map(Counters::new).collect();
                let from = runs.iter().map(warmup_end).fold(0.0, f64::max);
                match p99_lead_for_good(&counters.iter().collect::<Vec<_>>(), from) {
                    Some((decided_s, entrant)) => SeedOutcome::Won { entrant, decided_s },
                    None => SeedOutcome::Tied,
                }
            })
            .collect::<Vec<_>>();
        let v = verdict(&outcomes, &LABELS);
        (outcomes, v, split)
    }

    #[test]
    #[ignore = "six 6,000-request runs, slow unoptimised (the browser test checks the verdict): cargo test -p opal-web --lib preset_s_winner -- --ignored --nocapture"]
    fn the_race_preset_s_winner_holds_at_each_of_its_seeds() {
        let (outcomes, v, split) = preset_verdict();
        assert_eq!(outcomes.len(), 3);
        eprintln!("{outcomes:?}\n{v:?}\n{split:?}");
        let (at, text) = v.unwrap();
        assert!(
            text.starts_with("prefix-aware leads p99 TTFT in 3 of 3 seeds (decided at "),
            "{text}"
        );
        // Decided after the warm-up (its first 600 arrivals at 20 req/s, ~30 s).
        assert!(at.unwrap() > 25.0, "{at:?}");
        // The routes split where prefix-aware followed a cached prefix, not at a tie.
        let split = split.unwrap();
        assert_eq!(split.reasons[1], Some(Basis::PrefixFraction), "{split:?}");
    }
}
