//! The RTX PRO 6000's kernel figures in the catalogue are what the fit finds on its kernel
//! profile, and they price the profile's whole steps closely.

use engine::hardware::lookup;
use engine::timing::{h100_calibration, rtx_pro_6000_calibration};
use fidelity::fit::{self, kernels::Profiles, KERNEL_GROUPS};

#[test]
fn the_rtx_pro_6000_figures_are_the_fit_of_its_kernel_profile() {
    let profiles = Profiles::for_gpu("RTX PRO 6000 Blackwell");
    let start = h100_calibration();
    let fitted = fit::fit_kernels(&profiles, &start);
    let shipped = rtx_pro_6000_calibration();
    for (group, params) in KERNEL_GROUPS {
        let n = profiles.points.iter().filter(|p| p.group == group).count();
        if group == "allreduce" || group == "elementwise" {
            // No all-reduce in a tp-1 profile; its elementwise kernels are timed in a layer.
            assert_eq!(n, 0, "{group}");
            continue;
        }
        assert!(n > 100, "{group}: {n} points");
        let (want, got) = (fit::values(&fitted, params), fit::values(&shipped, params));
        for ((p, w), g) in params.iter().zip(want).zip(got) {
            // hardware.rs keeps three significant figures.
            assert!(
                (g - w).abs() <= 0.005 * w.abs() + 1e-9,
                "{}: {g} vs fit {w}",
                p.field
            );
        }
    }
    // The figures a kernel profile cannot give stay the H100's.
    assert_eq!(shipped.step_overhead_us, start.step_overhead_us);
    assert_eq!(shipped.moe_memory_efficiency, start.moe_memory_efficiency);
    assert_eq!(
        engine::timing::calibration_for(&lookup("RTX PRO 6000 Blackwell").unwrap()),
        shipped
    );
}

#[test]
fn the_profiles_whole_steps_are_priced_within_a_few_percent() {
    let checks = fidelity::fit::kernels::rtx_step_checks(&rtx_pro_6000_calibration());
    assert_eq!(checks.len(), 23);
    let errors: Vec<f64> = checks
        .iter()
        .map(|c| ((c.predicted - c.profile) / c.profile).abs() * 100.0)
        .collect();
    let median = fidelity::report::median(errors.clone());
    assert!(median < 6.0, "median {median:.1}%");
    assert!(errors.iter().all(|&e| e < 25.0), "{errors:?}");
    // Priced with the H100's figures the same steps are far off: the fit carries the GPU.
    let h100 = fidelity::fit::kernels::rtx_step_checks(&h100_calibration());
    let before = fidelity::report::median(
        h100.iter()
            .map(|c| ((c.predicted - c.profile) / c.profile).abs() * 100.0)
            .collect(),
    );
    assert!(
        before > 2.0 * median,
        "H100 figures {before:.1}% vs {median:.1}%"
    );
}

/// Every kernel figure of `shipped` is `fitted`'s, to half a percent.
fn assert_is_the_fit(
    gpu: &str,
    shipped: &engine::timing::Calibration,
    fitted: &engine::timing::Calibration,
) {
    for (group, params) in KERNEL_GROUPS {
        let want = fit::values(fitted, params);
        let got = fit::values(shipped, params);
        for ((p, w), g) in params.iter().zip(want).zip(got) {
            assert!(
                (g - w).abs() <= 0.005 * w.abs() + 1e-9,
                "{gpu} {group} {}: {g} vs fit {w}",
                p.field
            );
        }
    }
}

