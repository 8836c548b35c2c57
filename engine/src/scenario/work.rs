//! The work a scenario asks for, estimated before it runs: requests, simulated seconds and
//! kernel events, each against its limit in the `simulation` section.
//!
//! The estimate follows the configuration: a stage bounded by `total_requests` at a rate
//! issues that many requests over `total_requests / rate` seconds, one bounded by
//! `time_duration_sec` issues `rate · duration`, a replayed file what it holds, and
//! `simulation_time` cuts the sum short. Service times are left out (they depend on the
//! cluster), so the horizon is a lower bound; the run itself stops at every limit anyway,
//! so the estimate only has to catch the scenarios that cannot be meant, with a message
//! that says which field asks for what.

use super::Scenario;
use crate::validate::{count, exponent_form, index, readable, Problem, Problems};
use crate::workload::generator::DataShape;
use crate::workload::{GeneratorConfig, StageConfig};

/// Kernel events a request costs, taken from the examples (33–220 per request, `opal run
/// --json` reports `events`; 50 is typical of a busy cluster, whose steps many requests
/// share).
pub const EVENTS_PER_REQUEST: f64 = 50.0;

/// What a scenario (or one stage) is expected to ask of the engine.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct WorkEstimate {
    /// Requests issued.
    pub requests: f64,
    /// Simulated seconds, from the start to the last arrival.
    pub seconds: f64,
    /// Kernel events processed.
    pub events: f64,
}

/// One stage's requests and arrival span, and its mean rate (for a cut by `simulation_time`).
#[derive(Debug, Clone, Copy)]
struct StageWork {
    requests: f64,
    seconds: f64,
    rate: f64,
}

impl StageWork {
    fn new(requests: f64, seconds: f64) -> Self {
        let rate = if seconds > 0.0 {
            requests / seconds
        } else {
            0.0
        };
        Self {
            requests,
            seconds,
            rate,
        }
    }

    /// An open-loop stage at `rate` requests/s, bounded by the stage's stop conditions.
    fn open_loop(stage: &StageConfig, rate: f64) -> Self {
        let (requests, seconds) = match (stage.total_requests, stage.time_duration_sec) {
            (Some(n), Some(t)) => ((n as f64).min(rate * t), (n as f64 / rate).min(t)),
            (Some(n), None) => (n as f64, n as f64 / rate),
            (None, Some(t)) => (rate * t, t),
            // Only `simulation_time` bounds it: the cut below decides.
            (None, None) => (f64::INFINITY, f64::INFINITY),
        };
        Self {
            requests,
            seconds,
            rate,
        }
    }

    /// A stage replaying `shape`, cut by the stage's stop conditions.
    fn replay(stage: &StageConfig, shape: DataShape) -> Self {
        let mut w = Self::new(shape.requests as f64, shape.seconds);
        if let Some(n) = stage.total_requests {
            if (n as f64) < w.requests {
                w.seconds *= n as f64 / w.requests;
                w.requests = n as f64;
            }
        }
        if let Some(t) = stage.time_duration_sec {
            w = w.cut(t);
        }
        w
    }

    /// The part of the stage that fits in `seconds`.
    fn cut(self, seconds: f64) -> Self {
        if self.seconds <= seconds {
            return self;
        }
        Self {
            requests: self.requests.min(self.rate * seconds),
            seconds,
            rate: self.rate,
        }
    }
}

/// What stage `stage` is expected to do; `shape` describes its data file when it has one
/// (without it, a replay stage counts as nothing: its file is checked when it is given).
fn stage_work(stage: &StageConfig, shape: Option<DataShape>) -> StageWork {
    match &stage.generator {
        GeneratorConfig::UniformReqRate(c)
        | GeneratorConfig::ExponentialReqRate(c)
        | GeneratorConfig::Gamma(c) => StageWork::open_loop(stage, c.request_rate),
        GeneratorConfig::RagWorkload(c) => StageWork::open_loop(stage, c.request_rate),
        GeneratorConfig::Trace(_) | GeneratorConfig::Sessions(_) => match shape {
            Some(shape) => StageWork::replay(stage, shape),
            None => StageWork::new(0.0, 0.0),
        },
        GeneratorConfig::SyntheticSessions(c) => {
            let rate = c.session_rate;
            let sessions = match stage.time_duration_sec {
                Some(t) => (c.num_sessions as f64).min(rate * t),
                None => c.num_sessions as f64,
            };
            let turns = c.turns.mean();
            // The last session starts after them all, then thinks before each later turn.
            let seconds = sessions / rate + (turns - 1.0).max(0.0) * c.think_time;
            StageWork::new(sessions * turns, seconds)
        }
    }
}

