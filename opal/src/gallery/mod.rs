//! The preset gallery's pictures: for each built-in scenario, a small chart of its answer
//! and one line saying it — what the app's gallery cards show before anything runs.
//!
//! The pictures are made by running every preset (see [`make`]) and kept as Rust data in
//! `pictures.rs`, so the page shows them on open without spending a minute of the tab's
//! CPU on sweeps, nor its bytes on parsing them. The runs are deterministic, so a picture
//! is exactly what a click on its card computes; `make test` runs them again and fails when
//! the file no longer matches (`cargo run --release -p opal --bin gallery` writes it anew).

mod make;
mod pictures;

pub use make::{make, source};

use std::borrow::Cow;

/// Text or a list that is either the kept pictures' own (borrowed) or made just now.
type Kept<T> = Cow<'static, T>;

/// The largest coordinate: a picture's points lie in `0..=SCALE` on both axes, y upwards.
pub const SCALE: u8 = 100;

/// A preset's answer as a small chart: lines in a box, the box's axes named with their
/// ends, and the answer in words.
#[derive(Debug, Clone, PartialEq)]
pub struct Picture {
    /// The preset's id.
    pub id: Kept<str>,
    /// The answer in one line, e.g. "Highest rate meeting the SLO: 122.5 req/s".
    pub answer: Kept<str>,
    /// The horizontal axis.
    pub x: Axis,
    /// The vertical axis.
    pub y: Axis,
    /// The lines, in legend order.
    pub lines: Kept<[Line]>,
    /// A bound drawn across the box (an SLO's latency), at this height.
    pub bound: Option<u8>,
}

/// An axis: what it measures and the values at its two ends, as text.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// What it measures ("p99 TTFT", "request rate, req/s").
    pub label: Kept<str>,
    /// The value at the low end.
    pub from: Kept<str>,
    /// The value at the high end.
    pub to: Kept<str>,
}

/// One line of a picture.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// Its legend ("round_robin"); empty when the picture has one line.
    pub label: Kept<str>,
    /// Its points, `[x, y]` in `0..=SCALE`, in drawing order.
    pub points: Kept<[[u8; 2]]>,
    /// Whether each point met the SLO (drawn filled, or hollow when it missed); empty when
    /// the points are not judged one by one.
    pub met: Kept<[bool]>,
}

/// Every preset's picture, in the presets' order, as `pictures.rs` keeps them.
pub fn pictures() -> &'static [Picture] {
    pictures::PICTURES
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::presets;

    #[test]
    fn every_preset_has_a_picture_in_its_box() {
        let pictures = pictures();
        let ids: Vec<_> = pictures.iter().map(|p| &*p.id).collect();
        let presets: Vec<_> = presets().iter().map(|p| p.id).collect();
        assert_eq!(
            ids, presets,
            "run `cargo run --release -p opal --bin gallery`"
        );
        for p in pictures {
            assert!(!p.answer.is_empty() && !p.lines.is_empty(), "{}", p.id);
            for line in p.lines.iter() {
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
