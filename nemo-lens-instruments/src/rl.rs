//! Reinforcement-learning trainer metrics (`rl.*`), recorded without
//! attributes.
//!
//! `unit_in_name` marks the Python names that spell their unit
//! (`rl.generation.duration_ms` with unit `ms`): they are kept for parity, so
//! both languages feed one series, `rl_generation_duration_ms_milliseconds`.

use nemo_lens_core::{Instruments, Meter};
use nemo_lens_macros::Instruments;

/// One RL training step, as `record_rl_metrics` takes it in Python nemo-lens.
///
/// ```
/// use nemo_lens::instruments::rl::RlMetrics;
/// use nemo_lens::{Instruments, Meter};
///
/// let meter = Meter::noop();
/// RlMetrics::default().reward_mean(0.75).policy_loss(0.3).record(&meter);
/// ```
#[derive(Instruments, Default, Debug, Clone)]
#[instruments(crate = "nemo_lens_core")]
pub struct RlMetrics {
    /// Mean reward across rollout batch.
    #[gauge("rl.reward.mean")]
    pub reward_mean: Option<f64>,

    /// KL divergence between policy and reference.
    #[gauge("rl.kl_divergence")]
    pub kl_divergence: Option<f64>,

    /// Policy gradient loss.
    #[gauge("rl.policy_loss")]
    pub policy_loss: Option<f64>,

    /// Value function loss.
    #[gauge("rl.value_loss")]
    pub value_loss: Option<f64>,

    /// Policy entropy.
    #[gauge("rl.entropy")]
    pub entropy: Option<f64>,

    /// Mean generated response length (tokens).
    #[gauge("rl.response_length.mean")]
    pub response_length_mean: Option<f64>,

    /// Gradient norm of the policy update.
    #[gauge("rl.grad_norm")]
    pub grad_norm: Option<f64>,

    /// Current optimizer learning rate.
    #[gauge("rl.learning_rate")]
    pub learning_rate: Option<f64>,

    /// Training throughput in tokens per second.
    #[gauge("rl.throughput.tokens_per_sec", unit = "{token}/s", unit_in_name)]
    pub throughput_tokens_per_sec: Option<f64>,

    /// Duration of text generation in milliseconds.
    #[histogram("rl.generation.duration_ms", unit = "ms", unit_in_name)]
    pub generation_duration_ms: Option<f64>,

    /// Duration of rollout collection in milliseconds.
    #[histogram("rl.rollout.duration_ms", unit = "ms", unit_in_name)]
    pub rollout_duration_ms: Option<f64>,
}

/// Records `metrics` on `meter`: the Python `record_rl_metrics`.
#[inline]
pub fn record_rl_metrics(meter: &Meter, metrics: &RlMetrics) {
    metrics.record(meter);
}
