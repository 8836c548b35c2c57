#!/usr/bin/env python3
"""Derives the fidelity suite's compact data from the project's shared measurements.

    python3 fidelity/extract.py ../shared/fidelity   # rewrites fidelity/data/
    python3 fidelity/extract.py --aiconfigurator /work/.mirror/ai-dynamo+aiconfigurator/repo
        # rewrites only data/kernels/aiconfigurator_{b200,b300}_vllm019.json,
        # ..._{h200,a100,l40s}_vllm014.json

Reads the 16 real vLLM v0.15.1 runs on H100 in `vllm_h100_runs/` (source: github
inference-sim/training; see fidelity/README.md) and writes, per run, the request stream the
client sent (arrival, prompt length, error flag) and the latencies it measured, summarised.
Standard library only, but for PyYAML (the layer profiles) and pyarrow (AIConfigurator's
per-operation tables, --aiconfigurator).
"""
import csv, glob, gzip, io, json, math, os, subprocess, sys

try:
    import yaml  # only for the layer profiles (PyYAML)
except ImportError:
    yaml = None

# Fields of a Hugging Face config.json the simulator reads.
CONFIG_KEYS = ["architectures", "model_type", "num_hidden_layers", "hidden_size", "num_attention_heads",
               "num_key_value_heads", "head_dim", "intermediate_size", "intermediate_size_mlp", "vocab_size",
               "tie_word_embeddings", "num_local_experts", "num_experts", "n_routed_experts",
               "num_experts_per_tok", "moe_intermediate_size", "n_shared_experts",
               "shared_expert_intermediate_size", "first_k_dense_replace", "interleave_moe_layer_step",
               "decoder_sparse_step", "kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim",
               "v_head_dim", "attention_bias", "use_qk_norm", "max_position_embeddings", "torch_dtype",
               "quantization_config"]

def compact_config(path):
    """The fields the simulator reads, with a language model's `text_config` flattened."""
    c = json.load(open(path))
    text = c.get("text_config") if "num_hidden_layers" not in c else None
    out = {k: v for k, v in (text or c).items() if k in CONFIG_KEYS}
    for k in ("torch_dtype", "quantization_config", "model_type"):
        if k in c and k not in out:
            out[k] = c[k]
    if "quantization_config" in out:
        q = out["quantization_config"]
        out["quantization_config"] = {k: q[k] for k in ("quant_method", "config_groups") if k in q}
        for g in out["quantization_config"].get("config_groups", {}).values():
            for k in list(g):
                if k != "weights":
                    del g[k]
            g["weights"] = {k: g["weights"][k] for k in ("type", "num_bits")}
    return out

def layer_profiles(shared, out):
    """AIConfigurator's per-layer H100 tables (vLLM 0.14 kernels), with each model's shape."""
    if yaml is None:
        print("PyYAML missing: layer profiles not rewritten")
        return
    profiles = []
    for path in sorted(glob.glob(os.path.join(shared, "layer_profiles", "aiconfigurator_h100", "*.yaml"))):
        d = yaml.safe_load(open(path))
        base = os.path.basename(path).rsplit("_tp", 1)[0]
        d["config"] = compact_config(os.path.join(shared, "model_configs", base, "config.json"))
        d["name"] = base
        profiles.append(d)
    with open(os.path.join(out, "kernels", "aiconfigurator_h100.json"), "w") as f:
        json.dump(profiles, f, separators=(",", ":"))
        f.write("\n")

VIDUR_ELEMENTWISE = ["input_layernorm", "post_attention_layernorm", "attn_rope", "mlp_act", "add"]

def vidur_profiles(shared, out):
    """Vidur's per-operator timings (ms), medians, at power-of-two token counts."""
    rows = []
    for path in sorted(glob.glob(os.path.join(shared, "kernel_profiles_vidur", "compute__*__mlp.csv.gz"))):
        gpu = os.path.basename(path).split("__")[1]
        model = os.path.basename(path).split("__", 2)[2].rsplit("__", 1)[0].replace("__", "/")
        for r in csv.DictReader(gzip.open(path, "rt")):
            t = int(r["num_tokens"])
            if t & (t - 1):
                continue
            ops = sorted({c.split(".")[1] for c in r if c.startswith("time_stats.")})
            rows.append({"gpu": gpu, "model": model, "tp": int(r["num_tensor_parallel_workers"]), "tokens": t,
                         "hidden": int(r["n_embd"]), "heads": int(r["n_head"]), "kv_heads": int(r["n_kv_head"]),
                         "ffn": int(r["n_expanded_embd"]), "vocab": int(r["vocab_size"]),
                         "ms": {o: float(r["time_stats.%s.median" % o]) for o in ops}})
    with open(os.path.join(out, "kernels", "vidur.json"), "w") as f:
        json.dump(rows, f, separators=(",", ":"))
        f.write("\n")

