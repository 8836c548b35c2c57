//! A sweep's results: one line of JSON per point (so shards merge by putting lines back in
//! order, byte for byte), a table, and a CSV.

use super::point::PointMetrics;
use super::search::SearchOutcome;
use engine::scenario::sweep::Search;
use serde::Serialize;
use serde_json::Value;
use std::fmt::Write;

/// What every point of a sweep shares.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepHeader {
    /// The field path of each axis.
    pub axes: Vec<String>,
    /// The search made at each point.
    pub search: Option<Search>,
    /// Points in the whole sweep (every shard).
    pub total_points: usize,
}

/// One point's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepPoint {
    /// Its place in the sweep (the last axis varies fastest).
    pub index: usize,
    /// Each axis' value.
    pub values: Vec<Value>,
    /// The run's figures (at the search's answer, with a search).
    pub metrics: Option<PointMetrics>,
    /// What the search found.
    pub search: Option<SearchOutcome>,
    /// Why the point could not run.
    pub error: Option<String>,
}

/// The K-th of N slices of a sweep: the points whose index is K − 1 modulo N.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Shard {
    /// 1-based slice number.
    pub k: usize,
    /// Slices in all.
    pub n: usize,
}

impl Shard {
    /// Whether point `i` is in this slice.
    pub fn holds(&self, i: usize) -> bool {
        i % self.n == self.k - 1
    }
}

/// The points of a sweep (all of them, or one shard's), in index order.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepResults {
    /// What the points share.
    pub header: SweepHeader,
    /// Which slice these are; `None` for the whole sweep.
    pub shard: Option<Shard>,
    /// The points, by index.
    pub points: Vec<SweepPoint>,
}

const POINTS_OPEN: &str = "\"points\":[";

impl SweepResults {
    /// The results JSON: the header on the first line, each point on a line of its own.
    pub fn to_json(&self) -> String {
        let mut o = String::new();
        let header = serde_json::to_string(&self.header).expect("serialises");
        let _ = writeln!(o, "{{\"sweep\":{header},");
        if let Some(s) = &self.shard {
            let _ = writeln!(
                o,
                "\"shard\":{},",
                serde_json::to_string(s).expect("serialises")
            );
        }
        o.push_str(POINTS_OPEN);
        o.push('\n');
        let lines: Vec<String> = self
            .points
            .iter()
            .map(|p| serde_json::to_string(p).expect("serialises"))
            .collect();
        o.push_str(&lines.join(",\n"));
        o.push_str("\n]}\n");
        o
    }

    /// The value axis `k` has at a point, for a person: numbers as written, names bare, a
    /// routing policy by its name and its plain parameters (`llm_d (prefix_mode
    /// approximate)`), so two settings of one policy read apart.
    pub fn label(v: &Value) -> String {
        match v {
            Value::String(s) => s.clone(),
            Value::Object(m) => {
                let Some((key, name)) = ["policy", "type", "name"]
                    .iter()
                    .find_map(|k| Some((*k, m.get(*k)?)))
                else {
                    return v.to_string();
                };
                let params: Vec<String> = m
                    .iter()
                    .filter(|(k, v)| k.as_str() != key && !v.is_object() && !v.is_array())
                    .map(|(k, v)| format!("{k} {}", Self::label(v)))
                    .collect();
                match params.is_empty() {
                    true => Self::label(name),
                    false => format!("{} ({})", Self::label(name), params.join(", ")),
                }
            }
            _ => v.to_string(),
        }
    }

