//! Searches: bisection on a request rate, and on the number of workers, for the SLO's edge.
//!
//! Both assume the SLO is monotone in the searched value (more load misses sooner, more
//! workers meet sooner); each probe is a full run, so a search costs about
//! log2(range / tolerance) runs.

use super::config::{number, Search};
use super::point::PointMetrics;
use serde::Serialize;
use serde_json::Value;

/// One run a search made.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Probe {
    /// The value tried.
    pub value: f64,
    /// Whether the SLO was met there.
    pub met: bool,
}

/// What a search found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchOutcome {
    /// The highest rate or fewest workers meeting the SLO; `None` when no value in the
    /// range does.
    pub value: Option<f64>,
    /// The runs made, in order.
    pub probes: Vec<Probe>,
    /// When the answer is at an end of the range, which and what to do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Runs the search: `run(path, value)` gives the metrics of the point with `path` set to
/// `value`, or an error. Returns the outcome and the metrics at the answer.
pub(crate) fn search(
    s: &Search,
    mut run: impl FnMut(&str, Value) -> Result<PointMetrics, String>,
) -> Result<(SearchOutcome, Option<PointMetrics>), String> {
    let mut probes = Vec::new();
    let mut probe = |path: &str, x: f64| -> Result<(bool, PointMetrics), String> {
        let m = run(path, number(x))?;
        let met = m.slo_met();
        probes.push(Probe { value: x, met });
        Ok((met, m))
    };
    let (value, at, note) = match s {
        Search::MaxRate {
            path,
            low,
            high,
            tolerance,
        } => {
            let (met_lo, m_lo) = probe(path, *low)?;
            if !met_lo {
                (None, None, Some("even low misses the SLO: lower it".into()))
            } else {
                let (met_hi, m_hi) = probe(path, *high)?;
                if met_hi {
                    let note = "high meets the SLO: raise it to find the limit";
                    (Some(*high), Some(m_hi), Some(note.into()))
                } else {
                    let (mut lo, mut hi, mut best) = (*low, *high, m_lo);
                    while hi - lo > *tolerance {
                        let mid = lo + (hi - lo) / 2.0;
                        if mid <= lo || mid >= hi {
                            break; // the rates' resolution, whatever the tolerance
                        }
                        let (met, m) = probe(path, mid)?;
                        if met {
                            (lo, best) = (mid, m);
                        } else {
                            hi = mid;
                        }
                    }
                    (Some(lo), Some(best), None)
                }
            }
        }
        Search::MinWorkers { min, max } => {
            let path = "simulation.num_workers";
            let (met_hi, m_hi) = probe(path, *max as f64)?;
            if !met_hi {
                (
                    None,
                    None,
                    Some("even max workers miss the SLO: raise max".into()),
                )
            } else {
                let (met_lo, m_lo) = probe(path, *min as f64)?;
                if met_lo {
                    (Some(*min as f64), Some(m_lo), None)
                } else {
                    let (mut lo, mut hi, mut best) = (*min, *max, m_hi);
                    while hi - lo > 1 {
                        let mid = lo + (hi - lo) / 2;
                        let (met, m) = probe(path, mid as f64)?;
                        if met {
                            (hi, best) = (mid, m);
                        } else {
                            lo = mid;
                        }
                    }
                    (Some(hi as f64), Some(best), None)
                }
            }
        }
    };
    Ok((
        SearchOutcome {
            value,
            probes,
            note,
        },
        at,
    ))
}
