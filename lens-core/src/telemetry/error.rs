//! Why telemetry could not be set up.

use std::net::SocketAddr;

use super::env::ConfigError;
use crate::export::ExporterError;

/// Why telemetry could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// A configuration value was invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Telemetry was already set up in this process.
    #[error(
        "nemo-lens telemetry is already set up in this process; call \
         SetupOptions::allow_reinit(true) to replace it"
    )]
    AlreadyInitialized,
    /// `rank` is not below `world_size`, or `world_size` is 0.
    #[error("rank {rank} is not valid for world size {world_size}")]
    InvalidRank {
        /// The rank given.
        rank: u32,
        /// The world size given.
        world_size: u32,
    },
    /// The configured exporter was compiled out.
    #[error(
        "exporter {exporter:?} (NEMO_LENS_EXPORTER) needs the `{feature}` cargo feature of nemo-lens"
    )]
    FeatureDisabled {
        /// The exporter asked for.
        exporter: &'static str,
        /// The feature that provides it.
        feature: &'static str,
    },
    /// The Prometheus endpoint could not be bound.
    #[error("cannot serve Prometheus metrics on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The exporter could not be built; `source()` gives the cause.
    #[error(transparent)]
    Exporter(#[from] ExporterError),
    /// Boundaries given to
    /// [`SetupOptions::histogram_boundaries`](super::SetupOptions::histogram_boundaries)
    /// are unusable.
    #[error("invalid bucket boundaries for histogram `{instrument}`: {reason}")]
    InvalidBoundaries {
        /// The instrument whose boundaries were given.
        instrument: String,
        /// What is wrong with them.
        reason: String,
    },
}
