//! The one error type of the bridge.

use std::fmt;

use super::Matcher;

/// Why a [`MetricsBridge`](super::MetricsBridge) could not be configured or
/// installed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum BridgeError {
    /// Bucket boundaries that are empty, not finite or not strictly
    /// increasing.
    InvalidBuckets {
        /// The matcher they were given for; `None` for
        /// [`set_buckets`](super::MetricsBridge::set_buckets).
        matcher: Option<Matcher>,
        /// What is wrong with them.
        reason: String,
    },
    /// A summary setting that cannot be used.
    InvalidSummary {
        /// What is wrong with it.
        reason: String,
    },
    /// The `metrics` crate already has a global recorder (it takes one per
    /// process).
    RecorderAlreadySet {
        /// The `metrics` version whose global recorder was taken.
        metrics_version: &'static str,
    },
}

impl fmt::Display for BridgeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BridgeError::InvalidBuckets {
                matcher: Some(matcher),
                reason,
            } => write!(f, "invalid histogram buckets for {matcher:?}: {reason}"),
            BridgeError::InvalidBuckets {
                matcher: None,
                reason,
            } => write!(f, "invalid default histogram buckets: {reason}"),
            BridgeError::InvalidSummary { reason } => {
                write!(f, "invalid summary setting: {reason}")
            }
            BridgeError::RecorderAlreadySet { metrics_version } => write!(
                f,
                "cannot install the nemo-lens metrics bridge: a global recorder of `metrics` \
                 {metrics_version} is already installed in this process (there can be one; \
                 use `build` and `metrics_util::layers::FanoutBuilder` to run two)"
            ),
        }
    }
}

impl std::error::Error for BridgeError {}
