//! Histograms of one or more runs on shared nice bins.

use std::rc::Rc;

use yew::prelude::*;

use super::bins::bin_runs;
use super::drawn_width::use_drawn_width;
use super::export::{ExportButton, ExportKind};
use super::format::{format_value, Unit};
use super::line_chart::readout;
use super::scale::LinearScale;
use super::svg::{color_class, legend, path_data, pointer_x, x_axis, y_axis, LegendItem, Plot};
use super::ticks::{nice_domain, ticks};

/// One run's raw values.
#[derive(Clone, Debug, PartialEq)]
pub struct HistogramRun {
    /// Legend label.
    pub label: AttrValue,
    /// The values to bin; NaN and ±inf are not counted.
    pub values: Rc<[f64]>,
}

/// Props of [`Histogram`].
#[derive(Properties, PartialEq)]
pub struct HistogramProps {
    /// Chart title, e.g. `"Prompt length"`.
    pub title: AttrValue,
    /// Runs to overlay; the first is filled, every run is outlined in its palette colour.
    pub runs: Rc<[HistogramRun]>,
    /// Unit of the values.
    #[prop_or_default]
    pub unit: Unit,
    /// About how many bins to cut the common range into (edges fall on 1-2-5 steps).
    #[prop_or(30)]
    pub bins: usize,
    /// Width of the drawing in px.
    #[prop_or(480)]
    pub width: u32,
    /// Height of the drawing in px.
    #[prop_or(240)]
    pub height: u32,
}

/// A histogram; hovering a bin shows its range and each run's count.
#[function_component(Histogram)]
pub fn histogram(props: &HistogramProps) -> Html {
    let svg = use_node_ref();
    let width = use_drawn_width(svg.clone(), props.width);
    let hover = use_state(|| None::<usize>);
    let plot = Plot::new(width, props.height);
    let bins = use_memo((props.runs.clone(), props.bins), |(runs, target)| {
        let columns: Vec<&[f64]> = runs.iter().map(|r| &r.values[..]).collect();
        bin_runs(&columns, *target)
    });
    let (lo, hi) = match (bins.edges.first(), bins.edges.last()) {
        (Some(&a), Some(&b)) => (a, b),
        _ => (0.0, 1.0),
    };
    let top = bins.counts.iter().flatten().copied().max().unwrap_or(0) as f64;
    let (_, top) = nice_domain(0.0, top.max(1.0), 5);
    let x = LinearScale::new((lo, hi), (plot.x0, plot.x1));
    let y = LinearScale::new((0.0, top), (plot.y1, plot.y0));

    let outlines = bins.counts.iter().enumerate().map(|(i, counts)| {
        // Outline: up each bin's left edge, across its top, down at the end.
        let mut pts = vec![(x.map(lo), y.map(0.0))];
        for (k, &c) in counts.iter().enumerate() {
            pts.push((x.map(bins.edges[k]), y.map(c as f64)));
        }
        pts.push((x.map(hi), y.map(0.0)));
        let d = path_data(pts, true);
        let class = classes!(
            "chart-bars",
            color_class(i),
            if i == 0 {
                "chart-filled"
            } else {
                "chart-pinned"
            }
        );
        html! { <path {class} d={d} /> }
    });
    let items = LegendItem::for_runs(props.runs.iter().map(|r| r.label.as_str()));
    let summary = {
        let mut s = format!(
            "{}: histogram of {} bins from {} to {}.",
            props.title,
            bins.edges.len().saturating_sub(1),
            format_value(lo, props.unit),
            format_value(hi, props.unit)
        );
        for (run, counts) in props.runs.iter().zip(bins.counts.iter()) {
            let total: u64 = counts.iter().sum();
            s.push_str(&format!(" {}: {total} values;", run.label));
        }
        s
    };

    let onmousemove = {
        let (hover, svg_ref, width, edges) = (hover.clone(), svg.clone(), width, bins.clone());
        Callback::from(move |e: MouseEvent| {
            let bin = pointer_x(&e, &svg_ref, width)
                .filter(|&px| px >= plot.x0 && px <= plot.x1)
                .map(|px| x.invert(px))
                .and_then(|v| edges.edges.partition_point(|&e| e <= v).checked_sub(1))
                .filter(|&b| b + 1 < edges.edges.len());
            hover.set(bin);
        })
    };
    let onmouseleave = {
        let hover = hover.clone();
        Callback::from(move |_: MouseEvent| hover.set(None))
    };
    let (highlight, readout_box) = match *hover {
        None => (Html::default(), Html::default()),
        Some(b) => {
            let (a, z) = (bins.edges[b], bins.edges[b + 1]);
            let rows = props.runs.iter().zip(bins.counts.iter()).enumerate().map(|(i, (run, c))| {
                html! { <div class={color_class(i)}><span class="chart-swatch" />{ format!("{}: {}", run.label, c[b]) }</div> }
            });
            let heading = format!(
                "{} – {}",
                format_value(a, props.unit),
                format_value(z, props.unit)
            );
            (
                html! { <rect class="chart-highlight" x={format!("{:.1}", x.map(a))} y={plot.y0.to_string()}
                width={format!("{:.1}", x.map(z) - x.map(a))} height={(plot.y1 - plot.y0).to_string()} /> },
                readout(
                    100.0 * x.map((a + z) / 2.0) / f64::from(width),
                    heading,
                    rows.collect(),
                ),
            )
        }
    };

    let xt = ticks(lo, hi, (plot.width() / 90.0) as usize);
    let yt = ticks(0.0, top, 5);
    html! {
        <figure class="chart">
            <div class="chart-body">
                <svg ref={svg.clone()} class="chart-svg" viewBox={format!("0 0 {} {}", width, props.height)}
                    role="img" aria-label={summary} {onmousemove} {onmouseleave}>
                    { highlight }
                    { y_axis(&plot, &y, &yt, Unit::Count) }
                    { x_axis(&plot, &x, &xt, props.unit, &props.title) }
                    { for outlines }
                    { legend(&items, &plot) }
                </svg>
                { readout_box }
            </div>
            <figcaption>
                <span>{ &props.title }</span>
                <ExportButton target={svg} file_name={format!("{}-histogram", props.title)} kind={ExportKind::Svg} />
            </figcaption>
        </figure>
    }
}
