//! What a line chart draws over its data besides lines: marks on single points (a sweep
//! point that is overloaded, or too short to judge), with their legend entries, and shaded
//! spans of x (a run's measurement windows).

use yew::prelude::*;

use super::scale::LinearScale;
use super::svg::Plot;

/// Height of the legend row the point marks' entries take under the series' legend, px.
pub const MARK_LEGEND_ROW: f64 = 15.0;

/// How a point mark is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkStyle {
    /// A hollow ring in the warning colour.
    Warning,
    /// A dashed ring with a question mark.
    Unsure,
}

impl MarkStyle {
    fn class(self) -> &'static str {
        match self {
            MarkStyle::Warning => "warning",
            MarkStyle::Unsure => "unsure",
        }
    }
}

/// A mark on one point of one of the chart's (current run's) series.
#[derive(Clone, Debug, PartialEq)]
pub struct PointMark {
    /// Index of the series.
    pub series: usize,
    /// The point's x, as in the run's x column.
    pub x: f64,
    /// Its y.
    pub y: f64,
    /// How it is drawn.
    pub style: MarkStyle,
    /// Why it is marked: its tooltip, and a line of the hover read-out.
    pub note: AttrValue,
}

/// A shaded span of x, labelled at its top left.
#[derive(Clone, Debug, PartialEq)]
pub struct Band {
    /// Where it starts, in x units.
    pub from: f64,
    /// Where it ends.
    pub to: f64,
    /// Its label, e.g. "measured".
    pub label: AttrValue,
}

/// The note of the mark on series `series` at `x`, if any.
pub fn note_at(marks: &[PointMark], series: usize, x: f64) -> Option<&AttrValue> {
    marks
        .iter()
        .find(|m| m.series == series && m.x == x)
        .map(|m| &m.note)
}

/// The legend entries to show: those of the styles some mark has, in `legend`'s order.
pub fn shown_entries<'a>(
    marks: &[PointMark],
    legend: &'a [(MarkStyle, AttrValue)],
) -> Vec<&'a (MarkStyle, AttrValue)> {
    legend
        .iter()
        .filter(|(style, _)| marks.iter().any(|m| m.style == *style))
        .collect()
}

/// The band's span in px, clipped to the plot; `None` when nothing of it is in view.
pub fn band_span(band: &Band, x: &LinearScale, plot: &Plot) -> Option<(f64, f64)> {
    let (a, b) = (x.map(band.from), x.map(band.to));
    if !(a.is_finite() && b.is_finite()) {
        return None;
    }
    let (a, b) = (a.min(b).max(plot.x0), a.max(b).min(plot.x1));
    (b > a).then_some((a, b))
}

/// One mark's shape at (`cx`, `cy`) px.
fn shape(style: MarkStyle, cx: f64, cy: f64) -> Html {
    let (cx_s, cy_s) = (format!("{cx:.1}"), format!("{cy:.1}"));
    html! {
        <>
            <circle cx={cx_s.clone()} cy={cy_s.clone()} r="4.5" />
            if style == MarkStyle::Unsure {
                <text x={cx_s} y={cy_s} dy="0.35em" text-anchor="middle">{ "?" }</text>
            }
        </>
    }
}

/// Marks closer than this, in px both ways, to one of the same style already drawn are left
/// out: the chart could not show them apart, and a sweep of thousands of short points marks
/// most of them (drawn whole, each progress report redrew thousands of marks).
const MARK_CELL_PX: f64 = 3.0;
/// The most cells a mark's position is counted in, each way.
const MARK_CELLS: usize = 1024;

/// The marks to draw and where (px): one per few pixels of each style, the first of those
/// that would land on the same spot.
fn thinned<'a>(
    marks: &'a [PointMark],
    x: &LinearScale,
    y: &LinearScale,
) -> Vec<(&'a PointMark, f64, f64)> {
    let cell = |px: f64| (px / MARK_CELL_PX).clamp(0.0, (MARK_CELLS - 1) as f64) as usize;
    let placed: Vec<(&PointMark, f64, f64)> = marks
        .iter()
        .filter(|m| m.x.is_finite() && m.y.is_finite())
        .map(|m| (m, x.map(m.x), y.map(m.y)))
        .collect();
    let (cols, rows) = placed.iter().fold((0, 0), |(c, r), &(_, px, py)| {
        (c.max(cell(px) + 1), r.max(cell(py) + 1))
    });
    let mut taken = vec![false; 2 * cols * rows];
    placed
        .into_iter()
        .filter(|&(m, px, py)| {
            let style = usize::from(m.style == MarkStyle::Unsure);
            let at = (style * cols + cell(px)) * rows + cell(py);
            !std::mem::replace(&mut taken[at], true)
        })
        .collect()
}

/// The marks, each with its note as a tooltip; one per few pixels of each style.
pub fn point_marks(marks: &[PointMark], x: &LinearScale, y: &LinearScale) -> Html {
    let drawn = thinned(marks, x, y);
    html! {
        <g class="chart-point-marks">
            { for drawn.into_iter().map(|(m, px, py)| html! {
                <g class={classes!("chart-point-mark", m.style.class())} data-testid="chart-point-mark">
                    <title>{ m.note.clone() }</title>
                    { shape(m.style, px, py) }
                </g>
            }) }
        </g>
    }
}

