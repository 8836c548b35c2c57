//! The cluster at any simulated time, from a finished run's request records, for talk-mode
//! playback. Built once per run; each frame asks [`Playback::at`], which costs a few binary
//! searches per worker, never a scan of the records.

use opal::simulation::SimulationResults;
use opal::stats::RequestRecord;

/// Sorted start and end times of one kind of interval (e.g. "waiting on worker 2").
/// How many intervals are open at `t` is `#starts ≤ t − #ends ≤ t`; an interval that never
/// ended has no end entry.
#[derive(Debug, Clone, Default, PartialEq)]
struct Intervals {
    starts: Vec<f64>,
    ends: Vec<f64>,
}

impl Intervals {
    fn push(&mut self, start: f64, end: f64) {
        if start.is_nan() {
            return;
        }
        self.starts.push(start);
        if !end.is_nan() {
            self.ends.push(end.max(start));
        }
    }

    fn sort(&mut self) {
        self.starts.sort_unstable_by(f64::total_cmp);
        self.ends.sort_unstable_by(f64::total_cmp);
    }

    fn open_at(&self, t: f64) -> u32 {
        let started = self.starts.partition_point(|&s| s <= t);
        let ended = self.ends.partition_point(|&e| e <= t);
        (started - ended) as u32
    }
}

/// One worker at an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WorkerNow {
    /// Requests in its waiting queue (including any KV fetch).
    pub waiting: u32,
    /// Requests in the running batch still prefilling.
    pub prefill: u32,
    /// Requests in the running batch decoding.
    pub decode: u32,
}

/// The cluster at an instant.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClusterNow {
    /// Requests at the router (arrived, not yet queued on a worker).
    pub routing: u32,
    /// Each worker, by index.
    pub workers: Vec<WorkerNow>,
    /// Requests completed so far.
    pub completed: u32,
    /// Output tokens in the current second (tok/s).
    pub throughput: f64,
}

/// The index playback reads from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Playback {
    /// Every request's arrival, ascending.
    arrivals: Vec<f64>,
    completions: Vec<f64>,
    routing: Intervals,
    /// Per worker: waiting, prefill, decode.
    workers: Vec<[Intervals; 3]>,
    output_tokens: Vec<u64>,
    /// Seconds each `output_tokens` entry covers.
    bucket_seconds: u64,
    /// Simulated end of the run.
    pub end: f64,
}

impl Playback {
    /// Indexes a finished run.
    pub fn new(results: &SimulationResults) -> Self {
        let workers = results
            .requests
            .iter()
            .filter_map(|r| r.worker)
            .max()
            .map_or(0, |w| w as usize + 1)
            .max(results.series.workers.len());
        let mut p = Self {
            workers: vec![Default::default(); workers],
            output_tokens: results.series.output_tokens.clone(),
            bucket_seconds: results.series.bucket_seconds.max(1),
            end: results.end_time,
            ..Self::default()
        };
        // A disaggregated request decodes on its decode worker once its KV has landed.
        let moved =
            crate::deployment_view::transfer_index(&results.transfers, results.requests.len());
        for r in &results.requests {
            let decode = moved
                .get(r.id as usize)
                .copied()
                .flatten()
                .map(|i| &results.transfers[i as usize])
                .and_then(|t| Some((t.decode_worker?, t.end)));
            p.add(r, decode);
        }
        p.arrivals.sort_unstable_by(f64::total_cmp);
        p.completions.sort_unstable_by(f64::total_cmp);
        p.routing.sort();
        p.workers.iter_mut().flatten().for_each(Intervals::sort);
        p
    }

    /// Adds request `r`; `decode` is where and from when it decoded when that was another
    /// worker (disaggregated).
    fn add(&mut self, r: &RequestRecord, decode: Option<(u32, f64)>) {
        self.arrivals.push(r.created);
        if r.is_completed() {
            self.completions.push(r.completion);
        }
        // A request rejected before reaching a worker leaves the router when it fails.
        let left_router = if r.worker_in.is_nan() {
            r.completion
        } else {
            r.worker_in
        };
        self.routing.push(r.created, left_router);
        if let Some(w) = r.worker {
            let [waiting, prefill, decode_here] = &mut self.workers[w as usize];
            let end = if r.is_completed() {
                r.completion
            } else {
                f64::NAN
            };
            // A request rejected on the worker leaves its queue when it fails.
            let scheduled = if r.first_scheduled.is_nan() {
                r.completion
            } else {
                r.first_scheduled
            };
            waiting.push(r.worker_in, scheduled);
            prefill.push(r.first_scheduled, r.first_token.min(end));
            match decode {
                None => decode_here.push(r.first_token, end),
                Some((d, from)) => {
                    if let Some([_, _, there]) = self.workers.get_mut(d as usize) {
                        there.push(from, end);
                    }
                }
            }
        }
    }

    /// The cluster at simulated time `t`.
    pub fn at(&self, t: f64) -> ClusterNow {
        let bucket = (t.max(0.0).floor() as u64 / self.bucket_seconds.max(1)) as usize;
        ClusterNow {
            routing: self.routing.open_at(t),
            workers: self
                .workers
                .iter()
                .map(|[w, p, d]| WorkerNow {
                    waiting: w.open_at(t),
                    prefill: p.open_at(t),
                    decode: d.open_at(t),
                })
                .collect(),
            completed: self.completions.partition_point(|&c| c <= t) as u32,
            throughput: self.output_tokens.get(bucket).copied().unwrap_or(0) as f64
                / self.bucket_seconds.max(1) as f64,
        }
    }

