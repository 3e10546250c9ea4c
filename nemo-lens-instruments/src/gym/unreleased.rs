//! Instruments of an unreleased NeMo-Gym: **no NeMo-Gym release records
//! these**.
//!
//! They are the names of one commit of NeMo-Gym's main branch (after 0.6,
//! before 0.7.0), which 0.7.0 did not ship: `gym.concurrency.*`,
//! `gym.rollout.completed_total`, `gym.model.*`, `gym.http.timeout_total`,
//! `gym.http.retry_total` and the process sampler's `gym.process.*`. A
//! dashboard built for NeMo-Gym 0.7.0 does not query them, and a later
//! release may name them differently. Use them for a Rust gym server that
//! talks to a build of that branch, or as instruments of your own; the
//! released ones are in [the parent module](super).
//!
//! The generated catalog and dashboards list them under titles that say
//! "unreleased NeMo-Gym".

mod attributed;
mod gpu;
mod sampler;
mod values;

pub use attributed::{
    GpuMetrics, GpuMetricsSet, HttpMetrics, HttpMetricsSet, ModelServerCallMetrics,
    ModelServerCallMetricsSet, ProcessCpuMetrics, ProcessCpuMetricsSet, QueueMetrics,
    QueueMetricsSet, RolloutMetrics, RolloutMetricsSet,
};
pub use sampler::ProcessSampler;
pub use values::{RetryReason, RolloutOutcome};
