//! The SLO table of a run whose scenario has an `slo`: attainment, goodput and each
//! percentile target, for the run, each stage and each worker, judged on the stages'
//! measurement windows (an overloaded group misses whatever its percentiles say).

use crate::state::EngineResults;
use opal::slo::{Metric, SloReport, SloSummary};
use yew::prelude::*;

/// Props of [`SloTable`].
#[derive(Properties, PartialEq, Clone)]
pub struct SloTableProps {
    /// The run shown (nothing is drawn without an SLO report).
    pub results: EngineResults,
}

fn metric(m: Metric) -> &'static str {
    match m {
        Metric::Ttft => "TTFT",
        Metric::Tpot => "TPOT",
        Metric::E2e => "E2E",
    }
}

fn ms(x: f64) -> String {
    if x.is_infinite() {
        "∞".into()
    } else if x.is_nan() {
        "–".into()
    } else {
        format!("{x:.2}")
    }
}

/// The Met cell: "no (overloaded)" for a group whose load outran the cluster, whatever
/// its percentiles; "(too short to judge)" after a verdict the window's halves disagree on.
fn verdict(s: &SloSummary) -> String {
    let v = match (s.met, s.overloaded) {
        (true, _) => "yes",
        (false, true) => "no (overloaded)",
        (false, false) => "no",
    };
    if s.settled {
        v.into()
    } else {
        format!("{v} (too short to judge)")
    }
}

fn row(scope: String, s: &SloSummary) -> Html {
    html! {
        <tr data-testid="slo-row">
            <th scope="row">{ scope }</th>
            <td>{ s.requests }</td>
            <td>{ s.attained }</td>
            <td>{ ms(s.attainment * 100.0) }</td>
            <td>{ ms(s.goodput_rps) }</td>
            <td>{ format!("{:.1}", s.goodput_output_tps) }</td>
            { for s.percentiles.iter().map(|c| html! {
                <td class={if c.met { "met" } else { "miss" }}>{ ms(c.value_ms) }</td>
            }) }
            <td class={classes!(s.overloaded.then_some("miss"))}>{ verdict(s) }</td>
        </tr>
    }
}

fn table(report: &SloReport) -> Html {
    let rows = std::iter::once(("Run".to_string(), &report.overall))
        .chain(
            report
                .stages
                .iter()
                .map(|g| (format!("Stage {}", g.id), &g.summary)),
        )
        .chain(
            report
                .workers
                .iter()
                .map(|g| (format!("Worker {}", g.id), &g.summary)),
        );
    html! {
        <section class="slo" data-testid="slo-table">
            <h3>{ format!("SLO: {}", report.describe_targets()) }</h3>
            <p class="note">{ "Judged on each stage's measurement window: the requests arriving after its warm-up." }</p>
            <div class="table-scroll" tabindex="0">
                <table class="summary-table">
                    <thead><tr>
                        <th>{ "Scope" }</th><th>{ "Requests" }</th><th>{ "Attained" }</th>
                        <th>{ "Attainment (%)" }</th><th>{ "Goodput (req/s)" }</th>
                        <th>{ "Goodput (tok/s)" }</th>
                        { for report.overall.percentiles.iter().map(|c| html! {
                            <th>{ format!("P{} {} (ms) ≤ {}", c.p, metric(c.metric), c.max_ms) }</th>
                        }) }
                        <th>{ "Met" }</th>
                    </tr></thead>
                    <tbody>{ for rows.map(|(scope, s)| row(scope, s)) }</tbody>
                </table>
            </div>
        </section>
    }
}

/// The run's SLO report as a table, when its scenario has an SLO.
#[function_component(SloTable)]
pub fn slo_table(props: &SloTableProps) -> Html {
    match &props.results.slo {
        Some(report) => table(report),
        None => html! {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(met: bool, overloaded: bool, settled: bool) -> SloSummary {
        SloSummary {
            requests: 10,
            attained: 10,
            attainment: 1.0,
            goodput_rps: 1.0,
            goodput_output_tps: 1.0,
            percentiles: Vec::new(),
            overloaded,
            met,
            settled,
        }
    }

    #[test]
    fn the_verdict_names_overload_and_a_window_too_short_to_judge() {
        assert_eq!(verdict(&summary(true, false, true)), "yes");
        assert_eq!(verdict(&summary(false, false, true)), "no");
        // The engine judges an overloaded group a miss, and settled.
        assert_eq!(verdict(&summary(false, true, true)), "no (overloaded)");
        assert_eq!(
            verdict(&summary(true, false, false)),
            "yes (too short to judge)"
        );
    }
}
