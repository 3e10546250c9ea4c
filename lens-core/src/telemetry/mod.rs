//! Telemetry setup: configuration from the environment, rank selection,
//! the resource, and the exporter pipeline.

mod config;
mod env;
mod handle;
mod resource;
mod setup;
mod strategy;

pub use config::{ExporterKind, NemoLensConfig, OtlpProtocol, DEFAULT_PREFIX};
pub use env::{ConfigError, EnvLookup};
pub use handle::{ShutdownError, TelemetryHandle};
pub use resource::{K8S_ATTRIBUTES, SLURM_ATTRIBUTES};
pub use setup::{setup_telemetry, SetupError, SetupOptions};
pub use strategy::{
    register_export_strategy, sampled_rank_selected, ExportStrategy, RankContext, StrategyFn,
};
