//! The request timeline: one bar per request on a canvas, coloured by phase, lanes per worker.
//!
//! Drawing happens in `requestAnimationFrame`, at most once per frame however many events
//! arrive. Each frame walks only the rows in view and, per row, only the bars in the time
//! window (binary search, see [`super::lanes`]), skipping bars that add no pixel; so a frame
//! costs O(rows in view × pixel columns), not O(requests). The canvas exposes the number of
//! bars it drew last frame as `data-bars-drawn` for tests and profiling.
//!
//! A disaggregated request is two bars (see [`RequestPhases`]), on its prefill and decode
//! workers' lanes, joined by a thin connector from hand-off to the transfer's start; only
//! bars drawn this frame draw their connector, so the cost stays bounded the same way. The
//! transfer segments drawn are counted in `data-transfers-drawn`.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};
use yew::prelude::*;

use super::export::{ExportButton, ExportKind};
use super::format::{format_value, tick_labels, Unit};
use super::lanes::{for_each_drawn, pack, visible, Packing};
use super::requests::{
    describe_request, RequestPhases, PHASES, PHASE_COLOURS, SEGMENT_PHASE, TRANSFER_PHASES,
};
use super::scale::extent;
use super::ticks::{ticks, usable_range};

/// Props of [`Timeline`].
#[derive(Properties, PartialEq)]
pub struct TimelineProps {
    /// Chart title, used in the accessible summary and the export file name.
    pub title: AttrValue,
    /// Phase boundaries of every request, as columns.
    pub data: RequestPhases,
    /// Tooltip text for request index `i` (an index into `data`'s columns); defaults to
    /// [`describe_request`]. Lines are separated by `\n`.
    #[prop_or_default]
    pub tooltip: Option<Callback<usize, String>>,
    /// Canvas height in CSS px (the width follows the container).
    #[prop_or(420)]
    pub height: u32,
    /// Lane labels by worker id (e.g. with the worker's pool); `worker N` where missing.
    #[prop_or_default]
    pub lane_labels: Rc<[String]>,
}

/// Time axis strip at the top, and the lane-label gutter on the left, in CSS px.
const AXIS_H: f64 = 22.0;
const GUTTER_W: f64 = 72.0;
/// Widest the gutter grows for long lane labels, px.
const GUTTER_MAX_W: f64 = 180.0;
/// Gap between worker lanes, px.
const LANE_GAP: f64 = 6.0;
/// Hover picks a bar within this many px of the pointer, so 1-px bars can be hit.
const HIT_SLOP_PX: f64 = 3.0;

/// What one frame needs; shared by event handlers and the animation-frame callback.
#[derive(Default)]
struct Scene {
    data: RequestPhases,
    labels: Rc<[String]>,
    /// Lane-label gutter width, px (fits the longest label).
    gutter: f64,
    /// Each bar's row in [`Packing::rows`] (for connectors), `u32::MAX` if not drawn.
    row_of: Vec<u32>,
    /// Whole bars: arrival to last boundary reached.
    start: Vec<f64>,
    end: Vec<f64>,
    packing: Packing,
    /// Full time range of the data.
    full: (f64, f64),
    /// Time window in view.
    t0: f64,
    t1: f64,
    /// Vertical scroll of the rows, px.
    y_off: f64,
    height: f64,
    hovered: Option<u32>,
    drag: Option<Drag>,
    /// The pending animation frame, to cancel on unmount.
    frame: Option<i32>,
    /// Reused list of bars drawn this frame (no per-frame allocation once warm).
    scratch: Vec<u32>,
}

#[derive(Clone, Copy)]
struct Drag {
    x: f64,
    y: f64,
    t0: f64,
    y_off: f64,
    moved: bool,
}