    fn search_column(&self) -> Option<&'static str> {
        self.header.search.as_ref().map(|s| match s {
            Search::MaxRate { .. } => "max rate",
            Search::MinWorkers { .. } => "min workers",
        })
    }

    /// One row per point: its axis values, load, latency percentiles, SLO and cost.
    pub fn render_text(&self) -> String {
        let rows = self.table(2);
        let widths: Vec<usize> = (0..rows[0].len())
            .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
            .collect();
        let mut o = String::new();
        for r in &rows {
            let line: Vec<String> = r
                .iter()
                .zip(&widths)
                .map(|(cell, w)| format!("{cell:>w$}"))
                .collect();
            let _ = writeln!(o, "{}", line.join("  ").trim_end());
        }
        for p in &self.points {
            for line in point_notes(p) {
                let _ = writeln!(o, "point {}: {line}", p.index);
            }
        }
        o
    }

    /// The same rows as CSV, numbers in full.
    pub fn to_csv(&self) -> String {
        let mut o = String::new();
        let quote = |c: &str| {
            if c.contains([',', '"', '\n']) {
                format!("\"{}\"", c.replace('"', "\"\""))
            } else {
                c.to_string()
            }
        };
        for r in self.table(17) {
            let line: Vec<String> = r.iter().map(|c| quote(c)).collect();
            let _ = writeln!(o, "{}", line.join(","));
        }
        o
    }

    /// The table's header and one row per point (`digits` decimals; 17 writes numbers in
    /// full), as the CLI prints it and the app shows it.
    pub fn table(&self, digits: usize) -> Vec<Vec<String>> {
        let mut rows = vec![self.columns()];
        rows.extend(self.points.iter().map(|p| self.cells(p, digits)));
        rows
    }

    /// The knee of each curve: the points sharing every axis value but the first form a
    /// curve along the first axis (a rising load, say); its knee is the last point meeting
    /// the SLO before the first one missing it, as (curve label, point index). A curve that
    /// meets it throughout, or misses it from the start, has none.
    pub fn knees(&self) -> Vec<(String, Option<usize>)> {
        let mut curves: Vec<(String, Vec<&SweepPoint>)> = Vec::new();
        for p in &self.points {
            let label: Vec<String> = p.values.iter().skip(1).map(Self::label).collect();
            let label = label.join(", ");
            match curves.iter_mut().find(|(l, _)| *l == label) {
                Some((_, c)) => c.push(p),
                None => curves.push((label, vec![p])),
            }
        }
        curves
            .into_iter()
            .map(|(label, points)| {
                let met = |p: &SweepPoint| p.metrics.as_ref().is_some_and(|m| m.slo_met());
                let knee = points
                    .windows(2)
                    .find(|w| met(w[0]) && !met(w[1]))
                    .map(|w| w[0].index);
                (label, knee)
            })
            .collect()
    }

    /// The table's header: the point, its axes, then the figures.
    pub fn columns(&self) -> Vec<String> {
        let mut c = vec!["point".to_string()];
        c.extend(self.header.axes.iter().cloned());
        c.extend(self.search_column().map(String::from));
        for name in [
            "workers",
            "measured req",
            "offered r/s",
            "achieved r/s",
            "out tok/s",
            "P50 TTFT ms",
            "P99 TTFT ms",
            "P99 TPOT ms",
            "P99 E2E ms",
            "load",
            "attain %",
            "good r/s",
            "SLO met",
            "$/M out tok",
            "$/M good tok",
        ] {
            c.push(name.into());
        }
        c
    }

    /// Point `p`'s row of the table (`digits` decimals), under [`Self::columns`].
    pub fn cells(&self, p: &SweepPoint, digits: usize) -> Vec<String> {
        let num = |x: f64| {
            if x.is_nan() {
                String::new()
            } else if digits > 2 {
                format!("{x}")
            } else {
                format!("{x:.digits$}")
            }
        };
        let mut c = vec![p.index.to_string()];
        c.extend(p.values.iter().map(Self::label));
        if self.search_column().is_some() {
            let whole = matches!(self.header.search, Some(Search::MinWorkers { .. }));
            c.push(match p.search.as_ref().and_then(|s| s.value) {
                None => "none".into(),
                Some(x) if whole => format!("{x}"),
                Some(x) => num(x),
            });
        }
        match &p.metrics {
            Some(m) => {
                let slo = m.slo.as_ref();
                c.extend([
                    m.workers.to_string(),
                    m.measured_requests.to_string(),
                    num(m.offered_rps),
                    num(m.achieved_rps),
                    num(m.output_tps),
                    num(m.ttft.median_ms),
                    num(m.ttft.p99_ms),
                    num(m.tpot.p99_ms),
                    num(m.e2e.p99_ms),
                    load(m).into(),
                    slo.map_or(String::new(), |s| num(s.attainment * 100.0)),
                    slo.map_or(String::new(), |s| num(s.goodput_rps)),
                    slo.map_or(String::new(), |_| {
                        (if m.slo_met() { "yes" } else { "no" }).into()
                    }),
                    m.cost_per_million_output_tokens.map_or(String::new(), num),
                    m.cost_per_million_good_tokens.map_or(String::new(), num),
                ]);
            }
            // A point that could not run: its index and values, the rest blank.
            None => c.resize(self.columns().len(), String::new()),
        }
        c
    }
}

