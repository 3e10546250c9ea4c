//! The fixed value sets of gym attributes, as enums: a misspelled value does
//! not compile, and the number of series stays bounded.

use crate::wire_enum::wire_enum;

/// How a rollout ended (`nemo.gym.rollout.outcome`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RolloutOutcome {
    /// The rollout completed and was scored.
    Success,
    /// The rollout failed (environment error, timeout, crash).
    Failure,
}

wire_enum!(RolloutOutcome {
    Success => "success",
    Failure => "failure",
});

/// Why an outbound HTTP request was retried (`nemo.gym.http.retry_reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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

wire_enum!(RetryReason {
    ServerDisconnected => "server_disconnected",
    ClientOsError => "client_os_error",
    Timeout => "timeout",
    Other => "other",
});
