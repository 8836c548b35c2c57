//! The `opal` binary as a user runs it: tables, exit codes, error messages and output files.

use opal::scenario::ScenarioData;
use opal::simulation::{Simulation, SimulationResults};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `opal` with `args` in `cwd`.
fn opal_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_opal"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("the opal binary starts")
}

fn opal(args: &[&str]) -> Output {
    opal_in(&examples(), args)
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// The rows of every stage table: label → value, one map per stage (the line naming the
/// timing model comes before the first table).
fn tables(text: &str) -> Vec<BTreeMap<String, String>> {
    let mut out: Vec<BTreeMap<String, String>> = Vec::new();
    for line in text.lines() {
        if line.contains("Serving Benchmark Result") {
            out.push(BTreeMap::new());
        } else if let (Some(table), Some((label, value))) = (out.last_mut(), line.split_once(':')) {
            table.insert(label.trim().to_string(), value.trim().to_string());
        }
    }
    out
}

/// The example run through the engine directly, as the CLI should have run it.
fn engine_results(example: &str) -> SimulationResults {
    let text = std::fs::read_to_string(examples().join(example)).unwrap();
    let scenario = opal::parse_scenario(&text).unwrap();
    let mut sim = Simulation::new(&scenario, &ScenarioData::new()).unwrap();
    sim.run();
    sim.results()
}

#[test]
fn run_prints_the_engines_numbers_for_the_default_example() {
    let o = opal(&["run", examples().join("default.json").to_str().unwrap()]);
    assert!(
        stdout(&o).starts_with("Step times: calibrated (H100 SXM"),
        "the run says what priced its steps: {}",
        stdout(&o)
    );
    let out = opal(&["run", "default.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let tables = tables(&stdout(&out));
    assert_eq!(tables.len(), 1, "one stage, one table");
    let t = &tables[0];
    let s = &engine_results("default.json").stages[0];
    let f2 = |x: f64| format!("{x:.2}");
    // default.json issues 300 requests, all short enough to be served.
    assert_eq!(t["Successful requests"], "300");
    assert_eq!(t["Failed requests"], "0");
    for (label, want) in [
        ("Successful requests", s.successful_requests.to_string()),
        ("Benchmark duration (s)", f2(s.duration_s)),
        ("Total input tokens", s.total_input_tokens.to_string()),
        (
            "Total generated tokens",
            s.total_generated_tokens.to_string(),
        ),
        ("Request throughput (req/s)", f2(s.request_throughput)),
        ("Output token throughput (tok/s)", f2(s.output_throughput)),
        ("Mean TTFT (ms)", f2(s.ttft.mean_ms)),
        ("P99 TTFT (ms)", f2(s.ttft.p99_ms)),
        ("Mean TPOT (ms)", f2(s.tpot.mean_ms)),
        ("Median E2EL (ms)", f2(s.e2e.median_ms)),
        (
            "GPU prefix cache hits (%)",
            f2(s.prefix_hit_rate.gpu_cache * 100.0),
        ),
    ] {
        assert_eq!(t[label], want, "{label}");
    }
    // Throughput is requests over duration, as printed (rounding aside).
    let duration: f64 = t["Benchmark duration (s)"].parse().unwrap();
    let throughput: f64 = t["Request throughput (req/s)"].parse().unwrap();
    assert!((throughput - 300.0 / duration).abs() < 0.02);
}

#[test]
fn run_prints_where_a_real_vllm_would_likely_land_from_the_gpus_error_band() {
    let out = opal(&["run", examples().join("default.json").to_str().unwrap()]);
    let text = stdout(&out);
    let band = opal::timing::calibration_for(&opal::hardware::lookup("H100-SXM").unwrap())
        .error_band
        .expect("the H100's calibration has real runs");
    let s = &engine_results("default.json").stages[0];
    let range = |ms: f64, [lo, hi]: [f64; 2]| format!("{:.1}–{:.1} ms", ms * lo, ms * hi);
    let want = format!(
        "  stage 0: mean TTFT {}, p99 TTFT {}, mean E2E {}, p99 E2E {}, mean ITL {}\n",
        range(s.ttft.mean_ms, band.ttft_mean),
        range(s.ttft.p99_ms, band.ttft_p99),
        range(s.e2e.mean_ms, band.e2e_mean),
        range(s.e2e.p99_ms, band.e2e_p99),
        range(s.itl.mean_ms, band.itl_mean),
    );
    assert!(text.contains(&want), "{want} not in:\n{text}");
    assert!(text.contains(&format!(
        "over {} real H100-SXM runs; it held {:.0} % of runs left out of it",
        band.runs,
        band.held_out * 100.0
    )));
    // A calibration no real run has measured claims no range: the B200's.
    let dir = scratch("no-band");
    std::fs::write(
        dir.join("b200.json"),
        r#"{"hardware": {"gpu": "B200"},
            "workload": {"stages": [{"type": "UniformReqRate", "request_rate": 5, "total_requests": 10}]}}"#,
    )
    .unwrap();
    let out = opal_in(&dir, &["run", "b200.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stdout(&out).contains("Likely on a real vLLM"));
}

#[test]
fn an_invalid_scenario_exits_2_listing_every_problem_by_field_path() {
    let dir = scratch("invalid");
    std::fs::write(
        dir.join("bad.json"),
        r#"{ "simulation": { "num_workers": 0 },
             "workload": { "stages": [ { "type": "UniformReqRate", "request_rate": -1,
                                         "total_requests": 10 } ] } }"#,
    )
    .unwrap();
    for command in ["run", "validate"] {
        let out = opal_in(&dir, &[command, "bad.json"]);
        assert_eq!(out.status.code(), Some(2), "{command}");
        assert_eq!(stdout(&out), "", "{command}: no table, no ok");
        let err = stderr(&out);
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 2, "{command}: one line per problem: {err}");
        assert!(lines[0].starts_with("simulation.num_workers: "), "{err}");
        assert!(
            lines[1].starts_with("workload.stages[0].request_rate: "),
            "{err}"
        );
    }
}

#[test]
fn a_missing_trace_file_exits_2_naming_the_field() {
    let dir = scratch("missing-trace");
    std::fs::write(
        dir.join("s.json"),
        r#"{ "workload": { "stages": [ { "type": "Trace", "trace_file": "traces/gone.jsonl" } ] } }"#,
    )
    .unwrap();
    let out = opal_in(&dir, &["run", "s.json"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.starts_with("workload.stages[0].trace_file: ") && err.contains("traces/gone.jsonl"),
        "{err}"
    );
}

#[test]
fn a_malformed_trace_line_exits_2_naming_the_field() {
    let dir = scratch("bad-trace");
    std::fs::write(
        dir.join("s.json"),
        r#"{ "workload": { "stages": [ { "type": "Trace", "trace_file": "t.jsonl" } ] } }"#,
    )
    .unwrap();
    std::fs::write(dir.join("t.jsonl"), "{\"timestamp\": 0}\n").unwrap();
    let out = opal_in(&dir, &["validate", "s.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("workload.stages[0].trace_file: "),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_trace_example_finds_its_data_next_to_it_from_any_directory() {
    let elsewhere = scratch("elsewhere");
    let scenario = examples().join("trace_replay.json");
    let out = opal_in(&elsewhere, &["run", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Every line of the trace is one request, served or rejected.
    let trace = std::fs::read_to_string(examples().join("traces/mooncake_small.jsonl")).unwrap();
    let lines = trace.lines().filter(|l| !l.trim().is_empty()).count();
    let t = &tables(&stdout(&out))[0];
    let served: usize = t["Successful requests"].parse().unwrap();
    let failed: usize = t["Failed requests"].parse().unwrap();
    assert_eq!(served + failed, lines);
}

#[test]
fn data_flag_points_a_named_file_elsewhere() {
    let dir = scratch("data-flag");
    let text = std::fs::read_to_string(examples().join("trace_replay.json")).unwrap();
    std::fs::write(dir.join("s.json"), text).unwrap();
    let trace = examples().join("traces/mooncake_small.jsonl");
    let flag = format!("traces/mooncake_small.jsonl={}", trace.display());
    let out = opal_in(&dir, &["run", "s.json", "--data", &flag]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // A name the scenario does not use is a mistake, not silently ignored.
    let out = opal_in(&dir, &["run", "s.json", "--data", "other.jsonl=x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--data other.jsonl"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_opal_config_is_imported_reported_and_run() {
    let out = opal(&["run", "opal_defaults.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("imported as an Opal config"), "{err}");
    assert!(
        err.contains("router.router_params.policy -> router.policy"),
        "{err}"
    );
    let tables = tables(&stdout(&out));
    // Stage 0: total_requests 100; stage 1: the trace stage's total_requests 10.
    assert_eq!(tables.len(), 2);
    for (t, want) in tables.iter().zip([100, 10]) {
        let served: u64 = t["Successful requests"].parse().unwrap();
        let failed: u64 = t["Failed requests"].parse().unwrap();
        assert_eq!(served + failed, want);
    }
}

#[test]
fn import_opal_writes_a_scenario_that_validates() {
    let dir = scratch("import");
    let out_file = dir.join("converted.json");
    let out = opal(&[
        "import-opal",
        "opal_defaults.json",
        "-o",
        out_file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("ignored:"), "the report is printed");
    let converted = std::fs::read_to_string(&out_file).unwrap();
    assert!(opal::parse_scenario(&converted).is_ok());
    // It names the trace relative to itself; give it the file.
    let trace = examples().join("traces/mooncake_small.jsonl");
    let flag = format!("traces/mooncake_small.jsonl={}", trace.display());
    let out = opal_in(&dir, &["validate", "converted.json", "--data", &flag]);
    assert_eq!(stdout(&out), "ok\n", "{}", stderr(&out));
}

#[test]
fn import_opal_compat_turns_on_every_switch_of_the_original() {
    // To stdout: the scenario there, the report on stderr.
    let out = opal(&["import-opal", "opal_defaults.json", "--compat"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let switches = doc["opal_compat"].as_object().unwrap();
    assert_eq!(switches.len(), 5);
    assert!(switches.values().all(|v| v == true), "{switches:?}");
    assert!(
        stderr(&out).contains("opal_compat is on"),
        "{}",
        stderr(&out)
    );
    // Without the flag the section is left out, and the report lists the switches.
    let out = opal(&["import-opal", "opal_defaults.json"]);
    assert!(!stdout(&out).contains("opal_compat\""));
    assert!(
        stderr(&out).contains("opal_compat.persistent_batch"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn json_and_csv_are_written_with_one_entry_per_request() {
    let dir = scratch("outputs");
    let (json, csv) = (dir.join("r.json"), dir.join("r.csv"));
    let out = opal(&[
        "run",
        "default.json",
        "--quiet",
        "--json",
        json.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "", "--quiet prints no table");
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(results["requests"].as_array().unwrap().len(), 300);
    assert_eq!(results["stages"][0]["successful_requests"], 300);
    let csv = std::fs::read_to_string(&csv).unwrap();
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().starts_with("id,"), "a header row");
    let ids: Vec<u64> = lines
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(
        ids,
        (0..300).collect::<Vec<u64>>(),
        "one row per request, in id order"
    );
}

#[test]
fn seed_flag_replaces_the_scenarios_seed() {
    let dir = scratch("seed");
    let run = |extra: &[&str], name: &str| {
        let path = dir.join(name);
        let mut args = vec![
            "run",
            "default.json",
            "-q",
            "--json",
            path.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        assert_eq!(opal(&args).status.code(), Some(0));
        std::fs::read_to_string(path).unwrap()
    };
    // default.json says seed 42.
    let own = run(&[], "own.json");
    assert_eq!(run(&["--seed", "42"], "same.json"), own);
    assert_ne!(run(&["--seed", "7"], "other.json"), own);
}

#[test]
fn preset_writes_its_data_files_so_it_runs_as_is() {
    let dir = scratch("preset");
    let out = opal_in(&dir, &["preset", "trace_replay", "-o", "t.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(dir.join("traces/mooncake_small.jsonl").is_file());
    let out = opal_in(&dir, &["run", "t.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let list = stdout(&opal(&["presets"]));
    assert_eq!(list.lines().count(), opal::document::presets().len());
    assert!(list.starts_with("default "), "{list}");
    let out = opal(&["preset", "no_such_preset"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("default, "), "lists the ids");
}

#[test]
fn exit_codes_tell_io_from_usage() {
    let out = opal(&["run", "no-such-file.json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no-such-file.json"));
    let out = opal(&["run", "default.json", "--speed", "2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unknown option \"--speed\""));
    for command in ["run", "validate", "import-opal", "presets", "preset"] {
        let out = opal(&[command, "--help"]);
        assert_eq!(out.status.code(), Some(0));
        assert!(stdout(&out).starts_with("Usage: opal "), "{command}");
    }
}

/// A scenario whose one stage replays the trace named `trace_file`.
fn trace_scenario(dir: &Path, trace_file: &str) {
    let doc = serde_json::json!({
        "workload": { "stages": [ { "type": "Trace", "trace_file": trace_file } ] }
    });
    std::fs::write(dir.join("s.json"), doc.to_string()).unwrap();
}

#[test]
fn a_scenario_cannot_make_the_cli_read_files_outside_its_directory() {
    let dir = scratch("outside");
    for name in ["/dev/zero", "../secret.jsonl", "traces/../../secret.jsonl"] {
        trace_scenario(&dir, name);
        let out = opal_in(&dir, &["validate", "s.json"]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        assert_eq!(
            stderr(&out),
            format!(
                "workload.stages[0].trace_file: \"{name}\" is not a path inside the scenario's \
                 directory; a scenario names its data files relative to itself, without \"..\" \
                 (to use a file elsewhere, run with --data \"{name}=PATH\")\n"
            )
        );
    }
}

#[cfg(unix)]
#[test]
fn only_regular_files_of_bounded_size_are_read() {
    let dir = scratch("regular");
    // A link to a device inside the directory, and a device named with --data: both are
    // refused before a byte is read (reading /dev/zero used to run until memory ran out).
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero.jsonl")).unwrap();
    trace_scenario(&dir, "zero.jsonl");
    let out = opal_in(&dir, &["run", "s.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).ends_with("zero.jsonl): not a regular file\n"),
        "{}",
        stderr(&out)
    );
    let out = opal_in(&dir, &["run", "s.json", "--data", "zero.jsonl=/dev/zero"]);
    assert!(stderr(&out).contains("(at /dev/zero): not a regular file"));
    // A sparse file one byte past 512 MB costs no disk and is refused by its size.
    let big = std::fs::File::create(dir.join("big.jsonl")).unwrap();
    big.set_len((512 << 20) + 1).unwrap();
    trace_scenario(&dir, "big.jsonl");
    let out = opal_in(&dir, &["validate", "s.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).ends_with("larger than 512 MB\n"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_scenario_that_is_not_utf8_exits_2_saying_where() {
    let dir = scratch("utf8");
    std::fs::write(
        dir.join("s.json"),
        b"{\n  \"simulation\": {\"seed\": \xff}\n}",
    )
    .unwrap();
    for command in ["run", "validate", "import-opal"] {
        let out = opal_in(&dir, &[command, "s.json"]);
        assert_eq!(out.status.code(), Some(2), "{command}");
        assert_eq!(
            stderr(&out),
            "s.json: not UTF-8 text (invalid byte at line 2, column 26)\n",
            "{command}"
        );
    }
}

/// A scenario far too long to finish during a test: 10 M requests at 100,000 per second.
fn endless(dir: &Path) {
    std::fs::write(
        dir.join("long.json"),
        r#"{"workload": {"stages": [{"type": "UniformReqRate", "request_rate": 100000,
            "total_requests": 10000000}]}}"#,
    )
    .unwrap();
}

/// The results JSON a stopped run wrote: it must say the run was cut short, and its books
/// must agree (every routing decision is on its request's record).
fn partial_results(path: &Path) -> serde_json::Value {
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(r["truncated"], true);
    assert_eq!(r["stop"]["reason"], "interrupted");
    let requests = r["requests"].as_array().unwrap();
    assert!(!requests.is_empty(), "some requests were issued");
    for d in r["decisions"].as_array().unwrap() {
        let id = d["request"].as_u64().unwrap() as usize;
        assert_eq!(requests[id]["worker"], d["decision"]["worker"]);
    }
    r
}

#[test]
fn max_wall_seconds_stops_the_run_and_keeps_its_results() {
    let dir = scratch("wall");
    endless(&dir);
    let started = std::time::Instant::now();
    let out = opal_in(
        &dir,
        &[
            "run",
            "long.json",
            "--max-wall-seconds",
            "0.5",
            "--json",
            "r.json",
        ],
    );
    assert!(started.elapsed().as_secs() < 30, "it stopped");
    assert_eq!(out.status.code(), Some(124), "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with("opal: stopped after 0.5 s of real time (--max-wall-seconds)"),
        "{}",
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("Unfinished requests:"),
        "the table is printed"
    );
    partial_results(&dir.join("r.json"));
}

#[cfg(unix)]
#[test]
fn ctrl_c_writes_the_partial_results_and_exits_130() {
    let dir = scratch("ctrl-c");
    endless(&dir);
    let child = Command::new(env!("CARGO_BIN_EXE_opal"))
        .args(["run", "long.json", "-q", "--json", "r.json"])
        .current_dir(&dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Give it time to start the run (and install its handler), then press Ctrl-C.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with("opal: interrupted at t = "),
        "{}",
        stderr(&out)
    );
    partial_results(&dir.join("r.json"));
}

#[test]
fn a_disaggregated_run_prints_its_pools_and_transfers() {
    let name = "disaggregation_long_outputs.json";
    let out = opal(&["run", examples().join(name).to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let d = engine_results(name).deployment.unwrap();
    let pools: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.contains(" Deployment "))
        .collect();
    // One row per pool (name, role, workers, requests), then the transfers.
    assert!(
        pools[2].starts_with("prefill       prefill         1"),
        "{text}"
    );
    assert!(
        pools[3].starts_with("decode        decode          3"),
        "{text}"
    );
    assert!(
        pools[3].contains(&format!(" {} ", d.pools[1].requests)),
        "{text}"
    );
    let transfers = pools
        .iter()
        .find(|l| l.starts_with("KV transfers:"))
        .unwrap();
    assert!(
        transfers.ends_with(&format!(" {}", d.transfers)),
        "{transfers}"
    );
}