RTX_PROFILE = os.path.join("vllm019_small_runs", "rtxpro6000_profile_llama31_8b")
RTX_DENSE = ["qkv_proj", "o_proj", "gate_up_proj", "down_proj", "layernorm", "rotary_emb", "act_fn"]
RTX_GRID = {"prefill_chunk": (0, 16, 64, 256, 1024, 2048), "kv_prefill": (0, 256, 1024, 4096, 16384),
            "kv_decode": (0, 128, 512, 2048, 8192, 16384)}

def rtx_pro_6000_profile(shared, out):
    """The per-kernel profile of vLLM 0.19 on an RTX PRO 6000 Blackwell (casys-kaist/LLMServingSim)
    of Llama-3.1-8B cut to one layer. Its meta.yaml's other hf_overrides (16 / 4 heads, a 7168-wide
    MLP, a 64128-token vocabulary: the model's tp-2 shard) are those of the tp-2 pass; the tp-1
    tables are the full layer's: read as the shard, every kernel (four GEMMs, LM head, decode
    attention) would move weights or KV at the same 41 % of the datasheet's bandwidth and a
    2048-token MLP GEMM would reach 41 % of peak; read as the full layer, 82-85 % and 83 %, the
    H100's figures. Keeps every dense-layer row, the LM head, every pure-decode and pure-prefill
    attention row, and the mixed batches on a coarse grid (1,000 of 19,000)."""
    src = os.path.join(shared, RTX_PROFILE)
    if not os.path.isdir(src):
        print("no RTX PRO 6000 profile: not rewritten")
        return
    dense = {}
    for r in csv.DictReader(gzip.open(os.path.join(src, "tp1_dense.csv.gz"), "rt")):
        dense.setdefault(r["layer"], {})[int(r["tokens"])] = float(r["time_us"])
    tokens = sorted(dense["qkv_proj"])
    heads = [r for r in csv.DictReader(gzip.open(os.path.join(src, "tp1_per_sequence.csv.gz"), "rt"))
             if r["layer"] == "lm_head"]
    attention = []
    for r in csv.DictReader(gzip.open(os.path.join(src, "tp1_attention.csv.gz"), "rt")):
        row = [int(r[k]) for k in ("prefill_chunk", "kv_prefill", "n_decode", "kv_decode")]
        mixed = row[0] > 0 and row[2] > 0
        on_grid = all(row[i] in RTX_GRID[k] for i, k in ((0, "prefill_chunk"), (1, "kv_prefill"), (3, "kv_decode")))
        if not mixed or (on_grid and row[2] & (row[2] - 1) == 0):
            attention.append(row + [round(float(r["time_us"]), 3)])
    config = compact_config(os.path.join(shared, "model_configs", "llama-3.1-8b-instruct", "config.json"))
    config.update(num_hidden_layers=1)
    doc = {"gpu": "RTX PRO 6000 Blackwell", "vllm": "0.19.0", "config": config, "tokens": tokens,
           "dense_us": {k: [dense[k][t] for t in tokens] for k in RTX_DENSE},
           "lm_head": {"sequences": [int(r["sequences"]) for r in heads],
                       "latency_us": [float(r["time_us"]) for r in heads]},
           "attention_columns": ["prefill_chunk", "kv_prefill", "n_decode", "kv_decode", "time_us"],
           "attention": attention}
    with open(os.path.join(out, "kernels", "rtx_pro_6000_vllm019.json"), "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")

