//! Per-request CSV export: one row per [`RequestRecord`], timestamps in seconds.

use super::record::{RequestRecord, MAX_TIERS};
use std::fmt::Write;

/// The CSV header line (no trailing newline).
pub fn header() -> String {
    let mut h = String::from(
        "id,stage,session,turn,worker,prompt_tokens,output_tokens,created,router_in,worker_in,\
         kv_lookup_start,ready,first_scheduled,first_token,completion,preemptions,gpu_cache_tokens,\
         gpu_rehit_tokens",
    );
    for i in 0..MAX_TIERS {
        let _ = write!(h, ",tier{i}_tokens");
    }
    h.push_str(",computed_tokens,recomputed_tokens,failed");
    h
}

/// A timestamp cell: empty when not reached, else the shortest exact decimal.
fn time(out: &mut String, t: f64) {
    out.push(',');
    if !t.is_nan() {
        let _ = write!(out, "{t}");
    }
}

fn opt(out: &mut String, v: Option<u32>) {
    out.push(',');
    if let Some(v) = v {
        let _ = write!(out, "{v}");
    }
}

/// One record as a CSV row (no trailing newline). The failure reason is its kind
/// (`prompt_too_long`, …), which never needs quoting.
pub fn row(r: &RequestRecord) -> String {
    let mut s = String::new();
    row_into(&mut s, r);
    s
}

/// Appends one record's row to `s` (no trailing newline).
fn row_into(s: &mut String, r: &RequestRecord) {
    let _ = write!(s, "{},{}", r.id, r.stage);
    opt(s, r.session().map(|x| x.session));
    opt(s, r.session().map(|x| x.turn));
    opt(s, r.worker);
    let _ = write!(s, ",{},{}", r.prompt_tokens, r.output_tokens);
    for t in [
        r.created,
        r.router_in,
        r.worker_in,
        r.kv_lookup_start,
        r.ready,
        r.first_scheduled,
        r.first_token,
        r.completion,
    ] {
        time(s, t);
    }
    let _ = write!(
        s,
        ",{},{},{}",
        r.preemptions, r.sources.gpu_cache, r.sources.gpu_rehit
    );
    for t in r.sources.tiers() {
        let _ = write!(s, ",{t}");
    }
    let _ = write!(s, ",{},{},", r.sources.computed, r.recomputed);
    if let Some(f) = r.failed {
        s.push_str(f.kind());
    }
}

/// A whole CSV document: header, then one line per record.
pub fn to_csv<'a>(records: impl IntoIterator<Item = &'a RequestRecord>) -> String {
    let mut out = Vec::new();
    write_csv(&mut out, records).expect("writing to memory cannot fail");
    String::from_utf8(out).expect("CSV is UTF-8")
}

/// Streams the CSV document to `out`, row by row (one row's text in memory at a time).
pub fn write_csv<'a>(
    out: &mut impl std::io::Write,
    records: impl IntoIterator<Item = &'a RequestRecord>,
) -> std::io::Result<()> {
    writeln!(out, "{}", header())?;
    let mut line = String::new();
    for r in records {
        line.clear();
        row_into(&mut line, r);
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::FailReason;

    #[test]
    fn rows_have_as_many_cells_as_the_header() {
        let mut r = RequestRecord::new(7, 1, 0.5, 300);
        r.worker = Some(2);
        r.first_token = 0.75;
        r.sources.add_tier(9, 40); // deeper than MAX_TIERS: counted in the last tier
        r.failed = Some(FailReason::NoWorker);
        let row = row(&r);
        assert_eq!(row.split(',').count(), header().split(',').count());
        assert_eq!(
            row,
            "7,1,,,2,300,0,0.5,,,,,,0.75,,0,0,0,0,0,0,40,0,0,no_worker"
        );
    }
}
