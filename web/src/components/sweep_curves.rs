//! A sweep's curves: latency (TTFT, TPOT or E2E at p50, p90 or p99, picked) against the
//! swept value, the offered load or the achieved load, then the achieved load, goodput and
//! SLO attainment (with an SLO) against the same; one line per value of the second axis (a policy, a GPU), each curve's
//! knee marked. Points not yet finished are gaps, so curves grow as points arrive. A point
//! whose load outran the cluster is ringed in the warning colour, one too short to judge
//! marked with a question mark, each saying why on hover.

use crate::charts::{LineChart, LineRun, MarkStyle, PointMark, Series, Unit};
use crate::components::form::{SelectField, SelectOption};
use opal::stats::LatencySummary;
use opal::sweep::{PointMetrics, SweepPoint, SweepResults};
use std::rc::Rc;
use yew::prelude::*;

/// The SLO's bound on each latency, ms, with its percentile (`None`: per request).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Bounds {
    /// On TTFT.
    pub ttft: Option<(f64, Option<f64>)>,
    /// On TPOT.
    pub tpot: Option<(f64, Option<f64>)>,
    /// On E2E.
    pub e2e: Option<(f64, Option<f64>)>,
}

/// Props of [`SweepCurves`].
#[derive(Properties, PartialEq, Clone)]
pub struct SweepCurvesProps {
    /// The finished points, in index order.
    pub points: Rc<[SweepPoint]>,
    /// The first axis' field path.
    pub axis: AttrValue,
    /// The first axis' values when they are numbers (else only load can be the x axis).
    pub axis_values: Option<Rc<[f64]>>,
    /// Points per value of the first axis: one curve each.
    pub curves: usize,
    /// The SLO's latency bounds.
    pub bounds: Bounds,
    /// Whether the scenario has an SLO (else there is no goodput or attainment to draw).
    pub has_slo: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Metric {
    Ttft,
    Tpot,
    E2e,
}

#[derive(Clone, Copy, PartialEq)]
enum Percentile {
    P50,
    P90,
    P99,
}

#[derive(Clone, Copy, PartialEq)]
enum XAxis {
    Swept,
    Offered,
    Achieved,
}

impl Metric {
    const ALL: [(Metric, &'static str, &'static str); 3] = [
        (Metric::Ttft, "ttft", "TTFT"),
        (Metric::Tpot, "tpot", "TPOT (ITL)"),
        (Metric::E2e, "e2e", "E2E"),
    ];

    fn summary(self, m: &PointMetrics) -> &LatencySummary {
        match self {
            Metric::Ttft => &m.ttft,
            Metric::Tpot => &m.tpot,
            Metric::E2e => &m.e2e,
        }
    }

    fn bound(self, b: &Bounds) -> Option<(f64, Option<f64>)> {
        match self {
            Metric::Ttft => b.ttft,
            Metric::Tpot => b.tpot,
            Metric::E2e => b.e2e,
        }
    }
}

impl Percentile {
    const ALL: [(Percentile, &'static str, &'static str); 3] = [
        (Percentile::P50, "p50", "P50"),
        (Percentile::P90, "p90", "P90"),
        (Percentile::P99, "p99", "P99"),
    ];

    fn of(self, s: &LatencySummary) -> f64 {
        match self {
            Percentile::P50 => s.median_ms,
            Percentile::P90 => s.p90_ms,
            Percentile::P99 => s.p99_ms,
        }
    }
}

fn options<T>(all: &[(T, &'static str, &'static str)]) -> Vec<SelectOption> {
    let pairs: Vec<_> = all.iter().map(|&(_, v, l)| (v, l)).collect();
    SelectOption::fixed(&pairs)
}

fn pick<T: Copy>(all: &[(T, &'static str, &'static str)], value: &str) -> Option<T> {
    all.iter().find(|(_, v, _)| *v == value).map(|(t, ..)| *t)
}

/// Sets `state` to the choice whose key is picked.
fn on<T: Copy + 'static>(
    state: &UseStateHandle<T>,
    all: Vec<(T, &'static str, &'static str)>,
) -> Callback<String> {
    let state = state.clone();
    Callback::from(move |v: String| {
        if let Some(t) = pick(&all, &v) {
            state.set(t);
        }
    })
}