# AIConfigurator's per-operation tables of vLLM's kernels, per catalogue GPU: (system folder,
# vLLM version folder, output file). B200 and B300 at vLLM 0.19 (the RTX PRO 6000 profile's
# version); H200, A100 (SXM, the catalogue's A100-80GB) and L40S at 0.14 (the version of the
# H100's per-layer tables, so they compare; the L40S also has 0.22 and 0.24 tables).
AIC_SYSTEMS = [("B200", "b200_sxm", "0.19.0", "aiconfigurator_b200_vllm019.json"),
               ("B300", "b300_sxm", "0.19.0", "aiconfigurator_b300_vllm019.json"),
               ("H200", "h200_sxm", "0.14.0", "aiconfigurator_h200_vllm014.json"),
               ("A100-80GB", "a100_sxm", "0.14.0", "aiconfigurator_a100_vllm014.json"),
               ("L40S", "l40s", "0.14.0", "aiconfigurator_l40s_vllm014.json")]
AIC_DATA = "aic-core/src/aiconfigurator_core/systems/data"
# The subsampled grids: GEMM rows at powers of two of m and the n / k of real models' shards
# (and LM-head widths for n); attention at the (query heads, KV heads) of real models' shards
# (Llama-3-8B / 70B, Qwen3-32B at tp 1-8, and one MHA model), head size 128 (and 256 where
# measured), chunk lengths and decode KV lengths at powers of two.
AIC_GEMM_M = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
AIC_GEMM_NK = (512, 1024, 2048, 3072, 4096, 5120, 6144, 7168, 8192, 12288, 16384)
AIC_GEMM_LM_N = (51200, 65536)
AIC_CHECK_M = (1, 16, 128, 1024, 4096, 8192)
AIC_CHECK_NK = (4096, 8192, 16384)
AIC_HEADS = {(64, 8), (32, 8), (32, 4), (16, 4), (16, 2), (8, 2), (8, 1), (4, 1), (40, 8), (32, 32)}
AIC_ISL = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
AIC_STEP = (1, 15, 127, 511, 1023, 2047, 4095, 8191, 16383, 32767, 65535, 131071)

def aic_table(repo, path):
    """One parquet table of AIConfigurator's repository, as a list of row dicts: from a bare
    git directory (the mirror) via `git show HEAD:path`, or from a checkout."""
    import pyarrow.parquet as pq
    if os.path.exists(os.path.join(repo, path)):
        return pq.read_table(os.path.join(repo, path)).to_pylist()
    data = subprocess.run(["git", "-C", repo, "show", "HEAD:" + path], check=True,
                          capture_output=True).stdout
    return pq.read_table(io.BytesIO(data)).to_pylist()

