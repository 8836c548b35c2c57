//! Step-time models priced by hand for small batches.

use engine::hardware::HardwareConfig;
use engine::model::Model;
use engine::timing::{SeqWork, TimingConfig, TimingKind, TimingModel};

fn close(actual: f64, expected: f64) {
    let rel = ((actual - expected) / expected).abs();
    assert!(rel < 1e-12, "got {actual}, expected {expected} (rel {rel})");
}

fn hw(gpu: &str, tp: u32) -> engine::hardware::Hardware {
    HardwareConfig {
        gpu: gpu.into(),
        tp,
        ..Default::default()
    }
    .resolve()
    .unwrap()
}

fn prefill(context: u32, new_tokens: u32) -> SeqWork {
    SeqWork {
        new_tokens,
        context,
        decode: false,
    }
}

fn decode(context: u32) -> SeqWork {
    SeqWork {
        new_tokens: 1,
        context,
        decode: true,
    }
}

/// The roofline with its default efficiencies (η_c = 0.5, η_m = 0.8).
fn roofline_config() -> TimingConfig {
    TimingConfig {
        model: TimingKind::Roofline,
        ..Default::default()
    }
}

fn roofline(model: &str, gpu: &str, tp: u32, overhead: f64) -> TimingModel {
    let m = Model::from_catalogue(model).unwrap();
    TimingModel::new(&roofline_config(), &m, &hw(gpu, tp), overhead)
}

#[test]
fn roofline_granite_mixed_batch_is_compute_bound() {
    // Prefill 0→512 plus one decode at context 1000: T = 513 new tokens, S = 2 sequences.
    // The layers hold 8_170_864_640 − 201_355_264 (the tied 49159×4096 embedding) =
    // 7_969_509_376 parameters; logits are computed for the 2 sequences' last tokens only.
    // F = 2·7_969_509_376·513 + 2·2·4096·49159 + 2·40·4096·(512·513)
    //     + 2·40·4096·(1001·1002 − 1000·1001)
    //   = 8_176_716_619_776 + 805_421_056 + 86_067_118_080 + 656_015_360
    //   = 8_264_245_174_272 FLOPs → / (0.5·989.5e12) = 16.70 ms.
    // B = 16_341_729_280 (weights; the tied table is read whole as the LM head)
    //   + 513·4096·2 (embedding rows) + 1000·163_840 (KV read) + 513·163_840 (KV written)
    //   = 16_593_821_696 bytes → / (0.8·3.35e12) = 6.19 ms. Compute wins; + 1 ms overhead.
    let t = roofline("granite-3.3-8b-instruct", "H100-SXM", 1, 0.001)
        .step_time([prefill(0, 512), decode(1000)]);
    close(t, 8_264_245_174_272.0 / (0.5 * 989.5e12) + 0.001);
}

#[test]
fn roofline_granite_single_decode_is_memory_bound() {
    // F = 2·7_969_509_376 + 2·4096·49159 (logits) + 327_680·2002 = 16_997_744_640 → 34 µs.
    // B = 16_341_729_280 + 4096·2 (one embedding row) + 1000·163_840 + 163_840
    //   = 16_505_741_312 → / 2.68e12 = 6.16 ms.
    let t = roofline("granite-3.3-8b-instruct", "H100-SXM", 1, 0.0).step_time([decode(1000)]);
    close(t, 16_505_741_312.0 / (0.8 * 3.35e12));
}

#[test]
fn roofline_mixtral_tp2_reads_only_touched_experts() {
    // Four decodes at context 2000 on 2×H100. Expert weights 32·8·3·4096·14336·2 =
    // 90_194_313_216 bytes; the untied 32000×4096 embedding table (262_144_000 bytes) is
    // not read, only its 4 rows (4·4096·2 = 32_768); the rest, 93_405_585_408 −
    // 90_194_313_216 − 262_144_000 = 2_949_128_192, is. Four tokens each pick 2 of 8
    // experts: touched fraction 1 − 0.75⁴ = 0.68359375. KV: (4·2000 read + 4 written)·131_072
    // = 1_049_100_288. B = 2_949_128_192 + 0.68359375·90_194_313_216 + 1_049_100_288 + 32_768
    // = 65_654_530_048 → / (0.8·3.35e12·2) = 12.25 ms; compute (≈1e11 FLOPs) is 0.1 ms.
    let t = roofline("Mixtral-8x7B", "H100-SXM", 2, 0.0).step_time([decode(2000); 4]);
    close(t, 65_654_530_048.0 / (0.8 * 3.35e12 * 2.0));
}

#[test]
fn roofline_tp2_adds_allreduce_per_layer() {
    let m = Model::from_catalogue("granite-3.3-8b-instruct").unwrap();
    let hw = HardwareConfig {
        tp: 2,
        allreduce_latency_per_layer: 10e-6,
        ..Default::default()
    }
    .resolve()
    .unwrap();
    let t = TimingModel::new(&roofline_config(), &m, &hw, 0.0).step_time([decode(1000)]);
    // Memory time halves with two GPUs' bandwidth; 40 layers · 10 µs of all-reduce.
    close(t, 16_505_741_312.0 / (0.8 * 3.35e12 * 2.0) + 40.0 * 10e-6);
}