/// The B200, B300 and H200 figures are the fit of AIConfigurator's per-operation tables of
/// vLLM's kernels on each, and price those tables' points about as well as the fit found.
#[test]
fn the_b200_b300_and_h200_figures_are_the_fit_of_their_per_operation_tables() {
    use engine::timing::{b200_calibration, b300_calibration, h200_calibration};
    // Median / p90 absolute error the fit measured per group (gemm, attention, allreduce),
    // with a margin.
    for (gpu, shipped, bounds) in [
        (
            "B200",
            b200_calibration(),
            [(8.8, 29.5), (16.2, 48.5), (10.2, 45.0)],
        ),
        (
            "B300",
            b300_calibration(),
            [(8.6, 28.8), (13.5, 46.3), (11.7, 49.3)],
        ),
        (
            "H200",
            h200_calibration(),
            [(8.5, 19.5), (11.9, 39.3), (10.6, 54.3)],
        ),
    ] {
        let profiles = Profiles::for_gpu(gpu);
        let fitted = fit::fit_kernels(&profiles, &h100_calibration());
        assert_is_the_fit(gpu, &shipped, &fitted);
        for (group, (median, p90)) in ["gemm", "attention", "allreduce"].into_iter().zip(bounds) {
            let (m, p, n) = fit::group_errors(&profiles, &shipped, group);
            assert!(n > 60, "{gpu} {group}: {n} points");
            assert!(m < median && p < p90, "{gpu} {group}: {m:.1}% / {p:.1}%");
        }
        // No table of an elementwise kernel, no run: those figures stay the H100's.
        let h100 = h100_calibration();
        assert_eq!(shipped.elementwise_efficiency, h100.elementwise_efficiency);
        assert_eq!(shipped.step_overhead_us, h100.step_overhead_us);
        assert_eq!(shipped.request_overhead_ms, h100.request_overhead_ms);
        assert_eq!(shipped.prefix_attention_min_rows, 0.0);
        assert_eq!(shipped.mixed_decode_attention_factor, 1.0);
        assert_eq!(
            engine::timing::calibration_for(&lookup(gpu).unwrap()),
            shipped
        );
    }
}

/// The A100's and L40S's GEMM, attention and all-reduce figures are the fit of
/// AIConfigurator's per-operation tables of vLLM 0.14's kernels on each (the L40S's
/// all-reduce on its 2-GPU rows), and price them about as well as the fit found; the A100's
/// elementwise figures stay the fit of Vidur's operators, the L40S's the H100's.
#[test]
fn the_a100_and_l40s_figures_are_the_fit_of_their_per_operation_tables() {
    use engine::timing::{a100_calibration, l40s_calibration};
    use fidelity::fit::kernels::{L40S_ALLREDUCE_BEYOND_2, VIDUR_A100_GEMM};
    // Median / p90 absolute error the fit measured per group (gemm, attention, allreduce),
    // with a margin.
    for (gpu, shipped, bounds, allreduce_points) in [
        (
            "A100-80GB",
            a100_calibration(),
            [(7.7, 18.6), (12.9, 42.1), (9.7, 32.6)],
            69,
        ),
        (
            "L40S",
            l40s_calibration(),
            [(8.7, 56.3), (16.1, 72.2), (1.9, 6.5)],
            23,
        ),
    ] {
        let profiles = Profiles::for_gpu(gpu);
        let fitted = fit::fit_kernels(&profiles, &h100_calibration());
        let fitted = fidelity::fit::kernels::fit_format_efficiencies(gpu, &fitted);
        assert_is_the_fit(gpu, &shipped, &fitted);
        assert_eq!(
            shipped.fp8_gemm_compute_efficiency,
            fitted.fp8_gemm_compute_efficiency
        );
        for (group, (median, p90)) in ["gemm", "attention", "allreduce"].into_iter().zip(bounds) {
            let (m, p, n) = fit::group_errors(&profiles, &shipped, group);
            assert!(n > 20, "{gpu} {group}: {n} points");
            if group == "allreduce" {
                assert_eq!(n, allreduce_points, "{gpu}");
            }
            assert!(m < median && p < p90, "{gpu} {group}: {m:.1}% / {p:.1}%");
        }
        let h100 = h100_calibration();
        assert_eq!(shipped.step_overhead_us, h100.step_overhead_us);
        assert_eq!(shipped.request_overhead_ms, h100.request_overhead_ms);
        assert_eq!(shipped.moe_memory_efficiency, h100.moe_memory_efficiency);
        assert_eq!(shipped.prefix_attention_min_rows, 0.0);
        assert_eq!(shipped.mixed_decode_attention_factor, 1.0);
        assert_eq!(
            engine::timing::calibration_for(&lookup(gpu).unwrap()),
            shipped
        );
    }
    // The A100's Vidur GEMMs are held out (its elementwise operators are fitted on); the
    // L40S's 4- and 8-GPU all-reduces are held out, and priced far too fast.
    let a100 = Profiles::for_gpu("A100-80GB");
    let (m, _, n) = fit::group_errors(&a100, &a100_calibration(), VIDUR_A100_GEMM);
    assert_eq!(n, 336);
    assert!(m < 12.0, "Vidur's A100 GEMMs: {m:.1}%");
    assert!(fit::group_errors(&a100, &a100_calibration(), "elementwise").2 > 0);
    let l40s = Profiles::for_gpu("L40S");
    let (m, _, n) = fit::group_errors(&l40s, &l40s_calibration(), L40S_ALLREDUCE_BEYOND_2);
    assert_eq!(n, 46);
    assert!(m > 50.0, "L40S 4-8 GPU all-reduce: {m:.1}%");
    assert_eq!(
        l40s_calibration().elementwise_efficiency,
        h100_calibration().elementwise_efficiency
    );
}