fn key<T: PartialEq>(all: &[(T, &'static str, &'static str)], t: T) -> &'static str {
    all.iter().find(|(x, ..)| *x == t).map_or("", |(_, v, _)| v)
}

/// The latency, goodput and attainment charts of a sweep, with their pickers.
#[function_component(SweepCurves)]
pub fn sweep_curves(props: &SweepCurvesProps) -> Html {
    let metric = use_state(|| Metric::Ttft);
    let pct = use_state(|| Percentile::P99);
    let numeric = props.axis_values.is_some();
    let x_axis = use_state(move || {
        if numeric {
            XAxis::Swept
        } else {
            XAxis::Offered
        }
    });
    let x_choices: Vec<(XAxis, &'static str, &'static str)> = [
        numeric.then_some((XAxis::Swept, "swept", "the swept value")),
        Some((XAxis::Offered, "offered", "offered load (req/s)")),
        Some((XAxis::Achieved, "achieved", "achieved load (req/s)")),
    ]
    .into_iter()
    .flatten()
    .collect();
    let x_label: AttrValue = match *x_axis {
        XAxis::Swept => props.axis.clone(),
        XAxis::Offered => "offered load (req/s)".into(),
        XAxis::Achieved => "achieved load (req/s)".into(),
    };
    let x_of = {
        let (x_axis, values) = (*x_axis, props.axis_values.clone());
        move |p: &SweepPoint| -> f64 {
            match x_axis {
                XAxis::Swept => values
                    .as_ref()
                    .and_then(|v| v.get(p.index / props.curves.max(1)).copied())
                    .unwrap_or(f64::NAN),
                XAxis::Offered => p.metrics.as_ref().map_or(f64::NAN, |m| m.offered_rps),
                XAxis::Achieved => p.metrics.as_ref().map_or(f64::NAN, |m| m.achieved_rps),
            }
        }
    };
    let names = curve_names(&props.points, props.curves);
    let (metric_v, pct_v) = (*metric, *pct);
    let latency = |p: &SweepPoint| {
        p.metrics
            .as_ref()
            .map_or(f64::NAN, |m| pct_v.of(metric_v.summary(m)))
    };
    let mut lat = chart(&props.points, &names, props.curves, &x_of, latency);
    let metric_name = Metric::ALL
        .iter()
        .find(|(m, ..)| *m == metric_v)
        .map_or("", |(_, _, l)| l);
    let pct_name = key(&Percentile::ALL, pct_v).to_ascii_uppercase();
    if let Some((max, p)) = metric_v.bound(&props.bounds) {
        let at = p.map_or_else(|| "each request".into(), |p| format!("p{p}"));
        let bound = Series {
            name: format!("SLO: {at} ≤ {max} ms").into(),
            values: lat.x.iter().map(|_| max).collect(),
        };
        lat.series = lat.series.iter().cloned().chain([bound]).collect();
    }
    let slo = |f: fn(&opal::slo::SloSummary) -> f64| {
        move |p: &SweepPoint| {
            p.metrics
                .as_ref()
                .and_then(|m| m.slo.as_ref())
                .map_or(f64::NAN, f)
        }
    };
    let achieved = |p: &SweepPoint| p.metrics.as_ref().map_or(f64::NAN, |m| m.achieved_rps);
    let throughput = chart(&props.points, &names, props.curves, &x_of, achieved);
    let goodput = chart(
        &props.points,
        &names,
        props.curves,
        &x_of,
        slo(|s| s.goodput_rps),
    );
    let attainment = chart(
        &props.points,
        &names,
        props.curves,
        &x_of,
        slo(|s| s.attainment),
    );
    let markers = knee_markers(&props.points, props.curves, &x_of);
    let marks = |figure: &dyn Fn(&SweepPoint) -> f64| {
        point_marks(&props.points, props.curves, &x_of, figure)
    };
    let lat_marks = marks(&latency);
    let throughput_marks = marks(&achieved);
    let goodput_marks = marks(&slo(|s| s.goodput_rps));
    let attainment_marks = marks(&slo(|s| s.attainment));
    let mark_legend: Rc<[(MarkStyle, AttrValue)]> =
        Rc::from(MARK_LEGEND.map(|(s, l)| (s, l.into())));
    let x_unit = Unit::Count;
    html! {
        <div class="sweep-curves" data-testid="sweep-curves">
            <div class="sweep-pickers">
                <SelectField id="sweep-metric" label="Latency" value={key(&Metric::ALL, metric_v)}
                    options={options(&Metric::ALL)} on_change={on(&metric, Metric::ALL.to_vec())} />
                <SelectField id="sweep-percentile" label="Percentile" value={key(&Percentile::ALL, pct_v)}
                    options={options(&Percentile::ALL)} on_change={on(&pct, Percentile::ALL.to_vec())} />
                <SelectField id="sweep-x" label="Against" value={key(&x_choices, *x_axis)}
                    options={options(&x_choices)} on_change={on(&x_axis, x_choices.clone())} />
            </div>
            <div class="charts">
                <LineChart title={format!("{pct_name} {metric_name} vs {x_label}")} run={lat}
                    {x_unit} x_label={x_label.clone()} y_unit={Unit::Millis}
                    markers={markers.clone()} point_marks={lat_marks} mark_legend={mark_legend.clone()} />
                <LineChart title={format!("Achieved load (req/s) vs {x_label}")} run={throughput}
                    {x_unit} x_label={x_label.clone()} markers={markers.clone()}
                    point_marks={throughput_marks} mark_legend={mark_legend.clone()} />
                if props.has_slo {
                    <LineChart title={format!("Goodput (req/s) vs {x_label}")} run={goodput}
                        {x_unit} x_label={x_label.clone()} markers={markers.clone()}
                        point_marks={goodput_marks} mark_legend={mark_legend.clone()} />
                    <LineChart title={format!("SLO attainment vs {x_label}")} run={attainment}
                        {x_unit} x_label={x_label.clone()} y_unit={Unit::Percent} {markers}
                        point_marks={attainment_marks} {mark_legend} />
                }
            </div>
            if !props.has_slo {
                <p class="field-hint">{ "Add an slo section for goodput, attainment and each curve's knee." }</p>
            }
        </div>
    }
}

