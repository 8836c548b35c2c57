//! Pieces shared by the SVG charts: plot area, axes with ticks, legend, path strings, pointer.

use std::fmt::Write;

use web_sys::Element;
use yew::prelude::*;

use super::format::{tick_labels, Unit};
use super::scale::LinearScale;
use super::ticks::Ticks;

/// Number of series colours in the palette (`--series-0` ... `--series-7`).
pub const PALETTE_SIZE: usize = 8;

/// The CSS class that colours series `i` (cycling through the palette).
pub fn color_class(i: usize) -> String {
    format!("chart-c{}", i % PALETTE_SIZE)
}

/// Room around the plot for axes (left, bottom) and the legend (top).
pub const MARGIN: Margin = Margin {
    top: 30.0,
    right: 14.0,
    bottom: 34.0,
    left: 64.0,
};

/// About a character's width at the charts' 12 px font, px: what legends and axis
/// labels are laid out by.
pub const CHAR_PX: f64 = 7.1;

/// Space reserved on each side of the plot area, in px.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Margin {
    /// Above the plot (legend).
    pub top: f64,
    /// Right of the plot.
    pub right: f64,
    /// Below the plot (x axis).
    pub bottom: f64,
    /// Left of the plot (y axis).
    pub left: f64,
}

/// The plot rectangle inside a `width × height` chart.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plot {
    /// Left edge, px.
    pub x0: f64,
    /// Right edge, px.
    pub x1: f64,
    /// Top edge, px.
    pub y0: f64,
    /// Bottom edge, px.
    pub y1: f64,
}

impl Plot {
    /// The plot area of a chart of the given size with [`MARGIN`] (never inverted).
    pub fn new(width: u32, height: u32) -> Self {
        let (w, h) = (f64::from(width), f64::from(height));
        Self {
            x0: MARGIN.left,
            x1: (w - MARGIN.right).max(MARGIN.left + 1.0),
            y0: MARGIN.top,
            y1: (h - MARGIN.bottom).max(MARGIN.top + 1.0),
        }
    }

    /// Plot width in px.
    pub fn width(&self) -> f64 {
        self.x1 - self.x0
    }

    /// Widens the left margin until the y axis's labels for `ticks` fit ([`CHAR_PX`] a
    /// character, and the gap to the axis).
    pub fn fit_y_labels(&mut self, ticks: &Ticks, unit: Unit) {
        let longest = tick_labels(&ticks.values, ticks.step, unit)
            .iter()
            .map(|l| l.chars().count())
            .max()
            .unwrap_or(0);
        let need = CHAR_PX * longest as f64 + 12.0;
        self.x0 = self.x0.max(need).min(self.x1 - 1.0);
    }
}

/// SVG path data through `points` (already in px): straight segments, or steps that hold each
/// value until the next sample (`step`). Empty for no points.
pub fn path_data(points: impl IntoIterator<Item = (f64, f64)>, step: bool) -> String {
    let mut d = String::new();
    let mut last_y = None;
    for (x, y) in points {
        match last_y {
            None => write!(d, "M{x:.1},{y:.1}"),
            Some(_) if step => write!(d, "H{x:.1}V{y:.1}"),
            Some(_) => write!(d, "L{x:.1},{y:.1}"),
        }
        .expect("writing to a String cannot fail");
        last_y = Some(y);
    }
    d
}

/// Horizontal axis under the plot: ticks, labels and a title with the unit.
pub fn x_axis(plot: &Plot, scale: &LinearScale, ticks: &Ticks, unit: Unit, title: &str) -> Html {
    let labels = tick_labels(&ticks.values, ticks.step, unit);
    html! {
        <g class="chart-axis" aria-hidden="true">
            <line x1={plot.x0.to_string()} x2={plot.x1.to_string()} y1={plot.y1.to_string()} y2={plot.y1.to_string()} />
            { for ticks.values.iter().zip(labels).map(|(&v, label)| {
                let x = format!("{:.1}", scale.map(v));
                html! {
                    <g>
                        <line class="chart-grid" x1={x.clone()} x2={x.clone()} y1={plot.y0.to_string()} y2={plot.y1.to_string()} />
                        <text x={x} y={(plot.y1 + 14.0).to_string()} text-anchor="middle">{ label }</text>
                    </g>
                }
            }) }
            <text class="chart-axis-title" x={plot.x1.to_string()} y={(plot.y1 + 30.0).to_string()} text-anchor="end">{ title }</text>
        </g>
    }
}

