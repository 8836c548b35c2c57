//! The results tabs other than the summary: charts over simulated time, latency
//! distributions, the request timeline, and the routing decisions.

use crate::charts::{
    describe_request, Band, CdfChart, CdfInput, CdfRun, Histogram, HistogramRun, LineChart,
    LineRun, Timeline, Unit,
};
use crate::deployment_view::{describe_transfer, transfer_index, worker_pools, WorkerPools};
use crate::results_view::{
    decision_index, describe_decision, describe_terms, request_phases, short, window_bands,
    Latencies, RunSeries, ScoreSplit, TimelineSample, MAX_BANDS,
};
use crate::state::EngineResults;
use opal::simulation::RoutingRecord;
use opal::stats::WorkerTable as Workers;
use std::rc::Rc;
use yew::prelude::*;

/// A run as the charts draw it: derived once per run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunView {
    /// Its legend label.
    pub label: AttrValue,
    /// Series over simulated time.
    pub series: RunSeries,
    /// Latency columns.
    pub latencies: Latencies,
    /// Each stage's measurement window, shaded on the series charts (none past
    /// [`MAX_BANDS`] stages).
    pub windows: Rc<[Band]>,
    /// Stages in the run.
    pub stages: usize,
}

impl RunView {
    /// Derives the chart data of `results`.
    pub fn of(results: &EngineResults, label: AttrValue) -> Self {
        Self {
            series: RunSeries::of(results, &label),
            latencies: Latencies::of(&results.requests, &results.itl),
            windows: window_bands(&results.windows),
            stages: results.windows.len(),
            label,
        }
    }
}

/// Props of [`ChartsPanel`] and [`LatencyPanel`].
#[derive(Properties, PartialEq, Clone)]
pub struct RunsProps {
    /// The current run.
    pub run: Rc<RunView>,
    /// A pinned run, overlaid.
    #[prop_or_default]
    pub pinned: Option<Rc<RunView>>,
}

/// Throughput, GPU busy time and roofline utilisation, queues, KV use and active workers
/// over simulated time, the current run's measurement windows shaded.
#[function_component(ChartsPanel)]
pub fn charts_panel(props: &RunsProps) -> Html {
    let pin = |f: fn(&RunSeries) -> &LineRun| props.pinned.as_ref().map(|p| f(&p.series).clone());
    let s = &props.run.series;
    let bands = &props.run.windows;
    let unshaded = (props.run.stages > MAX_BANDS).then(|| {
        format!(
            "The {} stages' measurement windows are not shaded (at most {MAX_BANDS} are).",
            props.run.stages
        )
    });
    html! {
        <>
        if let Some(note) = unshaded {
            <p class="note" data-testid="windows-unshaded">{ note }</p>
        }
        <div class="chart-grid" data-testid="charts">
            <LineChart title="Output throughput" run={s.output_throughput.clone()}
                pinned={pin(|s| &s.output_throughput)} bands={bands.clone()} y_unit={Unit::TokPerSec} />
            <LineChart title="Arrivals and completions per second" run={s.requests.clone()}
                pinned={pin(|s| &s.requests)} bands={bands.clone()} />
            <LineChart title="GPU busy (running a step), per worker" run={s.busy.clone()}
                pinned={pin(|s| &s.busy)} bands={bands.clone()} y_unit={Unit::Percent} />
            <LineChart title="GPU compute: achieved FLOP/s of peak, per worker" run={s.compute.clone()}
                pinned={pin(|s| &s.compute)} bands={bands.clone()} y_unit={Unit::Percent} />
            <LineChart title="GPU memory: achieved HBM bandwidth of peak, per worker" run={s.memory.clone()}
                pinned={pin(|s| &s.memory)} bands={bands.clone()} y_unit={Unit::Percent} />
            <LineChart title="Waiting requests, per worker" run={s.waiting.clone()}
                pinned={pin(|s| &s.waiting)} bands={bands.clone()} step=true />
            <LineChart title="Running requests, per worker" run={s.running.clone()}
                pinned={pin(|s| &s.running)} bands={bands.clone()} step=true />
            <LineChart title="KV blocks in use, per worker" run={s.kv_blocks.clone()}
                pinned={pin(|s| &s.kv_blocks)} bands={bands.clone()} step=true />
            <LineChart title="Active workers" run={s.active_workers.clone()}
                pinned={pin(|s| &s.active_workers)} bands={bands.clone()} step=true />
        </div>
        </>
    }
}

