//! The per-stage results table, as `vllm bench serve` prints it, and, with a pinned run,
//! both runs side by side with the change coloured where better is obvious; under each, the
//! stage's measurement window, and above it a banner when the stage was overloaded.

use super::window_facts::{banner, window_table};
use crate::components::list_tail::list_tail;
use crate::results_view::{relative_change, verdict, Better};
use crate::state::EngineResults;
use opal::stats::{LatencySummary, StageSummary};
use opal::timing::ErrorBand;
use yew::prelude::*;

/// Props of [`SummaryTable`].
#[derive(Properties, PartialEq, Clone)]
pub struct SummaryTableProps {
    /// The run shown.
    pub results: EngineResults,
    /// Its label, e.g. "run 2 · max_prefix".
    pub label: AttrValue,
    /// A pinned run to compare with, and its label.
    #[prop_or_default]
    pub pinned: Option<(EngineResults, AttrValue)>,
    /// The error band of the run's GPU calibration and the GPU's name: where a real vLLM's
    /// latencies would likely fall, drawn as a column beside the run's.
    #[prop_or_default]
    pub band: Option<(ErrorBand, AttrValue)>,
}

/// The band's factors for a row (by its key), when it has them.
fn band_factors(band: &ErrorBand, key: &str) -> Option<[f64; 2]> {
    match key {
        "ttft_mean_ms" => Some(band.ttft_mean),
        "ttft_p99_ms" => Some(band.ttft_p99),
        "e2e_mean_ms" => Some(band.e2e_mean),
        "e2e_p99_ms" => Some(band.e2e_p99),
        "itl_mean_ms" => Some(band.itl_mean),
        _ => None,
    }
}

/// A figure's likely range on a real vLLM: `38.60–49.40`.
fn likely(value: f64, [lo, hi]: [f64; 2]) -> String {
    if value.is_finite() {
        format!("{:.2}–{:.2}", value * lo, value * hi)
    } else {
        String::new()
    }
}

/// How a row's numbers are written.
#[derive(Clone, Copy)]
enum Format {
    /// A whole number.
    Count,
    /// Two decimals, like `vllm bench serve`.
    Fixed2,
    /// A fraction shown as a percentage with two decimals.
    Percent,
}

/// One table row: label, the key tests find it by, value, format, and which way is better.
struct Row {
    label: String,
    key: String,
    value: f64,
    format: Format,
    better: Better,
}

fn row(label: &str, key: &str, value: f64, format: Format, better: Better) -> Row {
    Row {
        label: label.into(),
        key: key.into(),
        value,
        format,
        better,
    }
}

fn latency_rows(rows: &mut Vec<Row>, name: &str, key: &str, s: &LatencySummary) {
    for (stat, k, v) in [
        ("Mean", "mean", s.mean_ms),
        ("Median", "median", s.median_ms),
        ("P90", "p90", s.p90_ms),
        ("P99", "p99", s.p99_ms),
    ] {
        rows.push(row(
            &format!("{stat} {name} (ms)"),
            &format!("{key}_{k}_ms"),
            v,
            Format::Fixed2,
            Better::Lower,
        ));
    }
}

