//! The race view: each entrant of the scenario's race in its own lane, played back on talk
//! mode's one clock, with live counters (completed, p99 TTFT so far, GPU prefix-cache hit
//! rate so far), the leader of each counter marked, where the entrants part ways, and the
//! verdict on p99 TTFT over the race's seeds.

use crate::charts::format::{format_value, Unit};
use crate::components::talk_view::{too_big_to_play, PhaseLegend, TalkView};
use crate::race_counters::{
    leader, p99_lead_for_good, route_split, verdict, warmup_end, Counters, CountersNow, Marker,
    SeedOutcome,
};
use crate::state::{Action, EngineResults, Lane, LaneStatus, RaceRun, TalkState};
use std::rc::Rc;
use yew::prelude::*;

/// Props of [`RaceView`].
#[derive(Properties, PartialEq, Clone)]
pub struct RaceViewProps {
    /// The race.
    pub race: RaceRun,
    /// The shared playback clock.
    pub talk: TalkState,
    /// Sends seeks (jump to where the entrants part ways).
    pub on_action: Callback<Action>,
}

/// What the race view works out once per set of finished runs.
#[derive(PartialEq)]
struct Analysis {
    /// Each lane's counters index (`None` until it finishes, or when it failed).
    counters: Vec<Option<Counters>>,
    /// Where routing first differs for a reason: (time, sentence).
    split: Option<Marker>,
    /// How the tail race went at the played seed (`None` until every lane has finished).
    played: Option<SeedOutcome>,
}

/// How the tail race went at one seed, from its lanes' results.
fn outcome(results: &[Option<EngineResults>], lanes: &[Lane]) -> SeedOutcome {
    if lanes
        .iter()
        .any(|l| matches!(l.status, LaneStatus::Running(_)))
    {
        return SeedOutcome::Running;
    }
    let Some(all) = results
        .iter()
        .map(Option::as_ref)
        .collect::<Option<Vec<&EngineResults>>>()
    else {
        return SeedOutcome::Failed;
    };
    let counters: Vec<Counters> = all.iter().map(|r| Counters::new(r)).collect();
    counters_outcome(&counters, &all)
}

/// The outcome of a seed whose every lane finished, from their counters.
fn counters_outcome(counters: &[Counters], all: &[&EngineResults]) -> SeedOutcome {
    // The entrants share their arrivals, so their warm-ups end together; the latest, if not.
    let from = all.iter().map(|r| warmup_end(r)).fold(0.0, f64::max);
    let lanes: Vec<&Counters> = counters.iter().collect();
    match p99_lead_for_good(&lanes, from) {
        Some((decided_s, entrant)) => SeedOutcome::Won { entrant, decided_s },
        None => SeedOutcome::Tied,
    }
}

fn analyse(race: &RaceRun, results: &[Option<EngineResults>]) -> Analysis {
    let counters: Vec<Option<Counters>> = results
        .iter()
        .map(|r| r.as_ref().map(|r| Counters::new(r)))
        .collect();
    let all: Option<Vec<&EngineResults>> = results.iter().map(Option::as_ref).collect();
    let (mut split, mut played) = (None, None);
    if let Some(all) = all.filter(|a| a.len() >= 2) {
        let runs: Vec<_> = all.iter().map(|r| &***r).collect();
        split = route_split(&runs).map(|s| {
            let sent: Vec<String> = s
                .workers
                .iter()
                .map(|w| w.map_or("none".into(), |w| w.to_string()))
                .collect();
            let why: Vec<String> = s
                .reasons
                .iter()
                .zip(&race.lanes)
                .filter_map(|(r, l)| r.map(|b| format!("{} chose by {b}", l.label)))
                .collect();
            (
                Some(s.at_s),
                format!(
                    "Routes split at t = {:.2} s: request {} goes to worker {}; {}.",
                    s.at_s,
                    s.request,
                    sent.join(" vs "),
                    why.join("; ")
                ),
            )
        });
        let finished: Vec<Counters> = counters.iter().flatten().cloned().collect();
        played = Some(counters_outcome(&finished, &all));
    }
    Analysis {
        counters,
        split,
        played,
    }
}