impl Scene {
    fn load(&mut self, data: &RequestPhases, labels: &Rc<[String]>, height: f64) {
        if !Rc::ptr_eq(&self.labels, labels) {
            self.labels = labels.clone();
            // The gutter fits the longest label (drawn at the charts' 12 px).
            let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
            self.gutter =
                (longest as f64 * super::svg::CHAR_PX + 10.0).clamp(GUTTER_W, GUTTER_MAX_W);
        }
        if self.gutter == 0.0 {
            self.gutter = GUTTER_W;
        }
        if &self.data != data || self.start.is_empty() != data.is_empty() {
            self.data = data.clone();
            let ok = data.check().is_ok();
            let n = if ok { data.len() } else { 0 };
            (self.start, self.end) = (0..n).map(|i| data.span(i)).unzip();
            self.packing = pack(if ok { &data.worker } else { &[] }, &self.start, &self.end);
            self.row_of = vec![u32::MAX; n];
            for (r, row) in self.packing.rows.iter().enumerate() {
                for &id in row {
                    self.row_of[id as usize] = r as u32;
                }
            }
            let (lo, hi) = extent([&self.start[..], &self.end[..]]).unwrap_or((f64::NAN, f64::NAN));
            self.full = usable_range(lo, hi);
            (self.t0, self.t1) = self.full;
            self.y_off = 0.0;
            self.hovered = None;
        }
        self.height = height;
    }

    /// Row pitch in px: rows share the height, between 3 and 14 px each.
    fn pitch(&self) -> f64 {
        let rows = self.packing.rows.len().max(1) as f64;
        let gaps = self.packing.lanes.len() as f64 * LANE_GAP;
        ((self.height - AXIS_H - gaps) / rows).clamp(3.0, 14.0)
    }

    /// Top of each lane in content px (before scrolling), plus the content height.
    fn lane_tops(&self) -> impl Iterator<Item = (usize, f64)> + '_ {
        let pitch = self.pitch();
        self.packing
            .lanes
            .iter()
            .enumerate()
            .scan(0.0, move |y, (i, lane)| {
                let top = *y;
                *y += lane.rows as f64 * pitch + LANE_GAP;
                Some((i, top))
            })
    }

    fn content_height(&self) -> f64 {
        self.packing.rows.len() as f64 * self.pitch() + self.packing.lanes.len() as f64 * LANE_GAP
    }

    fn clamp_view(&mut self) {
        let (lo, hi) = self.full;
        let full = hi - lo;
        // Zoom in to a microsecond at most; out to the whole run.
        let span = (self.t1 - self.t0).clamp(1e-6_f64.min(full), full);
        // Not `clamp`: at full span `hi - span` can round just below `lo`.
        let t0 = self.t0.min(hi - span).max(lo);
        (self.t0, self.t1) = (t0, t0 + span);
        let max_y = (self.content_height() - (self.height - AXIS_H)).max(0.0);
        self.y_off = self.y_off.clamp(0.0, max_y);
    }

    /// Zooms by `factor` (< 1 zooms in) keeping time `at` under the same pixel.
    fn zoom(&mut self, factor: f64, at: f64) {
        self.t0 = at - (at - self.t0) * factor;
        self.t1 = at + (self.t1 - at) * factor;
        self.clamp_view();
    }

    fn pan(&mut self, fraction: f64) {
        let shift = (self.t1 - self.t0) * fraction;
        self.t0 += shift;
        self.t1 += shift;
        self.clamp_view();
    }

    /// The request under the pointer at canvas CSS coordinates, if any.
    fn hit(&self, x: f64, y: f64, width: f64) -> Option<u32> {
        let gutter = self.gutter;
        if x < gutter || y < AXIS_H {
            return None;
        }
        let pps = (width - gutter) / (self.t1 - self.t0);
        let t = self.t0 + (x - gutter) / pps;
        let content_y = y - AXIS_H + self.y_off;
        let pitch = self.pitch();
        let (lane, top) = self
            .lane_tops()
            .take_while(|&(_, top)| top <= content_y)
            .last()?;
        let sub = ((content_y - top) / pitch) as usize;
        let lane = &self.packing.lanes[lane];
        if sub >= lane.rows {
            return None;
        }
        let row = &self.packing.rows[lane.first_row + sub];
        let slop = HIT_SLOP_PX / pps;
        let range = visible(row, &self.start, &self.end, t - slop, t + slop);
        row[range].first().copied()
    }
}

