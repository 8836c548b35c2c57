//! Talk mode's stage: the cluster at the playback time, drawn on a canvas every animation
//! frame — requests flying in, the router, and each worker's waiting queue and running batch
//! (prefill vs decode) — with big counters of completed requests and throughput.
//!
//! The reducer's playback position moves in 100 ms ticks; between ticks the drawing
//! extrapolates at the playback speed, so motion stays smooth at 60 fps. Each frame reads the
//! [`Playback`] index (binary searches), never the records.

use super::talk_pools::{self, TransferTrack};
use crate::charts::format::{format_value, Unit};
use crate::deployment_view::worker_pools_of_report;
use crate::playback::Playback;
use crate::state::{EngineResults, TalkState};
use crate::worker::runner::now_ms;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};
use yew::prelude::*;

/// Props of [`TalkView`].
#[derive(Properties, PartialEq, Clone)]
pub struct TalkViewProps {
    /// The finished run played back.
    pub results: EngineResults,
    /// Playback state.
    pub talk: TalkState,
    /// One lane of a race: no counters or legend of its own (the race view shows them),
    /// narrower worker lanes.
    #[prop_or_default]
    pub compact: bool,
}

/// Wall-clock seconds an arriving request takes to fly in to the router (it lands at its
/// arrival time), and to hop from the router to its worker (it leaves when routed).
const FLIGHT_WALL_S: f64 = 0.8;
const HOP_WALL_S: f64 = 0.35;
/// Most flying requests drawn at once.
const MAX_DOTS: usize = 400;
/// Most request squares drawn per queue; the rest are counted in the number beside it.
const MAX_SQUARES: u32 = 48;
/// A generous width of one character of the lanes' 14 px labels, px.
const LABEL_CHAR_PX: f64 = 8.0;

/// Where playback stood at the last render, for extrapolating between ticks.
#[derive(Clone, Copy, Default)]
struct Clock {
    position: f64,
    wall_ms: f64,
    speed: f64,
    playing: bool,
    end: f64,
}

impl Clock {
    fn at(&self, wall_ms: f64) -> f64 {
        if !self.playing {
            return self.position;
        }
        // Extrapolate at most a quarter second past the last tick, in case ticks stall.
        let ahead = ((wall_ms - self.wall_ms) / 1000.0).clamp(0.0, 0.25) * self.speed;
        (self.position + ahead).min(self.end)
    }
}

struct Stage {
    playback: Rc<Playback>,
    /// Pools and KV transfers (disaggregated runs), drawn by [`talk_pools`].
    transfers: Rc<TransferTrack>,
    clock: Clock,
    compact: bool,
    frame: Option<i32>,
}

type Loop = Rc<RefCell<Option<Closure<dyn FnMut()>>>>;

/// Most requests talk mode plays back: its index holds several numbers a request beside
/// the run's own records, and past a few million requests the page could not hold both.
pub const TALK_MAX: usize = 2_000_000;

/// Why talk mode does not play back a run of `requests`, if it does not.
pub fn too_big_to_play(requests: usize) -> Option<String> {
    (requests > TALK_MAX).then(|| {
        format!(
            "Talk mode plays back runs of up to {} requests; this one has {}.",
            opal::count(TALK_MAX as f64),
            opal::count(requests as f64)
        )
    })
}