impl Scenario {
    /// The work this scenario asks for, per stage and in total; `shapes[i]` describes stage
    /// i's data file when known (missing entries count as unknown).
    pub fn work_estimate(&self, shapes: &[Option<DataShape>]) -> (Vec<WorkEstimate>, WorkEstimate) {
        let horizon = self.simulation.simulation_time.unwrap_or(f64::INFINITY);
        // The autoscaler looks once a simulated second, busy or idle; every other loop
        // wakes only when something happens, which the per-request figure covers.
        let ticks_per_second = f64::from(u8::from(self.router.autoscaler.enabled));
        let estimate = |requests: f64, seconds: f64| WorkEstimate {
            requests,
            seconds,
            events: requests * EVENTS_PER_REQUEST + seconds * ticks_per_second,
        };
        let mut clock = 0.0;
        let mut stages = Vec::with_capacity(self.workload.stages.len());
        for (i, stage) in self.workload.stages.iter().enumerate() {
            let shape = shapes.get(i).copied().flatten();
            let w = stage_work(stage, shape).cut((horizon - clock).max(0.0));
            clock += w.seconds;
            stages.push(estimate(w.requests, w.seconds));
        }
        let total = estimate(
            stages.iter().map(|s| s.requests).sum(),
            stages.iter().map(|s| s.seconds).sum(),
        );
        (stages, total)
    }

    /// Every limit the estimated work exceeds: at the stage that alone exceeds it, or at
    /// `workload` when only the whole workload does.
    pub fn work_problems(&self, shapes: &[Option<DataShape>]) -> Vec<Problem> {
        let (stages, total) = self.work_estimate(shapes);
        let sim = &self.simulation;
        let mut p = Problems::new();
        let limits: [Limit; 3] = [
            Limit {
                of: |w| w.requests,
                says: |w| format!("expects {} requests", count(w.requests)),
                limit: sim.max_requests as f64,
                text: format!("the limit is {}", count(sim.max_requests as f64)),
                how: "set simulation.max_requests to go higher",
            },
            Limit {
                of: |w| w.seconds,
                says: |w| format!("expects {} of simulated time", human_duration(w.seconds)),
                limit: sim.max_simulated_seconds,
                text: format!("the limit is {}", human_duration(sim.max_simulated_seconds)),
                how: "set simulation.max_simulated_seconds to go higher, or simulation_time to \
                      stop sooner",
            },
            Limit {
                of: |w| w.events,
                says: |w| format!("expects about {} kernel events", count(w.events)),
                limit: sim.max_events as f64,
                text: format!("the limit is {}", count(sim.max_events as f64)),
                how: "set simulation.max_events to go higher",
            },
        ];
        for l in &limits {
            l.check(&stages, &total, &mut p);
        }
        p.into_vec()
    }

    /// The requests the estimated work asks for beyond what `host` can hold, in the same
    /// places and form as the `simulation.max_requests` check (run that check first: the
    /// host's words assume the document's own limits hold).
    pub fn host_problems(&self, shapes: &[Option<DataShape>], host: &HostLimit) -> Vec<Problem> {
        let (stages, total) = self.work_estimate(shapes);
        let limit = Limit {
            of: |w| w.requests,
            says: |w| format!("expects {} requests", count(w.requests)),
            limit: host.max_requests as f64,
            text: format!(
                "{} {} requests",
                host.limited,
                count(host.max_requests as f64)
            ),
            how: host.how,
        };
        let mut p = Problems::new();
        limit.check(&stages, &total, &mut p);
        p.into_vec()
    }
}

