//! What a run's GPUs cost over a span of it: each pool's GPUs at its own GPU's price, for
//! the seconds they were provisioned.
//!
//! A worker there from the start and never released is billed for the whole span. One an
//! autoscaler asked for is billed from the request (its `scale_latency` of provisioning is
//! paid for) to its release, or to the span's end; one there from the start and released,
//! from the span's start to its release. Seconds outside the span are not billed.

use engine::router::ScalingRecord;
use engine::scenario::Scenario;
use engine::simulation::SimulationResults;

/// One pool's part of a [`Bill`].
#[derive(Debug, Clone, PartialEq)]
pub struct PoolBill {
    /// Workers the pool ever had (count).
    pub workers: u32,
    /// GPUs per worker (`dp × tp`).
    pub gpus: u32,
    /// Price of one of its GPUs for an hour (none for an unpriced custom GPU).
    pub price: Option<f64>,
    /// Workers there for the whole span (count).
    pub steady: u32,
    /// Seconds of the span the other workers were provisioned, summed over them.
    pub leased_seconds: f64,
}

/// The GPUs of a run over the span `from..to` (simulated seconds) and what they cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Bill {
    /// Start of the span billed.
    pub from: f64,
    /// End of the span billed.
    pub to: f64,
    /// One per pool, in the deployment's order (one pool without a deployment).
    pub pools: Vec<PoolBill>,
}

impl Bill {
    /// The bill of `results`, a run of `scenario`, over `from..to`.
    pub fn new(scenario: &Scenario, results: &SimulationResults, from: f64, to: f64) -> Self {
        let pool = |index: usize, workers: u32, starting: u32, gpus: u32, price: Option<f64>| {
            let leases = results.scaling.iter().filter(|s| s.pool as usize == index);
            let released_at_start = leases.clone().filter(|s| s.requested.is_nan()).count();
            PoolBill {
                workers,
                gpus,
                price,
                steady: starting.saturating_sub(released_at_start as u32),
                leased_seconds: leases.map(|s| leased(s, from, to)).sum(),
            }
        };
        let pools = match (&scenario.deployment, &results.deployment) {
            (Some(d), Some(report)) => d
                .pools
                .iter()
                .zip(&report.pools)
                .enumerate()
                .map(|(i, (p, row))| {
                    let gpus = p
                        .effective_hardware(&scenario.hardware)
                        .map_or(scenario.hardware.gpus(), |h| h.gpus());
                    let price = p.cost_per_gpu_hour(&scenario.hardware);
                    pool(i, row.workers, p.num_workers, gpus, price)
                })
                .collect(),
            _ => {
                let starting = scenario.simulation.num_workers;
                let workers = (results.workers.workers.len() as u32).max(starting);
                let hw = &scenario.hardware;
                vec![pool(
                    0,
                    workers,
                    starting,
                    hw.gpus(),
                    hw.cost_per_gpu_hour(),
                )]
            }
        };
        Self { from, to, pools }
    }

    /// The span's length, seconds.
    pub fn span(&self) -> f64 {
        self.to - self.from
    }

    /// Workers the run ever had, over every pool.
    pub fn workers(&self) -> u32 {
        self.pools.iter().map(|p| p.workers).sum()
    }

    /// GPUs the run ever had: each pool's workers × its tensor parallelism.
    pub fn gpus(&self) -> u32 {
        // Saturating: a scenario's `tp` has no upper bound of its own.
        (self.pools.iter()).fold(0u32, |n, p| {
            n.saturating_add(p.workers.saturating_mul(p.gpus))
        })
    }

    /// GPU-seconds billed over the span.
    pub fn gpu_seconds(&self) -> f64 {
        let span = self.span().max(0.0);
        self.pools
            .iter()
            .map(|p| p.gpus as f64 * (p.steady as f64 * span + p.leased_seconds))
            .sum()
    }

    /// The mean price of the span's GPUs per hour, dollars (none when a pool is unpriced):
    /// the steady GPUs' hourly price plus the leased GPU-hours spread over the span.
    pub fn dollars_per_hour(&self) -> Option<f64> {
        let span = self.span();
        self.pools.iter().try_fold(0.0, |total, p| {
            let price = p.price?;
            let mut rate = total + f64::from(p.steady) * f64::from(p.gpus) * price;
            if p.leased_seconds > 0.0 && span > 0.0 {
                rate += p.gpus as f64 * p.leased_seconds / span * price;
            }
            Some(rate)
        })
    }

    /// Dollars per million tokens produced at `tokens_per_s` (none without a price or
    /// without tokens).
    pub fn per_million(&self, tokens_per_s: f64) -> Option<f64> {
        self.dollars_per_hour()
            .filter(|_| tokens_per_s > 0.0)
            .map(|d| d / (tokens_per_s * 3600.0) * 1e6)
    }
}

/// The seconds of `from..to` a scaled worker was provisioned: from its request (or the
/// span's start, for a worker there from the start) to its release (or the span's end).
fn leased(s: &ScalingRecord, from: f64, to: f64) -> f64 {
    let start = if s.requested.is_nan() {
        from
    } else {
        s.requested.max(from)
    };
    let end = if s.released.is_nan() {
        to
    } else {
        s.released.min(to)
    };
    (end - start).max(0.0)
}
