//! Making a preset's picture: running it as the app does (one run, every point of its
//! sweep, or its race's entrants at the first seed) and drawing what answers its question.
//!
//! - A run: the 90th percentile TTFT of the requests arriving in each of 30 slices of the
//!   run, against arrival time; the answer its p99 TTFT.
//! - A race: the same, a line per entrant.
//! - A sweep: p99 TTFT against the first axis (or the offered load), a line per value of
//!   the others, each point met or missed against the SLO.
//! - A search: each point's probes in the order made, the value tried against the step,
//!   converging on the answer as the steps go up.

use super::{Axis, Kept, Line, Picture, SCALE};
use crate::document::{check, Preset};
use crate::race;
use crate::sweep::{run_one, Search, SweepPlan, SweepPoint, SweepResults};
use engine::scenario::Scenario;
use engine::simulation::SimulationResults;
use engine::stats::LatencySummary;
use serde_json::Value;
use std::fmt::Write;

/// Slices of a run's arrivals that a line over time has a point for.
const SLICES: usize = 30;

/// Runs `preset` (its sweep's points and race's entrants over `threads` threads) and draws
/// its picture.
pub fn make(preset: &Preset, threads: usize) -> Result<Picture, String> {
    let scenario = preset.scenario().map_err(|p| check::describe(&p))?;
    let data = preset.data();
    let mut picture = if scenario.sweep.is_some() {
        let plan = SweepPlan::new(&scenario, data).map_err(|p| check::describe(&p))?;
        let points = on_threads(plan.len(), threads, |i| plan.run_point(i));
        if let Some(e) = points.iter().find_map(|p| p.error.as_ref()) {
            return Err(e.clone());
        }
        match &scenario.sweep.as_ref().and_then(|s| s.search.clone()) {
            Some(search) => searched(search, &points),
            None => curves(&scenario, &points),
        }
    } else {
        let runs: Vec<(String, Scenario)> = if scenario.race.is_some() {
            race::entrants(&scenario)
                .into_iter()
                .map(|(label, s)| s.map(|s| (label, s)))
                .collect::<Result<_, _>>()?
        } else {
            vec![(String::new(), scenario)]
        };
        let results = on_threads(runs.len(), threads, |i| run_one(&runs[i].1, &data));
        let results: Vec<_> = results.into_iter().collect::<Result<_, _>>()?;
        over_time(&runs, &results)
    };
    picture.id = preset.id.into();
    Ok(picture)
}

/// The pictures as `pictures.rs` keeps them: Rust data, a picture a line.
pub fn source(pictures: &[Picture]) -> String {
    let mut o = String::from(
        "//! Each preset's picture, made by running it: written by \
         `cargo run --release -p opal --bin gallery`, not by hand.\n\n\
         use super::{Axis, Line, Picture};\n\
         use std::borrow::Cow::Borrowed as B;\n\n\
         #[rustfmt::skip]\n\
         pub(super) const PICTURES: &[Picture] = &[\n",
    );
    let axis = |a: &Axis| {
        format!(
            "Axis {{ label: B({:?}), from: B({:?}), to: B({:?}) }}",
            a.label, a.from, a.to
        )
    };
    for p in pictures {
        let lines: Vec<String> = (p.lines.iter())
            .map(|l| {
                format!(
                    "Line {{ label: B({:?}), points: B(&{:?}), met: B(&{:?}) }}",
                    l.label, l.points, l.met
                )
            })
            .collect();
        let _ = writeln!(
            o,
            "    Picture {{ id: B({:?}), answer: B({:?}), x: {}, y: {}, lines: B(&[{}]), bound: {:?} }},",
            p.id,
            p.answer,
            axis(&p.x),
            axis(&p.y),
            lines.join(", "),
            p.bound
        );
    }
    o.push_str("];\n");
    o
}

/// `f(0..n)` spread over `threads` threads, in index order.
fn on_threads<T: Send>(n: usize, threads: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<(usize, T)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads.clamp(1, n.max(1)))
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if i >= n {
                            return mine;
                        }
                        mine.push((i, f(i)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a run does not panic"))
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, t)| t).collect()
}

