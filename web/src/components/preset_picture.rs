//! A preset's answer in small: the gallery card's chart (lines in a box, the SLO's bound
//! dashed, each judged point filled when it met the SLO and hollow when it missed) with
//! what its axes measure, and its legend. The pictures come from `opal::gallery`,
//! made by running the presets, so they are on the page before anything runs here.

use opal::gallery::{Picture, SCALE};
use std::fmt::Write;
use yew::prelude::*;

/// The drawing's size in SVG units; it scales with its column's width.
const WIDTH: f64 = 160.0;
const HEIGHT: f64 = 100.0;
/// Room around the box for the dots at its edges.
const PAD: f64 = 4.0;

/// Props of [`PresetPicture`].
#[derive(Properties, PartialEq, Clone)]
pub struct PresetPictureProps {
    /// What to draw.
    pub picture: &'static Picture,
}

fn place(p: [u8; 2]) -> (f64, f64) {
    let scale = f64::from(SCALE);
    (
        PAD + f64::from(p[0]) / scale * (WIDTH - 2.0 * PAD),
        HEIGHT - PAD - f64::from(p[1]) / scale * (HEIGHT - 2.0 * PAD),
    )
}

fn path(points: &[[u8; 2]]) -> String {
    let mut d = String::new();
    for (k, &p) in points.iter().enumerate() {
        let (x, y) = place(p);
        let _ = write!(d, "{}{x:.1} {y:.1}", if k == 0 { "M" } else { "L" });
    }
    d
}

/// The width of line `k` of `n`: each drawn a little wider than the next, so a line that
/// runs under a later one (two policies with the same answer) shows as its edge.
fn line_width(k: usize, n: usize) -> f64 {
    let step = if n <= 3 { 1.0 } else { 0.6 };
    1.6 + step * (n - 1 - k) as f64
}

/// One preset's picture, for its gallery card.
#[function_component(PresetPicture)]
pub fn preset_picture(props: &PresetPictureProps) -> Html {
    let p = props.picture;
    let judged = p.lines.iter().any(|l| !l.met.is_empty());
    let frame = format!(
        "M{PAD} {PAD}V{bottom}H{right}",
        bottom = HEIGHT - PAD,
        right = WIDTH - PAD
    );
    let bound = p.bound.map(|b| {
        let (_, y) = place([0, b]);
        html! { <path class="preset-bound" d={format!("M{PAD} {y:.1}H{}", WIDTH - PAD)} /> }
    });
    let n = p.lines.len();
    let lines = p.lines.iter().enumerate().map(|(k, line)| {
        let dots = line.met.iter().zip(line.points.iter()).map(|(&met, &pt)| {
            let (cx, cy) = place(pt);
            let class = if met {
                "preset-dot met"
            } else {
                "preset-dot missed"
            };
            html! { <circle {class} cx={format!("{cx:.1}")} cy={format!("{cy:.1}")} r="2.4" /> }
        });
        html! {
            <g class={format!("chart-c{}", k % 8)}>
                <path class="preset-line" d={path(&line.points)} style={format!("stroke-width: {:.1}", line_width(k, n))} />
                { for dots }
            </g>
        }
    });
    html! {
        <span class="preset-picture">
            <svg class="preset-chart" viewBox={format!("0 0 {WIDTH} {HEIGHT}")} aria-hidden="true" focusable="false">
                <path class="preset-frame" d={frame} />
                { for bound }
                { for lines }
            </svg>
            <span class="preset-axes">
                <span>{ format!("↑ {} {}–{}", p.y.label, p.y.from, p.y.to) }</span>
                <span>{ format!("→ {} {}–{}", p.x.label, p.x.from, p.x.to) }</span>
                if judged { <span>{ "● met the SLO, ○ missed" }</span> }
                if p.bound.is_some() { <span>{ "- - its bound" }</span> }
            </span>
        </span>
    }
}

/// Which colour is which line, when a picture has more than one.
#[function_component(PresetLegend)]
pub fn preset_legend(props: &PresetPictureProps) -> Html {
    let lines = &props.picture.lines;
    if lines.len() < 2 {
        return Html::default();
    }
    html! {
        <span class="preset-legend">
            { for lines.iter().enumerate().map(|(k, l)| html! {
                <span>
                    <svg class={format!("preset-swatch chart-c{}", k % 8)} viewBox="0 0 12 6" aria-hidden="true" focusable="false"><path d="M0 3H12" /></svg>
                    { &*l.label }
                </span>
            }) }
        </span>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_box_fills_the_drawing_inside_its_padding_y_upwards() {
        // 160 × 100 less 4 a side: x 4..156, y 96 (bottom) .. 4 (top).
        assert_eq!(place([0, 0]), (4.0, 96.0));
        assert_eq!(place([SCALE, SCALE]), (156.0, 4.0));
        assert_eq!(place([50, 50]), (80.0, 50.0));
        assert_eq!(path(&[[0, 0], [SCALE, SCALE]]), "M4.0 96.0L156.0 4.0");
        // Two lines: 2.6 under 1.6; five: 4.0 down to 1.6 in steps of 0.6.
        assert_eq!((line_width(0, 2), line_width(1, 2)), (2.6, 1.6));
        assert!((line_width(0, 5) - 4.0).abs() < 1e-12 && line_width(4, 5) == 1.6);
    }
}
