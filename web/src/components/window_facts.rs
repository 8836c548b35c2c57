//! A stage's measurement window, under its summary table: which arrivals were measured
//! (warm-up and cool-down left out), the load offered and achieved over them and their
//! latencies — what the SLO and sweeps judge — and, above the table, a banner when the
//! stage's load outran the cluster.

use opal::measure::{MeasuredWindow, Overload};
use yew::prelude::*;

/// What the banner says of an overloaded window.
pub fn overload_banner(o: &Overload) -> String {
    format!(
        "Overloaded: {} — latencies keep growing with the run's length; \
         the percentiles shown understate them.",
        o.describe()
    )
}

fn fixed(x: f64, digits: usize) -> String {
    if x.is_finite() {
        format!("{x:.digits$}")
    } else {
        "n/a".into()
    }
}

/// The window's rows: label, test key and value.
pub fn rows(w: &MeasuredWindow) -> Vec<(&'static str, &'static str, String)> {
    let p99 = |ms: f64| fixed(ms, 2);
    vec![
        (
            "Window, by arrival (s)",
            "span",
            format!(
                "{} – {} ({} s)",
                fixed(w.start, 2),
                fixed(w.end, 2),
                fixed(w.duration(), 2)
            ),
        ),
        ("Requests measured", "requests", w.requests.to_string()),
        (
            "Left out: warm-up, cool-down",
            "left_out",
            format!("{}, {}", w.warmup_requests, w.cooldown_requests),
        ),
        (
            "Offered load (req/s)",
            "offered_rps",
            fixed(w.offered_rps, 2),
        ),
        (
            "Achieved throughput (req/s)",
            "achieved_rps",
            fixed(w.achieved_rps, 2),
        ),
        (
            "Output throughput (tok/s)",
            "output_tps",
            fixed(w.output_tps, 2),
        ),
        ("P99 TTFT (ms)", "p99_ttft", p99(w.ttft.p99_ms)),
        ("P99 TPOT (ms)", "p99_tpot", p99(w.tpot.p99_ms)),
        ("P99 E2E (ms)", "p99_e2e", p99(w.e2e.p99_ms)),
    ]
}

/// The banner above stage `stage`'s table, when its window is overloaded.
pub fn banner(stage: usize, w: Option<&MeasuredWindow>) -> Html {
    match w.and_then(|w| w.overload.as_ref()) {
        Some(o) => html! {
            <p class="overload-banner" role="alert" data-testid={format!("overload-{stage}")}>
                { overload_banner(o) }
            </p>
        },
        None => html! {},
    }
}

/// Stage `stage`'s window as a table.
pub fn window_table(stage: usize, w: &MeasuredWindow) -> Html {
    let load = if w.overload.is_some() {
        "overloaded"
    } else {
        "keeps up"
    };
    html! {
        <div class="table-scroll" tabindex="0">
            <table class="summary-table window-table" data-testid={format!("window-{stage}")}>
                <caption title="The requests arriving after the warm-up and up to the last arrival: what the SLO and sweeps judge. The table above counts every request of the stage.">
                    { format!("Measurement window ({load})") }
                </caption>
                <tbody>
                    { for rows(w).into_iter().map(|(label, key, value)| html! {
                        <tr>
                            <th scope="row">{ label }</th>
                            <td class="num" data-testid={format!("window-{stage}-{key}")}>{ value }</td>
                        </tr>
                    }) }
                </tbody>
            </table>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(start: f64, end: f64, requests: u64) -> MeasuredWindow {
        let none = opal::stats::LatencySummary::empty();
        MeasuredWindow {
            stage: 0,
            start,
            end,
            midpoint: start,
            warmup_requests: 20,
            cooldown_requests: 0,
            requests,
            completed: requests,
            served: requests,
            served_output_tokens: 0,
            shortfall: 0.0,
            offered_rps: 9.9,
            achieved_rps: 9.8,
            output_tps: f64::NAN,
            ttft: none,
            tpot: none,
            e2e: none,
            overload: None,
        }
    }

    fn value<'a>(rows: &'a [(&str, &str, String)], key: &str) -> &'a str {
        &rows.iter().find(|r| r.1 == key).unwrap().2
    }

    #[test]
    fn the_window_shows_its_span_what_it_left_out_and_its_load() {
        let r = rows(&window(2.5, 20.25, 180));
        assert_eq!(value(&r, "span"), "2.50 – 20.25 (17.75 s)");
        assert_eq!(value(&r, "requests"), "180");
        assert_eq!(value(&r, "left_out"), "20, 0");
        assert_eq!(value(&r, "offered_rps"), "9.90");
        assert_eq!(value(&r, "output_tps"), "n/a");
        // A stage without requests has no span.
        let r = rows(&window(f64::NAN, f64::NAN, 0));
        assert_eq!(value(&r, "span"), "n/a – n/a (n/a s)");
    }

    #[test]
    fn the_banner_says_what_was_served_of_what_was_offered() {
        let o = Overload::Throughput {
            offered_rps: 129.46,
            served_rps: 104.24,
        };
        assert_eq!(
            overload_banner(&o),
            "Overloaded: served 104.24 req/s of 129.46 offered — latencies keep growing with \
             the run's length; the percentiles shown understate them."
        );
        let o = Overload::GrowingTtft {
            first_ms: 80.0,
            last_ms: 2400.0,
        };
        assert!(
            overload_banner(&o).starts_with(
                "Overloaded: median TTFT grew from 80.0 ms to 2.40 s across the window — "
            ),
            "{}",
            overload_banner(&o)
        );
    }
}
