//! The deployment panel of a run whose scenario has a `deployment`: each pool's role, size,
//! GPU, requests and utilisation, the pools' balance, TTFT split into queueing and prefill,
//! and the KV transfers' delays and bytes.

use crate::charts::{CdfChart, CdfInput, CdfRun, Unit};
use crate::deployment_view::{bytes, pool_hardware};
use crate::state::EngineResults;
use opal::simulation::DeploymentReport;
use opal::stats::LatencySummary;
use std::rc::Rc;
use yew::prelude::*;

/// Props of [`DeploymentPanel`].
#[derive(Properties, PartialEq, Clone)]
pub struct DeploymentPanelProps {
    /// The run shown (nothing is drawn without a deployment report).
    pub results: EngineResults,
    /// The scenario it ran (JSON), for each pool's GPU.
    pub scenario: AttrValue,
    /// Its legend label.
    pub label: AttrValue,
}

/// A number cell carrying its exact value in `data-value`, like the summary table's.
fn cell(testid: String, v: f64, shown: String) -> Html {
    html! {
        <td class="num" data-testid={testid} data-value={if v.is_nan() { "NaN".to_string() } else { v.to_string() }}>
            { shown }
        </td>
    }
}

fn pct(x: f64) -> String {
    format!("{:.1}", x * 100.0)
}

fn ms(x: f64) -> String {
    if x.is_nan() {
        "n/a".into()
    } else {
        format!("{x:.2}")
    }
}

fn latency_row(name: &str, key: &str, l: &LatencySummary) -> Html {
    html! {
        <tr>
            <th scope="row">{ name }</th>
            { cell(format!("deployment-{key}-count"), l.count as f64, l.count.to_string()) }
            { cell(format!("deployment-{key}-mean_ms"), l.mean_ms, ms(l.mean_ms)) }
            { cell(format!("deployment-{key}-median_ms"), l.median_ms, ms(l.median_ms)) }
            { cell(format!("deployment-{key}-p90_ms"), l.p90_ms, ms(l.p90_ms)) }
            { cell(format!("deployment-{key}-p99_ms"), l.p99_ms, ms(l.p99_ms)) }
        </tr>
    }
}

fn pools_table(d: &DeploymentReport, gpus: &[String]) -> Html {
    let balance = if d.pool_balance.is_nan() {
        "n/a (a pool never ran)".to_string()
    } else {
        format!("{:.2}", d.pool_balance)
    };
    html! {
        <div>
            <div class="table-scroll" tabindex="0">
                <table class="summary-table" data-testid="deployment-pools">
                    <caption>{ "Pools" }</caption>
                    <thead><tr>
                        <th scope="col">{ "Pool" }</th>
                        <th scope="col">{ "Role" }</th>
                        <th scope="col" class="num">{ "Workers" }</th>
                        <th scope="col">{ "GPU" }</th>
                        <th scope="col" class="num" title="Routed to it (mixed, prefill) or decoded on it (decode)">{ "Requests" }</th>
                        <th scope="col" class="num" title="Mean share of the run its workers ran steps">{ "Busy %" }</th>
                        <th scope="col" class="num" title="Achieved FLOP/s of peak, mean over its workers">{ "FLOP/s %" }</th>
                        <th scope="col" class="num" title="Achieved HBM bandwidth of peak, mean over its workers">{ "HBM BW %" }</th>
                    </tr></thead>
                    <tbody>
                        { for d.pools.iter().enumerate().map(|(i, p)| html! {
                            <tr data-testid="deployment-pool">
                                <th scope="row">{ &p.name }</th>
                                <td>{ p.role }</td>
                                { cell(format!("pool-{i}-workers"), p.workers as f64, p.workers.to_string()) }
                                <td>{ gpus.get(i).cloned().unwrap_or_default() }</td>
                                { cell(format!("pool-{i}-requests"), p.requests as f64, p.requests.to_string()) }
                                { cell(format!("pool-{i}-busy"), p.busy, pct(p.busy)) }
                                { cell(format!("pool-{i}-compute_utilization"), p.compute_utilization, pct(p.compute_utilization)) }
                                { cell(format!("pool-{i}-memory_utilization"), p.memory_utilization, pct(p.memory_utilization)) }
                            </tr>
                        }) }
                    </tbody>
                </table>
            </div>
            <p class="note">
                { "Pool balance (busiest pool's busy share over the idlest's; 1 = balanced): " }
                <span data-testid="deployment-pool_balance"
                    data-value={if d.pool_balance.is_nan() { "NaN".to_string() } else { d.pool_balance.to_string() }}>
                    { balance }
                </span>
            </p>
        </div>
    }
}