/// Which of a seed's lanes are still running: with its finished runs, what its outcome
/// depends on (a lane that fails finishes without results).
fn running(lanes: &[Lane]) -> Vec<bool> {
    lanes
        .iter()
        .map(|l| matches!(l.status, LaneStatus::Running(_)))
        .collect()
}

/// What a later seed's outcome was worked out from, and the outcome.
type SeenOutcome = (Vec<bool>, Vec<Option<EngineResults>>, SeedOutcome);

/// Each later seed's outcome: worked out once per state of its lanes (a seed's tail race
/// reads every completion hundreds of times), kept in `cache` by seed.
fn later_outcomes(
    race: &RaceRun,
    seeds: &[Vec<Option<EngineResults>>],
    cache: &mut Vec<SeenOutcome>,
) -> Vec<SeedOutcome> {
    cache.truncate(race.later.len());
    race.later
        .iter()
        .zip(seeds)
        .enumerate()
        .map(|(k, (lanes, results))| {
            let state = running(lanes);
            match cache.get(k) {
                Some((seen_state, seen, o)) if *seen_state == state && seen == results => *o,
                _ => {
                    let o = outcome(results, lanes);
                    let entry = (state, results.clone(), o);
                    if k < cache.len() {
                        cache[k] = entry;
                    } else {
                        cache.push(entry);
                    }
                    o
                }
            }
        })
        .collect()
}

/// The race view.
#[function_component(RaceView)]
pub fn race_view(props: &RaceViewProps) -> Html {
    let mut results = props.race.all_results();
    let later = results.split_off(1);
    let analysis = {
        let race = props.race.clone();
        use_memo(results.swap_remove(0), move |r| Rc::new(analyse(&race, r)))
    };
    let cache = use_mut_ref(Vec::new);
    // Every played lane done, yet no outcome: one of them failed at the played seed.
    let played = analysis
        .played
        .or_else(|| (!running(&props.race.lanes).contains(&true)).then_some(SeedOutcome::Failed));
    let decided = played.and_then(|played| {
        let mut outcomes = vec![played];
        outcomes.extend(later_outcomes(&props.race, &later, &mut cache.borrow_mut()));
        let labels: Vec<&str> = props.race.lanes.iter().map(|l| &*l.label).collect();
        verdict(&outcomes, &labels)
    });
    let t = props.talk.position_s;
    let now: Vec<Option<CountersNow>> = analysis
        .counters
        .iter()
        .map(|c| c.as_ref().map(|c| c.at(t)))
        .collect();
    let values = |f: fn(&CountersNow) -> f64| -> Vec<f64> {
        now.iter().map(|n| n.as_ref().map_or(f64::NAN, f)).collect()
    };
    let leaders = [
        leader(&values(|n| n.completed as f64), true),
        leader(&values(|n| n.ttft.p99_ms), false),
        leader(&values(|n| n.gpu_hit), true),
    ];
    let class = classes!(
        "race-lanes",
        format!("race-lanes-{}", props.race.lanes.len())
    );
    let marker = |mark: &Option<Marker>, testid: &'static str| -> Html {
        let Some((at, text)) = mark.clone() else {
            return html! {};
        };
        let reached = at.is_some_and(|at| t >= at);
        let jump = at.map(|at| {
            let onclick = props
                .on_action
                .reform(move |_: MouseEvent| Action::TalkSeek(at));
            html! { <button type="button" {onclick}>{ "Jump there" }</button> }
        });
        html! {
            <p class={classes!("race-mark", reached.then_some("reached"))} data-testid={testid}>
                <span>{ text }</span>
                { for jump }
            </p>
        }
    };
    let sub = match props.race.later.len() {
        0 => format!("{} entrants, same arrivals", props.race.lanes.len()),
        n => format!(
            "{} entrants, same arrivals, judged at {} seeds",
            props.race.lanes.len(),
            n + 1
        ),
    };
    html! {
        <section class="race" data-testid="race-view" aria-label="Race">
            <div class="race-head">
                <h2>{ "Race" }<span class="race-sub">{ sub }</span></h2>
                <PhaseLegend />
            </div>
            <div class="race-marks">
                { marker(&analysis.split, "race-split") }
                { marker(&decided, "race-decided") }
            </div>
            <div {class}>
                { for props.race.lanes.iter().enumerate().map(|(i, lane)| html! {
                    <RaceLane lane={lane.clone()} now={now[i]} talk={props.talk}
                        leads={leaders.map(|l| l == Some(i))} />
                }) }
            </div>
        </section>
    }
}