/// A 4096³ bf16 GEMM on the B200 against the H100, as the measured tables have them: B200
/// 91.6 µs (AIConfigurator, vLLM 0.19) and H100 156.0 µs (AIConfigurator's H100 SXM table of
/// vLLM 0.14, `h100_sxm/gemm/vllm/0.14.0/gemm_perf.parquet`), 1.70× faster, not the 2.3× of
/// the datasheet peaks (2,250 / 989.5 TFLOPS).
#[test]
fn a_large_bf16_gemm_is_as_much_faster_on_the_b200_as_measured() {
    use engine::model::{catalogue, Model};
    use engine::timing::{b200_calibration, Calibrated};
    let measured_b200 = 91.628e-6;
    let measured_h100 = 156.046e-6;
    let model = Model::new("Llama-3.1-8B", catalogue::lookup("Llama-3.1-8B").unwrap());
    let price = |gpu: &str, cal| {
        let hw = engine::hardware::Hardware::tensor_parallel(lookup(gpu).unwrap(), 1);
        Calibrated::new(&model, &hw, Some(&cal), 0.0).gemm_time(4096.0, 4096.0, 4096.0)
    };
    let b200 = price("B200", b200_calibration());
    let h100 = price("H100-SXM", h100_calibration());
    assert!(
        (b200 / measured_b200 - 1.0).abs() < 0.10,
        "B200 {:.1} µs",
        b200 * 1e6
    );
    let (want, got) = (measured_h100 / measured_b200, h100 / b200);
    assert!(
        (got / want - 1.0).abs() < 0.20,
        "{got:.2}x vs measured {want:.2}x"
    );
    // Priced with the H100's efficiencies the B200 would be faster than measured.
    let b200_as_h100 = price("B200", h100_calibration());
    assert!(b200_as_h100 < b200, "{b200_as_h100} vs {b200}");
}

/// AIConfigurator's B200 and B300 tables (vLLM 0.19) time per-tensor FP8 (W8A8) GEMMs at
/// about the bf16 ones' speed (an 8192³ one on the B200: 1,037.5 µs, bf16 707.7) and NVFP4
/// (W4A4) ones at half the FP4 peak (245.2 µs). With the fitted format efficiencies the
/// compute-bound rows (m ≥ 4096) are priced within 10 % at the median; at the bf16
/// efficiency they came out about twice as fast as measured.
#[test]
fn blackwell_fp8_and_nvfp4_gemms_are_priced_as_vllm_runs_them() {
    use engine::timing::{b200_calibration, b300_calibration};
    use fidelity::fit::kernels::dtype_checks;
    for (gpu, cal) in [("B200", b200_calibration()), ("B300", b300_calibration())] {
        for (format, bf16_efficiency) in [
            ("fp8", true),
            ("nvfp4", true),
            ("fp8", false),
            ("nvfp4", false),
        ] {
            let mut c = cal.clone();
            if bf16_efficiency {
                c.fp8_gemm_compute_efficiency = 0.0;
                c.fp4_gemm_compute_efficiency = 0.0;
            }
            let ratios: Vec<f64> = dtype_checks(gpu, &c)
                .iter()
                .filter(|r| r.dtype == format && r.rows >= 4096.0)
                .map(|r| r.predicted / r.measured)
                .collect();
            assert!(ratios.len() >= 10, "{gpu} {format}: {} rows", ratios.len());
            let median = fidelity::report::median(ratios);
            if bf16_efficiency {
                assert!(
                    median < 0.75,
                    "{gpu} {format} at the bf16 efficiency: {median:.2}"
                );
            } else {
                assert!((median - 1.0).abs() < 0.10, "{gpu} {format}: {median:.2}");
            }
        }
    }
}