fn split_table(d: &DeploymentReport) -> Html {
    html! {
        <div class="table-scroll" tabindex="0">
            <table class="summary-table" data-testid="deployment-split">
                <caption>{ "Time to the first two tokens (ms)" }</caption>
                <thead><tr>
                    <th scope="col">{ "Part" }</th>
                    <th scope="col" class="num">{ "Count" }</th>
                    <th scope="col" class="num">{ "Mean" }</th>
                    <th scope="col" class="num">{ "Median" }</th>
                    <th scope="col" class="num">{ "P90" }</th>
                    <th scope="col" class="num">{ "P99" }</th>
                </tr></thead>
                <tbody>
                    { latency_row("TTFT: queueing", "ttft_queueing", &d.ttft_queueing) }
                    { latency_row("TTFT: prefill", "ttft_prefill", &d.ttft_prefill) }
                    { latency_row("KV transfer (before the 2nd token)", "transfer", &d.transfer) }
                </tbody>
            </table>
        </div>
    }
}

fn transfer_facts(d: &DeploymentReport) -> Html {
    let mean = d
        .transfer_bytes
        .checked_div(d.transfers)
        .map(bytes)
        .unwrap_or_else(|| "n/a".into());
    html! {
        <div class="table-scroll" tabindex="0">
            <table class="summary-table" data-testid="deployment-transfer-table">
                <caption>{ "KV transfers" }</caption>
                <tbody>
                    <tr><th scope="row">{ "Transfers completed" }</th>
                        { cell("deployment-transfers".into(), d.transfers as f64, d.transfers.to_string()) }</tr>
                    <tr><th scope="row">{ "Bytes moved" }</th>
                        { cell("deployment-transfer_bytes".into(), d.transfer_bytes as f64, bytes(d.transfer_bytes)) }</tr>
                    <tr><th scope="row">{ "Mean per transfer" }</th><td class="num">{ mean }</td></tr>
                    <tr><th scope="row">{ "Prompt tokens found in decode caches" }</th>
                        { cell("deployment-transfer_cached_tokens".into(), d.transfer_cached_tokens as f64, d.transfer_cached_tokens.to_string()) }</tr>
                </tbody>
            </table>
        </div>
    }
}

/// Pools, the TTFT split and the KV transfers of a run with a `deployment`.
#[function_component(DeploymentPanel)]
pub fn deployment_panel(props: &DeploymentPanelProps) -> Html {
    let gpus = use_memo(props.scenario.clone(), |s| pool_hardware(s));
    let delays = {
        let results = props.results.clone();
        let label = props.label.clone();
        use_memo(results.clone(), move |_| {
            let mut v: Vec<f64> = results
                .transfers
                .iter()
                .map(|t| t.delay())
                .filter(|d| d.is_finite())
                .collect();
            v.sort_unstable_by(f64::total_cmp);
            Rc::<[CdfRun]>::from(vec![CdfRun {
                label,
                input: CdfInput::Sorted(Rc::from(v)),
            }])
        })
    };
    let Some(d) = &props.results.deployment else {
        return html! {};
    };
    html! {
        <section class="deployment" data-testid="deployment">
            <h3>{ "Deployment" }</h3>
            <div class="summary">
                { pools_table(d, &gpus) }
                { split_table(d) }
                { transfer_facts(d) }
            </div>
            if d.transfers > 0 {
                <div class="chart-grid">
                    <CdfChart title="KV transfer delay (hand-off to last byte)" unit={Unit::Seconds} runs={(*delays).clone()} />
                </div>
            }
        </section>
    }
}
