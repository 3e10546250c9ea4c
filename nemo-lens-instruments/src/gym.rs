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
