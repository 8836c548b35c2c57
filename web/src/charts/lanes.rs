//! Packing request bars into timeline rows, and finding the bars in view.
//!
//! Each worker gets a lane; requests that overlap in time on one worker stack into sub-rows,
//! each request going to the lowest row that is free at its start (greedy first fit). Inside a
//! row bars never overlap and are sorted by start, so their ends are sorted too: the bars in a
//! time window are found by binary search, whatever the total count.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// One worker's band of rows.
#[derive(Clone, Debug, PartialEq)]
pub struct Lane {
    /// The worker id shown as the lane label.
    pub worker: u32,
    /// Index of the lane's first row in [`Packing::rows`].
    pub first_row: usize,
    /// How many rows the lane uses (its peak concurrency).
    pub rows: usize,
}

/// Request bars laid out in rows, grouped into lanes by worker (ascending worker id).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Packing {
    /// Lanes in ascending worker id.
    pub lanes: Vec<Lane>,
    /// Every row of every lane, top to bottom: request indices sorted by start.
    pub rows: Vec<Vec<u32>>,
}

/// An f64 ordered by `total_cmp`, for heaps of end times.
#[derive(Clone, Copy, PartialEq)]
struct Time(f64);
impl Eq for Time {}
impl PartialOrd for Time {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Time {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// Lays out requests `i` spanning `start[i]..end[i]` on `worker[i]`.
///
/// Requests with a non-finite start or end are left out (nothing to draw); an end before
/// the start counts as a zero-length bar. A bar may start exactly where another ends.
pub fn pack(worker: &[u32], start: &[f64], end: &[f64]) -> Packing {
    let n = worker.len().min(start.len()).min(end.len());
    // By worker, then start, then id: stable sorts of the ascending ids, by start and then
    // by worker (the app's one sort by a number, rather than a map of worker to ids).
    let mut ids: Vec<u32> = (0..n as u32)
        .filter(|&i| start[i as usize].is_finite() && end[i as usize].is_finite())
        .collect();
    crate::order::sort_by_number(&mut ids, |&i| start[i as usize]);
    crate::order::sort_by_number(&mut ids, |&i| f64::from(worker[i as usize]));
    let mut packing = Packing::default();
    for ids in ids.chunk_by(|&a, &b| worker[a as usize] == worker[b as usize]) {
        let w = worker[ids[0] as usize]; // (chunks are never empty)
        let first_row = packing.rows.len();
        // Rows free for reuse (lowest first) and busy rows keyed by when they free up.
        let mut free: BinaryHeap<Reverse<usize>> = BinaryHeap::new();
        let mut busy: BinaryHeap<Reverse<(Time, usize)>> = BinaryHeap::new();
        let mut rows: Vec<Vec<u32>> = Vec::new();
        for &id in ids {
            let (s, e) = (start[id as usize], end[id as usize].max(start[id as usize]));
            while let Some(Reverse((Time(t), row))) = busy.peek().copied() {
                if t > s {
                    break;
                }
                busy.pop();
                free.push(Reverse(row));
            }
            let row = free.pop().map_or_else(
                || {
                    rows.push(Vec::new());
                    rows.len() - 1
                },
                |Reverse(row)| row,
            );
            rows[row].push(id);
            busy.push(Reverse((Time(e), row)));
        }
        packing.lanes.push(Lane {
            worker: w,
            first_row,
            rows: rows.len(),
        });
        packing.rows.extend(rows);
    }
    packing
}

/// Positions in `row` of the bars that intersect `[t0, t1]`, found by binary search.
pub fn visible(
    row: &[u32],
    start: &[f64],
    end: &[f64],
    t0: f64,
    t1: f64,
) -> std::ops::Range<usize> {
    let end_of = |id: u32| end[id as usize].max(start[id as usize]);
    let from = row.partition_point(|&id| end_of(id) < t0);
    let to = from + row[from..].partition_point(|&id| start[id as usize] <= t1);
    from..to
}

/// Calls `draw` for the bars of `row` in `[t0, t1]` that add a pixel: a bar whose last pixel
/// column (at `px_per_s`) is already covered by an earlier bar is skipped. So a row costs at
/// most one bar per pixel column, however many requests it holds. Returns how many were drawn.
pub fn for_each_drawn(
    row: &[u32],
    start: &[f64],
    end: &[f64],
    (t0, t1): (f64, f64),
    px_per_s: f64,
    mut draw: impl FnMut(u32),
) -> usize {
    let mut next_free_column = i64::MIN;
    let mut drawn = 0;
    for &id in &row[visible(row, start, end, t0, t1)] {
        let last_column = ((end[id as usize] - t0) * px_per_s).floor() as i64;
        if last_column < next_free_column {
            continue;
        }
        draw(id);
        drawn += 1;
        next_free_column = last_column + 1;
    }
    drawn
}

/// The request in `row` whose bar covers time `t`, if any.
pub fn hit(row: &[u32], start: &[f64], end: &[f64], t: f64) -> Option<u32> {
    row[visible(row, start, end, t, t)].first().copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn overlapping_requests_stack_and_free_rows_are_reused() {
        // Worker 0: a [0,10], b [2,5], c [5,8] (b's row is free at 5), d [11,12] (row 0 free).
        // Worker 1: e [0,1]. Indices: a=0 b=1 c=2 d=3 e=4.
        let worker = [0, 0, 0, 0, 1];
        let start = [0.0, 2.0, 5.0, 11.0, 0.0];
        let end = [10.0, 5.0, 8.0, 12.0, 1.0];
        let p = pack(&worker, &start, &end);
        assert_eq!(p.rows, vec![vec![0, 3], vec![1, 2], vec![4]]);
        assert_eq!(
            p.lanes,
            vec![
                Lane {
                    worker: 0,
                    first_row: 0,
                    rows: 2
                },
                Lane {
                    worker: 1,
                    first_row: 2,
                    rows: 1
                },
            ]
        );
    }

    #[test]
    fn lowest_free_row_is_taken_first() {
        // Three concurrent [0,10], [1,4], [2,6] → rows 0,1,2. At 7 rows 1 and 2 are free:
        // the new request [7,9] goes to row 1, the lower one.
        let p = pack(&[0; 4], &[0.0, 1.0, 2.0, 7.0], &[10.0, 4.0, 6.0, 9.0]);
        assert_eq!(p.rows, vec![vec![0], vec![1, 3], vec![2]]);
    }

    #[test]
    fn unfinished_requests_are_left_out() {
        let p = pack(&[0, 0], &[0.0, 1.0], &[f64::NAN, 2.0]);
        assert_eq!(p.rows, vec![vec![1]]);
    }

    #[test]
    fn visible_and_hit_use_binary_search_bounds() {
        // One row: [0,1] [2,3] [4,5] [6,7].
        let start = [0.0, 2.0, 4.0, 6.0];
        let end = [1.0, 3.0, 5.0, 7.0];
        let row = [0, 1, 2, 3];
        assert_eq!(visible(&row, &start, &end, 2.5, 4.5), 1..3);
        assert_eq!(visible(&row, &start, &end, 5.5, 5.9), 3..3);
        assert_eq!(visible(&row, &start, &end, -9.0, 99.0), 0..4);
        assert_eq!(hit(&row, &start, &end, 4.2), Some(2));
        assert_eq!(hit(&row, &start, &end, 5.5), None);
    }

    /// 20,000 requests on 8 workers, one arriving every 5 ms (so ~100 s in all), each lasting
    /// `base` plus up to 2 s in 10 ms steps.
    fn workload(base: f64, spread: f64) -> (Vec<u32>, Vec<f64>, Vec<f64>) {
        let n = 20_000;
        let worker = (0..n).map(|i| (i % 8) as u32).collect();
        let start: Vec<f64> = (0..n).map(|i| i as f64 * 0.005).collect();
        let end = (0..n)
            .map(|i| start[i] + base + ((i * 37) % 200) as f64 * spread)
            .collect();
        (worker, start, end)
    }

    #[test]
    fn sub_pixel_bars_cost_at_most_one_draw_per_pixel_column() {
        // Requests of 10–30 ms (10 ms + up to 199 × 0.1 ms): per worker one arrives every
        // 40 ms, so they never overlap and each worker has one row of 2,500 bars.
        let (worker, start, end) = workload(0.010, 0.0001);
        let p = pack(&worker, &start, &end);
        assert_eq!(p.rows.len(), 8);
        // The whole ~100 s on 800 px: 0.125 s per pixel, ~3 bars per column.
        let (t0, t1) = (0.0, 100.0);
        let pps = 800.0 / (t1 - t0);
        let column = |id: u32| (end[id as usize] * pps).floor() as i64;
        for row in &p.rows {
            let mut drawn = Vec::new();
            for_each_drawn(row, &start, &end, (t0, t1), pps, |id| drawn.push(id));
            // At most one bar per column 0..=800, far fewer than the row's 2,500 bars ...
            assert!(drawn.len() <= 801 && row.len() == 2_500, "{}", drawn.len());
            // ... and no column loses its paint: the drawn bars end in every column that any
            // visible bar ends in.
            let all: BTreeSet<i64> = row[visible(row, &start, &end, t0, t1)]
                .iter()
                .map(|&id| column(id))
                .collect();
            let painted: BTreeSet<i64> = drawn.iter().map(|&id| column(id)).collect();
            assert_eq!(painted, all);
            assert!(painted.len() > 700, "{}", painted.len());
        }
    }

    #[test]
    fn bars_wider_than_a_pixel_are_all_drawn() {
        // Requests of 0.5–2.49 s at 8 px/s are at least 4 px wide: nothing may be skipped.
        let (worker, start, end) = workload(0.5, 0.01);
        let p = pack(&worker, &start, &end);
        let drawn: usize = p
            .rows
            .iter()
            .map(|r| for_each_drawn(r, &start, &end, (0.0, 102.5), 800.0 / 102.5, |_| {}))
            .sum();
        assert_eq!(drawn, 20_000);
    }

    #[test]
    fn zoomed_in_culling_matches_brute_force() {
        let (worker, start, end) = workload(0.5, 0.01);
        let p = pack(&worker, &start, &end);
        // A 1-second window: brute force counts requests overlapping [50, 51].
        let (t0, t1) = (50.0, 51.0);
        let brute = (0..start.len())
            .filter(|&i| end[i] >= t0 && start[i] <= t1)
            .count();
        let culled: usize = p
            .rows
            .iter()
            .map(|r| visible(r, &start, &end, t0, t1).len())
            .sum();
        assert_eq!(culled, brute);
        // 800 px per second: bars are wide, none is skipped.
        let drawn: usize = p
            .rows
            .iter()
            .map(|r| for_each_drawn(r, &start, &end, (t0, t1), 800.0, |_| {}))
            .sum();
        assert_eq!(drawn, brute);
    }
}