/// The marks' legend entries.
const MARK_LEGEND: [(MarkStyle, &str); 2] = [
    (
        MarkStyle::Warning,
        "overloaded: latency grows with run length",
    ),
    (MarkStyle::Unsure, "too short to judge"),
];

/// How a point's figures must be read, when not at face value: overloaded (its latencies
/// grow with the run's length, so it misses the SLO), or too short to judge (a longer run
/// could change its verdict); with the note its hover shows.
pub fn point_caveat(m: &PointMetrics) -> Option<(MarkStyle, String)> {
    match &m.overloaded {
        Some(why) => Some((MarkStyle::Warning, format!("overloaded: {why}"))),
        None if !m.settled => Some((
            MarkStyle::Unsure,
            "too short to judge: a longer run could change its verdict".into(),
        )),
        None => None,
    }
}

/// One chart's point marks: each point with a caveat, at its x and its `figure`.
fn point_marks(
    points: &[SweepPoint],
    curves: usize,
    x_of: &dyn Fn(&SweepPoint) -> f64,
    figure: &dyn Fn(&SweepPoint) -> f64,
) -> Rc<[PointMark]> {
    points
        .iter()
        .filter_map(|p| {
            let (style, note) = point_caveat(p.metrics.as_ref()?)?;
            Some(PointMark {
                series: p.index % curves.max(1),
                x: x_of(p),
                y: figure(p),
                style,
                note: note.into(),
            })
        })
        .collect()
}