/// CDFs and histograms of TTFT, TPOT, E2E and queueing, and the CDF of the pooled ITL.
#[function_component(LatencyPanel)]
pub fn latency_panel(props: &RunsProps) -> Html {
    let runs = |f: fn(&Latencies) -> &Rc<[f64]>| {
        let mut v = vec![(props.run.label.clone(), f(&props.run.latencies).clone())];
        if let Some(p) = &props.pinned {
            v.push((p.label.clone(), f(&p.latencies).clone()));
        }
        v
    };
    let pair = |title: &'static str, f: fn(&Latencies) -> &Rc<[f64]>| {
        let r = runs(f);
        let cdf: Rc<[CdfRun]> = r
            .iter()
            .map(|(label, v)| CdfRun {
                label: label.clone(),
                input: CdfInput::Sorted(v.clone()),
            })
            .collect();
        let hist: Rc<[HistogramRun]> = r
            .into_iter()
            .map(|(label, values)| HistogramRun { label, values })
            .collect();
        html! {
            <>
                <CdfChart title={format!("{title} CDF")} unit={Unit::Seconds} runs={cdf} />
                <Histogram title={format!("{title} histogram")} unit={Unit::Seconds} runs={hist} />
            </>
        }
    };
    let mut itl = vec![CdfRun {
        label: props.run.label.clone(),
        input: CdfInput::Weighted(props.run.latencies.itl.clone()),
    }];
    if let Some(p) = &props.pinned {
        itl.push(CdfRun {
            label: p.label.clone(),
            input: CdfInput::Weighted(p.latencies.itl.clone()),
        });
    }
    html! {
        <div data-testid="latency">
            if let Some(note) = props.run.latencies.sample_note() {
                <p class="note" data-testid="latency-sample">{ note }</p>
            }
            <div class="chart-grid">
                { pair("TTFT", |l| &l.ttft) }
                { pair("TPOT", |l| &l.tpot) }
                { pair("E2E latency", |l| &l.e2e) }
                { pair("Queueing", |l| &l.queueing) }
                <CdfChart title="ITL CDF (every inter-token gap)" unit={Unit::Seconds} runs={Rc::<[CdfRun]>::from(itl)} />
            </div>
        </div>
    }
}

/// Props of [`TimelinePanel`].
#[derive(Properties, PartialEq, Clone)]
pub struct TimelinePanelProps {
    /// The run's results.
    pub results: EngineResults,
    /// The scenario it ran (its deployment names the lanes' pools).
    pub scenario: AttrValue,
    /// How its routing scores split into terms, for the tooltip.
    pub split: Option<ScoreSplit>,
}