/// Vertical axis left of the plot: gridlines, ticks and labels.
pub fn y_axis(plot: &Plot, scale: &LinearScale, ticks: &Ticks, unit: Unit) -> Html {
    let labels = tick_labels(&ticks.values, ticks.step, unit);
    html! {
        <g class="chart-axis" aria-hidden="true">
            <line x1={plot.x0.to_string()} x2={plot.x0.to_string()} y1={plot.y0.to_string()} y2={plot.y1.to_string()} />
            { for ticks.values.iter().zip(labels).map(|(&v, label)| {
                let y = format!("{:.1}", scale.map(v));
                html! {
                    <g>
                        <line class="chart-grid" x1={plot.x0.to_string()} x2={plot.x1.to_string()} y1={y.clone()} y2={y.clone()} />
                        <text x={(plot.x0 - 6.0).to_string()} y={y} dy="0.32em" text-anchor="end">{ label }</text>
                    </g>
                }
            }) }
        </g>
    }
}

/// One legend entry: a label in a palette colour, solid or dashed.
#[derive(Clone, Debug, PartialEq)]
pub struct LegendItem {
    /// Text shown.
    pub label: String,
    /// Palette index.
    pub color: usize,
    /// Dashed swatch (a pinned run).
    pub dashed: bool,
}

impl LegendItem {
    /// One entry per run, in order: the first solid, the pinned ones after it dashed.
    pub fn for_runs<'a>(labels: impl Iterator<Item = &'a str>) -> Vec<LegendItem> {
        labels
            .enumerate()
            .map(|(i, label)| LegendItem {
                label: label.to_string(),
                color: i,
                dashed: i > 0,
            })
            .collect()
    }
}

/// The legend along the top of the chart; entries flow left to right.
pub fn legend(items: &[LegendItem], plot: &Plot) -> Html {
    let mut x = plot.x0;
    let entries = items.iter().map(|item| {
        let at = x;
        // The label, plus the swatch.
        x += 30.0 + CHAR_PX * item.label.chars().count() as f64;
        let dash = item.dashed.then_some("5 3");
        html! {
            <g class={classes!("chart-legend-item", color_class(item.color))}>
                <line x1={at.to_string()} x2={(at + 18.0).to_string()} y1="12" y2="12" stroke="currentColor" stroke-width="2" stroke-dasharray={dash} />
                <text x={(at + 22.0).to_string()} y="12" dy="0.32em">{ &item.label }</text>
            </g>
        }
    });
    html! { <g class="chart-legend">{ for entries }</g> }
}

/// The pointer's x in the SVG's own coordinates (its viewBox is `0 0 width height`),
/// so hover works whatever size CSS stretches the chart to.
pub fn pointer_x(e: &MouseEvent, svg: &NodeRef, width: u32) -> Option<f64> {
    let el = svg.cast::<Element>()?;
    let rect = el.get_bounding_client_rect();
    if rect.width() <= 0.0 {
        return None;
    }
    Some((f64::from(e.client_x()) - rect.left()) * f64::from(width) / rect.width())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_lines_or_steps() {
        let pts = [(0.0, 10.0), (5.0, 20.0), (10.0, 15.0)];
        assert_eq!(path_data(pts, false), "M0.0,10.0L5.0,20.0L10.0,15.0");
        // Step-after: hold 10 until x=5, then jump to 20, and so on.
        assert_eq!(path_data(pts, true), "M0.0,10.0H5.0V20.0H10.0V15.0");
        assert_eq!(path_data([], true), "");
    }

    #[test]
    fn plot_area_never_inverts() {
        let p = Plot::new(10, 10);
        assert!(p.x1 > p.x0 && p.y1 > p.y0);
        let p = Plot::new(640, 260);
        // 640 - 14 - 64 = 562 px wide.
        assert_eq!(p.width(), 562.0);
    }

    #[test]
    fn the_left_margin_widens_for_long_y_labels() {
        use crate::charts::ticks::ticks;
        // "3500 tok/s" is 10 characters: 7.1 · 10 + 12 = 83 px, past the 64 px margin.
        let mut p = Plot::new(454, 260);
        p.fit_y_labels(&ticks(0.0, 3500.0, 5), Unit::TokPerSec);
        assert_eq!(p.x0, 83.0);
        // Short labels ("25") keep the margin; a chart too narrow never inverts.
        let mut p = Plot::new(454, 260);
        p.fit_y_labels(&ticks(0.0, 25.0, 5), Unit::Count);
        assert_eq!(p.x0, MARGIN.left);
        let mut p = Plot::new(60, 260);
        p.fit_y_labels(&ticks(0.0, 3500.0, 5), Unit::TokPerSec);
        assert!(p.x1 > p.x0);
    }
}
