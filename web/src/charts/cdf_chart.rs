//! Latency CDFs (TTFT, TPOT, ITL, E2E) of one or more runs on shared axes.

use std::rc::Rc;

use yew::prelude::*;

use super::cdf::{cdf_steps, quantile, thin_steps, CdfInput};
use super::drawn_width::use_drawn_width;
use super::export::{ExportButton, ExportKind};
use super::format::{format_value, Unit};
use super::line_chart::readout;
use super::scale::LinearScale;
use super::svg::{color_class, legend, path_data, pointer_x, x_axis, y_axis, LegendItem, Plot};
use super::ticks::{nice_domain, ticks, usable_range};

/// One run's samples.
#[derive(Clone, Debug, PartialEq)]
pub struct CdfRun {
    /// Legend label, e.g. `"cache-aware"`.
    pub label: AttrValue,
    /// Sorted values or (value, weight) pairs.
    pub input: CdfInput,
}

/// Props of [`CdfChart`].
#[derive(Properties, PartialEq)]
pub struct CdfChartProps {
    /// Chart title, e.g. `"TTFT"`.
    pub title: AttrValue,
    /// Runs to overlay; run i takes palette colour i, runs after the first are dashed.
    pub runs: Rc<[CdfRun]>,
    /// Unit of the values.
    #[prop_or(Unit::Seconds)]
    pub unit: Unit,
    /// Width of the drawing in px.
    #[prop_or(480)]
    pub width: u32,
    /// Height of the drawing in px.
    #[prop_or(260)]
    pub height: u32,
}

/// Empirical CDFs as step curves; hovering shows each run's P[X ≤ x].
#[function_component(CdfChart)]
pub fn cdf_chart(props: &CdfChartProps) -> Html {
    let svg = use_node_ref();
    let width = use_drawn_width(svg.clone(), props.width);
    let hover = use_state(|| None::<f64>);
    let plot = Plot::new(width, props.height);
    let curves = use_memo(props.runs.clone(), |runs| {
        runs.iter().map(|r| cdf_steps(&r.input)).collect::<Vec<_>>()
    });
    let lo = curves
        .iter()
        .filter_map(|c| c.first())
        .map(|p| p.0)
        .fold(f64::NAN, f64::min);
    let hi = curves
        .iter()
        .filter_map(|c| c.last())
        .map(|p| p.0)
        .fold(f64::NAN, f64::max);
    // Latencies are non-negative: start at zero so curves compare by position.
    let (lo, hi) = usable_range(lo.min(0.0), hi);
    let (lo, hi) = nice_domain(lo, hi, 5);
    let x = LinearScale::new((lo, hi), (plot.x0, plot.x1));
    let y = LinearScale::new((0.0, 1.0), (plot.y1, plot.y0));
    let max_points = 2 * plot.width() as usize;

    let paths = curves.iter().enumerate().map(|(i, steps)| {
        let thin = thin_steps(steps, max_points);
        // Start the curve at 0 on the smallest value, then step up at each sample.
        let start = thin.first().map(|p| (x.map(p.0), y.map(0.0)));
        let d = path_data(
            start
                .into_iter()
                .chain(thin.iter().map(|&(v, p)| (x.map(v), y.map(p)))),
            true,
        );
        let dashed = (i > 0).then_some("chart-pinned");
        html! { <path class={classes!("chart-line", color_class(i), dashed)} d={d} /> }
    });
    let items = LegendItem::for_runs(props.runs.iter().map(|r| r.label.as_str()));

    let summary = {
        let mut s = format!("{}: cumulative distribution.", props.title);
        for (run, steps) in props.runs.iter().zip(curves.iter()) {
            let q = |p| format_value(quantile(steps, p).unwrap_or(f64::NAN), props.unit);
            s.push_str(&format!(
                " {}: p50 {}, p90 {}, p99 {};",
                run.label,
                q(0.5),
                q(0.9),
                q(0.99)
            ));
        }
        s
    };

    let onmousemove = {
        let (hover, svg_ref, width) = (hover.clone(), svg.clone(), width);
        Callback::from(move |e: MouseEvent| {
            let px = pointer_x(&e, &svg_ref, width).filter(|&px| px >= plot.x0 && px <= plot.x1);
            hover.set(px.map(|px| x.invert(px)));
        })
    };
    let onmouseleave = {
        let hover = hover.clone();
        Callback::from(move |_: MouseEvent| hover.set(None))
    };
    let (cursor, readout_box) = match *hover {
        None => (Html::default(), Html::default()),
        Some(v) => {
            let rows = props.runs.iter().zip(curves.iter()).enumerate().map(|(i, (run, steps))| {
                let at = steps.partition_point(|s| s.0 <= v);
                let p = if at == 0 { 0.0 } else { steps[at - 1].1 };
                html! { <div class={color_class(i)}><span class="chart-swatch" />{ format!("{}: {}", run.label, format_value(p, Unit::Percent)) }</div> }
            });
            let px = format!("{:.1}", x.map(v));
            (
                html! { <line class="chart-cursor" x1={px.clone()} x2={px} y1={plot.y0.to_string()} y2={plot.y1.to_string()} /> },
                readout(
                    100.0 * x.map(v) / f64::from(width),
                    format!("≤ {}", format_value(v, props.unit)),
                    rows.collect(),
                ),
            )
        }
    };

    let xt = ticks(lo, hi, (plot.width() / 90.0) as usize);
    let yt = ticks(0.0, 1.0, 5);
    html! {
        <figure class="chart">
            <div class="chart-body">
                <svg ref={svg.clone()} class="chart-svg" viewBox={format!("0 0 {} {}", width, props.height)}
                    role="img" aria-label={summary} {onmousemove} {onmouseleave}>
                    { y_axis(&plot, &y, &yt, Unit::Percent) }
                    { x_axis(&plot, &x, &xt, props.unit, &props.title) }
                    { for paths }
                    { legend(&items, &plot) }
                    { cursor }
                </svg>
                { readout_box }
            </div>
            <figcaption>
                <span>{ format!("{} CDF", props.title) }</span>
                <ExportButton target={svg} file_name={format!("{}-cdf", props.title)} kind={ExportKind::Svg} />
            </figcaption>
        </figure>
    }
}