/// Each run's 90th-percentile TTFT per slice of arrival time.
fn over_time(runs: &[(String, Scenario)], results: &[SimulationResults]) -> Picture {
    let completed = |r: &SimulationResults| {
        r.requests
            .iter()
            .filter(|q| q.is_completed())
            .map(|q| (q.created, q.ttft()))
            .collect::<Vec<_>>()
    };
    let all: Vec<Vec<(f64, f64)>> = results.iter().map(completed).collect();
    let (t0, t1) = all
        .iter()
        .flatten()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &(t, _)| {
            (lo.min(t), hi.max(t))
        });
    let span = (t1 - t0).max(f64::MIN_POSITIVE);
    let slice_of = |t: f64| (((t - t0) / span * SLICES as f64) as usize).min(SLICES - 1);
    let lines: Vec<Vec<(f64, f64)>> = all
        .iter()
        .map(|reqs| {
            let mut slices = vec![Vec::new(); SLICES];
            for &(t, ttft) in reqs {
                slices[slice_of(t)].push(ttft);
            }
            slices
                .into_iter()
                .enumerate()
                .filter(|(_, s)| !s.is_empty())
                .map(|(k, s)| {
                    let mid = t0 + (k as f64 + 0.5) * span / SLICES as f64;
                    (mid, LatencySummary::from_seconds(s).p90_ms)
                })
                .collect()
        })
        .collect();
    let y_to = nice_ceiling(lines.iter().flatten().map(|&(_, y)| y).fold(0.0, f64::max));
    let p99 = |reqs: &Vec<(f64, f64)>| {
        LatencySummary::from_seconds(reqs.iter().map(|&(_, ttft)| ttft).collect()).p99_ms
    };
    let answer = if runs.len() == 1 {
        format!(
            "p99 TTFT {} over {} requests",
            ms(p99(&all[0])),
            thousands(all[0].len())
        )
    } else {
        let each: Vec<String> = (runs.iter().zip(&all))
            .map(|((label, _), reqs)| format!("{label} {}", ms(p99(reqs))))
            .collect();
        format!("p99 TTFT (first seed): {}", each.join(" · "))
    };
    Picture {
        id: "".into(),
        answer: answer.into(),
        x: Axis {
            label: "arrival".into(),
            from: number(t0).into(),
            to: format!("{} s", number(t1)).into(),
        },
        y: Axis {
            label: "p90 TTFT".into(),
            from: "0".into(),
            to: ms(y_to).into(),
        },
        lines: (runs.iter().zip(lines))
            .map(|((label, _), points)| Line {
                label: label.clone().into(),
                points: points
                    .iter()
                    .map(|&(x, y)| [at(x, t0, t1), at(y, 0.0, y_to)])
                    .collect(),
                met: Kept::Borrowed(&[]),
            })
            .collect(),
        bound: None,
    }
}

/// p99 TTFT against the first axis (or the offered load when it is not a number), a line
/// per value of the other axes.
fn curves(scenario: &Scenario, points: &[SweepPoint]) -> Picture {
    let vary = &scenario.sweep.as_ref().expect("a sweep").vary;
    let per_x: usize = vary.iter().skip(1).map(|a| a.points().len()).product();
    let numeric = points.iter().all(|p| p.values[0].is_number());
    let x_of = |p: &SweepPoint| match (numeric, &p.metrics) {
        (true, _) => p.values[0].as_f64().unwrap_or(f64::NAN),
        (false, Some(m)) => m.offered_rps,
        (false, None) => f64::NAN,
    };
    let bound = ttft_bound(scenario);
    let (x_from, x_to) = range(points.iter().map(x_of));
    // Points past the cluster's capacity are drawn at the top, not scaled to.
    let held = points
        .iter()
        .filter_map(|p| p.metrics.as_ref())
        .filter(|m| m.overloaded.is_none())
        .map(|m| m.ttft.p99_ms);
    let y_to = nice_ceiling(held.chain(bound.map(|b| b * 1.25)).fold(0.0, f64::max));
    let labels = legends(points, per_x, 1);
    let mut lines = Vec::new();
    let mut holds = Vec::new();
    for (c, label) in labels.into_iter().enumerate() {
        let mine: Vec<&SweepPoint> = points.iter().skip(c).step_by(per_x).collect();
        let judged: Vec<_> = mine
            .iter()
            .filter_map(|p| Some((x_of(p), p.metrics.as_ref()?)))
            .collect();
        let met = judged.iter().map(|(_, m)| m.slo_met()).collect::<Vec<_>>();
        let last_met = judged.iter().take_while(|(_, m)| m.slo_met()).last();
        holds.push(match last_met {
            Some((x, _)) => format!("{label} {}", number(*x)),
            None => format!("{label} none"),
        });
        lines.push(Line {
            label: label.into(),
            points: judged
                .iter()
                .map(|(x, m)| {
                    let y = match m.overloaded {
                        Some(_) => SCALE,
                        None => at(m.ttft.p99_ms, 0.0, y_to),
                    };
                    [at(*x, x_from, x_to), y]
                })
                .collect(),
            met: if scenario.slo.is_some() {
                met.into()
            } else {
                Kept::Borrowed(&[])
            },
        });
    }
    let (x_label, unit) = if !numeric {
        ("offered load".into(), "req/s")
    } else if vary[0].path.ends_with("request_rate") {
        ("request rate".into(), "req/s")
    } else {
        let name = vary[0].path.rsplit('.').next().unwrap_or(&vary[0].path);
        (name.replace('_', " "), "")
    };
    Picture {
        id: "".into(),
        answer: match unit {
            "" => format!("Meets the SLO up to: {}", holds.join(" · ")),
            unit => format!("Meets the SLO up to ({unit}): {}", holds.join(" · ")),
        }
        .into(),
        x: Axis {
            label: x_label.into(),
            from: number(x_from).into(),
            to: format!("{} {unit}", number(x_to))
                .trim_end()
                .to_string()
                .into(),
        },
        y: Axis {
            label: "p99 TTFT".into(),
            from: "0".into(),
            to: ms(y_to).into(),
        },
        lines: lines.into(),
        bound: bound.map(|b| at(b, 0.0, y_to)),
    }
}