/// A cap on requests set by where a run happens rather than by its document: a browser tab
/// holds fewer of a run's records than the command line does.
#[derive(Debug, Clone, Copy)]
pub struct HostLimit {
    /// Most requests a run may issue there.
    pub max_requests: u64,
    /// The cap in words, completed by the count: "in a browser tab a run is limited to".
    pub limited: &'static str,
    /// Where to go for more: "the command line runs up to …".
    pub how: &'static str,
}

/// One limit: the figure it bounds, how to say it, and how to raise it.
struct Limit {
    of: fn(&WorkEstimate) -> f64,
    says: fn(&WorkEstimate) -> String,
    limit: f64,
    text: String,
    how: &'static str,
}

impl Limit {
    /// Adds a problem at each stage whose estimate exceeds the limit, or at `workload` when
    /// only the stages together do.
    fn check(&self, stages: &[WorkEstimate], total: &WorkEstimate, p: &mut Problems) {
        // NaN counts as over: nothing the engine could run.
        let over = |w: &WorkEstimate| (self.of)(w).is_nan() || (self.of)(w) > self.limit;
        let mut reported = false;
        for (i, w) in stages.iter().enumerate().filter(|(_, w)| over(w)) {
            let message = format!("{}; {} ({})", (self.says)(w), self.text, self.how);
            p.push(index("workload.stages", i), message);
            reported = true;
        }
        if !reported && over(total) {
            let message = format!(
                "the whole workload {}; {} ({})",
                (self.says)(total),
                self.text,
                self.how
            );
            p.push("workload", message);
        }
    }
}

