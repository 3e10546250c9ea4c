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

    /// The sandbox provider (`nemo.gym.sandbox.provider`), which every
    /// record of NeMo-Gym 0.7.0 carries: one left unset is warned about once.
    #[attribute("nemo.gym.sandbox.provider", required)]
    pub provider: Option<StringValue>,
}

/// Provisioning one sandbox: the guard records
/// `gym.sandbox.startup_duration_ms`, by provider, at `finish` or drop. It
/// has no `fail` and no in-flight count (holding a sandbox is
/// [`SandboxHeld`]'s), and it needs the provider, set on the prepared set
/// before `start`: without it the duration goes out unlabelled and a
/// warning names it once.
///
/// A create that fails records no startup time in NeMo-Gym 0.7.0 (it
/// records the duration after the provider's create returns, and counts
/// each retried attempt in `gym.sandbox.create_retry_total`): end the
/// guard with `discard()` when the create fails, and count retries with
/// [`SandboxMetrics::create_retries`](SandboxMetrics::create_retries).
///
/// ```
/// use nemo_lens::instruments::gym::{SandboxMetrics, SandboxStartup};
/// use nemo_lens::prelude::*;
///
/// # let meter = Meter::noop();
/// # fn create(attempt: u32) -> Result<(), ()> { if attempt == 0 { Err(()) } else { Ok(()) } }
/// let startup = SandboxStartup::default().provider("docker").start(&meter);
/// let mut attempt = 0;
/// let created = loop {
///     match create(attempt) {
///         Err(()) if attempt < 2 => {
///             // Retried, as NeMo-Gym's tenacity `before_sleep` counts it.
///             SandboxMetrics::default().provider("docker").create_retries(1).record(&meter);
///             attempt += 1;
///         }
///         result => break result,
///     }
/// };
/// match created {
///     Ok(()) => startup.finish(),
///     Err(()) => startup.discard(), // 0.7.0 records no startup time for a failed create
/// }
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

    /// The sandbox provider (`nemo.gym.sandbox.provider`), which every
    /// record of NeMo-Gym 0.7.0 carries: one left unset is warned about once.
    #[attribute("nemo.gym.sandbox.provider", required)]
    pub provider: Option<StringValue>,
}

/// One command run inside a provisioned sandbox: the guard records
/// `gym.sandbox.exec_duration_ms`, by provider, at `finish` or drop. It has
/// no `fail` and no in-flight count, and it needs the provider, set on the
/// prepared set before `start` (without it: unlabelled, and warned about
/// once). NeMo-Gym 0.7.0 records a command that ran, whatever its exit
/// code, and nothing for one that raised before running: `discard()` then.
///
/// ```
/// use nemo_lens::instruments::gym::SandboxExec;
/// use nemo_lens::prelude::*;
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

    /// The sandbox provider (`nemo.gym.sandbox.provider`), which every
    /// record of NeMo-Gym 0.7.0 carries: one left unset is warned about once.
    #[attribute("nemo.gym.sandbox.provider", required)]
    pub provider: Option<StringValue>,
}

/// A sandbox this process holds: `gym.sandbox.active` goes up by one, for
/// its provider, when the guard starts (the provider handed it back) and
/// comes back down when the guard ends (released, or dropped with it). The
/// count is the guard's own: the set has no `active` setter. The provider
/// is needed, set on the prepared set before `start`.
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

    /// The sandbox provider (`nemo.gym.sandbox.provider`), which every
    /// record of NeMo-Gym 0.7.0 carries: one left unset is warned about once.
    #[attribute("nemo.gym.sandbox.provider", required)]
    pub provider: Option<StringValue>,
}
