//! The preset gallery's pictures: for each built-in scenario, a small chart of its answer
//! and one line saying it — what the app's gallery cards show before anything runs.
//!
//! The pictures are made by running every preset (see [`make`]) and kept in
//! `pictures.json`, so the page shows them on open without spending a minute of the tab's
//! CPU on sweeps. The runs are deterministic, so a picture is exactly what a click on its
//! card computes; `make test` runs them again and fails when the file no longer matches
//! (`cargo run --release -p opal --bin gallery` writes it anew).

mod make;

pub use make::{make, pictures_json};

use serde::{Deserialize, Serialize};

/// The largest coordinate: a picture's points lie in `0..=SCALE` on both axes, y upwards.
pub const SCALE: u16 = 100;

/// A preset's answer as a small chart: lines in a box, the box's axes named with their
/// ends, and the answer in words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Picture {
    /// The preset's id.
    pub id: String,
    /// The answer in one line, e.g. "122.5 req/s at p99 TTFT ≤ 500 ms".
    pub answer: String,
    /// The horizontal axis.
    pub x: Axis,
    /// The vertical axis.
    pub y: Axis,
    /// The lines, in legend order.
    pub lines: Vec<Line>,
    /// A bound drawn across the box (an SLO's latency), at this height.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<u16>,
}

/// An axis: what it measures and the values at its two ends, as text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Axis {
    /// What it measures, with the unit ("p99 TTFT, ms").
    pub label: String,
    /// The value at the low end.
    pub from: String,
    /// The value at the high end.
    pub to: String,
}

/// One line of a picture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Line {
    /// Its legend ("round_robin"); empty when the picture has one line.
    pub label: String,
    /// Its points, `[x, y]` in `0..=SCALE`, in drawing order.
    pub points: Vec<[u16; 2]>,
    /// Whether each point met the SLO (drawn as a filled or a crossed dot); empty when the
    /// points are not judged one by one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub met: Vec<bool>,
}

const PICTURES: &str = include_str!("pictures.json");

/// Every preset's picture, in the presets' order (as `pictures.json` holds them).
pub fn pictures() -> Vec<Picture> {
    PICTURES
        .lines()
        .filter(|l| l.starts_with('{'))
        .filter_map(|l| serde_json::from_str(l.trim_end_matches(',')).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::presets;

    #[test]
    fn every_preset_has_a_picture_in_its_box() {
        let pictures = pictures();
        let ids: Vec<_> = pictures.iter().map(|p| p.id.as_str()).collect();
        let presets: Vec<_> = presets().iter().map(|p| p.id).collect();
        assert_eq!(
            ids, presets,
            "run `cargo run --release -p opal --bin gallery`"
        );
        for p in &pictures {
            assert!(!p.answer.is_empty() && !p.lines.is_empty(), "{}", p.id);
            for line in &p.lines {
                assert!(line.points.len() >= 2, "{}: a line needs two points", p.id);
                assert!(line.met.is_empty() || line.met.len() == line.points.len());
                assert!(
                    line.points.iter().flatten().all(|&c| c <= SCALE),
                    "{}",
                    p.id
                );
            }
        }
    }
}
