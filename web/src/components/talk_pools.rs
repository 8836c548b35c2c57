//! Talk mode's disaggregation layer: each pool's workers bracketed with the pool's name, and
//! KV transfers as dots travelling from the prefill worker to the decode worker while their
//! bytes move (a dot held at the prefill worker while the transfer waits for room).
//!
//! [`TransferTrack`] indexes a run's transfers once; each frame finds the ones in flight by
//! binary search and draws at most [`MAX_TRANSFERS`] of them.

use crate::deployment_view::WorkerPools;
use crate::state::EngineResults;
use opal::deployment::TransferRecord;
use web_sys::CanvasRenderingContext2d;

/// Most transfers drawn in one frame.
pub const MAX_TRANSFERS: usize = 300;

/// One transfer as drawn: (hand-off, start, end, prefill worker, decode worker).
type Span = (f64, f64, f64, u32, u32);

/// A run's pools and transfers, indexed for drawing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TransferTrack {
    /// Transfers that reached a decode worker, by hand-off time.
    spans: Vec<Span>,
    /// The longest hand-off → end, s (how far back a frame looks).
    longest: f64,
    /// Pool groups: (name, first worker, workers), in lane order.
    pub groups: Vec<(String, u32, u32)>,
}

impl TransferTrack {
    /// Indexes `results`; `pools` places each worker in its pool (contiguous runs of lanes
    /// become one group each).
    pub fn new(results: &EngineResults, pools: Option<&WorkerPools>) -> Self {
        Self::of(&results.transfers, pools)
    }

    /// Indexes `transfers`, grouping lanes by `pools`.
    pub fn of(transfers: &[TransferRecord], pools: Option<&WorkerPools>) -> Self {
        let mut spans: Vec<Span> = transfers
            .iter()
            .filter_map(|t| {
                let d = t.decode_worker?;
                (t.start.is_finite() && t.end.is_finite()).then_some((
                    t.handoff,
                    t.start,
                    t.end,
                    t.prefill_worker,
                    d,
                ))
            })
            .collect();
        crate::order::sort_by_number(&mut spans, |s| s.0);
        let longest = spans.iter().map(|s| s.2 - s.0).fold(0.0, f64::max);
        let mut groups: Vec<(String, u32, u32)> = Vec::new();
        if let Some(p) = pools {
            for w in 0..p.of_worker.len() as u32 {
                let name = p.name(w).unwrap_or("").to_string();
                match groups.last_mut() {
                    Some((n, first, count)) if *n == name && *first + *count == w => *count += 1,
                    _ => groups.push((name, w, 1)),
                }
            }
        }
        Self {
            spans,
            longest,
            groups,
        }
    }

    /// True when the run moved no KV between workers.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Transfers handed off by `t` and not landed yet: (prefill worker, decode worker, how
    /// far the bytes have moved 0..=1, or `None` while waiting for room), nearest `t` first,
    /// at most [`MAX_TRANSFERS`].
    pub fn in_flight(&self, t: f64) -> Vec<(u32, u32, Option<f64>)> {
        let hi = self.spans.partition_point(|s| s.0 <= t);
        let lo = self.spans[..hi].partition_point(|s| s.0 < t - self.longest);
        self.spans[lo..hi]
            .iter()
            .rev()
            .filter(|s| s.2 > t)
            .take(MAX_TRANSFERS)
            .map(|&(_, start, end, from, to)| {
                let moved = (t >= start).then(|| ((t - start) / (end - start)).clamp(0.0, 1.0));
                (from, to, moved)
            })
            .collect()
    }
}

/// Where talk mode put its worker lanes, in CSS px.
pub struct Lanes {
    /// Top of lane 0.
    pub top: f64,
    /// Height of one lane.
    pub lane_h: f64,
    /// Left edge of the worker boxes.
    pub worker_x: f64,
}