/// The rows of one stage, in `vllm bench serve`'s order.
fn rows(s: &StageSummary) -> Vec<Row> {
    use Better::*;
    use Format::*;
    let mut r = vec![
        row(
            "Successful requests",
            "successful_requests",
            s.successful_requests as f64,
            Count,
            Higher,
        ),
        row(
            "Failed requests",
            "failed_requests",
            s.failed_requests as f64,
            Count,
            Lower,
        ),
    ];
    for (reason, n) in &s.failed_by_reason {
        r.push(row(
            &format!("  {reason}"),
            &format!("failed_{reason}"),
            *n as f64,
            Count,
            Lower,
        ));
    }
    if s.unfinished_requests > 0 {
        r.push(row(
            "Unfinished requests",
            "unfinished_requests",
            s.unfinished_requests as f64,
            Count,
            Neither,
        ));
    }
    r.extend([
        row(
            "Benchmark duration (s)",
            "duration_s",
            s.duration_s,
            Fixed2,
            Neither,
        ),
        row(
            "Total input tokens",
            "total_input_tokens",
            s.total_input_tokens as f64,
            Count,
            Neither,
        ),
        row(
            "Total generated tokens",
            "total_generated_tokens",
            s.total_generated_tokens as f64,
            Count,
            Neither,
        ),
        row(
            "Request throughput (req/s)",
            "request_throughput",
            s.request_throughput,
            Fixed2,
            Higher,
        ),
        row(
            "Output token throughput (tok/s)",
            "output_throughput",
            s.output_throughput,
            Fixed2,
            Higher,
        ),
        row(
            "Peak output token throughput (tok/s)",
            "peak_output_throughput",
            s.peak_output_throughput,
            Fixed2,
            Higher,
        ),
        row(
            "Peak concurrent requests",
            "peak_concurrent_requests",
            s.peak_concurrent_requests as f64,
            Count,
            Neither,
        ),
        row(
            "Total token throughput (tok/s)",
            "total_token_throughput",
            s.total_token_throughput,
            Fixed2,
            Higher,
        ),
    ]);
    latency_rows(&mut r, "TTFT", "ttft", &s.ttft);
    latency_rows(&mut r, "TPOT", "tpot", &s.tpot);
    latency_rows(&mut r, "ITL", "itl", &s.itl);
    latency_rows(&mut r, "E2EL", "e2e", &s.e2e);
    latency_rows(&mut r, "queueing", "queueing", &s.queueing);
    let hits = &s.prefix_hit_rate;
    r.push(row(
        "GPU prefix cache hits (%)",
        "hit_gpu",
        hits.gpu_cache,
        Percent,
        Higher,
    ));
    for (i, t) in hits.tiers.iter().enumerate() {
        r.push(row(
            &format!("Offload tier {i} hits (%)"),
            &format!("hit_tier{i}"),
            *t,
            Percent,
            Higher,
        ));
    }
    r.extend([
        row(
            "GPU re-hits after preemption (%)",
            "rehit_gpu",
            hits.gpu_rehit,
            Percent,
            Neither,
        ),
        row("Computed (%)", "computed", hits.computed, Percent, Lower),
        row(
            "Extra prefill from preemptions (tokens)",
            "recomputed",
            hits.recomputed_tokens as f64,
            Count,
            Lower,
        ),
        row(
            "Preemptions",
            "preemptions",
            s.preemptions as f64,
            Count,
            Lower,
        ),
        row(
            "Preempted requests",
            "preempted_requests",
            s.preempted_requests as f64,
            Count,
            Lower,
        ),
    ]);
    r
}

fn show(v: f64, f: Format) -> String {
    if v.is_nan() {
        return "n/a".into();
    }
    match f {
        Format::Count => format!("{v:.0}"),
        Format::Fixed2 => format!("{v:.2}"),
        Format::Percent => format!("{:.2}", v * 100.0),
    }
}

/// A number cell; `data-value` carries the exact value (Rust's shortest round-trip form,
/// which JavaScript parses to the same double) for tests and copy-paste.
fn cell(testid: String, v: f64, f: Format) -> Html {
    html! {
        <td class="num" data-testid={testid} data-value={if v.is_nan() { "NaN".to_string() } else { v.to_string() }}>
            { show(v, f) }
        </td>
    }
}

/// Stage tables drawn at first, and drawn more at a time (a link may hold thousands of
/// stages, and each table is a few hundred elements).
const TABLES_SHOWN: usize = 20;