/// Each curve's name: the values of the axes after the first ("all" with one axis).
fn curve_names(points: &[SweepPoint], curves: usize) -> Vec<String> {
    // The last point of each curve (a slot per curve rather than a map: the wasm's
    // BTreeMap and sort code is compiled once per key and value type).
    let mut by_curve: Vec<Option<&SweepPoint>> = vec![None; curves.max(1)];
    for p in points {
        by_curve[p.index % curves.max(1)] = Some(p);
    }
    by_curve
        .iter()
        .map(|p| {
            p.map(|p| {
                let rest: Vec<String> = p.values.iter().skip(1).map(SweepResults::label).collect();
                rest.join(", ")
            })
            .filter(|l| !l.is_empty())
            .unwrap_or_else(|| "all".into())
        })
        .collect()
}

/// One chart's run: the x of every finished point (ascending, shared), and per curve its
/// figure at its own points' x (NaN elsewhere, which the chart skips).
fn chart(
    points: &[SweepPoint],
    names: &[String],
    curves: usize,
    x_of: &dyn Fn(&SweepPoint) -> f64,
    figure: impl Fn(&SweepPoint) -> f64,
) -> LineRun {
    let curves = curves.max(1);
    let mut xs: Vec<f64> = points.iter().map(x_of).filter(|x| x.is_finite()).collect();
    xs.sort_unstable_by(f64::total_cmp);
    xs.dedup();
    let mut columns = vec![vec![f64::NAN; xs.len()]; curves];
    for p in points {
        let x = x_of(p);
        if let Ok(j) = xs.binary_search_by(|v| v.total_cmp(&x)) {
            columns[p.index % curves][j] = figure(p);
        }
    }
    LineRun {
        label: "sweep".into(),
        x: xs.into(),
        series: names
            .iter()
            .zip(columns)
            .map(|(name, values)| Series {
                name: name.clone().into(),
                values: values.into(),
            })
            .collect(),
    }
}

/// Each curve's knee as a mark at its x, once the curve's points up to just past the knee
/// have all arrived (points finish in any order; a gap would fake a knee).
fn knee_markers(
    points: &[SweepPoint],
    curves: usize,
    x_of: &dyn Fn(&SweepPoint) -> f64,
) -> Rc<[(f64, AttrValue)]> {
    knees(points, curves)
        .into_iter()
        .filter_map(|(label, p)| {
            let name = if label.is_empty() {
                "knee".to_string()
            } else {
                format!("knee: {label}")
            };
            Some((x_of(p), AttrValue::from(name))).filter(|(x, _)| x.is_finite())
        })
        .collect()
}

