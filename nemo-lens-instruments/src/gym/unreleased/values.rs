//! The fixed value sets of the unreleased instruments' attributes.

use nemo_lens_macros::AttributeValue;

/// How a rollout ended (`nemo.gym.rollout.outcome`).
#[derive(AttributeValue, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[attribute_value(crate = "::nemo_lens_core", rename_all = "snake_case")]
pub enum RolloutOutcome {
    /// The rollout completed and was scored.
    Success,
    /// The rollout failed (environment error, timeout, crash).
    Failure,
}

/// Why an outbound HTTP request was retried (`nemo.gym.http.retry_reason`).
#[derive(AttributeValue, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[attribute_value(crate = "::nemo_lens_core", rename_all = "snake_case")]
pub enum RetryReason {
    /// The server closed the connection.
    ServerDisconnected,
    /// The client's operating system reported an error (reset, refused).
    ClientOsError,
    /// The request timed out.
    Timeout,
    /// Anything else.
    Other,
}