/// The marks' legend entries, in a row under the series' legend.
pub fn mark_legend(entries: &[&(MarkStyle, AttrValue)], plot: &Plot) -> Html {
    let y = 12.0 + MARK_LEGEND_ROW;
    let mut at = plot.x0;
    let items = entries.iter().map(|(style, label)| {
        let x = at;
        // As the series' legend: the label, plus the swatch.
        at += 30.0 + super::svg::CHAR_PX * label.chars().count() as f64;
        html! {
            <g class={classes!("chart-point-mark", style.class())}>
                { shape(*style, x + 9.0, y) }
                <text class="chart-mark-label" x={(x + 22.0).to_string()} y={y.to_string()} dy="0.32em">{ label }</text>
            </g>
        }
    });
    html! { <g class="chart-legend" data-testid="chart-mark-legend">{ for items }</g> }
}

/// The bands, under the lines.
pub fn bands(bands: &[Band], x: &LinearScale, plot: &Plot) -> Html {
    let height = format!("{:.1}", plot.y1 - plot.y0);
    html! {
        { for bands.iter().filter_map(|b| band_span(b, x, plot).map(|s| (b, s))).map(|(b, (a, z))| html! {
            <g class="chart-band" data-testid="chart-band">
                <rect x={format!("{a:.1}")} y={plot.y0.to_string()} width={format!("{:.1}", z - a)} height={height.clone()} />
                <text x={format!("{:.1}", a + 4.0)} y={(plot.y0 + 11.0).to_string()}>{ b.label.clone() }</text>
            </g>
        }) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(series: usize, x: f64, style: MarkStyle, note: &'static str) -> PointMark {
        PointMark {
            series,
            x,
            y: 1.0,
            style,
            note: note.into(),
        }
    }

    #[test]
    fn a_band_is_clipped_to_the_plot_and_dropped_out_of_view() {
        let plot = Plot::new(640, 260);
        // 0..100 s over the plot's 64..626 px: 5.62 px a second.
        let x = LinearScale::new((0.0, 100.0), (plot.x0, plot.x1));
        let band = |from, to| Band {
            from,
            to,
            label: "measured".into(),
        };
        let (a, b) = band_span(&band(10.0, 90.0), &x, &plot).unwrap();
        assert!(
            (a - 120.2).abs() < 1e-9 && (b - 569.8).abs() < 1e-9,
            "{a} {b}"
        );
        // Past the run's end: cut at the plot's right edge.
        assert_eq!(band_span(&band(50.0, 150.0), &x, &plot).unwrap().1, plot.x1);
        assert_eq!(band_span(&band(120.0, 150.0), &x, &plot), None);
        // A window of one request spans nothing; one of a stage without requests is NaN.
        assert_eq!(band_span(&band(40.0, 40.0), &x, &plot), None);
        assert_eq!(band_span(&band(f64::NAN, f64::NAN), &x, &plot), None);
    }

    #[test]
    fn legend_entries_and_notes_follow_the_marks_drawn() {
        let legend = [
            (MarkStyle::Warning, AttrValue::from("overloaded")),
            (MarkStyle::Unsure, AttrValue::from("too short to judge")),
        ];
        let marks = [mark(1, 20.0, MarkStyle::Unsure, "short")];
        let shown: Vec<MarkStyle> = shown_entries(&marks, &legend).iter().map(|e| e.0).collect();
        assert_eq!(shown, [MarkStyle::Unsure]);
        assert!(shown_entries(&[], &legend).is_empty());
        assert_eq!(note_at(&marks, 1, 20.0).map(|n| n.as_str()), Some("short"));
        // Another series at the same x, or the same series elsewhere, has no note.
        assert_eq!(note_at(&marks, 0, 20.0), None);
        assert_eq!(note_at(&marks, 1, 10.0), None);
    }

    #[test]
    fn marks_on_the_same_spot_are_drawn_once_per_style() {
        // 0..1000 over 0..100 px: ten points to a pixel.
        let x = LinearScale::new((0.0, 1000.0), (0.0, 100.0));
        let y = LinearScale::new((0.0, 1.0), (100.0, 0.0));
        let at = |x: f64, style| mark(0, x, style, "n");
        let marks = [
            at(0.0, MarkStyle::Unsure),
            at(10.0, MarkStyle::Unsure), // 1 px on: the same 3 px cell, left out
            at(10.0, MarkStyle::Warning), // the other style: drawn
            at(500.0, MarkStyle::Unsure), // 50 px on: drawn
            at(f64::NAN, MarkStyle::Unsure),
        ];
        let drawn: Vec<(f64, MarkStyle)> = thinned(&marks, &x, &y)
            .iter()
            .map(|(m, _, _)| (m.x, m.style))
            .collect();
        assert_eq!(
            drawn,
            [
                (0.0, MarkStyle::Unsure),
                (10.0, MarkStyle::Warning),
                (500.0, MarkStyle::Unsure)
            ]
        );
        // Ten thousand marks along a line are drawn at most once per cell: 34 cells wide.
        let many: Vec<PointMark> = (0..10_000)
            .map(|i| at(f64::from(i) / 10.0, MarkStyle::Unsure))
            .collect();
        assert_eq!(thinned(&many, &x, &y).len(), 34);
    }
}