#[test]
fn opal_analytical_granite_tp2_takes_the_longest_prefill_or_the_decode_batch() {
    let m = Model::from_catalogue("granite-3.3-8b-instruct").unwrap();
    let cfg = TimingConfig {
        model: TimingKind::OpalAnalytical,
        ..Default::default()
    };
    let model = TimingModel::new(&cfg, &m, &hw("H100-SXM", 2), 0.002);
    // Prefill 0→512: 40·[4·(512·513)·4096 + 24·512·4096²] = 40·(4_303_355_904 +
    // 206_158_430_208) = 8_418_471_444_480 FLOPs / (989.5e12·2) = 4.254 ms.
    // Prefill 256→320 is shorter. Decode batch (ctx 1000 and 3000):
    // (16_341_729_280 + 4000·163_840) / (3.35e12·2) = 2.537 ms. Max is the prefill.
    let t = model.step_time([
        prefill(0, 512),
        prefill(256, 64),
        decode(1000),
        decode(3000),
    ]);
    close(t, 8_418_471_444_480.0 / (989.5e12 * 2.0) + 0.002);
    let decode_only = model.step_time([decode(1000), decode(3000)]);
    close(decode_only, 16_997_089_280.0 / (3.35e12 * 2.0) + 0.002);
}

#[test]
fn constant_model_and_empty_batches() {
    let m = Model::from_catalogue("Qwen3-30B-A3B").unwrap();
    let cfg = TimingConfig {
        model: TimingKind::Constant,
        constant_step_time: 0.025,
        ..Default::default()
    };
    let model = TimingModel::new(&cfg, &m, &hw("H200", 1), 0.005);
    assert_eq!(
        model.step_time([decode(10), prefill(0, 100)]),
        0.025 + 0.005
    );
    assert_eq!(model.step_time([]), 0.0);
    assert_eq!(roofline("Qwen3-30B-A3B", "L40S", 1, 0.1).step_time([]), 0.0);
}

#[test]
fn timing_config_validates_efficiencies() {
    let cfg: TimingConfig =
        serde_json::from_str(r#"{"model": "opal-analytical", "compute_efficiency": 1.5}"#).unwrap();
    let mut p = engine::validate::Problems::new();
    cfg.validate("worker.timing", &mut p);
    assert_eq!(
        p.as_slice()[0].to_string(),
        "worker.timing.compute_efficiency: must be in (0, 1]"
    );
    assert!(serde_json::from_str::<TimingConfig>(r#"{"model": "magic"}"#).is_err());
}

#[test]
fn roofline_single_decode_of_each_dense_model_reads_its_weights_and_kv() {
    // One decode at context 1023: 1024 tokens of KV move (1023 read + 1 written), every
    // weight is read once except the untied embedding table (vocab × hidden × 2 B), of which
    // one row is. Compute is ~1% of the memory time in each case, so
    // t = (weights − table + row + 1024 · kv_bytes_per_token) / (0.8 · bandwidth).
    //
    // Llama-3.1-8B on an H100 (3.35 TB/s): weights 8,030,261,248 · 2 B = 16,060,522,496 B,
    // less the 128256×4096 table (1,050,673,152 B), plus a row (8,192 B): 15,009,857,536 B;
    // KV 2 · 32 layers · 8 heads · 128 · 2 B = 131,072 B/token → 134,217,728 B.
    close(
        roofline("Llama-3.1-8B", "H100-SXM", 1, 0.0).step_time([decode(1023)]),
        (15_009_857_536.0 + 134_217_728.0) / (0.8 * 3.35e12),
    );
    // Qwen2.5-7B on an A100 80GB (2.039 TB/s): weights 7,615,616,512 · 2 = 15,231,233,024 B,
    // less the 152064×3584 table (1,089,994,752 B), plus 7,168: 14,141,245,440 B;
    // KV 2 · 28 · 4 · 128 · 2 = 57,344 B/token → 58,720,256 B.
    close(
        roofline("Qwen2.5-7B", "A100-80GB", 1, 0.0).step_time([decode(1023)]),
        (14_141_245_440.0 + 58_720_256.0) / (0.8 * 2.039e12),
    );
    // Llama-3.1-70B on two H200s (tp = 2 doubles bandwidth to 9.6 TB/s): weights
    // 70,553,706,496 · 2 = 141,107,412,992 B, less the 128256×8192 table (2,101,346,304 B),
    // plus 16,384: 139,006,083,072 B; KV 2 · 80 · 8 · 128 · 2 = 327,680 B/token
    // → 335,544,320 B.
    close(
        roofline("Llama-3.1-70B", "H200", 2, 0.0).step_time([decode(1023)]),
        (139_006_083_072.0 + 335_544_320.0) / (0.8 * 2.0 * 4.8e12),
    );
}