/// The talk-mode stage.
#[function_component(TalkView)]
pub fn talk_view(props: &TalkViewProps) -> Html {
    let canvas = use_node_ref();
    let playback = {
        let results = props.results.clone();
        use_memo(results.clone(), move |_| Rc::new(Playback::new(&results)))
    };
    let transfers = {
        let results = props.results.clone();
        use_memo(results.clone(), move |_| {
            let pools = results.deployment.as_ref().map(worker_pools_of_report);
            Rc::new(TransferTrack::new(&results, pools.as_ref()))
        })
    };
    let stage = use_mut_ref(|| Stage {
        transfers: (*transfers).clone(),
        playback: (*playback).clone(),
        clock: Clock::default(),
        compact: props.compact,
        frame: None,
    });
    {
        let mut s = stage.borrow_mut();
        s.playback = (*playback).clone();
        s.transfers = (*transfers).clone();
        s.compact = props.compact;
        s.clock = Clock {
            position: props.talk.position_s,
            wall_ms: now_ms(),
            speed: props.talk.speed,
            playing: props.talk.playing,
            end: s.playback.end,
        };
    }
    let frame_loop: Loop = use_mut_ref(|| None);
    {
        let (stage, canvas, frame_loop) = (stage.clone(), canvas.clone(), frame_loop.clone());
        use_effect_with((), move |_| {
            let tick = {
                let (stage, canvas, frame_loop) =
                    (stage.clone(), canvas.clone(), frame_loop.clone());
                Closure::<dyn FnMut()>::new(move || {
                    if let Some(c) = canvas.cast::<HtmlCanvasElement>() {
                        let s = stage.borrow();
                        let t = s.clock.at(now_ms());
                        draw(&c, &s.playback, &s.transfers, t, s.clock.speed, s.compact);
                    }
                    let next = frame_loop.borrow().as_ref().and_then(|f| {
                        web_sys::window()?
                            .request_animation_frame(f.as_ref().unchecked_ref())
                            .ok()
                    });
                    stage.borrow_mut().frame = next;
                })
            };
            let first = web_sys::window().and_then(|w| {
                w.request_animation_frame(tick.as_ref().unchecked_ref())
                    .ok()
            });
            stage.borrow_mut().frame = first;
            *frame_loop.borrow_mut() = Some(tick);
            move || {
                if let (Some(id), Some(w)) = (stage.borrow_mut().frame.take(), web_sys::window()) {
                    let _ = w.cancel_animation_frame(id);
                }
                frame_loop.borrow_mut().take();
            }
        });
    }
    html! {
        <figure class="talk-stage">
            <canvas ref={canvas} class="talk-canvas" data-testid="talk-canvas" role="img"
                aria-label="The cluster at the playback time: arriving requests, the router, and each worker's queue and running batch." />
            if !props.compact {
                <figcaption><PhaseLegend transfers={!transfers.is_empty()} /></figcaption>
            }
        </figure>
    }
}

/// Props of [`PhaseLegend`].
#[derive(Properties, PartialEq)]
pub struct PhaseLegendProps {
    /// Whether the run has KV transfers between pools to explain.
    #[prop_or_default]
    pub transfers: bool,
}

/// What the stage's colours mean.
#[function_component(PhaseLegend)]
pub fn phase_legend(props: &PhaseLegendProps) -> Html {
    html! {
        <span class="talk-legend">
            <span><span class="swatch waiting" />{ "waiting" }</span>
            <span><span class="swatch prefill" />{ "prefill" }</span>
            <span><span class="swatch decode" />{ "decode" }</span>
            if props.transfers {
                <span><span class="swatch transfer" />{ "KV transfer (hollow: waiting for room)" }</span>
            }
        </span>
    }
}

fn css_var(el: &web_sys::Element, name: &str, fallback: &str) -> String {
    web_sys::window()
        .and_then(|w| w.get_computed_style(el).ok().flatten())
        .and_then(|s| s.get_property_value(name).ok())
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| fallback.to_string())
}