def aiconfigurator_per_op(repo, out):
    """AIConfigurator's per-operation measurements of vLLM's kernels on B200, B300, H200, A100
    and L40S (github ai-dynamo/aiconfigurator, Apache-2.0), one compact file per GPU; times in us.
    `gemm`: bf16 [m x k] . [k x n] rows (m, n, k, us; the A100 and L40S tables stop at
    m = 8192 and have no n = 51200); `gemm_check`: fp8 (per-tensor) and nvfp4 rows on a coarse
    grid, where measured (none on the A100, fp8 only on the L40S), held out of the bf16 fit. `context_attention`: `batch` sequences of
    `isl` new tokens, no cached prefix (AIConfigurator's step is 0 in every row), rows (batch,
    isl, heads, kv heads, head_dim, us). `generation_attention`: `batch` decodes, each with
    `kv` tokens already cached (the table's `step`: its collector builds vLLM's seq_lens as
    step + 1, the query token included), rows (batch, kv, heads, kv heads, head_dim, us).
    Both at bf16 KV cache, no sliding window. `allreduce`: vLLM's custom all-reduce under CUDA
    graphs (the `vllm_graph` backend, as vLLM serves), rows (gpus, message elements, us): the
    message is a bf16 tensor of that many elements (AIConfigurator queries it with tokens x
    hidden size)."""
    for gpu, system, version, name in AIC_SYSTEMS:
        base = "%s/%s/%%s/vllm/%s/%%s" % (AIC_DATA, system, version)
        gemm_rows = aic_table(repo, base % ("gemm", "gemm_perf.parquet"))
        us = lambda r: round(r["latency"] * 1e3, 3)
        gemm, check = [], []
        for r in gemm_rows:
            m, n, k = r["m"], r["n"], r["k"]
            if r["gemm_dtype"] == "bfloat16" and m in AIC_GEMM_M and k in AIC_GEMM_NK \
                    and (n in AIC_GEMM_NK or n in AIC_GEMM_LM_N):
                gemm.append([m, n, k, us(r)])
            elif r["gemm_dtype"] in ("fp8", "nvfp4") and m in AIC_CHECK_M and n in AIC_CHECK_NK \
                    and k in AIC_CHECK_NK:
                check.append([r["gemm_dtype"], m, n, k, us(r)])
        attention = {}
        for kind, steps in (("context", AIC_ISL), ("generation", AIC_STEP)):
            rows = aic_table(repo, base % ("attention", kind + "_attention_perf.parquet"))
            length = "isl" if kind == "context" else "step"
            attention[kind] = [
                [r["batch_size"], r[length], r["num_heads"], r["num_key_value_heads"], r["head_dim"], us(r)]
                for r in rows
                if r["kv_cache_dtype"] == "bfloat16" and (r.get("window_size") or 0) == 0
                and (kind == "generation" or r["step"] == 0) and r[length] in steps
                and (r["num_heads"], r["num_key_value_heads"]) in AIC_HEADS
                and (r["head_dim"] == 128 or (r["num_heads"], r["num_key_value_heads"]) == (32, 8))]
        allreduce = [[r["num_gpus"], r["message_size"], us(r)]
                     for r in aic_table(repo, base % ("comm", "custom_allreduce_perf.parquet"))
                     if r["backend"] == "vllm_graph" and r["allreduce_dtype"] == "bfloat16"]
        version_label = gemm_rows[0]["version"]
        doc = {"gpu": gpu, "system": system, "vllm": version, "vllm_build": version_label,
               "gemm_columns": ["m", "n", "k", "us"], "gemm": sorted(gemm),
               "gemm_check_columns": ["dtype", "m", "n", "k", "us"], "gemm_check": sorted(check),
               "context_attention_columns": ["batch", "isl", "heads", "kv_heads", "head_dim", "us"],
               "context_attention": sorted(attention["context"]),
               "generation_attention_columns": ["batch", "kv", "heads", "kv_heads", "head_dim", "us"],
               "generation_attention": sorted(attention["generation"]),
               "allreduce_columns": ["gpus", "elements", "us"], "allreduce": sorted(allreduce)}
        path = os.path.join(out, "kernels", name)
        with open(path, "w") as f:
            json.dump(doc, f, separators=(",", ":"))
            f.write("\n")
        print("%s: %d GEMM, %d check, %d + %d attention, %d all-reduce rows -> %s" % (
            gpu, len(gemm), len(check), len(attention["context"]), len(attention["generation"]),
            len(allreduce), path))

def model_configs(shared, out):
    for path in sorted(glob.glob(os.path.join(shared, "model_configs", "*", "config.json"))):
        name = os.path.basename(os.path.dirname(path))
        with open(os.path.join(out, "models", name + ".json"), "w") as f:
            json.dump(compact_config(path), f, indent=1, sort_keys=True)
            f.write("\n")

def percentile(xs, q):
    """numpy's default (linear) percentile, as `vllm bench serve` and inference-perf use."""
    xs = sorted(xs)
    if not xs:
        return float("nan")
    pos = (len(xs) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)

def summary(xs):
    return {"mean": sum(xs) / len(xs), "p50": percentile(xs, 50), "p90": percentile(xs, 90),
            "p99": percentile(xs, 99)}

def short_name(experiment):
    # "20260217-231439-llama-2-7b-tp1-general" -> "llama-2-7b-tp1-general"
    return experiment.split("-", 2)[2].replace("-hf-", "-")

