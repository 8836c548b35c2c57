//! `opal sweep` as a user runs it: the same numbers on any thread count, and shards run as
//! separate processes merging into exactly the unsharded output.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("sweep-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn opal(cwd: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_opal"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("the opal binary starts");
    assert_eq!(
        out.status.code(),
        Some(0),
        "opal {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Six small runs: three rates × two policies.
const SWEEP: &str = r#"{
    "simulation": { "num_workers": 2 },
    "workload": { "stages": [ { "type": "ExponentialReqRate", "request_rate": 5,
        "input_length": { "type": "uniform", "min": 64, "max": 256 },
        "output_length": { "type": "uniform", "min": 8, "max": 32 },
        "total_requests": 30 } ] },
    "slo": { "ttft_ms": { "p": 99, "max": 200 }, "tpot_ms": { "max": 20 } },
    "sweep": { "vary": [
        { "path": "workload.stages[0].request_rate", "from": 5, "to": 45, "steps": 3 },
        { "path": "router.policy", "values": [ { "policy": "round_robin" },
                                                { "policy": "least_loaded" } ] } ] }
}"#;

fn read(p: PathBuf) -> String {
    std::fs::read_to_string(p).unwrap()
}

#[test]
fn thread_count_changes_nothing() {
    let dir = scratch("threads");
    std::fs::write(dir.join("s.json"), SWEEP).unwrap();
    let one = opal(
        &dir,
        &[
            "sweep",
            "s.json",
            "--threads",
            "1",
            "--json",
            "1.json",
            "--csv",
            "1.csv",
        ],
    );
    let four = opal(
        &dir,
        &[
            "sweep",
            "s.json",
            "--threads",
            "4",
            "--json",
            "4.json",
            "--csv",
            "4.csv",
        ],
    );
    assert_eq!(read(dir.join("1.json")), read(dir.join("4.json")));
    assert_eq!(read(dir.join("1.csv")), read(dir.join("4.csv")));
    assert_eq!(one.stdout, four.stdout);
    // The table: a header and one row per point, the policies by name; then notes, one a
    // line ("point 0: too short to judge ...": these runs are tiny).
    let table = String::from_utf8(one.stdout).unwrap();
    let note = |l: &&str| {
        l.split_once(": ")
            .is_some_and(|(p, _)| p.starts_with("point "))
    };
    assert_eq!(table.lines().filter(|l| !note(l)).count(), 1 + 6, "{table}");
    assert!(
        table.lines().nth(2).unwrap().contains("least_loaded"),
        "{table}"
    );
    let csv = read(dir.join("1.csv"));
    assert!(
        csv.starts_with("point,workload.stages[0].request_rate,router.policy,workers,"),
        "{csv}"
    );
}

#[test]
fn shards_run_as_separate_processes_merge_into_the_unsharded_json() {
    let dir = scratch("shards");
    std::fs::write(dir.join("s.json"), SWEEP).unwrap();
    opal(&dir, &["sweep", "s.json", "-q", "--json", "whole.json"]);
    let shards: Vec<std::process::Child> = (1..=3)
        .map(|k| {
            Command::new(env!("CARGO_BIN_EXE_opal"))
                .args(["sweep", "s.json", "-q", "--threads", "1"])
                .args([
                    "--shard",
                    &format!("{k}/3"),
                    "--json",
                    &format!("part{k}.json"),
                ])
                .current_dir(&dir)
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in shards {
        assert!(child.wait().unwrap().success());
    }
    opal(
        &dir,
        &[
            "sweep",
            "--merge",
            "part3.json",
            "part1.json",
            "part2.json",
            "--json",
            "merged.json",
        ],
    );
    assert_eq!(read(dir.join("merged.json")), read(dir.join("whole.json")));
    // A missing shard is an error naming it, exit 2.
    let out = Command::new(env!("CARGO_BIN_EXE_opal"))
        .args(["sweep", "--merge", "part1.json", "part2.json"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "--merge: shard 3/3 is missing\n"
    );
}

#[test]
fn run_prints_and_writes_the_slo_report() {
    let dir = scratch("slo");
    // One plain run of the sweep's scenario: the sweep is ignored, the SLO judged.
    std::fs::write(dir.join("s.json"), SWEEP).unwrap();
    let out = opal(&dir, &["run", "s.json", "--json", "r.json"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let slo = text
        .split("SLO: ")
        .nth(1)
        .expect("an SLO table after the tables");
    assert!(
        slo.starts_with(
            "TTFT p99 <= 200 ms, TPOT <= 20 ms (judged on each stage's measurement window)\n"
        ),
        "{slo}"
    );
    // Rows: the run, its one stage, its two workers.
    let scopes: Vec<&str> = slo
        .lines()
        .skip(2)
        .take_while(|l| !l.is_empty())
        .map(|l| l.split("  ").next().unwrap().trim())
        .collect();
    assert_eq!(scopes, ["run", "stage 0", "worker 0", "worker 1"]);
    let json: serde_json::Value = serde_json::from_str(&read(dir.join("r.json"))).unwrap();
    let run = &json["slo"]["overall"];
    // 30 issued; the first 3 (10 %) are the warm-up, left out.
    assert_eq!(run["requests"], 27);
    assert_eq!(json["slo"]["workers"].as_array().unwrap().len(), 2);
    // Attainment counts the requests whose own TTFT and TPOT are within bounds.
    let within = json["requests"]
        .as_array()
        .unwrap()
        .iter()
        .skip(3)
        .filter(|r| {
            let (c, ft, end) = (
                r["created"].as_f64().unwrap(),
                r["first_token"].as_f64().unwrap(),
                r["completion"].as_f64().unwrap(),
            );
            let n = r["output_tokens"].as_f64().unwrap();
            (ft - c) * 1000.0 <= 200.0 && (n < 2.0 || (end - ft) / (n - 1.0) * 1000.0 <= 20.0)
        })
        .count();
    assert_eq!(run["attained"], within as u64);
}
