//! The sweep's table: the engine's (as the CLI prints it, with each point's measured
//! requests and its load: ok, overloaded or unsure), each row whose verdict has a caveat
//! tinted and saying why on hover.

use crate::components::list_tail::list_tail;
use crate::components::sweep_curves::point_caveat;
use opal::sweep::SweepResults;
use yew::prelude::*;

/// Rows drawn at first, and drawn more at a time: a sweep may have thousands of points, and
/// the page laid out its whole table again at each report while it ran.
const ROWS_SHOWN: usize = 100;

/// One row of the table: its point, its cells, and why its verdict has a caveat (its
/// tooltip).
#[derive(Debug, PartialEq)]
pub struct Row {
    /// The point's index in the sweep.
    pub index: usize,
    /// The cells, in the header's order.
    pub cells: Vec<String>,
    /// The caveat's note, when the point is overloaded or too short to judge.
    pub note: Option<String>,
}

/// The header and one row for each of the first `n` points.
pub fn rows(r: &SweepResults, n: usize) -> (Vec<String>, Vec<Row>) {
    let body = r
        .points
        .iter()
        .take(n)
        .map(|p| Row {
            index: p.index,
            cells: r.cells(p, 2),
            note: p.metrics.as_ref().and_then(point_caveat).map(|c| c.1),
        })
        .collect();
    (r.columns(), body)
}

/// Props of [`SweepTable`].
#[derive(Properties, PartialEq)]
pub struct SweepTableProps {
    /// The points so far.
    pub results: SweepResults,
}

/// The table (the engine's, as the CLI prints it), scrolling on its own when wider than
/// the results column; the first [`ROWS_SHOWN`] rows until more are asked for.
#[function_component(SweepTable)]
pub fn sweep_table(props: &SweepTableProps) -> Html {
    let shown = use_state(|| ROWS_SHOWN);
    let n = props.results.points.len();
    let drawn = n.min(*shown);
    let (head, body) = rows(&props.results, drawn);
    let show_more = {
        let shown = shown.clone();
        Callback::from(move |_: MouseEvent| shown.set(drawn + ROWS_SHOWN))
    };
    html! {
        <>
        // A column per figure is wider than the results column: it scrolls on its own
        // instead of widening the page.
        <div class="table-scroll" tabindex="0">
            <table class="summary-table" data-testid="sweep-table">
                <thead><tr>{ for head.iter().map(|h| html! { <th>{ h }</th> }) }</tr></thead>
                <tbody>{ for body.into_iter().map(|row| {
                    let class = row.note.is_some().then_some("caveat");
                    html! {
                        <tr key={row.index} {class} title={row.note}>
                            { for row.cells.into_iter().map(|c| html! { <td>{ c }</td> }) }
                        </tr>
                    }
                }) }</tbody>
            </table>
        </div>
        if drawn < n {
            { list_tail("sweep-rows-hidden",
                format!("Rows {} to {n} are not drawn here (Sweep CSV has them all once the sweep ends). ", drawn + 1),
                ROWS_SHOWN.min(n - drawn), show_more) }
        }
        </>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::sweep_fixture::sample_point;
    use opal::sweep::{SweepHeader, SweepPoint};
    use serde_json::json;

    /// Point `index` at rate `rate`, with an SLO met or not (`None`: no SLO).
    fn point(index: usize, rate: u32, met: Option<bool>) -> SweepPoint {
        sample_point(index, vec![json!(rate)], f64::from(rate), met)
    }

    fn results(points: Vec<SweepPoint>) -> SweepResults {
        SweepResults {
            header: SweepHeader {
                axes: vec!["workload.rate".into()],
                search: None,
                total_points: points.len(),
            },
            shard: None,
            points,
        }
    }

    /// Each row's (measured, load, SLO met) cells and whether it has a note.
    fn columns(r: &SweepResults) -> Vec<(String, String, String, bool)> {
        let (head, body) = rows(r, usize::MAX);
        let at = |name: &str| head.iter().position(|h| h == name).unwrap();
        let (measured, load, met) = (at("measured req"), at("load"), at("SLO met"));
        body.into_iter()
            .map(|row| {
                (
                    row.cells[measured].clone(),
                    row.cells[load].clone(),
                    row.cells[met].clone(),
                    row.note.is_some(),
                )
            })
            .collect()
    }

    #[test]
    fn overloaded_and_too_short_points_say_so_and_explain_on_hover() {
        let mut over = point(1, 20, Some(true));
        over.metrics.as_mut().unwrap().overloaded = Some("stage 0: served 15 of 20".into());
        let mut short = point(2, 30, Some(true));
        short.metrics.as_mut().unwrap().settled = false;
        let mut failed = point(3, 40, None);
        failed.metrics = None;
        failed.error = Some("bad".into());
        let r = results(vec![point(0, 10, Some(true)), over, short, failed]);
        let s = |x: &str| x.to_string();
        assert_eq!(
            columns(&r),
            [
                (s("90"), s("ok"), s("yes"), false),
                // Its percentiles met the SLO, but an overloaded point misses it.
                (s("90"), s("overloaded"), s("no"), true),
                (s("90"), s("unsure"), s("yes"), true),
                (s(""), s(""), s(""), false),
            ]
        );
        // The note is the point's reason.
        let (_, body) = rows(&r, usize::MAX);
        assert_eq!(
            body[1].note.as_deref(),
            Some("overloaded: stage 0: served 15 of 20")
        );
    }

    #[test]
    fn without_an_slo_the_load_column_still_says_overloaded() {
        let mut over = point(0, 20, None);
        over.metrics.as_mut().unwrap().overloaded = Some("why".into());
        let r = results(vec![over, point(1, 10, None)]);
        let s = |x: &str| x.to_string();
        assert_eq!(
            columns(&r),
            [
                (s("90"), s("overloaded"), s(""), true),
                (s("90"), s("ok"), s(""), false)
            ]
        );
    }
}
