#!/usr/bin/env python3
"""Replays the vLLM 0.19 runs on GPUs the calibration never saw (RTX 4090, RTX PRO 6000).

The calibration is fitted on H100 runs and profiles only; these runs check how it carries
over to other GPUs and models with nothing but the GPUs' datasheet figures. Source:
../shared/fidelity/vllm019_small_runs (casys-kaist/LLMServingSim, MIT): 300 ShareGPT
requests at Poisson 10 req/s, offline AsyncLLM (no HTTP server), exact per-request lengths.

Usage: cargo build --release -p opal-cli && python3 fidelity/cross_gpu.py [--datasheet] [SHARED_DIR]
(the binary: $OPAL, else $CARGO_TARGET_DIR/release/opal, else target/release/opal).
Measured TTFT/E2E are first/last token minus the engine's queued time; TPOT is
(last - first) / (output - 1), mean over requests. The simulator's use its own arrival.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
SHARED = ARGS[0] if ARGS else os.path.join(ROOT, "..", "shared", "fidelity")
RUNS = os.path.join(SHARED, "vllm019_small_runs", "bench_examples")
OPAL = os.environ.get("OPAL") or os.path.join(
    os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target"), "release", "opal")

# The catalogue GPUs (engine/src/hardware.rs): datasheet peaks with the calibration of each;
# the RTX PRO 6000's kernel figures are fitted on its vLLM 0.19 kernel profile, the RTX 4090
# has the H100's efficiencies (no profile of it). `--datasheet` replays both instead as
# custom GPUs with the same peaks and the H100's efficiencies (the figures before the fit).
GPUS = {"RTX4090": "RTX 4090", "RTXPRO6000": "RTX PRO 6000 Blackwell"}
DATASHEET = {
    "RTX4090": dict(name="RTX 4090", peak_tflops=165.2, fp8_tflops=330.3, hbm_tbps=1.008,
                    memory_gb=23.52),
    "RTXPRO6000": dict(name="RTX PRO 6000 Blackwell", peak_tflops=503.8, fp8_tflops=1007.6,
                       hbm_tbps=1.792, memory_gb=94.97),
}
# Qwen3-32B is not in the catalogue: the fields of its Hugging Face config.json that matter.
QWEN3_32B = {"architectures": ["Qwen3ForCausalLM"], "hidden_size": 5120,
             "intermediate_size": 25600, "num_hidden_layers": 64, "num_attention_heads": 64,
             "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936,
             "tie_word_embeddings": False, "max_position_embeddings": 40960,
             "torch_dtype": "bfloat16"}
MODELS = {"meta-llama/Llama-3.1-8B": {"name": "meta-llama/Llama-3.1-8B"},
          "Qwen/Qwen3-30B-A3B-Instruct-2507": {"name": "Qwen/Qwen3-30B-A3B-Instruct-2507"},
          "Qwen/Qwen3-32B": {"name": "custom", "hf_config": QWEN3_32B}}


def mean(xs):
    return statistics.fmean(xs)


def replay(run, work, datasheet):
    meta = json.load(open(os.path.join(RUNS, run, "vllm_meta.json")))
    kw = meta["engine_kwargs"]
    model = MODELS[kw["model"]]
    reqs = [json.loads(line) for line in open(os.path.join(RUNS, run, "vllm_requests.jsonl"))]
    reqs.sort(key=lambda r: r["arrival_time"])
    t0 = reqs[0]["arrival_time"]
    trace = os.path.join(work, "trace.jsonl")
    with open(trace, "w") as f:
        for i, r in enumerate(reqs):
            # Distinct prompts (ShareGPT conversations): no shared prefix.
            ids = [i << 20 | b for b in range(-(-r["input_toks"] // 16))]
            f.write(json.dumps({"timestamp": (r["arrival_time"] - t0) * 1000,
                                "input_length": r["input_toks"],
                                "output_length": r["output_toks"], "hash_ids": ids}) + "\n")
    # Data parallel ranks are separate engines behind vLLM's load-balancing front end.
    dp = kw.get("data_parallel_size") or 1
    scenario = {
        "simulation": {"num_workers": dp, "seed": 1},
        "model": dict(model, max_model_len=kw.get("max_model_len") or 32768),
        "hardware": ({"gpu": "custom", "custom": DATASHEET[run.split("_")[0]]} if datasheet
                     else {"gpu": GPUS[run.split("_")[0]]}) | {"tp": kw["tensor_parallel_size"]},
        "worker": {"max_num_seqs": kw["max_num_seqs"],
                   "max_num_batched_tokens": kw["max_num_batched_tokens"],
                   "block_size": 16, "gpu_memory_utilization": 0.9},
        "router": {"policy": {"policy": "least_loaded" if dp > 1 else "round_robin"}},
        "workload": {"stages": [{"type": "Trace", "trace_file": "trace.jsonl",
                                 "hash_block_size": 16}]},
    }
    path = os.path.join(work, "scenario.json")
    json.dump(scenario, open(path, "w"))
    out = os.path.join(work, "results.json")
    subprocess.run([OPAL, "run", path, "--json", out], check=True, cwd=work,
                   stdout=subprocess.DEVNULL)
    sim = json.load(open(out))["requests"]
    measured = (mean(r["first_token_ts"] - r["queued_ts"] for r in reqs) * 1e3,
                mean(r["last_token_ts"] - r["queued_ts"] for r in reqs) * 1e3,
                mean((r["last_token_ts"] - r["first_token_ts"]) / (r["output_toks"] - 1)
                     for r in reqs if r["output_toks"] > 1) * 1e3)
    predicted = (mean(r["first_token"] - r["created"] for r in sim) * 1e3,
                 mean(r["completion"] - r["created"] for r in sim) * 1e3,
                 mean((r["completion"] - r["first_token"]) / (r["output_tokens"] - 1)
                      for r in sim if r["output_tokens"] > 1) * 1e3)
    return measured, predicted


def main():
    datasheet = "--datasheet" in sys.argv
    print("measured/predicted ms, absolute error; " + ("datasheet GPU figures, H100 efficiencies"
          if datasheet else "catalogue GPUs (RTX PRO 6000: kernel-profile calibration)"))
    print(f"{'run':40} {'TTFT mean':>24} {'E2E mean':>24} {'TPOT mean':>20}")
    with tempfile.TemporaryDirectory() as work:
        for run in sorted(os.listdir(RUNS)):
            got = replay(run, work, datasheet)
            cells = [f"{m:9.1f}/{p:9.1f} {abs(p - m) / m * 100:4.1f}%" for m, p in zip(*got)]
            print(f"{run:40} " + " ".join(f"{c:>24}" for c in cells))


if __name__ == "__main__":
    main()
