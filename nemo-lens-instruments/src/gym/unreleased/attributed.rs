//! The attributed instruments of one unreleased commit of NeMo-Gym's main
//! branch that no release has (see [the module](super)): the names, kinds,
//! units, descriptions and attribute keys of that commit's
//! `nemo_gym/telemetry/gym_metrics.py`. Counters have unit `1` and add one
//! per event unless told an amount. The names that spell their unit keep it
//! (`unit_in_name`): they are that commit's wire names.

use nemo_lens_macros::Instruments;
use opentelemetry::StringValue;

use super::values::{RetryReason, RolloutOutcome};

/// Waiting for a concurrency-limiting semaphore, by the site that waits.
///
/// ```
/// use nemo_lens::instruments::gym::unreleased::QueueMetrics;
/// use nemo_lens::{Instruments, Meter};
///
/// # let meter = Meter::noop();
/// QueueMetrics::default().site("rollout_driver").wait_ms(12.5).record(&meter);
/// ```
#[derive(Instruments, Default, Debug, Clone)]
#[instruments(crate = "nemo_lens_core")]
pub struct QueueMetrics {
    /// Time spent waiting to acquire a Gym concurrency-limiting semaphore.
    #[histogram("gym.concurrency.queue_wait_duration_ms", unit = "ms", unit_in_name)]
    pub wait_ms: Option<f64>,

    /// Which semaphore: the rollout driver's, a judge's, a sandbox pool's
    /// (`nemo.gym.concurrency.site`).
    #[attribute("nemo.gym.concurrency.site")]
    pub site: Option<StringValue>,
}

/// Completed rollouts by outcome.
///
/// ```
/// use nemo_lens::instruments::gym::unreleased::{RolloutMetrics, RolloutOutcome};
/// use nemo_lens::{Instruments, Meter};
///
/// # let meter = Meter::noop();
/// RolloutMetrics::default().outcome(RolloutOutcome::Success).completed(1).record(&meter);
/// ```
#[derive(Instruments, Default, Debug, Clone)]
#[instruments(crate = "nemo_lens_core")]
pub struct RolloutMetrics {
    /// Count of completed rollouts by outcome.
    #[counter("gym.rollout.completed_total", unit = "1")]
    pub completed: Option<u64>,

    /// How the rollouts ended (`nemo.gym.rollout.outcome`).
    #[attribute("nemo.gym.rollout.outcome")]
    pub outcome: Option<RolloutOutcome>,
}

/// One call from a gym server to a model server, by dialect and server.
///
/// ```
/// use nemo_lens::instruments::gym::unreleased::ModelServerCallMetrics;
/// use nemo_lens::{Instruments, Meter};
///
/// # let meter = Meter::noop();
/// ModelServerCallMetrics::default()
///     .dialect("openai_chat")
///     .server_name("policy")
///     .time_to_first_byte_ms(85.0)
///     .duration_ms(1430.0)
///     .record(&meter);
/// ```
#[derive(Instruments, Default, Debug, Clone)]
#[instruments(crate = "nemo_lens_core")]
pub struct ModelServerCallMetrics {
    /// Wall-clock duration of one model-server dialect call.
    #[histogram("gym.model.call_duration_ms", unit = "ms", unit_in_name)]
    pub duration_ms: Option<f64>,

    /// Time to first response byte for one model-server call.
    #[histogram("gym.model.time_to_first_byte_ms", unit = "ms", unit_in_name)]
    pub time_to_first_byte_ms: Option<f64>,

    /// The API dialect spoken (`nemo.gym.model.dialect`).
    #[attribute("nemo.gym.model.dialect")]
    pub dialect: Option<StringValue>,

    /// The model server called (`nemo.gym.server.name`); exported empty when
    /// unknown, as the Python servers do.
    #[attribute("nemo.gym.server.name", default = "")]
    pub server_name: Option<StringValue>,
}

/// Outbound HTTP trouble: timeouts by whether the call stayed inside the
/// gym deployment, retries by reason.
///
/// ```
/// use nemo_lens::instruments::gym::unreleased::{HttpMetrics, RetryReason};
/// use nemo_lens::{Instruments, Meter};
///
/// # let meter = Meter::noop();
/// HttpMetrics::default().internal(true).timeouts(1).record(&meter);
/// HttpMetrics::default().retry_reason(RetryReason::ServerDisconnected).retries(1).record(&meter);
/// ```
#[derive(Instruments, Default, Debug, Clone)]
#[instruments(crate = "nemo_lens_core")]
pub struct HttpMetrics {
    /// Count of outbound HTTP calls that timed out.
    #[counter("gym.http.timeout_total", unit = "1")]
    pub timeouts: Option<u64>,

    /// Count of outbound HTTP request retries by reason.
    #[counter("gym.http.retry_total", unit = "1")]
    pub retries: Option<u64>,

    /// Whether the timed-out call targeted a server of the gym deployment
    /// (`nemo.gym.http.internal`, on timeouts only).
    #[attribute("nemo.gym.http.internal", only(timeouts))]
    pub internal: Option<bool>,

    /// Why the request was retried (`nemo.gym.http.retry_reason`, on retries
    /// only).
    #[attribute("nemo.gym.http.retry_reason", only(retries))]
    pub retry_reason: Option<RetryReason>,
}

/// This process's CPU, as the [`ProcessSampler`](super::ProcessSampler)
/// records it.
#[derive(Instruments, Default, Debug, Clone)]
#[instruments(crate = "nemo_lens_core")]
pub struct ProcessCpuMetrics {
    /// This process's CPU, in percent of one logical core (up to 100 ×
    /// cores). The exported description is NeMo-Gym's wording.
    #[gauge(
        "gym.process.cpu.percent",
        unit = "%",
        unit_in_name,
        description = "This process's CPU utilization, sampled inline at span boundaries."
    )]
    pub cpu_percent: Option<f64>,
}

/// One GPU, as the [`ProcessSampler`](super::ProcessSampler) records it.
#[derive(Instruments, Default, Debug, Clone)]
#[instruments(crate = "nemo_lens_core")]
pub struct GpuMetrics {
    /// GPU compute (SM) utilization in percent, read through NVML. The
    /// exported description is NeMo-Gym's wording.
    #[gauge(
        "gym.process.gpu.utilization_percent",
        unit = "%",
        unit_in_name,
        description = "GPU compute (SM) utilization, sampled periodically via nvidia-smi."
    )]
    pub utilization_percent: Option<f64>,

    /// GPU memory in use, in MiB, read through NVML.
    #[gauge(
        "gym.process.gpu.memory_used_mib",
        unit = "MiB",
        description = "GPU memory in use, sampled periodically via nvidia-smi."
    )]
    pub memory_used_mib: Option<f64>,

    /// GPU total memory, in MiB, read through NVML.
    #[gauge(
        "gym.process.gpu.memory_total_mib",
        unit = "MiB",
        description = "GPU total memory, sampled periodically via nvidia-smi."
    )]
    pub memory_total_mib: Option<f64>,

    /// The GPU's index (`nemo.gym.gpu.index`).
    #[attribute("nemo.gym.gpu.index")]
    pub index: Option<i64>,

    /// The GPU's UUID (`nemo.gym.gpu.uuid`).
    #[attribute("nemo.gym.gpu.uuid")]
    pub uuid: Option<StringValue>,
}