/// Reads a CSS custom property (already resolved to a colour) from the canvas's style.
fn css_var(style: &web_sys::CssStyleDeclaration, name: &str, fallback: &str) -> String {
    let v = style.get_property_value(name).unwrap_or_default();
    let v = v.trim();
    if v.is_empty() {
        fallback.to_string()
    } else {
        v.to_string()
    }
}

/// Draws one frame. Returns the number of request bars drawn.
fn draw(scene: &mut Scene, canvas: &HtmlCanvasElement) -> Result<usize, JsValue> {
    let window = web_sys::window().ok_or("no window")?;
    let dpr = window.device_pixel_ratio().max(1.0);
    let gutter = scene.gutter;
    let css_w = f64::from(canvas.client_width()).max(gutter + 10.0);
    let css_h = scene.height;
    let (pw, ph) = ((css_w * dpr) as u32, (css_h * dpr) as u32);
    if canvas.width() != pw || canvas.height() != ph {
        canvas.set_width(pw);
        canvas.set_height(ph);
    }
    let ctx: CanvasRenderingContext2d = canvas
        .get_context("2d")?
        .ok_or("no 2d context")?
        .dyn_into()?;
    ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0)?;
    let style = window.get_computed_style(canvas)?.ok_or("no style")?;
    let fg = css_var(&style, "--fg", "#1b1f24");
    let muted = css_var(&style, "--muted", "#5b6470");
    let line = css_var(&style, "--line", "#d8dde3");
    let bg = css_var(&style, "--bg", "#fafbfc");
    let font = style.get_property_value("font-family").unwrap_or_default();
    ctx.set_fill_style_str(&bg);
    ctx.fill_rect(0.0, 0.0, css_w, css_h);
    ctx.set_font(&format!("12px {font}"));

    let (t0, t1) = (scene.t0, scene.t1);
    let plot_w = css_w - gutter;
    let pps = plot_w / (t1 - t0);
    let x_of = |t: f64| gutter + (t - t0) * pps;

    // Time axis: gridlines through the rows, labels in the top strip.
    let tk = ticks(t0, t1, (plot_w / 100.0).max(2.0) as usize);
    let labels = tick_labels(&tk.values, tk.step, Unit::Seconds);
    ctx.set_fill_style_str(&line);
    for &v in &tk.values {
        ctx.fill_rect((x_of(v)).floor(), AXIS_H, 1.0, css_h - AXIS_H);
    }
    ctx.set_fill_style_str(&muted);
    ctx.set_text_align("center");
    ctx.set_text_baseline("middle");
    for (&v, label) in tk.values.iter().zip(&labels) {
        ctx.fill_text(label, x_of(v), AXIS_H / 2.0)?;
    }

    // Bars, clipped to the plot so nothing spills into the gutter or the axis strip.
    ctx.save();
    ctx.begin_path();
    ctx.rect(gutter, AXIS_H, plot_w, css_h - AXIS_H);
    ctx.clip();
    let pitch = scene.pitch();
    let bar_h = (pitch - 1.0).max(1.0);
    let view_h = css_h - AXIS_H;
    let mut scratch = std::mem::take(&mut scene.scratch);
    scratch.clear();
    // (row top in px, start..end in scratch) for each row in view.
    let mut row_spans: Vec<(f64, usize, usize)> = Vec::new();
    let tops: Vec<(usize, f64)> = scene.lane_tops().collect();
    for &(li, top) in &tops {
        let lane = &scene.packing.lanes[li];
        for sub in 0..lane.rows {
            let y = AXIS_H + top + sub as f64 * pitch - scene.y_off;
            if y + pitch < AXIS_H || y > AXIS_H + view_h {
                continue;
            }
            let from = scratch.len();
            let row = &scene.packing.rows[lane.first_row + sub];
            for_each_drawn(row, &scene.start, &scene.end, (t0, t1), pps, |id| {
                scratch.push(id)
            });
            row_spans.push((y, from, scratch.len()));
        }
    }
    let bounds = scene.data.boundaries();
    let mut transfers_drawn = 0;
    for (k, &phase) in SEGMENT_PHASE.iter().enumerate() {
        ctx.set_fill_style_str(&css_var(&style, PHASE_COLOURS[phase], &fg));
        for &(y, from, to) in &row_spans {
            for &id in &scratch[from..to] {
                let (a, b) = (bounds[k][id as usize], bounds[k + 1][id as usize]);
                if !(a.is_finite() && b.is_finite()) || b <= a || b < t0 || a > t1 {
                    continue;
                }
                let (xa, xb) = (x_of(a.max(t0)), x_of(b.min(t1)));
                ctx.fill_rect(xa, y, (xb - xa).max(1.0), bar_h);
                if phase == TRANSFER_PHASES[1] {
                    transfers_drawn += 1;
                }
            }
        }
    }
    // Connectors: from a prefill-side bar's hand-off to its decode-side bar, for the bars
    // drawn this frame (each pair drawn from either end looks the same).
    if !scene.data.partner.is_empty() {
        let row_y = row_tops(scene, &tops, pitch);
        ctx.set_stroke_style_str(&css_var(&style, "--phase-transfer", &fg));
        ctx.set_line_width(1.0);
        ctx.begin_path();
        for &(_, from, to) in &row_spans {
            for &id in &scratch[from..to] {
                let (first, Some(second)) = scene.data.halves(id as usize) else {
                    continue;
                };
                let (ra, rb) = (scene.row_of[first], scene.row_of[second]);
                let (Some(&ya), Some(&yb)) = (row_y.get(ra as usize), row_y.get(rb as usize))
                else {
                    continue;
                };
                let h = bounds[4][first];
                let s = bounds[5][second];
                let x1 = x_of(if s.is_finite() { s } else { h });
                ctx.move_to(x_of(h), ya + bar_h / 2.0);
                ctx.line_to(x1, yb + bar_h / 2.0);
            }
        }
        ctx.stroke();
    }
    if let Some(id) = scene.hovered {
        let (a, b) = (scene.start[id as usize], scene.end[id as usize]);
        if let Some(&(y, _, _)) = row_spans
            .iter()
            .find(|&&(_, f, t)| scratch[f..t].contains(&id))
        {
            ctx.set_stroke_style_str(&fg);
            ctx.set_line_width(1.5);
            ctx.stroke_rect(
                x_of(a) - 1.0,
                y - 1.0,
                (x_of(b) - x_of(a)).max(1.0) + 2.0,
                bar_h + 2.0,
            );
        }
    }
    ctx.restore();

    // Lane labels and separators.
    ctx.set_text_align("left");
    for &(li, top) in &tops {
        let y = AXIS_H + top - scene.y_off;
        if y > css_h || y + LANE_GAP + pitch < AXIS_H {
            continue;
        }
        ctx.set_fill_style_str(&line);
        ctx.fill_rect(0.0, y - LANE_GAP / 2.0, css_w, 1.0);
        ctx.set_fill_style_str(&muted);
        let w = scene.packing.lanes[li].worker;
        let label = match scene.labels.get(w as usize) {
            Some(l) => l.clone(),
            None => format!("worker {w}"),
        };
        ctx.fill_text(&label, 4.0, y.max(AXIS_H) + 7.0)?;
    }
    ctx.set_fill_style_str(&line);
    ctx.fill_rect(0.0, AXIS_H - 1.0, css_w, 1.0);

    let drawn = scratch.len();
    scene.scratch = scratch;
    canvas.set_attribute("data-bars-drawn", &drawn.to_string())?;
    canvas.set_attribute("data-transfers-drawn", &transfers_drawn.to_string())?;
    Ok(drawn)
}

