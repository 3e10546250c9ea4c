//! Why telemetry could not be set up.

use std::net::SocketAddr;

use super::env::ConfigError;
use super::launcher::LauncherError;
use crate::ExporterError;

/// Why telemetry could not be set up.
///
/// `Display` says what failed and what to do; the causes behind it come
/// from `source()` (never both, so chain printers show each once), and
/// `Debug` prints the message with its causes, so `fn main() -> Result<..>`
/// shows the same sentence rather than a struct.
#[derive(thiserror::Error)]
pub enum SetupError {
    /// A configuration value was invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The rank was asked of the launcher, and its variables are missing or
    /// invalid.
    #[error(transparent)]
    Launcher(#[from] LauncherError),
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
    /// A setting needs a cargo feature this build lacks: refused rather than
    /// ignored (a web configuration ignored would serve in the clear).
    #[error("{setting} needs the `{feature}` cargo feature of nemo-lens")]
    FeatureMissing {
        /// The setting, as the user wrote it.
        setting: String,
        /// The feature to turn on.
        feature: &'static str,
    },
    /// The Prometheus endpoint could not be bound.
    #[error("cannot serve Prometheus metrics on {addr}{}", bind_hint(error))]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The operating system's error.
        #[source]
        error: std::io::Error,
    },
    /// The exporter could not be built; `source()` gives the cause.
    #[error(transparent)]
    Exporter(#[from] ExporterError),
    /// Two options of [`SetupOptions`](super::SetupOptions) were given
    /// where one makes the other meaningless: refused rather than one of
    /// them silently ignored.
    #[error("SetupOptions::{option} has no effect with SetupOptions::{with}: {reason}")]
    UnusedOption {
        /// The option that would be ignored.
        option: &'static str,
        /// The option that makes it meaningless.
        with: &'static str,
        /// Why, and what to do instead.
        reason: &'static str,
    },
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

/// What to do about a port that cannot be bound.
fn bind_hint(error: &std::io::Error) -> &'static str {
    match error.kind() {
        std::io::ErrorKind::AddrInUse => {
            ": the port is in use (another process, or another rank on this host); set \
             OTEL_EXPORTER_PROMETHEUS_PORT to a free port, or 0 for any, or \
             NEMO_LENS_PROMETHEUS_PORT_PER_LOCAL_RANK=true for one port per rank on this host"
        }
        std::io::ErrorKind::PermissionDenied => {
            ": permission denied; set OTEL_EXPORTER_PROMETHEUS_PORT to a port above 1023"
        }
        std::io::ErrorKind::AddrNotAvailable => {
            ": no such address on this host; set OTEL_EXPORTER_PROMETHEUS_HOST to one of its \
             addresses, such as 127.0.0.1"
        }
        _ => "",
    }
}

nemo_lens_core::__debug_as_sentence!(SetupError);