/// The request timeline, one lane per worker (labelled with its pool), with the routing
/// decision and any KV transfer in the tooltip; derived from the run when first shown.
#[function_component(TimelinePanel)]
pub fn timeline_panel(props: &TimelinePanelProps) -> Html {
    let drawn = use_memo(props.results.clone(), |r| {
        (
            request_phases(&r.requests, &r.transfers),
            decision_index(&r.decisions, r.requests.len()),
        )
    });
    let (phases, decisions) = (&drawn.0, &drawn.1);
    let pools = use_memo(
        (props.results.clone(), props.scenario.clone()),
        |(r, scenario)| worker_pools(scenario, r.workers.workers.len() as u32, &r.transfers),
    );
    let transfers = {
        let results = props.results.clone();
        use_memo(results.clone(), move |_| {
            transfer_index(&results.transfers, results.requests.len())
        })
    };
    let lane_labels = use_memo((*pools).clone(), |pools| -> Rc<[String]> {
        match pools {
            Some(p) => (0..p.of_worker.len() as u32).map(|w| p.label(w)).collect(),
            None => Rc::from(Vec::new()),
        }
    });
    let tooltip = {
        let (results, phases, decisions, pools, transfers, split) = (
            props.results.clone(),
            phases.clone(),
            decisions.clone(),
            (*pools).clone(),
            transfers.clone(),
            props.split.clone(),
        );
        Callback::from(move |i: usize| {
            let mut text = describe_request(&phases, i);
            let id = phases.request_id[i] as usize;
            if let Some(t) = transfers.get(id).copied().flatten() {
                text.push('\n');
                text.push_str(&describe_transfer(
                    &results.transfers[t as usize],
                    pools.as_ref(),
                ));
            }
            if let Some(d) = decisions.get(id).copied().flatten() {
                let d = &results.decisions[d as usize];
                let terms = split.as_ref().and_then(|s| s.terms(d, &results.requests));
                text.push('\n');
                text.push_str(&describe_decision(d, terms.as_deref()));
            }
            text
        })
    };
    let sample = TimelineSample::of(props.results.requests.len());
    html! {
        <div data-testid="timeline">
            if let Some(sample) = sample {
                <p class="note" data-testid="timeline-sample">{ sample.caption() }</p>
            }
            <Timeline title="Requests by worker" data={phases.clone()} {tooltip} height={480}
                lane_labels={(*lane_labels).clone()} />
        </div>
    }
}

/// Decisions listed in the routing table.
pub const ROUTING_ROWS: usize = 200;

/// Props of [`RoutingPanel`].
#[derive(Properties, PartialEq, Clone)]
pub struct RoutingPanelProps {
    /// The run's results.
    pub results: EngineResults,
    /// How its routing scores split into terms.
    pub split: Option<ScoreSplit>,
    /// Each worker's pool (runs with a `deployment`).
    #[prop_or_default]
    pub pools: Option<WorkerPools>,
}

/// The first [`ROUTING_ROWS`] routing decisions: who went where and why.
#[function_component(RoutingPanel)]
pub fn routing_panel(props: &RoutingPanelProps) -> Html {
    let d = &props.results.decisions;
    let basis = d.first().map(|r| r.decision.basis.as_str()).unwrap_or("");
    let terms_of = |r: &RoutingRecord| {
        (props.split.as_ref()).and_then(|s| s.terms(r, &props.results.requests))
    };
    // The terms' names, once, from the first decision that has them.
    let term_names = d.iter().take(ROUTING_ROWS).find_map(|r| {
        let terms = terms_of(r)?;
        let names: Vec<String> = (terms.first()?.iter())
            .map(|t| format!("{} × {}", short(t.weight), t.name))
            .collect();
        Some(names.join(" + "))
    });
    html! {
        <div data-testid="routing">
            <WorkerTable table={props.results.workers.clone()} pools={props.pools.clone()} />
            <p class="note">
                { format!("{} decisions; the first {} are listed. Score: {basis}.", d.len(), d.len().min(ROUTING_ROWS)) }
                if let Some(names) = &term_names {
                    { format!(" Its terms, in order: {names}.") }
                }
            </p>
            <div class="table-scroll" tabindex="0">
                <table class="routing-table">
                    <thead>
                        <tr>
                            <th scope="col" class="num">{ "Request" }</th>
                            <th scope="col" class="num">{ "Time (s)" }</th>
                            <th scope="col" class="num">{ "Worker" }</th>
                            <th scope="col">{ "Candidates: score (outstanding, prefix tokens)" }</th>
                        </tr>
                    </thead>
                    <tbody>
                        { for d.iter().take(ROUTING_ROWS).map(|r| { let terms = terms_of(r); html! {
                            <tr>
                                <td class="num">{ r.request }</td>
                                <td class="num">{ format!("{:.3}", r.time) }</td>
                                <td class="num">{ r.decision.worker }</td>
                                <td class="candidates">
                                    { for r.decision.candidates.iter().enumerate().map(|(k, c)| {
                                        let chosen = c.worker == r.decision.worker;
                                        let prefix = c.prefix.map(|p| format!(", {}", p.tokens())).unwrap_or_default();
                                        let sum = terms.as_ref().and_then(|t| t.get(k))
                                            .map(|t| format!(" = {}", describe_terms(t, false)))
                                            .unwrap_or_default();
                                        html! {
                                            <span class={classes!("candidate", chosen.then_some("chosen"))}>
                                                { format!("w{}: {}{sum} ({}{prefix})", c.worker, short(c.score), c.outstanding) }
                                            </span>
                                        }
                                    }) }
                                </td>
                            </tr>
                        } }) }
                    </tbody>
                </table>
            </div>
        </div>
    }
}