/// The summary tables, one per stage.
#[function_component(SummaryTable)]
pub fn summary_table(props: &SummaryTableProps) -> Html {
    let pinned = props.pinned.as_ref();
    let band = props.band.as_ref().map(|(b, _)| b);
    let shown = use_state(|| TABLES_SHOWN);
    let n = props.results.stages.len();
    let drawn = n.min(*shown);
    let show_more = {
        let shown = shown.clone();
        Callback::from(move |_: MouseEvent| shown.set(drawn + TABLES_SHOWN))
    };
    html! {
        <div class="summary" data-testid="summary">
            { for props.results.stages.iter().take(drawn).enumerate().map(|(i, stage)| {
                let other = pinned.and_then(|(p, _)| p.stages.get(i));
                let other_rows = other.map(rows);
                let caption = if props.results.stages.len() > 1 {
                    format!("Stage {i}")
                } else {
                    "Serving benchmark result".to_string()
                };
                let window = props.results.windows.get(i);
                html! {
                    <div class="summary-stage">
                        { banner(i, window) }
                        <div class="table-scroll" tabindex="0">
                            <table class="summary-table">
                                <caption>{ caption }</caption>
                                <thead>
                                    <tr>
                                        <th scope="col">{ "Metric" }</th>
                                        <th scope="col" class="num">{ props.label.clone() }</th>
                                        if band.is_some() {
                                            <th scope="col" class="num" title="This run's figure times its GPU calibration's error on real vLLM runs (10th–90th percentile of measured ÷ predicted)">{ "Likely on real vLLM" }</th>
                                        }
                                        if let Some((_, label)) = pinned {
                                            <th scope="col" class="num">{ label.clone() }</th>
                                            <th scope="col" class="num">{ "Change" }</th>
                                        }
                                    </tr>
                                </thead>
                                <tbody>
                                    { for rows(stage).into_iter().map(|r| {
                                        let theirs = other_rows.as_ref()
                                            .and_then(|o| o.iter().find(|x| x.key == r.key))
                                            .map(|x| x.value);
                                        let class = theirs.and_then(|p| verdict(r.better, r.value, p)).map(|better| {
                                            if better { "better" } else { "worse" }
                                        });
                                        html! {
                                            <tr class={classes!(class)}>
                                                <th scope="row">{ &r.label }</th>
                                                { cell(format!("summary-{i}-{}", r.key), r.value, r.format) }
                                                if let Some(b) = band {
                                                    <td class="num likely" data-testid={format!("likely-{i}-{}", r.key)}>
                                                        { band_factors(b, &r.key).map(|f| likely(r.value, f)).unwrap_or_default() }
                                                    </td>
                                                }
                                                if pinned.is_some() {
                                                    { match theirs {
                                                        Some(p) => cell(format!("pinned-{i}-{}", r.key), p, r.format),
                                                        None => html! { <td class="num">{ "—" }</td> },
                                                    } }
                                                    <td class="num change">
                                                        { theirs.map(|p| relative_change(r.value, p)).unwrap_or_default() }
                                                    </td>
                                                }
                                            </tr>
                                        }
                                    }) }
                                </tbody>
                            </table>
                        </div>
                        { window.map(|w| window_table(i, w)).unwrap_or_default() }
                    </div>
                }
            }) }
            if let Some((b, gpu)) = &props.band {
                <p class="note" data-testid="likely-note">
                    { format!("Likely on real vLLM: this run's figure times how far the {gpu} calibration's predictions landed from {} real vLLM runs (measured ÷ predicted, 10th to 90th percentile). It held {:.0} % of those runs when each was left out of it; other models and loads may land outside it.", b.runs, b.held_out * 100.0) }
                </p>
            }
            if drawn < n {
                { list_tail("stage-tables-hidden",
                    format!("Stages {drawn} to {} are not drawn here (Results JSON has them all). ", n - 1),
                    TABLES_SHOWN.min(n - drawn), show_more) }
            }
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_likely_range_is_the_figure_times_the_band() {
        let band = opal::timing::calibration_for(&opal::hardware::lookup("H100-SXM").unwrap())
            .error_band
            .expect("the H100 has real runs");
        assert_eq!(band_factors(&band, "ttft_mean_ms"), Some(band.ttft_mean));
        assert_eq!(band_factors(&band, "itl_mean_ms"), Some(band.itl_mean));
        assert_eq!(band_factors(&band, "tpot_mean_ms"), None);
        // 40 ms × 0.95 = 38 ms, × 1.25 = 50 ms.
        assert_eq!(likely(40.0, [0.95, 1.25]), "38.00–50.00");
        assert_eq!(likely(f64::NAN, [0.95, 1.25]), "");
    }
}
