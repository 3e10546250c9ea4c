//! The fixed value sets of gym attributes, as enums: a misspelled value does
//! not compile, and the number of series stays bounded.

use lens_core::{AttributeValue, KeyPart};
use opentelemetry::Value;

/// Implements `as_str`, `Display` and [`AttributeValue`] from one table of
/// variants and their wire values, so the two cannot drift apart.
macro_rules! wire_enum {
    ($name:ident { $($(#[$doc:meta])* $variant:ident => $wire:literal),* $(,)? }) => {
        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            /// The value as exported.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $wire),*
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl AttributeValue for $name {
            #[inline]
            fn key_part(&self) -> Option<KeyPart<'_>> {
                Some(KeyPart::Str(self.as_str()))
            }

            fn to_value(&self) -> Option<Value> {
                Some(Value::from(self.as_str()))
            }
        }
    };
}

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
