//! What configuration means, below the layer that reads it: where values
//! come from ([`EnvLookup`]) and what a bad one says ([`ConfigError`]), and
//! the settings that exporters and built-in sets read as well as setup
//! (which resource attributes label Prometheus series, the OTLP transport,
//! which GPUs are visible). Setup (`nemo-lens-telemetry`) reads them from
//! the environment; they live here so that its readers need not depend on
//! it.

mod env;
mod otlp_protocol;
mod resource_labels;
pub(crate) mod visible_gpus;

pub use env::{ConfigError, EnvLookup};
pub use otlp_protocol::OtlpProtocol;
pub use resource_labels::{PrometheusResourceLabels, DEFAULT_RESOURCE_LABEL_KEYS};
pub use visible_gpus::{visible_gpus, GpuId};