/// Each curve's label and its knee's point, for curves whose points up to the one after the
/// knee have all arrived.
pub fn knees(points: &[SweepPoint], curves: usize) -> Vec<(String, &SweepPoint)> {
    let curves = curves.max(1);
    // Which indices arrived, as flags rather than a sorted list: a sort of `usize` would be
    // a copy of the standard library's sort in the wasm for this alone.
    let mut arrived = vec![false; points.iter().map(|p| p.index + 1).max().unwrap_or(0)];
    for p in points {
        arrived[p.index] = true;
    }
    let settled = |knee: usize| {
        (knee % curves..=knee + curves)
            .step_by(curves)
            .all(|i| arrived.get(i) == Some(&true))
    };
    let results = SweepResults {
        header: opal::sweep::SweepHeader {
            axes: Vec::new(),
            search: None,
            total_points: points.len(),
        },
        shard: None,
        points: points.to_vec(),
    };
    results
        .knees()
        .into_iter()
        .filter_map(|(label, knee)| {
            let knee = knee.filter(|&k| settled(k))?;
            Some((label, points.iter().rev().find(|p| p.index == knee)?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::sweep_fixture::sample_point;
    use serde_json::json;

    /// Point `index` of a two-curve sweep over rates 10, 20, 30 (curves "a" and "b"),
    /// meeting the SLO or not, with an offered load of `offered`, keeping up with it and
    /// long enough to judge.
    fn point(index: usize, met: bool, offered: f64) -> SweepPoint {
        let values = vec![json!(10 * (index / 2 + 1)), json!(["a", "b"][index % 2])];
        sample_point(index, values, offered, Some(met))
    }

    #[test]
    fn a_knee_is_shown_only_once_its_curve_has_arrived_up_to_the_miss() {
        // Curve a: 10 met, 20 missed (point 2 not yet here), 30 missed. With point 2
        // missing, 10 → 30 would look like a knee at 10 whatever 20 turns out to be.
        let mut points = vec![
            point(0, true, 9.0),
            point(1, true, 9.5),
            point(4, false, 29.0),
        ];
        assert!(knees(&points, 2).is_empty());
        points.insert(2, point(2, true, 19.0));
        let found: Vec<(String, usize)> = knees(&points, 2)
            .into_iter()
            .map(|(l, p)| (l, p.index))
            .collect();
        // a's knee is at 20 (point 2); b (points 1, 3, 5) has only point 1 so far.
        assert_eq!(found, [("a".to_string(), 2)]);
    }

    /// `p` overloaded, for the reason `why`.
    fn overloaded(mut p: SweepPoint, why: &str) -> SweepPoint {
        if let Some(m) = p.metrics.as_mut() {
            m.overloaded = Some(why.into());
        }
        p
    }

    #[test]
    fn an_overloaded_point_is_a_miss_for_the_knee_whatever_its_percentiles() {
        // Curve a: 10 met, 20 met by its percentiles but overloaded, 30 missed. The engine's
        // rule (`slo_met`) counts 20 as a miss, so the knee is at 10 (point 0), not at 20.
        let points = vec![
            point(0, true, 9.0),
            overloaded(
                point(2, true, 19.0),
                "stage 0: served 15.00 req/s of 19.00 offered",
            ),
            point(4, false, 29.0),
        ];
        let found: Vec<(String, usize)> = knees(&points, 2)
            .into_iter()
            .map(|(l, p)| (l, p.index))
            .collect();
        assert_eq!(found, [("a".to_string(), 0)]);
    }

    #[test]
    fn overloaded_and_too_short_points_are_marked_where_they_are_drawn() {
        let mut short = point(3, true, 19.5);
        short.metrics.as_mut().unwrap().settled = false;
        let points = vec![
            point(0, true, 9.0),
            point(1, true, 9.5),
            overloaded(
                point(2, false, 19.0),
                "stage 0: served 15.00 req/s of 19.00 offered",
            ),
            short,
        ];
        let offered = |p: &SweepPoint| p.metrics.as_ref().unwrap().offered_rps;
        let marks = point_marks(&points, 2, &offered, &|p| p.index as f64);
        // Point 2 is curve a's (series 0) at 19 req/s; point 3 curve b's at 19.5.
        assert_eq!(marks.len(), 2);
        assert_eq!(
            (marks[0].series, marks[0].x, marks[0].y, marks[0].style),
            (0, 19.0, 2.0, MarkStyle::Warning)
        );
        assert_eq!(
            marks[0].note.as_str(),
            "overloaded: stage 0: served 15.00 req/s of 19.00 offered"
        );
        assert_eq!(
            (marks[1].series, marks[1].x, marks[1].style),
            (1, 19.5, MarkStyle::Unsure)
        );
        // An overloaded run is judged (the engine marks it settled); were it not, the
        // overload still decides the mark.
        let mut both = overloaded(point(4, false, 29.0), "why");
        both.metrics.as_mut().unwrap().settled = false;
        let caveat = point_caveat(both.metrics.as_ref().unwrap());
        assert_eq!(caveat.map(|c| c.0), Some(MarkStyle::Warning));
    }

    #[test]
    fn curves_against_load_share_one_ascending_x_with_gaps_elsewhere() {
        let points = vec![
            point(0, true, 9.0),
            point(1, true, 9.5),
            point(2, true, 19.0),
        ];
        let names = curve_names(&points, 2);
        assert_eq!(names, ["a", "b"]);
        let offered = |p: &SweepPoint| p.metrics.as_ref().unwrap().offered_rps;
        let run = chart(&points, &names, 2, &offered, offered);
        assert_eq!(&run.x[..], [9.0, 9.5, 19.0]);
        let a = &run.series[0].values;
        let b = &run.series[1].values;
        assert_eq!((a[0], a[2]), (9.0, 19.0));
        assert!(a[1].is_nan() && b[0].is_nan() && b[2].is_nan());
        assert_eq!(b[1], 9.5);
    }
}