    /// Arrival times in `(from, to]`, ascending, with the arrival number of the first.
    pub fn arrivals_between(&self, from: f64, to: f64) -> (usize, &[f64]) {
        let lo = self.arrivals.partition_point(|&a| a <= from);
        let hi = self.arrivals.partition_point(|&a| a <= to).max(lo);
        (lo, &self.arrivals[lo..hi])
    }

    /// Times in `(from, to]` at which worker `w` received a request from the router.
    pub fn routed_between(&self, w: usize, from: f64, to: f64) -> &[f64] {
        let starts = &self.workers[w][0].starts;
        let lo = starts.partition_point(|&a| a <= from);
        let hi = starts.partition_point(|&a| a <= to).max(lo);
        &starts[lo..hi]
    }

    /// Number of workers drawn.
    pub fn num_workers(&self) -> usize {
        self.workers.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(id: u64, worker: u32, times: [f64; 4]) -> RequestRecord {
        let [created, scheduled, first_token, completion] = times;
        let mut r = RequestRecord::new(id, 0, created, 10);
        r.worker = Some(worker);
        r.router_in = created;
        r.worker_in = created;
        r.first_scheduled = scheduled;
        r.first_token = first_token;
        r.completion = completion;
        r
    }

    fn playback(records: Vec<RequestRecord>) -> Playback {
        let mut p = Playback {
            workers: vec![Default::default(); 2],
            end: 10.0,
            ..Playback::default()
        };
        for r in &records {
            p.add(r, None);
        }
        p.arrivals.sort_unstable_by(f64::total_cmp);
        p.completions.sort_unstable_by(f64::total_cmp);
        p.workers.iter_mut().flatten().for_each(Intervals::sort);
        p
    }

    #[test]
    fn a_disaggregated_request_decodes_on_its_decode_worker_once_its_kv_landed() {
        // Request 0 prefills on worker 0 [1, 2); its KV lands on worker 1 at 2.5; it decodes
        // there until 5. Between 2 and 2.5 it is in transit, on neither worker.
        let mut p = Playback {
            workers: vec![Default::default(); 2],
            end: 10.0,
            ..Playback::default()
        };
        p.add(&request(0, 0, [0.0, 1.0, 2.0, 5.0]), Some((1, 2.5)));
        p.workers.iter_mut().flatten().for_each(Intervals::sort);
        let idle = WorkerNow {
            waiting: 0,
            prefill: 0,
            decode: 0,
        };
        let decoding = WorkerNow { decode: 1, ..idle };
        assert_eq!(p.at(2.2).workers, vec![idle, idle]);
        assert_eq!(p.at(3.0).workers, vec![idle, decoding]);
    }

    #[test]
    fn each_request_is_in_one_place_at_a_time() {
        // Request 0 on worker 0: waits [0, 1), prefills [1, 2), decodes [2, 5).
        // Request 1 on worker 0: waits [0.5, 2), prefills [2, 2.5), decodes [2.5, 4).
        // Request 2 on worker 1: arrives 3, prefills at once [3, 3.2), decodes [3.2, 6).
        let p = playback(vec![
            request(0, 0, [0.0, 1.0, 2.0, 5.0]),
            request(1, 0, [0.5, 2.0, 2.5, 4.0]),
            request(2, 1, [3.0, 3.0, 3.2, 6.0]),
        ]);
        let w = |t: f64| p.at(t).workers;
        assert_eq!(
            w(0.75)[0],
            WorkerNow {
                waiting: 2,
                prefill: 0,
                decode: 0
            }
        );
        assert_eq!(
            w(1.5)[0],
            WorkerNow {
                waiting: 1,
                prefill: 1,
                decode: 0
            }
        );
        // At 2.0 request 0 starts decoding as request 1 starts prefilling (ends are exclusive).
        assert_eq!(
            w(2.0)[0],
            WorkerNow {
                waiting: 0,
                prefill: 1,
                decode: 1
            }
        );
        assert_eq!(
            w(3.1)[1],
            WorkerNow {
                waiting: 0,
                prefill: 1,
                decode: 0
            }
        );
        assert_eq!(p.at(4.5).completed, 1);
        assert_eq!(p.at(6.0).completed, 3);
        assert_eq!(p.at(6.0).workers, vec![WorkerNow::default(); 2]);
        // (0.4, 3.0] holds the 2nd and 3rd arrivals; worker 0 received requests at 0 and 0.5.
        assert_eq!(p.arrivals_between(0.4, 3.0), (1, &[0.5, 3.0][..]));
        assert_eq!(p.routed_between(0, -1.0, 0.5), &[0.0, 0.5]);
        assert_eq!(p.routed_between(1, 0.0, 2.9), &[] as &[f64]);
    }

    #[test]
    fn an_unfinished_request_stays_where_it_got_to() {
        let mut r = request(0, 1, [0.0, 1.0, f64::NAN, f64::NAN]);
        r.first_token = f64::NAN;
        let p = playback(vec![r]);
        assert_eq!(p.at(100.0).workers[1].prefill, 1);
        assert_eq!(p.at(100.0).completed, 0);
    }
}
