//! Several series over simulated time, with a hover read-out and an optional pinned run.

use std::rc::Rc;

use yew::prelude::*;

use super::downsample::min_max_per_column;
use super::drawn_width::use_drawn_width;
use super::export::{ExportButton, ExportKind};
use super::format::{format_value, Unit};
use super::marks::{
    bands, mark_legend, note_at, point_marks, shown_entries, Band, MarkStyle, PointMark,
    MARK_LEGEND_ROW,
};
use super::scale::{extent, nearest_index, LinearScale};
use super::svg::{color_class, legend, path_data, pointer_x, x_axis, y_axis, LegendItem, Plot};
use super::ticks::{nice_domain, ticks, usable_range, Ticks};

/// Palette slot of the grey used for legend entries that name a run rather than a series.
const NEUTRAL: usize = 7;

/// One named column of y values, aligned with its run's x column.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Legend name, e.g. `"waiting"`.
    pub name: AttrValue,
    /// One value per x sample; NaN leaves a sample out.
    pub values: Rc<[f64]>,
}

/// A run's series over a shared, ascending x column (simulated time in seconds).
#[derive(Clone, Debug, PartialEq)]
pub struct LineRun {
    /// Which run this is, e.g. `"round-robin"`; shown in the legend when a pinned run is overlaid.
    pub label: AttrValue,
    /// Ascending sample times.
    pub x: Rc<[f64]>,
    /// The series; the i-th series takes palette colour i in both runs.
    pub series: Rc<[Series]>,
}

/// Props of [`LineChart`].
#[derive(Properties, PartialEq)]
pub struct LineChartProps {
    /// Chart title, used in the accessible summary and the export file name.
    pub title: AttrValue,
    /// The run to show (solid lines).
    pub run: LineRun,
    /// A second run to compare against (dashed lines, same colours).
    #[prop_or_default]
    pub pinned: Option<LineRun>,
    /// Unit of the x column.
    #[prop_or(Unit::Seconds)]
    pub x_unit: Unit,
    /// What the x column is, under its axis.
    #[prop_or(AttrValue::Static("simulated time"))]
    pub x_label: AttrValue,
    /// Unit of the y values.
    #[prop_or_default]
    pub y_unit: Unit,
    /// Hold each value until the next sample (for counters such as queue depth).
    #[prop_or_default]
    pub step: bool,
    /// Vertical marks at these x values, each with its label (e.g. a sweep's knees).
    #[prop_or_default]
    pub markers: Rc<[(f64, AttrValue)]>,
    /// Marks on single points of the current run's series, with a tooltip each.
    #[prop_or_default]
    pub point_marks: Rc<[PointMark]>,
    /// The legend entry of each mark style, shown (in a second legend row) when a mark of
    /// that style is drawn.
    #[prop_or_default]
    pub mark_legend: Rc<[(MarkStyle, AttrValue)]>,
    /// Shaded spans of x, each labelled (e.g. a run's measurement windows).
    #[prop_or_default]
    pub bands: Rc<[Band]>,
    /// Width of the drawing in px (it scales with CSS; this sets the proportions).
    #[prop_or(640)]
    pub width: u32,
    /// Height of the drawing in px.
    #[prop_or(260)]
    pub height: u32,
}

/// Everything drawn that does not depend on the pointer.
struct Layout {
    plot: Plot,
    x: LinearScale,
    y: LinearScale,
    /// The y axis's ticks (the plot's left margin fits their labels).
    y_ticks: Ticks,
    /// Per run (current, pinned), per series: SVG path data.
    paths: Vec<Vec<String>>,
    summary: String,
}