/// Draws the pools' brackets and the transfers in flight at `t`; returns how many
/// transfers it drew (the canvas's `data-transfers`).
pub fn draw(
    ctx: &CanvasRenderingContext2d,
    track: &TransferTrack,
    t: f64,
    lanes: &Lanes,
    colours: (&str, &str),
) -> usize {
    let (muted, transfer_c) = colours;
    let mid = |w: u32| lanes.top + lanes.lane_h * f64::from(w) + lanes.lane_h / 2.0;
    // Pool brackets just left of the worker boxes, the pool's name beside them.
    ctx.set_stroke_style_str(muted);
    ctx.set_fill_style_str(muted);
    ctx.set_line_width(1.5);
    ctx.set_font("600 13px system-ui, sans-serif");
    ctx.set_text_align("right");
    ctx.set_text_baseline("top");
    let x = lanes.worker_x - 8.0;
    for (name, first, count) in &track.groups {
        let y0 = lanes.top + lanes.lane_h * f64::from(*first) + 6.0;
        let y1 = lanes.top + lanes.lane_h * f64::from(first + count) - 6.0;
        ctx.begin_path();
        ctx.move_to(x + 5.0, y0);
        ctx.line_to(x, y0);
        ctx.line_to(x, y1);
        ctx.line_to(x + 5.0, y1);
        ctx.stroke();
        if !name.is_empty() {
            // Left of the transfer arcs (they bow out up to 60 px).
            let _ = ctx.fill_text(&format!("{name} pool"), x - 62.0, y0);
        }
    }
    ctx.set_text_align("left");
    // Transfers: an arc from the prefill worker to the decode worker; the dot rides it as the
    // bytes move.
    let flying = track.in_flight(t);
    ctx.set_stroke_style_str(transfer_c);
    ctx.set_fill_style_str(transfer_c);
    ctx.set_line_width(1.0);
    ctx.set_global_alpha(0.35);
    ctx.begin_path();
    // Arcs leave and reach the worker boxes' left edges and bow out left of them, clear of
    // the workers' labels (the further apart the lanes, the wider the bow, within 60 px).
    let edge = lanes.worker_x - 2.0;
    let bow = |ya: f64, yb: f64| edge - 16.0 - ((yb - ya).abs() * 0.2).min(44.0);
    for &(from, to, _) in &flying {
        let (ya, yb) = (mid(from), mid(to));
        ctx.move_to(edge, ya);
        ctx.quadratic_curve_to(bow(ya, yb), (ya + yb) / 2.0, edge, yb);
    }
    ctx.stroke();
    ctx.set_global_alpha(1.0);
    for &(from, to, moved) in &flying {
        let (ya, yb) = (mid(from), mid(to));
        let f = moved.unwrap_or(0.0);
        // The point at f on the quadratic curve above.
        let (x0, x1) = (edge, bow(ya, yb));
        let u = 1.0 - f;
        let px = u * u * x0 + 2.0 * u * f * x1 + f * f * x0;
        let py = u * u * ya + 2.0 * u * f * (ya + yb) / 2.0 + f * f * yb;
        if moved.is_some() {
            ctx.fill_rect(px - 3.5, py - 3.5, 7.0, 7.0);
        } else {
            ctx.stroke_rect(px - 3.5, py - 3.5, 7.0, 7.0);
        }
    }
    flying.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(request: u64, handoff: f64, start: f64, end: f64) -> TransferRecord {
        let mut t = TransferRecord::new(request, 0, handoff);
        (t.decode_worker, t.start, t.end) = (Some(1), start, end);
        t
    }

    #[test]
    fn in_flight_from_handoff_to_the_last_byte() {
        // Transfer 0 waits 1.0 → 1.5 then moves until 2.5; transfer 1 moves 3.0 → 3.1.
        let track = TransferTrack::of(&[span(0, 1.0, 1.5, 2.5), span(1, 3.0, 3.0, 3.1)], None);
        assert_eq!(track.in_flight(0.9), vec![]);
        assert_eq!(track.in_flight(1.2), vec![(0, 1, None)]);
        assert_eq!(track.in_flight(2.0), vec![(0, 1, Some(0.5))]);
        assert_eq!(track.in_flight(2.5), vec![], "landed at its end");
        assert_eq!(track.in_flight(3.05).len(), 1);
    }
}