/// Each point's search: the value probed at each step, the first at the bottom.
fn searched(search: &Search, points: &[SweepPoint]) -> Picture {
    let (from, to, unit, whole) = match search {
        Search::MaxRate { low, high, .. } => (*low, *high, "req/s", false),
        Search::MinWorkers { min, max } => (f64::from(*min), f64::from(*max), "workers", true),
    };
    let steps = points
        .iter()
        .filter_map(|p| p.search.as_ref())
        .map(|s| s.probes.len())
        .max()
        .unwrap_or(0);
    let legends = legends(points, points.len(), 0);
    let mut answers = Vec::new();
    let mut lines = Vec::new();
    for (p, label) in points.iter().zip(legends) {
        let Some(outcome) = &p.search else { continue };
        let found = match outcome.value {
            Some(v) if whole => format!("{v:.0}"),
            Some(v) => format!("{v:.1}"),
            None => "none".into(),
        };
        answers.push(if label.is_empty() {
            format!("{found} {unit}")
        } else {
            format!("{label} {found}")
        });
        let step_y = |k: usize| at(k as f64, 0.0, (steps.max(2) - 1) as f64);
        lines.push(Line {
            label: label.into(),
            points: (outcome.probes.iter().enumerate())
                .map(|(k, probe)| [at(probe.value, from, to), step_y(k)])
                .collect(),
            met: outcome.probes.iter().map(|probe| probe.met).collect(),
        });
    }
    let question = match search {
        Search::MaxRate { .. } => "Highest rate meeting the SLO",
        Search::MinWorkers { .. } => "Fewest workers meeting the SLO",
    };
    let answer = match (answers.as_slice(), whole) {
        ([one], _) => format!("{question}: {one}"),
        (all, true) => format!("{question}: {}", all.join(" · ")),
        (all, false) => format!("{question} ({unit}): {}", all.join(" · ")),
    };
    Picture {
        id: "".into(),
        answer: answer.into(),
        x: Axis {
            label: format!("{} tried", if whole { "workers" } else { "rate" }).into(),
            from: number(from).into(),
            to: match whole {
                true => number(to),
                false => format!("{} {unit}", number(to)),
            }
            .into(),
        },
        y: Axis {
            label: "search step".into(),
            from: "1".into(),
            to: steps.to_string().into(),
        },
        lines: lines.into(),
        bound: None,
    }
}

/// Each line's legend: its values of the axes from `skip` on, as the sweep table names
/// them, for the first `lines` points; nothing when there is one line.
fn legends(points: &[SweepPoint], lines: usize, skip: usize) -> Vec<String> {
    if lines <= 1 {
        return vec![String::new()];
    }
    let values: Vec<Vec<&Value>> = (points.iter().take(lines))
        .map(|p| p.values.iter().skip(skip).collect())
        .collect();
    values
        .iter()
        .map(|mine| {
            let words: Vec<String> = (mine.iter().enumerate())
                .map(|(k, v)| legend(v, values.iter().map(|l| l[k])))
                .collect();
            words.join(" ")
        })
        .collect()
}