/// Each row's top in canvas px this frame (rows out of view included: a connector may run
/// to one).
fn row_tops(scene: &Scene, tops: &[(usize, f64)], pitch: f64) -> Vec<f64> {
    let mut y = vec![0.0; scene.packing.rows.len()];
    for &(li, top) in tops {
        let lane = &scene.packing.lanes[li];
        for sub in 0..lane.rows {
            y[lane.first_row + sub] = AXIS_H + top + sub as f64 * pitch - scene.y_off;
        }
    }
    y
}

type FrameClosure = Rc<RefCell<Option<Closure<dyn FnMut()>>>>;

/// Asks for one redraw at the next animation frame (a no-op if one is already pending).
fn request_draw(scene: &Rc<RefCell<Scene>>, frame: &FrameClosure, canvas: &NodeRef) {
    if scene.borrow().frame.is_some() {
        return;
    }
    let Some(window) = web_sys::window() else {
        return;
    };
    let mut slot = frame.borrow_mut();
    let callback = slot.get_or_insert_with(|| {
        let (scene, canvas) = (scene.clone(), canvas.clone());
        Closure::new(move || {
            let mut s = scene.borrow_mut();
            s.frame = None;
            if let Some(c) = canvas.cast::<HtmlCanvasElement>() {
                if let Err(e) = draw(&mut s, &c) {
                    web_sys::console::error_2(&"timeline draw failed".into(), &e);
                }
            }
        })
    });
    if let Ok(id) = window.request_animation_frame(callback.as_ref().unchecked_ref()) {
        scene.borrow_mut().frame = Some(id);
    }
}