/// `x` (1 to 1000) to three significant figures, without trailing zeros: 10, 12.5, 3.14.
fn three_figures(x: f64) -> String {
    let decimals = if x >= 100.0 {
        0
    } else if x >= 10.0 {
        1
    } else {
        2
    };
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Seconds in the largest unit that keeps the number readable: "3.17 years", "5 days",
/// "1.2 s"; a duration past a million years in exponent form.
fn human_duration(s: f64) -> String {
    const UNITS: [(f64, &str); 5] = [
        (365.25 * 86_400.0, "years"),
        (86_400.0, "days"),
        (3_600.0, "hours"),
        (60.0, "minutes"),
        (1.0, "s"),
    ];
    match UNITS.iter().find(|(unit, _)| s >= *unit) {
        _ if !s.is_finite() => "without end".into(),
        Some((unit, name)) if s / unit < 1000.0 => format!("{} {name}", three_figures(s / unit)),
        Some((unit, name)) if s / unit < 1e6 => format!("{:.0} {name}", s / unit),
        Some((unit, name)) => format!("{} {name}", exponent_form(s / unit)),
        None => format!("{} s", readable(s)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(json: &str) -> Vec<Problem> {
        let s: Scenario = serde_json::from_str(json).unwrap();
        s.work_problems(&[])
    }

    #[test]
    fn a_billion_requests_are_refused_at_the_stage_with_the_field_to_raise() {
        let p = problems(
            r#"{"workload": {"stages": [{"type": "UniformReqRate", "request_rate": 1e6,
                "total_requests": 1000000000}]}}"#,
        );
        // 1e9 requests at 1e6/s: 1,000 s, fine; 1e9 · 50 = 5e10 events, over 1e9.
        assert_eq!(p[0].path, "workload.stages[0]");
        assert_eq!(
            p[0].message,
            "expects 1,000,000,000 requests; the limit is 10,000,000 (set simulation.max_requests \
             to go higher)"
        );
        assert_eq!(
            p[1].message,
            "expects about 50,000,000,000 kernel events; the limit is 1,000,000,000 (set \
             simulation.max_events to go higher)"
        );
        assert_eq!(p.len(), 2);
    }

    #[test]
    fn two_requests_a_billion_seconds_apart_exceed_the_horizon() {
        // 2 requests at 1e-9 req/s: 2 / 1e-9 = 2e9 s ≈ 63.4 years.
        let p = problems(
            r#"{"workload": {"stages": [{"type": "UniformReqRate", "request_rate": 1e-9,
                "total_requests": 2}]}}"#,
        );
        assert_eq!(p.len(), 1);
        assert_eq!(
            p[0].message,
            "expects 63.4 years of simulated time; the limit is 3.17 years (set \
             simulation.max_simulated_seconds to go higher, or simulation_time to stop sooner)"
        );
    }

    #[test]
    fn simulation_time_cuts_the_estimate_and_stages_add_up() {
        // Stage 0: 100 s at 1e5 req/s = 1e7 requests (at the limit, fine); stage 1 would
        // add 1e7 more, but simulation_time 150 s leaves it 50 s: 5e6. Total 1.5e7 > 1e7.
        let json = r#"{"simulation": {"simulation_time": 150},
            "workload": {"stages": [
              {"type": "UniformReqRate", "request_rate": 1e5, "time_duration_sec": 100},
              {"type": "UniformReqRate", "request_rate": 1e5, "time_duration_sec": 100}]}}"#;
        let s: Scenario = serde_json::from_str(json).unwrap();
        let (stages, total) = s.work_estimate(&[]);
        assert_eq!((stages[0].requests, stages[1].requests), (1e7, 5e6));
        assert_eq!(total.seconds, 150.0);
        let p = s.work_problems(&[]);
        assert_eq!(p[0].path, "workload");
        assert!(p[0]
            .message
            .starts_with("the whole workload expects 15,000,000 requests"));
    }

    #[test]
    fn a_host_limit_is_checked_where_max_requests_is_in_its_own_words() {
        let tab = HostLimit {
            max_requests: 5_000_000,
            limited: "in a tab a run is limited to",
            how: "the CLI goes further",
        };
        // 2,000 req/s for 3,000 s = 6,000,000 requests: within max_requests, over the tab's.
        let one = r#"{"workload": {"stages": [{"type": "UniformReqRate", "request_rate": 2000,
            "time_duration_sec": 3000}]}}"#;
        let s: Scenario = serde_json::from_str(one).unwrap();
        assert!(s.work_problems(&[]).is_empty());
        let p = s.host_problems(&[], &tab);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].path, "workload.stages[0]");
        assert_eq!(
            p[0].message,
            "expects 6,000,000 requests; in a tab a run is limited to 5,000,000 requests (the \
             CLI goes further)"
        );
        // Two stages of 3,000,000: each fits, the workload does not.
        let two = r#"{"workload": {"stages": [
            {"type": "UniformReqRate", "request_rate": 1000, "total_requests": 3000000},
            {"type": "UniformReqRate", "request_rate": 1000, "total_requests": 3000000}]}}"#;
        let s: Scenario = serde_json::from_str(two).unwrap();
        let p = s.host_problems(&[], &tab);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].path, "workload");
        assert!(p[0]
            .message
            .starts_with("the whole workload expects 6,000,000 requests; in a tab"));
        // Exactly at the limit is within it.
        let at = one.replace("3000}", "2500}");
        let s: Scenario = serde_json::from_str(&at).unwrap();
        assert!(s.host_problems(&[], &tab).is_empty());
    }

    #[test]
    fn a_replayed_file_counts_what_it_holds() {
        let json = r#"{"workload": {"stages": [{"type": "Trace", "trace_file": "t.jsonl",
            "total_requests": 10}]}}"#;
        let s: Scenario = serde_json::from_str(json).unwrap();
        let shape = DataShape {
            requests: 40,
            seconds: 20.0,
        };
        let (stages, _) = s.work_estimate(&[Some(shape)]);
        // 10 of 40 lines: a quarter of the trace's 20 s.
        assert_eq!((stages[0].requests, stages[0].seconds), (10.0, 5.0));
        let (unknown, _) = s.work_estimate(&[]);
        assert_eq!(unknown[0].requests, 0.0);
    }
}