/// A number for a sentence: at most two decimals, no trailing zeros.
pub(crate) fn short_number(x: f64) -> String {
    let s = format!("{x:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A point's load in one word: `ok`, `overloaded`, or `unsure` when its runs were too
/// short to judge even lengthened.
fn load(m: &PointMetrics) -> &'static str {
    match (&m.overloaded, m.settled) {
        (Some(_), _) => "overloaded",
        (None, true) => "ok",
        (None, false) => "unsure",
    }
}

/// What to say under the table about a point: its error, why it is overloaded or unsure,
/// how long its runs were, the seeds' spread and the search's confirmation.
pub(super) fn point_notes(p: &SweepPoint) -> Vec<String> {
    let mut notes: Vec<String> = p.error.iter().cloned().collect();
    if let Some(m) = &p.metrics {
        if let Some(why) = &m.overloaded {
            notes.push(format!(
                "overloaded ({why}): latency grows with the run's length"
            ));
        } else if !m.settled {
            notes.push(format!(
                "too short to judge even at {}x the requests ({} measured)",
                m.scale, m.measured_requests
            ));
        }
        if m.scale > 1 && m.settled {
            notes.push(format!(
                "judged at {}x the requests ({} measured)",
                m.scale, m.measured_requests
            ));
        }
        if let Some(s) = &m.seeds {
            notes.push(format!(
                "{} of {} seeds meet the SLO ({} overloaded); p99 TTFT {:.1}-{:.1} ms",
                s.met, s.seeds, s.overloaded, s.p99_ttft_ms[0], s.p99_ttft_ms[1]
            ));
        }
    }
    if let Some(s) = &p.search {
        if let Some(c) = &s.confirmation {
            let next = match (c.next, c.next_misses) {
                (Some(x), Some(true)) => format!("; {} misses there", short_number(x)),
                (Some(x), Some(false)) => format!("; {} also meets there", short_number(x)),
                _ => String::new(),
            };
            notes.push(format!(
                "checked at {}x the requests: {}{next}",
                c.scale,
                if c.holds { "holds" } else { "does not hold" }
            ));
        }
        notes.extend(s.note.iter().cloned());
    }
    notes
}

/// Merges shard files (their JSON text) into the JSON of the whole sweep, byte for byte
/// what an unsharded run writes; says what is wrong otherwise (a shard missing or given
/// twice, shards of different sweeps).
pub fn merge_shards(texts: &[&str]) -> Result<String, String> {
    let mut header_line: Option<&str> = None;
    let mut n_shards = None;
    let mut seen_k = Vec::new();
    let mut points: Vec<(usize, &str)> = Vec::new();
    for (f, text) in texts.iter().enumerate() {
        let whole: Value =
            serde_json::from_str(text).map_err(|e| format!("file {}: not JSON: {e}", f + 1))?;
        let shard = whole
            .get("shard")
            .ok_or_else(|| format!("file {}: not a shard (no \"shard\" field)", f + 1))?;
        let (k, n) = (shard["k"].as_u64(), shard["n"].as_u64());
        let (Some(k), Some(n)) = (k, n) else {
            return Err(format!(
                "file {}: a shard's k and n are whole numbers",
                f + 1
            ));
        };
        if *n_shards.get_or_insert(n) != n {
            return Err(format!(
                "file {}: a shard of {n}, the others of {}",
                f + 1,
                n_shards.unwrap_or(n)
            ));
        }
        if seen_k.contains(&k) {
            return Err(format!("shard {k}/{n} is given twice"));
        }
        seen_k.push(k);
        let mut lines = text.lines();
        let first = lines.next().unwrap_or_default();
        if *header_line.get_or_insert(first) != first {
            return Err(format!("file {}: a shard of a different sweep", f + 1));
        }
        let mut in_points = false;
        for line in lines {
            if line == POINTS_OPEN {
                in_points = true;
            } else if line == "]}" {
                in_points = false;
            } else if in_points && !line.is_empty() {
                let line = line.strip_suffix(',').unwrap_or(line);
                let i = serde_json::from_str::<Value>(line)
                    .ok()
                    .and_then(|p| p["index"].as_u64())
                    .ok_or_else(|| format!("file {}: a point line without an index", f + 1))?;
                points.push((i as usize, line));
            }
        }
    }
    let n = n_shards.ok_or("no shard files given")?;
    if let Some(missing) = (1..=n).find(|k| !seen_k.contains(k)) {
        return Err(format!("shard {missing}/{n} is missing"));
    }
    let header = header_line.unwrap_or_default();
    let total = serde_json::from_str::<Value>(&format!("{}}}", header.trim_end_matches(',')))
        .ok()
        .and_then(|h| h["sweep"]["total_points"].as_u64())
        .ok_or("the header line does not say how many points")? as usize;
    points.sort_by_key(|p| p.0);
    for (want, (i, _)) in points.iter().enumerate() {
        if *i != want {
            return Err(format!("point {want} is missing or given twice"));
        }
    }
    if points.len() != total {
        return Err(format!("{} points of {total}", points.len()));
    }
    let body: Vec<&str> = points.iter().map(|p| p.1).collect();
    Ok(format!(
        "{header}\n{POINTS_OPEN}\n{}\n]}}\n",
        body.join(",\n")
    ))
}
