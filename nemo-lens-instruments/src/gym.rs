//! Environment ("gym") server metrics (`gym.*`), as NeMo-Gym 0.7.0 records
//! them.
//!
//! [`GymMetrics`] is Python nemo-lens's `record_gym_metrics`, without
//! attributes: NeMo-Gym 0.7.0 records rollout and verify durations and the
//! verify success rate through it. The rest is what 0.7.0 records outside
//! nemo-lens, one module per concern:
//!
//! - sandboxes: [`SandboxMetrics`] by hand, or the guards
//!   [`SandboxStartup`], [`SandboxExec`] and [`SandboxHeld`];
//! - the outbound HTTP connection pool: [`ConnectionPoolQueue`] (a guard per
//!   queued acquisition) and [`ConnectionPoolConnects`] (observed counts);
//! - memory: [`MemoryProfiler`] samples each server's process tree and the
//!   host into [`ServerMemoryMetrics`] and [`HostMemoryMetrics`].
//!
//! Fixed value sets are enums ([`QueueConstraint`], [`QueueOutcome`],
//! [`MemoryType`]). A gym server's resource attributes
//! (`nemo.gym.server.name`, ...) are set with
//! [`SetupOptions::gym_server`](https://docs.rs/nemo-lens/latest/nemo_lens/telemetry/struct.SetupOptions.html#method.gym_server).
//! Names, kinds, units, descriptions, attributes and buckets are the
//! release's, checked against its list in the tests.
//!
//! Instruments of an unreleased NeMo-Gym commit, which no release records,
//! are in [`unreleased`], and say so wherever they appear.
//!
//! `unit_in_name` marks the names that spell their unit
//! (`gym.verify.duration_ms` with unit `ms`): Python and NeMo-Gym chose them,
//! so they are kept for parity and both languages feed one series,
//! `gym_verify_duration_ms_milliseconds`.

use nemo_lens_core::{Instruments, Meter};
use nemo_lens_macros::Instruments;

/// The three duration histograms of [`GymMetrics`], for
/// [`GYM_DURATION_BOUNDARIES_MS`].
pub const GYM_DURATION_HISTOGRAMS: [&str; 3] = [
    "gym.server.request_duration_ms",
    "gym.rollout.duration_ms",
    "gym.verify.duration_ms",
];

/// Buckets from 100 ms to one hour, which a Lens later than NeMo-Gym
/// 0.7.0's gives [`GYM_DURATION_HISTOGRAMS`] ("the SDK's default boundaries
/// stop at 10 s"), for rollouts and verifications that run for minutes.
///
/// [`GymMetrics`] keeps the SDK's default buckets (0 to 10 000 ms), as
/// NeMo-Gym 0.7.0 gets them: its Lens pin predates these, and Python
/// nemo-lens 0.1.0, the wire reference, has the defaults too. To follow the
/// later Lens, set them at setup:
///
/// ```
/// use nemo_lens::instruments::gym::{GYM_DURATION_BOUNDARIES_MS, GYM_DURATION_HISTOGRAMS};
/// use nemo_lens::SetupOptions;
///
/// let options = GYM_DURATION_HISTOGRAMS
///     .into_iter()
///     .fold(SetupOptions::new(), |options, name| {
///         options.histogram_boundaries(name, GYM_DURATION_BOUNDARIES_MS)
///     });
/// # let _ = options;
/// ```
pub const GYM_DURATION_BOUNDARIES_MS: [f64; 15] = [
    100.0,
    250.0,
    500.0,
    1_000.0,
    2_500.0,
    5_000.0,
    10_000.0,
    30_000.0,
    60_000.0,
    120_000.0,
    300_000.0,
    600_000.0,
    1_200_000.0,
    1_800_000.0,
    3_600_000.0,
];

mod connection_pool;
mod memory;
mod sampling_thread;
mod sandbox;
pub mod unreleased;
mod values;

pub use connection_pool::{
    ConnectionPoolConnects, ConnectionPoolConnectsSet, ConnectionPoolQueue,
    ConnectionPoolQueueGuard, ConnectionPoolQueueSet,
};
pub use memory::{
    GymServer, HostMemoryMetrics, HostMemoryMetricsSet, MemoryProfiler, MemoryProfilerConfig,
    ServerMemoryMetrics, ServerMemoryMetricsSet, ENABLED_VARIABLE, INTERVAL_VARIABLE,
};
pub use sandbox::{
    SandboxExec, SandboxExecGuard, SandboxExecSet, SandboxHeld, SandboxHeldGuard, SandboxHeldSet,
    SandboxMetrics, SandboxMetricsSet, SandboxStartup, SandboxStartupGuard, SandboxStartupSet,
};
pub use values::{MemoryType, QueueConstraint, QueueOutcome};

/// One report of a gym server, as `record_gym_metrics` takes it in Python
/// nemo-lens.
///
/// Its durations have the SDK's default buckets, as NeMo-Gym 0.7.0's do;
/// [`GYM_DURATION_BOUNDARIES_MS`] are a later Lens's, up to an hour.
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
