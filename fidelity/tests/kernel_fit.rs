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