/// Pointer position in the canvas's CSS px.
fn local(e: &MouseEvent, canvas: &NodeRef) -> Option<(f64, f64, f64)> {
    let c = canvas.cast::<HtmlCanvasElement>()?;
    let r = c.get_bounding_client_rect();
    Some((
        f64::from(e.client_x()) - r.left(),
        f64::from(e.client_y()) - r.top(),
        r.width(),
    ))
}

/// Request bars per worker lane, phases coloured, with zoom, pan and hover details.
///
/// Keys (when focused): ←/→ pan, ↑/↓ scroll lanes, +/− zoom, 0 resets.
/// Mouse: wheel zooms at the pointer, drag pans, hover shows the request's tooltip.
#[function_component(Timeline)]
pub fn timeline(props: &TimelineProps) -> Html {
    let canvas = use_node_ref();
    let scene = use_mut_ref(Scene::default);
    let frame: FrameClosure = use_mut_ref(|| None);
    let tip = use_state(|| None::<(usize, f64, f64)>);

    scene
        .borrow_mut()
        .load(&props.data, &props.lane_labels, f64::from(props.height));
    let problem = props.data.check().err();
    {
        // Redraw after every render (new data, size, hover); cancel a pending frame on unmount.
        let (scene, frame, canvas) = (scene.clone(), frame.clone(), canvas.clone());
        use_effect(move || {
            request_draw(&scene, &frame, &canvas);
            move || {
                if let (Some(id), Some(w)) = (scene.borrow_mut().frame.take(), web_sys::window()) {
                    w.cancel_animation_frame(id).ok();
                }
            }
        });
    }

    let redraw = {
        let (scene, frame, canvas) = (scene.clone(), frame.clone(), canvas.clone());
        Rc::new(move || request_draw(&scene, &frame, &canvas))
    };
    let onwheel = {
        let (scene, canvas, redraw) = (scene.clone(), canvas.clone(), redraw.clone());
        Callback::from(move |e: WheelEvent| {
            let Some((x, _, w)) = local(&e, &canvas) else {
                return;
            };
            e.prevent_default();
            let mut s = scene.borrow_mut();
            let at = s.t0 + (x - s.gutter).max(0.0) / (w - s.gutter) * (s.t1 - s.t0);
            // exp keeps zoom steps symmetric: in then out by the same delta returns home.
            s.zoom((e.delta_y().clamp(-300.0, 300.0) * 0.002).exp(), at);
            drop(s);
            redraw();
        })
    };
    let onmousedown = {
        let (scene, canvas) = (scene.clone(), canvas.clone());
        Callback::from(move |e: MouseEvent| {
            let Some((x, y, _)) = local(&e, &canvas) else {
                return;
            };
            let mut s = scene.borrow_mut();
            let (t0, y_off) = (s.t0, s.y_off);
            s.drag = Some(Drag {
                x,
                y,
                t0,
                y_off,
                moved: false,
            });
        })
    };
    let onmousemove = {
        let (scene, canvas, redraw, tip) =
            (scene.clone(), canvas.clone(), redraw.clone(), tip.clone());
        Callback::from(move |e: MouseEvent| {
            let Some((x, y, w)) = local(&e, &canvas) else {
                return;
            };
            let mut s = scene.borrow_mut();
            if let Some(mut d) = s.drag.filter(|_| e.buttons() & 1 == 1) {
                let span = s.t1 - s.t0;
                let shift = (x - d.x) / (w - s.gutter) * span;
                (s.t0, s.t1) = (d.t0 - shift, d.t0 - shift + span);
                s.y_off = d.y_off - (y - d.y);
                s.clamp_view();
                d.moved = true;
                s.drag = Some(d);
                s.hovered = None;
                drop(s);
                tip.set(None);
            } else {
                s.drag = None;
                let hit = s.hit(x, y, w);
                if hit != s.hovered {
                    s.hovered = hit;
                    drop(s);
                    tip.set(hit.map(|id| (id as usize, x, y)));
                } else {
                    return;
                }
            }
            redraw();
        })
    };
    let onmouseup = {
        let scene = scene.clone();
        Callback::from(move |_: MouseEvent| scene.borrow_mut().drag = None)
    };
    let onmouseleave = {
        let (scene, tip, redraw) = (scene.clone(), tip.clone(), redraw.clone());
        Callback::from(move |_: MouseEvent| {
            let mut s = scene.borrow_mut();
            s.drag = None;
            s.hovered = None;
            drop(s);
            tip.set(None);
            redraw();
        })
    };
    let onkeydown = {
        let (scene, redraw) = (scene.clone(), redraw.clone());
        Callback::from(move |e: KeyboardEvent| {
            let mut s = scene.borrow_mut();
            let mid = (s.t0 + s.t1) / 2.0;
            let page = (s.height - AXIS_H) / 2.0;
            match e.key().as_str() {
                "ArrowLeft" => s.pan(-0.1),
                "ArrowRight" => s.pan(0.1),
                "ArrowUp" => {
                    s.y_off -= page;
                    s.clamp_view();
                }
                "ArrowDown" => {
                    s.y_off += page;
                    s.clamp_view();
                }
                "+" | "=" => s.zoom(0.5, mid),
                "-" | "_" => s.zoom(2.0, mid),
                "0" | "Home" => {
                    (s.t0, s.t1) = s.full;
                    s.y_off = 0.0;
                }
                _ => return,
            }
            e.prevent_default();
            drop(s);
            redraw();
        })
    };
    let zoom_button = |factor: f64| {
        let (scene, redraw) = (scene.clone(), redraw.clone());
        Callback::from(move |_: MouseEvent| {
            let mut s = scene.borrow_mut();
            let mid = (s.t0 + s.t1) / 2.0;
            s.zoom(factor, mid);
            drop(s);
            redraw();
        })
    };
    let reset = {
        let (scene, redraw) = (scene.clone(), redraw.clone());
        Callback::from(move |_: MouseEvent| {
            let mut s = scene.borrow_mut();
            (s.t0, s.t1) = s.full;
            s.y_off = 0.0;
            drop(s);
            redraw();
        })
    };

    let summary = {
        let s = scene.borrow();
        format!(
            "{}: timeline of {} requests on {} workers from {} to {}, phases {}. \
             Arrow keys pan, plus and minus zoom, 0 resets.",
            props.title,
            s.start.len(),
            s.packing.lanes.len(),
            format_value(s.full.0, Unit::Seconds),
            format_value(s.full.1, Unit::Seconds),
            PHASES.join(", "),
        )
    };
    let tooltip = tip.and_then(|(i, x, y)| {
        (i < props.data.len()).then(|| {
            let text = match &props.tooltip {
                Some(cb) => cb.emit(i),
                None => describe_request(&props.data, i),
            };
            // Past the middle it opens to the pointer's left, so a long tooltip never runs
            // past the page's edge (which made the whole page scroll sideways).
            let width = canvas
                .cast::<HtmlCanvasElement>()
                .map_or(f64::INFINITY, |c| f64::from(c.client_width()));
            let style = if x > width / 2.0 {
                format!(
                    "left: {:.0}px; top: {:.0}px; transform: translateX(-100%)",
                    x - 12.0,
                    y + 12.0
                )
            } else {
                format!("left: {:.0}px; top: {:.0}px", x + 12.0, y + 12.0)
            };
            html! { <div class="chart-tooltip" {style} role="tooltip">{ text }</div> }
        })
    });
    let disaggregated = !props.data.partner.is_empty();
    let legend = PHASE_COLOURS
        .iter()
        .zip(PHASES)
        .enumerate()
        .filter(|(p, _)| disaggregated || !TRANSFER_PHASES.contains(p))
        .map(|(_, (var, name))| {
            let style = format!("background: var({var})");
            html! { <span class="chart-phase"><span class="chart-phase-swatch" {style} />{ name }</span> }
        });

    html! {
        <figure class="chart chart-timeline">
            <div class="chart-toolbar">
                { for legend }
                <span class="chart-toolbar-gap" />
                <button type="button" aria-label="Zoom in" onclick={zoom_button(0.5)}>{ "+" }</button>
                <button type="button" aria-label="Zoom out" onclick={zoom_button(2.0)}>{ "−" }</button>
                <button type="button" onclick={reset}>{ "Reset" }</button>
            </div>
            if let Some(problem) = problem {
                <p class="chart-problem">{ format!("Cannot draw the timeline: {problem}") }</p>
            }
            <div class="chart-body">
                <canvas ref={canvas.clone()} class="chart-canvas" tabindex="0" role="img" aria-label={summary}
                    style={format!("height: {}px", props.height)}
                    {onwheel} {onmousedown} {onmousemove} {onmouseup} {onmouseleave} {onkeydown}>
                    { "Request timeline (needs a canvas-capable browser)." }
                </canvas>
                { for tooltip }
            </div>
            <figcaption>
                <span>{ &props.title }</span>
                <ExportButton target={canvas} file_name={props.title.clone()} kind={ExportKind::Png} />
            </figcaption>
        </figure>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zooming_out_at_full_view_keeps_the_whole_run_in_view() {
        // With these extents `hi - (hi - lo)` rounds just below `lo`, which made
        // `f64::clamp(lo, hi - span)` panic (its lower bound above its upper bound).
        for (lo, hi) in [(0.2, 20.7), (1.0 / 3.0, 100.1)] {
            let mut s = Scene {
                full: (lo, hi),
                t0: lo,
                t1: hi,
                ..Scene::default()
            };
            s.clamp_view();
            assert!(
                s.t0 >= lo && s.t1 - s.t0 <= hi - lo,
                "({lo}, {hi}) -> {:?}",
                (s.t0, s.t1)
            );
        }
    }
}