def main(shared, out):
    root = os.path.join(shared, "vllm_h100_runs")
    rows = {r["experiment"]: r for r in csv.DictReader(open(os.path.join(root, "ground_truth_summary_16exp.csv")))}
    runs = []
    for path in sorted(glob.glob(os.path.join(root, "replay_data_c4f0340", "*.json.gz"))):
        if path.endswith("_ground_truth.json.gz"):
            continue
        replay = json.load(gzip.open(path))
        truth = json.load(gzip.open(path.replace(".json.gz", "_ground_truth.json.gz")))
        exp = replay["experiment"]
        row = rows[exp]
        profile = json.loads(open(os.path.join(root, "default_args", exp, "profile.yaml")).read())
        resolved = open(os.path.join(root, "default_args", exp, "results", "config.yaml")).read()
        prefix = resolved.split("shared_prefix:")[1]
        field = lambda name: int(prefix.split(name + ":")[1].split()[0])
        reqs = replay["requests"]
        assert len(reqs) == len(truth)
        # The server generated output_len tokens for every request (ignore_eos); the replay's
        # output_tokens are the client's re-count of the text, which is not what ran.
        output_len = field("output_len")
        ok = [(r, t) for r, t in zip(reqs, truth) if not r["has_error"] and not t["has_error"]]
        ttft = [t["ttft_s"] * 1e3 for _, t in ok]
        e2e = [t["e2e_s"] * 1e3 for _, t in ok]
        # ITL: the mean gap between a request's tokens, (E2E − TTFT) / (output_len − 1), pooled
        # over requests: the same definition the simulator reports, on the server's count.
        itl = sum(t["e2e_s"] - t["ttft_s"] for _, t in ok) * 1e3 / (len(ok) * (output_len - 1))
        name = short_name(exp)
        # Requests that timed out report no prompt length; they sent their pool prompt, whose
        # length the other requests of the same pool slot tell.
        pool = field("num_groups") * field("num_prompts_per_group")
        lengths = {}
        for i, r in enumerate(reqs):
            if r["input_tokens"] > 0:
                lengths.setdefault(i % pool, r["input_tokens"])
        for i, r in enumerate(reqs):
            if r["input_tokens"] == 0:
                r["input_tokens"] = lengths[i % pool]
        with open(os.path.join(out, "requests", name + ".csv"), "w") as f:
            f.write("arrival_ms,input_tokens,error\n")
            for r in reqs:
                f.write("%.3f,%d,%d\n" % (r["arrival_time_us"] / 1e3, r["input_tokens"], int(r["has_error"])))
        cfg = replay["config"]
        runs.append({
            "name": name,
            "experiment": exp,
            "split": replay["split"],
            "excluded_overload": row["excluded_overload"] == "True",
            "model": replay["model_id"],
            "gpu": "H100-SXM",
            "tp": cfg["tensor_parallelism"],
            "max_num_seqs": cfg["max_num_seqs"],
            "max_num_batched_tokens": cfg["max_num_batched_tokens"],
            "max_model_len": 4096,
            "block_size": cfg["block_size"],
            "kv_blocks_total_gpu": cfg["kv_blocks_total_gpu"],
            "cpu_offload_gib": 8,
            "stages": [{"rate": s["rate"], "duration_s": s["duration"]} for s in profile["load"]["stages"]],
            "prompt_pool": {"groups": field("num_groups"), "prompts_per_group": field("num_prompts_per_group"),
                            "system_prompt_len": field("system_prompt_len")},
            "output_len": output_len,
            "requests": len(reqs),
            "errors": len(reqs) - len(ok),
            "measured": {"ttft_ms": summary(ttft), "e2e_ms": summary(e2e), "itl_ms": {"mean": itl}},
        })
    with open(os.path.join(out, "runs.json"), "w") as f:
        json.dump(runs, f, indent=1)
        f.write("\n")
    print("wrote %d runs to %s" % (len(runs), out))

def extract_shared(shared):
    """Every file derived from the project's shared folder."""
    shared = shared or os.path.join(os.path.dirname(__file__), "..", "..", "shared", "fidelity")
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
    for d in ("requests", "kernels", "models"):
        os.makedirs(os.path.join(out, d), exist_ok=True)
    main(shared, out)
    layer_profiles(shared, out)
    vidur_profiles(shared, out)
    model_configs(shared, out)
    rtx_pro_6000_profile(shared, out)

if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--aiconfigurator":
        out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
        os.makedirs(os.path.join(out, "kernels"), exist_ok=True)
        aiconfigurator_per_op(sys.argv[2], out)
    else:
        extract_shared(sys.argv[1] if len(sys.argv) > 1 else None)