/// Props of [`WorkerTable`].
#[derive(Properties, PartialEq, Clone)]
pub struct WorkerTableProps {
    /// The run's per-worker rows.
    pub table: Workers,
    /// Each worker's pool, shown in a column when given.
    #[prop_or_default]
    pub pools: Option<WorkerPools>,
}

/// Per worker: the load the router gave it and what it made of it.
#[function_component(WorkerTable)]
pub fn worker_table(props: &WorkerTableProps) -> Html {
    let t = &props.table;
    let pct = |x: f64| format!("{:.1}", x * 100.0);
    let imbalance = if t.load_imbalance.is_nan() {
        "n/a".to_string()
    } else {
        format!("{:.2}", t.load_imbalance)
    };
    html! {
        <div data-testid="worker-table">
            <div class="table-scroll" tabindex="0">
                <table class="routing-table">
                    <thead>
                        <tr>
                            <th scope="col" class="num">{ "Worker" }</th>
                            if props.pools.is_some() {
                                <th scope="col">{ "Pool" }</th>
                            }
                            <th scope="col" class="num">{ "Requests" }</th>
                            <th scope="col" class="num">{ "Load %" }</th>
                            <th scope="col" class="num">{ "Prompt tok" }</th>
                            <th scope="col" class="num">{ "Output tok" }</th>
                            <th scope="col" class="num" title="Prompt tokens found in blocks other requests computed">{ "GPU hit %" }</th>
                            <th scope="col" class="num" title="Prompt tokens a preempted request found again in its own blocks">{ "Re-hit %" }</th>
                            <th scope="col" class="num">{ "Prefill tok" }</th>
                            <th scope="col" class="num" title="Share of the run it was running a step">{ "Busy %" }</th>
                            <th scope="col" class="num" title="Achieved FLOP/s over the run, of peak">{ "FLOP/s %" }</th>
                            <th scope="col" class="num" title="Achieved HBM bandwidth over the run, of peak">{ "HBM BW %" }</th>
                            <th scope="col" class="num">{ "Preemptions" }</th>
                        </tr>
                    </thead>
                    <tbody>
                        { for t.workers.iter().map(|w| html! {
                            <tr>
                                <td class="num">{ w.worker }</td>
                                if let Some(p) = &props.pools {
                                    <td data-testid="worker-pool">{ p.name(w.worker).unwrap_or("–") }</td>
                                }
                                <td class="num">{ w.requests }</td>
                                <td class="num">{ pct(w.load_share) }</td>
                                <td class="num">{ w.prompt_tokens }</td>
                                <td class="num">{ w.output_tokens }</td>
                                <td class="num">{ pct(w.gpu_hit_rate) }</td>
                                <td class="num">{ pct(w.gpu_rehit_rate) }</td>
                                <td class="num">{ w.prefill_tokens }</td>
                                <td class="num">{ pct(w.busy) }</td>
                                <td class="num">{ pct(w.compute_utilization) }</td>
                                <td class="num">{ pct(w.memory_utilization) }</td>
                                <td class="num">{ w.preemptions }</td>
                            </tr>
                        }) }
                    </tbody>
                </table>
            </div>
            <p class="note">{ format!("Load imbalance (most requests on one worker over the mean): {imbalance}.") }</p>
        </div>
    }
}
