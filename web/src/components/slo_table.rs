//! The SLO table of a run whose scenario has an `slo`: attainment, goodput and each
//! percentile target, for the run, each stage and each worker.

use crate::state::EngineResults;
use engine::slo::{Metric, SloReport, SloSummary};
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
            <td>{ if s.met { "yes" } else { "no" } }</td>
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