/// A line chart of one run's series, optionally over a pinned run.
///
/// Series longer than four points per pixel column are thinned with
/// [`min_max_per_column`], so 100k-sample series stay cheap to draw.
#[function_component(LineChart)]
pub fn line_chart(props: &LineChartProps) -> Html {
    let svg = use_node_ref();
    let width = use_drawn_width(svg.clone(), props.width);
    let hover = use_state(|| None::<f64>);
    let mark_entries = shown_entries(&props.point_marks, &props.mark_legend);
    let layout = {
        let key = (
            props.run.clone(),
            props.pinned.clone(),
            props.step,
            width,
            props.height,
            !mark_entries.is_empty(),
        );
        let (x_unit, y_unit, title) = (props.x_unit, props.y_unit, props.title.clone());
        use_memo(key, move |(run, pinned, step, w, h, mark_row)| {
            layout(
                run,
                pinned.as_ref(),
                *step,
                (*w, *h, *mark_row),
                (x_unit, y_unit),
                &title,
            )
        })
    };
    let runs: Vec<&LineRun> = std::iter::once(&props.run)
        .chain(props.pinned.as_ref())
        .collect();
    let compare = runs.len() > 1;

    // Colour names a series and dashing names a run. With one series, each entry names both;
    // with several, the series are listed once and each run gets a neutral entry, so the
    // legend stays one short line however many series a comparison has.
    let legend_items: Vec<LegendItem> = if compare && props.run.series.len() > 1 {
        let series = props
            .run
            .series
            .iter()
            .enumerate()
            .map(|(i, s)| LegendItem {
                label: s.name.to_string(),
                color: i,
                dashed: false,
            });
        let runs = runs.iter().enumerate().map(|(r, run)| LegendItem {
            label: run.label.to_string(),
            color: NEUTRAL,
            dashed: r == 1,
        });
        series.chain(runs).collect()
    } else {
        runs.iter()
            .enumerate()
            .flat_map(|(r, run)| {
                run.series.iter().enumerate().map(move |(i, s)| LegendItem {
                    label: if compare {
                        format!("{} ({})", s.name, run.label)
                    } else {
                        s.name.to_string()
                    },
                    color: i,
                    dashed: r == 1,
                })
            })
            .collect()
    };

    let onmousemove = {
        let (hover, svg, scale) = (hover.clone(), svg.clone(), layout.x);
        let plot = layout.plot;
        Callback::from(move |e: MouseEvent| {
            let px = pointer_x(&e, &svg, width).filter(|&px| px >= plot.x0 && px <= plot.x1);
            hover.set(px.map(|px| scale.invert(px)));
        })
    };
    let onmouseleave = {
        let hover = hover.clone();
        Callback::from(move |_: MouseEvent| hover.set(None))
    };

    let plot = layout.plot;
    let (cursor_line, readout_box) = match *hover {
        None => (Html::default(), Html::default()),
        Some(t) => {
            let x = format!("{:.1}", layout.x.map(t));
            let marks = &props.point_marks;
            let rows = runs.iter().enumerate().flat_map(|(r, run)| {
                let i = if props.step {
                    // A step chart shows the last sample at or before t.
                    run.x.partition_point(|&x| x <= t).checked_sub(1)
                } else {
                    nearest_index(&run.x, t)
                };
                run.series.iter().enumerate().map(move |(k, s)| {
                    let v = i.and_then(|i| s.values.get(i).copied()).unwrap_or(f64::NAN);
                    let name = if compare { format!("{} ({})", s.name, run.label) } else { s.name.to_string() };
                    // The current run's mark on this point says why it is marked.
                    let note = i.filter(|_| r == 0).and_then(|i| note_at(marks, k, run.x[i]));
                    let note = note.map(|n| format!(" — {n}")).unwrap_or_default();
                    html! { <div class={color_class(k)}><span class="chart-swatch" />{ format!("{name}: {}{note}", format_value(v, props.y_unit)) }</div> }
                })
            });
            let left = 100.0 * layout.x.map(t) / f64::from(width);
            (
                html! { <line class="chart-cursor" x1={x.clone()} x2={x} y1={plot.y0.to_string()} y2={plot.y1.to_string()} /> },
                readout(left, format_value(t, props.x_unit), rows.collect()),
            )
        }
    };

    let xt = ticks(
        layout.x.domain().0,
        layout.x.domain().1,
        (plot.width() / 90.0) as usize,
    );
    let view_box = format!("0 0 {} {}", width, props.height);
    html! {
        <figure class="chart">
            <div class="chart-body">
                <svg ref={svg.clone()} class="chart-svg" viewBox={view_box} role="img" aria-label={layout.summary.clone()}
                    {onmousemove} {onmouseleave}>
                    { y_axis(&plot, &layout.y, &layout.y_ticks, props.y_unit) }
                    { x_axis(&plot, &layout.x, &xt, props.x_unit, &props.x_label) }
                    { bands(&props.bands, &layout.x, &plot) }
                    { for layout.paths.iter().enumerate().flat_map(|(r, paths)| paths.iter().enumerate().map(move |(i, d)| html! {
                        <path class={classes!("chart-line", color_class(i), (r == 1).then_some("chart-pinned"))} d={d.clone()} />
                    })) }
                    { for props.markers.iter().filter(|(x, _)| x.is_finite()).enumerate().map(|(i, (x, label))| {
                        let px = format!("{:.1}", layout.x.map(*x));
                        // One text line per mark, so marks close together stay readable.
                        let y = plot.y0 + 12.0 + 14.0 * i as f64;
                        html! {
                            <g class="chart-marker" data-testid="chart-marker">
                                <line x1={px.clone()} x2={px.clone()} y1={plot.y0.to_string()} y2={plot.y1.to_string()} />
                                <text x={px} y={y.to_string()} text-anchor="end" dx="-4">{ label }</text>
                            </g>
                        }
                    }) }
                    { point_marks(&props.point_marks, &layout.x, &layout.y) }
                    { legend(&legend_items, &plot) }
                    if !mark_entries.is_empty() {
                        { mark_legend(&mark_entries, &plot) }
                    }
                    { cursor_line }
                </svg>
                { readout_box }
            </div>
            <figcaption>
                <span>{ &props.title }</span>
                <ExportButton target={svg} file_name={props.title.clone()} kind={ExportKind::Svg} />
            </figcaption>
        </figure>
    }
}

