//! Sandboxes, as NeMo-Gym 0.7.0 records them (`gym_metrics.py`): how many a
//! process holds, how long one takes to provision and a command takes to
//! run in it, and how often a create is retried, each by provider.
//!
//! [`SandboxMetrics`] records any of them by hand; the guards time and count
//! for you: [`SandboxStartup`] (provisioning), [`SandboxExec`] (one
//! command) and [`SandboxHeld`] (from create to release).

use std::time::Duration;

use nemo_lens_macros::Instruments;
use opentelemetry::StringValue;

/// Sandbox provisioning, commands and holdings, by provider, recorded by
/// hand: `active` takes +1 when a provider hands a sandbox back and -1 when
/// it is released.
///
/// ```
/// use nemo_lens::instruments::gym::SandboxMetrics;
/// use nemo_lens::{Instruments, Meter};
///
/// # let meter = Meter::noop();
/// SandboxMetrics::default().provider("docker").create_retries(1).record(&meter);
/// SandboxMetrics::default().provider("docker").startup_ms(840.0).active(1).record(&meter);
/// SandboxMetrics::default().provider("docker").exec_ms(125.0).record(&meter);
/// ```
#[derive(Instruments, Default, Debug, Clone)]
#[instruments(crate = "nemo_lens_core")]
pub struct SandboxMetrics {
    /// Sandboxes this process currently holds, from provider create to
    /// release.
    #[up_down_counter("gym.sandbox.active", unit = "{sandbox}")]
    pub active: Option<i64>,

    /// Wall-clock time to provision one sandbox.
    #[histogram(
        "gym.sandbox.startup_duration_ms",
        unit = "ms",
        unit_in_name,
        buckets = [
            250, 500, 1000, 2000, 5000, 10000, 30000, 60000, 120000, 300000, 600000, 1800000
        ]
    )]
    pub startup_ms: Option<f64>,

    /// Wall-clock time to run one command inside a sandbox.
    #[histogram(
        "gym.sandbox.exec_duration_ms",
        unit = "ms",
        unit_in_name,
        buckets = [
            250, 500, 1000, 2000, 5000, 10000, 30000, 60000, 120000, 300000, 600000, 1800000
        ]
    )]
    pub exec_ms: Option<f64>,

    /// Sandbox-create attempts a provider retried.
    #[counter("gym.sandbox.create_retry_total", unit = "1")]
    pub create_retries: Option<u64>,

    /// The sandbox provider (`nemo.gym.sandbox.provider`).
    #[attribute("nemo.gym.sandbox.provider")]
    pub provider: Option<StringValue>,
}

/// Provisioning one sandbox: the guard records
/// `gym.sandbox.startup_duration_ms` when it ends, however it ends.
///
/// ```
/// use nemo_lens::instruments::gym::SandboxStartup;
/// use nemo_lens::{Guarded, Meter};
///
/// # let meter = Meter::noop();
/// let startup = SandboxStartup::default().provider("docker").start(&meter);
/// // ... create the sandbox ...
/// startup.finish();
/// ```
#[derive(Instruments, Default, Debug, Clone)]
#[instruments(crate = "nemo_lens_core", guard)]
pub struct SandboxStartup {
    /// Wall-clock time to provision one sandbox.
    #[histogram(
        "gym.sandbox.startup_duration_ms",
        unit = "ms",
        unit_in_name,
        elapsed,
        buckets = [
            250, 500, 1000, 2000, 5000, 10000, 30000, 60000, 120000, 300000, 600000, 1800000
        ]
    )]
    pub duration: Option<Duration>,

    /// The sandbox provider (`nemo.gym.sandbox.provider`).
    #[attribute("nemo.gym.sandbox.provider")]
    pub provider: Option<StringValue>,
}

/// One command run inside a provisioned sandbox: the guard records
/// `gym.sandbox.exec_duration_ms` when it ends.
///
/// ```
/// use nemo_lens::instruments::gym::SandboxExec;
/// use nemo_lens::{Guarded, Meter};
///
/// # let meter = Meter::noop();
/// let command = SandboxExec::default().provider("docker").start(&meter);
/// // ... run the command ...
/// command.finish();
/// ```
#[derive(Instruments, Default, Debug, Clone)]
#[instruments(crate = "nemo_lens_core", guard)]
pub struct SandboxExec {
    /// Wall-clock time to run one command inside a sandbox.
    #[histogram(
        "gym.sandbox.exec_duration_ms",
        unit = "ms",
        unit_in_name,
        elapsed,
        buckets = [
            250, 500, 1000, 2000, 5000, 10000, 30000, 60000, 120000, 300000, 600000, 1800000
        ]
    )]
    pub duration: Option<Duration>,

    /// The sandbox provider (`nemo.gym.sandbox.provider`).
    #[attribute("nemo.gym.sandbox.provider")]
    pub provider: Option<StringValue>,
}

/// A sandbox this process holds: `gym.sandbox.active` goes up by one, for
/// its provider, when the guard starts (the provider handed it back) and
/// comes back down when the guard ends (released, or dropped with it).
///
/// ```
/// use nemo_lens::instruments::gym::SandboxHeld;
/// use nemo_lens::{Guarded, Meter};
///
/// # let meter = Meter::noop();
/// let held = SandboxHeld::default().provider("docker").start(&meter);
/// // ... use the sandbox ...
/// drop(held); // released
/// ```
#[derive(Instruments, Default, Debug, Clone)]
#[instruments(crate = "nemo_lens_core", guard)]
pub struct SandboxHeld {
    /// Sandboxes this process currently holds, from provider create to
    /// release.
    #[up_down_counter("gym.sandbox.active", unit = "{sandbox}", in_flight)]
    pub active: Option<i64>,

    /// The sandbox provider (`nemo.gym.sandbox.provider`).
    #[attribute("nemo.gym.sandbox.provider")]
    pub provider: Option<StringValue>,
}
