//! Setup of [nemo-lens](https://crates.io/crates/nemo-lens): configuration
//! from the environment, rank selection, the resource, and the exporter
//! pipeline (`setup_telemetry`), with the console exporter and the report
//! of export failures.
//!
//! The layer above the model (`nemo-lens-core`) and the exporters
//! (`nemo-lens-prometheus`, `nemo-lens-otlp`, each behind the feature of
//! the same name): setup reads the configuration, builds the exporters it
//! names and hands the meter they read to the program.
//!
//! Depend on the `nemo-lens` facade crate rather than on this one; its
//! `nemo_lens::telemetry` module is [`telemetry`] here.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

#[cfg(feature = "console")]
#[cfg_attr(docsrs, doc(cfg(feature = "console")))]
pub mod console;
mod exporter_error;
#[cfg_attr(not(any(feature = "otlp", feature = "console")), allow(dead_code))]
mod report;
pub mod telemetry;

#[doc(hidden)]
pub mod __internal;

pub use exporter_error::ExporterError;
pub use telemetry::{
    register_export_strategy, setup_telemetry, setup_telemetry_from_launcher, ConfigError,
    EnvLookup, ExportStrategy, ExporterKind, JobRank, NemoLensConfig, OtlpProtocol,
    PrometheusResourceLabels, RankContext, SetupError, SetupOptions, ShutdownError,
    TelemetryHandle,
};
