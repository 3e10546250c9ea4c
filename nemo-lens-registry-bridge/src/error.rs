//! Why a registry bridge could not be installed.

use std::fmt;

/// Why [`RegistryBridge::install`](crate::RegistryBridge::install) failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegistryBridgeError {
    /// No registry was given to the bridge.
    NoRegistry,
    /// The telemetry exports, but through a reader or push exporter of the
    /// application's own (`SetupOptions::metric_reader` or
    /// `push_exporter`), which reads only the OpenTelemetry SDK, or the
    /// meter given is not read by nemo-lens's exporters: bridged families
    /// reach nemo-lens's own exporters only.
    ForeignReader,
}

impl fmt::Display for RegistryBridgeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryBridgeError::NoRegistry => f.write_str(
                "the registry bridge was given no registry: call `.prometheus(registry)` or \
                 `.prometheus_client(registry)` before `install`",
            ),
            RegistryBridgeError::ForeignReader => f.write_str(
                "the telemetry was set up with a metric reader or push exporter of your own \
                 (SetupOptions::metric_reader or push_exporter), which reads only the \
                 OpenTelemetry SDK; set up nemo-lens's own exporters (NEMO_LENS_EXPORTER) to \
                 export bridged registries",
            ),
        }
    }
}

impl std::error::Error for RegistryBridgeError {}