/// Props of [`RaceLane`].
#[derive(Properties, PartialEq, Clone)]
struct RaceLaneProps {
    lane: Lane,
    /// Its counters at the clock (once it has finished).
    now: Option<CountersNow>,
    talk: TalkState,
    /// Whether it leads completed, p99 TTFT, GPU hit rate.
    leads: [bool; 3],
}

/// One entrant: its label, counters and cluster.
#[function_component(RaceLane)]
fn race_lane(props: &RaceLaneProps) -> Html {
    let lane = &props.lane;
    let body = match &lane.status {
        LaneStatus::Running(p) => {
            let pct = p.fraction.map(|f| format!("{:.0}%", f * 100.0));
            html! {
                <p class="race-status" role="status">
                    { format!("Simulating… {} requests done", p.requests_done) }
                    if let Some(pct) = pct { { format!(" ({pct})") } }
                </p>
            }
        }
        LaneStatus::Failed(message) => html! {
            <p class="race-status bad" role="alert">{ format!("This entrant could not run: {message}") }</p>
        },
        LaneStatus::Finished(results) => {
            let n = props.now.unwrap_or(CountersNow {
                completed: 0,
                ttft: opal::stats::LatencySummary::empty(),
                gpu_hit: f64::NAN,
            });
            let total = results.requests.len();
            html! {
                <>
                    <dl class="race-counters">
                        <Counter name="completed" testid="race-completed" value={n.completed as f64}
                            shown={format!("{}", n.completed)} of={format!("of {total} requests")} lead={props.leads[0]} />
                        <Counter name="p99 TTFT" testid="race-p99" value={n.ttft.p99_ms}
                            shown={format_value(n.ttft.p99_ms, Unit::Millis)}
                            of={format!("so far · mean {}", format_value(n.ttft.mean_ms, Unit::Millis))}
                            mean={n.ttft.mean_ms} lead={props.leads[1]} />
                        <Counter name="GPU cache hits" testid="race-hit" value={n.gpu_hit}
                            shown={format_value(n.gpu_hit, Unit::Percent)} of="of prompt tokens so far" lead={props.leads[2]} />
                    </dl>
                    if let Some(note) = too_big_to_play(total) {
                        <p class="note">{ note }</p>
                    } else {
                        <TalkView results={results.clone()} talk={props.talk} compact=true />
                    }
                </>
            }
        }
    };
    html! {
        <article class="race-lane" data-testid="race-lane" data-label={lane.label.to_string()}>
            <h3>{ lane.label.to_string() }</h3>
            { body }
        </article>
    }
}

/// Props of [`Counter`].
#[derive(Properties, PartialEq, Clone)]
struct CounterProps {
    name: AttrValue,
    testid: AttrValue,
    /// The exact value, for tests and copying (`data-value`).
    value: f64,
    shown: AttrValue,
    /// The line under the number.
    of: AttrValue,
    /// A second exact value (the mean TTFT beside the p99).
    #[prop_or(f64::NAN)]
    mean: f64,
    lead: bool,
}

/// One live counter; the leader's is marked.
#[function_component(Counter)]
fn counter(props: &CounterProps) -> Html {
    html! {
        <div class={classes!("race-counter", props.lead.then_some("leader"))}
            data-testid={props.testid.clone()} data-value={props.value.to_string()}
            data-mean={(!props.mean.is_nan()).then(|| props.mean.to_string())}>
            <dt>
                { props.name.clone() }
                if props.lead { <span class="race-lead">{ "▲ leads" }</span> }
            </dt>
            <dd>
                <span class="race-number">{ props.shown.clone() }</span>
                <span class="race-of">{ props.of.clone() }</span>
            </dd>
        </div>
    }
}