/// A value as a legend says it; an object without a name says only the fields that differ
/// between lines.
fn legend<'a>(v: &Value, all: impl Iterator<Item = &'a Value> + Clone) -> String {
    let Value::Object(fields) = v else {
        return SweepResults::label(v);
    };
    if ["policy", "type", "name"]
        .iter()
        .any(|k| fields.contains_key(*k))
    {
        return SweepResults::label(v);
    }
    // Parallelism first, in the order people write it (TP2 DP4 EP), then the rest.
    const FIRST: [(&str, &str); 4] = [
        ("tp", "TP"),
        ("pp", "PP"),
        ("dp", "DP"),
        ("expert_parallel", "EP"),
    ];
    let mut keys: Vec<&String> = fields.keys().collect();
    keys.sort_by_key(|k| {
        FIRST
            .iter()
            .position(|(f, _)| f == k)
            .unwrap_or(FIRST.len())
    });
    let mut words = Vec::new();
    for key in keys {
        let value = &fields[key];
        if !all.clone().any(|other| other.get(key) != Some(value)) {
            continue;
        }
        let short = FIRST.iter().find(|(f, _)| f == key).map(|(_, s)| *s);
        words.push(match (short, value) {
            (Some(s), Value::Bool(true)) => s.to_string(),
            (Some(_), Value::Bool(false)) => continue,
            (Some(s), v) => format!("{s}{}", SweepResults::label(v)),
            (None, v) => format!("{key} {}", SweepResults::label(v)),
        });
    }
    if words.is_empty() {
        SweepResults::label(v)
    } else {
        words.join(" ")
    }
}

fn ttft_bound(scenario: &Scenario) -> Option<f64> {
    let target = scenario.slo.as_ref()?.ttft_ms?;
    (target.p == Some(99.0)).then_some(target.max)
}

fn range(xs: impl Iterator<Item = f64>) -> (f64, f64) {
    xs.filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        })
}

/// `v`'s place between `from` and `to`, in `0..=SCALE` (clamped: a point off the scale is
/// drawn at its edge).
fn at(v: f64, from: f64, to: f64) -> u8 {
    let width = to - from;
    if width.is_nan() || width <= 0.0 || !v.is_finite() {
        return if v >= to { SCALE } else { 0 };
    }
    ((v - from) / (to - from) * f64::from(SCALE))
        .round()
        .clamp(0.0, f64::from(SCALE)) as u8
}

/// The smallest 1, 2 or 5 × 10ⁿ at or above `v`.
fn nice_ceiling(v: f64) -> f64 {
    if v.is_nan() || v <= 0.0 {
        return 1.0;
    }
    let decade = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * decade)
        .find(|&n| n >= v * (1.0 - 1e-9))
        .unwrap_or(10.0 * decade)
}

/// Milliseconds for a person: "243 ms", "1.4 s", "31 s".
fn ms(v: f64) -> String {
    match v {
        v if v.is_nan() => "n/a".into(),
        v if v < 1000.0 => format!("{v:.0} ms"),
        v if v < 10_000.0 => format!("{:.1} s", v / 1000.0),
        v => format!("{:.0} s", v / 1000.0),
    }
}

/// A count with its thousands set apart: "2,148".
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut o = String::new();
    for (k, d) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k) % 3 == 0 {
            o.push(',');
        }
        o.push(d);
    }
    o
}

/// A number as an axis end shows it: whole when it is, else to one decimal.
fn number(v: f64) -> String {
    if (v - v.round()).abs() < 0.05 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_ceilings_are_one_two_or_five_times_a_power_of_ten() {
        assert_eq!(nice_ceiling(243.0), 500.0);
        assert_eq!(nice_ceiling(1000.0), 1000.0);
        assert_eq!(nice_ceiling(1001.0), 2000.0);
        assert_eq!(nice_ceiling(0.03), 0.05);
        assert_eq!(nice_ceiling(0.0), 1.0);
    }

    #[test]
    fn places_are_clamped_to_the_box() {
        assert_eq!(at(5.0, 0.0, 10.0), 50);
        assert_eq!(at(30.0, 0.0, 10.0), SCALE);
        assert_eq!(at(-1.0, 0.0, 10.0), 0);
        assert_eq!(at(f64::INFINITY, 0.0, 10.0), SCALE);
    }

    #[test]
    fn a_hardware_legend_names_only_what_differs() {
        let a = serde_json::json!({"gpu": "B200", "tp": 8});
        let b = serde_json::json!({"gpu": "B200", "tp": 1, "dp": 8, "expert_parallel": true});
        let all = [&a, &b];
        assert_eq!(legend(&a, all.iter().copied()), "TP8");
        assert_eq!(legend(&b, all.iter().copied()), "TP1 DP8 EP");
    }

    #[test]
    fn the_default_run_draws_its_ttft_over_time() {
        let preset = crate::document::preset("default").expect("a default preset");
        let picture = make(&preset, 1).expect("the default runs");
        assert_eq!(picture.x.label, "arrival");
        assert_eq!(picture.lines.len(), 1);
        assert!(
            picture.answer.ends_with("over 300 requests"),
            "{}",
            picture.answer
        );
        assert_eq!(thousands(2148), "2,148");
        assert_eq!(thousands(300), "300");
    }
}
