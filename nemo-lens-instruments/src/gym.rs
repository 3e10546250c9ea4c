//! Environment ("gym") server metrics (`gym.*`).
//!
//! [`GymMetrics`] is Python nemo-lens's `record_gym_metrics`, without
//! attributes. The attributed sets are the instruments NeMo-Gym's Python
//! servers record outside nemo-lens, one set per concern: [`QueueMetrics`],
//! [`RolloutMetrics`], [`SandboxMetrics`], [`ModelServerCallMetrics`],
//! [`HttpMetrics`], and [`ProcessCpuMetrics`] / [`GpuMetrics`], which a
//! [`ProcessSampler`] records for you. Fixed value sets are enums
//! ([`RolloutOutcome`], [`RetryReason`]).
//!
//! `unit_in_name` marks the names that spell their unit
//! (`gym.verify.duration_ms` with unit `ms`): Python and NeMo-Gym chose them,
//! so they are kept for parity and both languages feed one series,
//! `gym_verify_duration_ms_milliseconds`.

use nemo_lens_core::{Instruments, Meter};
use nemo_lens_macros::Instruments;

mod attributed;
mod gpu;
mod sampler;
mod values;

pub use attributed::{
    GpuMetrics, GpuMetricsSet, HttpMetrics, HttpMetricsSet, ModelServerCallMetrics,
    ModelServerCallMetricsSet, ProcessCpuMetrics, ProcessCpuMetricsSet, QueueMetrics,
    QueueMetricsSet, RolloutMetrics, RolloutMetricsSet, SandboxMetrics, SandboxMetricsSet,
};
pub use sampler::ProcessSampler;
pub use values::{RetryReason, RolloutOutcome};

/// One report of a gym server, as `record_gym_metrics` takes it in Python
/// nemo-lens.
///
/// ```
/// use nemo_lens::instruments::gym::GymMetrics;
/// use nemo_lens::{Instruments, Meter};
///
/// let meter = Meter::noop();
/// GymMetrics::default().verify_duration_ms(45.6).active_servers(4).record(&meter);
/// ```
#[derive(Instruments, Default, Debug, Clone)]
#[instruments(crate = "nemo_lens_core")]
pub struct GymMetrics {
    /// Gym server request duration in milliseconds.
    #[histogram("gym.server.request_duration_ms", unit = "ms", unit_in_name)]
    pub server_request_duration_ms: Option<f64>,

    /// Rollout collection duration in milliseconds.
    #[histogram("gym.rollout.duration_ms", unit = "ms", unit_in_name)]
    pub rollout_duration_ms: Option<f64>,

    /// Verification endpoint duration in milliseconds.
    #[histogram("gym.verify.duration_ms", unit = "ms", unit_in_name)]
    pub verify_duration_ms: Option<f64>,

    /// Fraction of successful verifications.
    #[gauge("gym.verify.success_rate")]
    pub verify_success_rate: Option<f64>,

    /// Number of active Gym servers.
    #[gauge("gym.servers.active")]
    pub active_servers: Option<u64>,
}

/// Records `metrics` on `meter`: the Python `record_gym_metrics`.
#[inline]
pub fn record_gym_metrics(meter: &Meter, metrics: &GymMetrics) {
    metrics.record(meter);
}