/// Draws the cluster at simulated time `t`, played at `speed`; `compact` leaves out the
/// counters and narrows the lanes.
fn draw(
    canvas: &HtmlCanvasElement,
    p: &Playback,
    transfers: &TransferTrack,
    t: f64,
    speed: f64,
    compact: bool,
) {
    let Some(ctx) = canvas
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<CanvasRenderingContext2d>().ok())
    else {
        return;
    };
    let workers = p.num_workers().max(1);
    let dpr = web_sys::window().map_or(1.0, |w| w.device_pixel_ratio());
    let css_w = f64::from(canvas.client_width()).max(300.0);
    let (lane_h, top) = if compact { (40.0, 8.0) } else { (54.0, 96.0) };
    let css_h = top + lane_h * workers as f64 + 16.0;
    let (pw, ph) = ((css_w * dpr) as u32, (css_h * dpr) as u32);
    if canvas.width() != pw || canvas.height() != ph {
        canvas.set_width(pw);
        canvas.set_height(ph);
        let _ = canvas.style().set_property("height", &format!("{css_h}px"));
    }
    let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
    let fg = css_var(canvas, "--fg", "#111");
    let muted = css_var(canvas, "--muted", "#666");
    let line = css_var(canvas, "--line", "#ccc");
    let waiting_c = css_var(canvas, "--phase-queued", "#888");
    let prefill_c = css_var(canvas, "--phase-prefill", "#d9730d");
    let decode_c = css_var(canvas, "--phase-decode", "#2f6fde");
    ctx.clear_rect(0.0, 0.0, css_w, css_h);

    let now = p.at(t);
    // Counters (a race lane's are the race view's).
    if !compact {
        // Three counters a third of the width apart: their type shrinks with the canvas
        // (30 px from 600 px wide) so that on a phone they do not run into each other.
        let (big, small) = (
            (css_w / 20.0).clamp(13.0, 30.0),
            (css_w / 37.5).clamp(11.0, 16.0),
        );
        ctx.set_fill_style_str(&fg);
        ctx.set_font(&format!("600 {big}px system-ui, sans-serif"));
        ctx.set_text_baseline("top");
        let _ = ctx.fill_text(&format!("t = {t:.1} s"), 12.0, 8.0);
        let _ = ctx.fill_text(&format!("{} completed", now.completed), css_w * 0.30, 8.0);
        let _ = ctx.fill_text(
            &format_value(now.throughput, Unit::TokPerSec),
            css_w * 0.66,
            8.0,
        );
        ctx.set_font(&format!("{small}px system-ui, sans-serif"));
        ctx.set_fill_style_str(&muted);
        let below = 8.0 + big * 1.2;
        let _ = ctx.fill_text("simulated time", 12.0, below);
        let _ = ctx.fill_text("requests", css_w * 0.30, below);
        let _ = ctx.fill_text("output throughput", css_w * 0.66, below);
    }

    // Router: a box in the left third, centred on the worker lanes.
    let lanes_mid = top + lane_h * workers as f64 / 2.0;
    // A race lane is half the screen: the router moves left to leave the workers room.
    let (router_x, worker_x, label_w) = if compact {
        (css_w * 0.13, css_w * 0.22, 88.0)
    } else {
        (css_w * 0.22, css_w * 0.34, 96.0)
    };
    ctx.set_stroke_style_str(&line);
    ctx.set_line_width(2.0);
    ctx.stroke_rect(router_x - 40.0, lanes_mid - 24.0, 80.0, 48.0);
    ctx.set_fill_style_str(&fg);
    ctx.set_font("600 16px system-ui, sans-serif");
    ctx.set_text_align("center");
    ctx.set_text_baseline("middle");
    let _ = ctx.fill_text("router", router_x, lanes_mid - 6.0);
    ctx.set_font("14px system-ui, sans-serif");
    let _ = ctx.fill_text(&format!("{}", now.routing), router_x, lanes_mid + 12.0);
    ctx.set_text_align("left");

    // Requests about to arrive fly in from the left and reach the router at their arrival.
    let flight = FLIGHT_WALL_S * speed;
    ctx.set_fill_style_str(&waiting_c);
    let start_x = 12.0;
    let (first, incoming) = p.arrivals_between(t, t + flight);
    // At high speed a flight holds thousands of requests; the nearest MAX_DOTS show the stream.
    let incoming = &incoming[..incoming.len().min(MAX_DOTS)];
    for (k, &a) in incoming.iter().enumerate() {
        let f = 1.0 - ((a - t) / flight).clamp(0.0, 1.0);
        // Each arrival flies on its own height (golden-ratio spacing by arrival number),
        // converging on the router, so a burst reads as many requests, not one line.
        let spread = (((first + k) as f64 * 0.618_033_988_75).fract() - 0.5) * 90.0;
        let x = start_x + (router_x - 44.0 - start_x) * f;
        let y = lanes_mid + spread * (1.0 - f);
        ctx.fill_rect(x - 3.0, y - 3.0, 6.0, 6.0);
    }

    // Routed requests hop from the router to their worker.
    let hop = HOP_WALL_S * speed;
    for w in 0..p.num_workers() {
        let lane_mid = top + lane_h * w as f64 + lane_h / 2.0;
        let routed = p.routed_between(w, t - hop, t);
        let per_worker = MAX_DOTS / p.num_workers().max(1);
        for &r in &routed[routed.len().saturating_sub(per_worker)..] {
            let f = ((t - r) / hop).clamp(0.0, 1.0);
            let x = router_x + 40.0 + (worker_x - router_x - 44.0) * f;
            let y = lanes_mid + (lane_mid - lanes_mid) * f;
            ctx.fill_rect(x - 3.0, y - 3.0, 6.0, 6.0);
        }
    }

    // Workers: label, then waiting squares, then the running batch (prefill, decode).
    let sq = 9.0;
    let gap = 2.0;
    for (w, state) in now.workers.iter().enumerate() {
        let y = top + lane_h * w as f64;
        let mid = y + lane_h / 2.0;
        ctx.set_stroke_style_str(&line);
        ctx.set_line_width(1.0);
        ctx.begin_path();
        ctx.move_to(router_x + 40.0, lanes_mid);
        ctx.line_to(worker_x - 4.0, mid);
        ctx.stroke();
        ctx.stroke_rect(worker_x, y + 4.0, css_w - worker_x - 12.0, lane_h - 8.0);
        ctx.set_fill_style_str(&fg);
        ctx.set_font("600 15px system-ui, sans-serif");
        ctx.set_text_baseline("middle");
        let _ = ctx.fill_text(&format!("worker {w}"), worker_x + 8.0, mid);
        let queue_x = worker_x + label_w;
        let nominal_batch_x = worker_x + (css_w - worker_x) * if compact { 0.42 } else { 0.45 };
        // Two rows of squares; a narrow lane fits fewer per row (the counts say the rest).
        let fit = |room: f64| {
            if compact {
                ((room / (sq + gap)).floor() as u32).clamp(3, MAX_SQUARES / 2)
            } else {
                MAX_SQUARES / 2
            }
        };
        let queue_row = fit(nominal_batch_x - queue_x - 84.0);
        let row = |x0: f64, n: u32, colour: &str, per_row: u32| -> f64 {
            ctx.set_fill_style_str(colour);
            let shown = n.min(per_row * 2);
            for k in 0..shown {
                let (cx, cy) = ((k % per_row) as f64, (k / per_row) as f64);
                ctx.fill_rect(
                    x0 + cx * (sq + gap),
                    y + 9.0 + cy * (sq + gap) + 6.0,
                    sq,
                    sq,
                );
            }
            x0 + f64::from(shown.min(per_row)) * (sq + gap)
        };
        let end = row(queue_x, state.waiting, &waiting_c, queue_row);
        ctx.set_fill_style_str(&muted);
        ctx.set_font("14px system-ui, sans-serif");
        let waiting = format!("{} waiting", state.waiting);
        let _ = ctx.fill_text(&waiting, end + 6.0, mid);
        // A narrow lane (a race's, an embed's) moves the batch past the queue's count.
        let waiting_end = end + 6.0 + LABEL_CHAR_PX * waiting.chars().count() as f64;
        let batch_x = nominal_batch_x.max(waiting_end + 12.0);
        let batch_row = fit((css_w - 12.0 - batch_x - 150.0) / 2.0);
        let p_end = row(batch_x, state.prefill, &prefill_c, batch_row);
        let d_end = row(p_end + 6.0, state.decode, &decode_c, batch_row);
        ctx.set_fill_style_str(&muted);
        // Where the words do not fit, the counts alone (the legend names the colours).
        let mut counts = format!("{} prefill · {} decode", state.prefill, state.decode);
        let room = css_w - 16.0 - (d_end + 6.0);
        if LABEL_CHAR_PX * counts.chars().count() as f64 > room {
            counts = format!("{} · {}", state.prefill, state.decode);
        }
        let _ = ctx.fill_text(&counts, d_end + 6.0, mid);
    }
    let lanes = talk_pools::Lanes {
        top,
        lane_h,
        worker_x,
    };
    let transfer_c = css_var(canvas, "--phase-transfer", "#c8336b");
    let drawn = talk_pools::draw(&ctx, transfers, t, &lanes, (&muted, &transfer_c));
    let _ = canvas.set_attribute("data-transfers", &drawn.to_string());
    let _ = canvas.set_attribute("data-position", &format!("{t:.3}"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn talk_mode_plays_back_up_to_two_million_requests_and_says_why_not_past_them() {
        assert_eq!(too_big_to_play(TALK_MAX), None);
        assert_eq!(
            too_big_to_play(10_000_000).as_deref(),
            Some("Talk mode plays back runs of up to 2,000,000 requests; this one has 10,000,000.")
        );
    }
}