/// The hover read-out box, placed at `left_percent` of the chart's width.
pub(super) fn readout(left_percent: f64, heading: String, rows: Vec<Html>) -> Html {
    // Flip to the cursor's left on the right half so the box stays inside the chart.
    let style = if left_percent > 50.0 {
        format!("right: {:.1}%", 100.0 - left_percent)
    } else {
        format!("left: {left_percent:.1}%")
    };
    html! {
        <div class="chart-readout" {style} aria-hidden="true">
            <div class="chart-readout-heading">{ heading }</div>
            { for rows }
        </div>
    }
}

fn layout(
    run: &LineRun,
    pinned: Option<&LineRun>,
    step: bool,
    (width, height, mark_row): (u32, u32, bool),
    (x_unit, y_unit): (Unit, Unit),
    title: &str,
) -> Layout {
    let mut plot = Plot::new(width, height);
    if mark_row {
        // Room for the marks' legend under the series' legend.
        plot.y0 = (plot.y0 + MARK_LEGEND_ROW).min(plot.y1 - 1.0);
    }
    let runs: Vec<&LineRun> = std::iter::once(run).chain(pinned).collect();
    let (x_lo, x_hi) = extent(runs.iter().map(|r| &r.x[..])).unwrap_or((f64::NAN, f64::NAN));
    let (x_lo, x_hi) = usable_range(x_lo, x_hi);
    let ys = runs
        .iter()
        .flat_map(|r| r.series.iter().map(|s| &s.values[..]));
    let (y_lo, y_hi) = extent(ys).unwrap_or((f64::NAN, f64::NAN));
    // Counts and rates read best against zero; only a series that goes negative moves the floor.
    let (y_lo, y_hi) = usable_range(y_lo.min(0.0), y_hi);
    let (y_lo, y_hi) = nice_domain(y_lo, y_hi, 5);
    let y_ticks = ticks(y_lo, y_hi, 5);
    plot.fit_y_labels(&y_ticks, y_unit);
    let x = LinearScale::new((x_lo, x_hi), (plot.x0, plot.x1));
    let y = LinearScale::new((y_lo, y_hi), (plot.y1, plot.y0));
    let columns = plot.width() as usize;
    let paths = runs
        .iter()
        .map(|r| {
            r.series
                .iter()
                .map(|s| {
                    let keep = min_max_per_column(&r.x, &s.values, (x_lo, x_hi), columns);
                    path_data(
                        keep.iter().map(|&i| (x.map(r.x[i]), y.map(s.values[i]))),
                        step,
                    )
                })
                .collect()
        })
        .collect();
    Layout {
        plot,
        x,
        y,
        y_ticks,
        paths,
        summary: summary(title, &runs, (x_lo, x_hi), (x_unit, y_unit)),
    }
}

/// The accessible description: what is plotted over which span, with each series' peak.
fn summary(
    title: &str,
    runs: &[&LineRun],
    (x0, x1): (f64, f64),
    (x_unit, y_unit): (Unit, Unit),
) -> String {
    let mut out = format!(
        "{title}: line chart from {} to {}.",
        format_value(x0, x_unit),
        format_value(x1, x_unit)
    );
    for run in runs {
        out.push_str(&format!(" {}:", run.label));
        for s in run.series.iter() {
            let peak = extent([&s.values[..]]).map_or(f64::NAN, |e| e.1);
            out.push_str(&format!(
                " {} peaks at {};",
                s.name,
                format_value(peak, y_unit)
            ));
        }
    }
    out
}
