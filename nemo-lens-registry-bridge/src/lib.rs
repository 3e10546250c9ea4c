//! Exports the registries of the [`prometheus`](https://docs.rs/prometheus)
//! crate (0.14, feature `prometheus-crate-bridge`) and of
//! [`prometheus-client`](https://docs.rs/prometheus-client) (0.26, feature
//! `prometheus-client-bridge`) through nemo-lens, for services written
//! against them (NVIDIA Dynamo's runtime and frontend among them).
//!
//! Migrating keeps every call site and every dashboard: register metrics as
//! before, then give the registry to a [`RegistryBridge`] and
//! [`install`](RegistryBridge::install) it on the
//! [`TelemetryHandle`](nemo_lens_telemetry::TelemetryHandle) of
//! [`setup_telemetry`](nemo_lens_telemetry::setup_telemetry), in place of serving
//! the registry yourself. The registry is gathered at each scrape and each
//! export, on the exporter's thread, never on the application's recording
//! path.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use nemo_lens::registry_bridge::RegistryBridge;
//! use nemo_lens::{EnvLookup, NemoLensConfig, SetupOptions};
//! use prometheus::{IntCounterVec, Opts, Registry};
//!
//! // The service's metrics, as they were.
//! let registry = Registry::new();
//! let requests = IntCounterVec::new(
//!     Opts::new("dynamo_frontend_requests_total", "Total LLM requests processed"),
//!     &["model", "endpoint", "request_type", "status"],
//! )?;
//! registry.register(Box::new(requests.clone()))?;
//!
//! // nemo-lens exports it: a Prometheus endpoint on 127.0.0.1 (a free port here).
//! let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs([
//!     ("NEMO_LENS_ENABLED", "true"),
//!     ("NEMO_LENS_EXPORTER", "prometheus"),
//!     ("OTEL_EXPORTER_PROMETHEUS_PORT", "0"),
//! ]))?;
//! let telemetry = SetupOptions::new().setup(&config, 0, 1)?;
//! RegistryBridge::new().prometheus(registry).install(&telemetry)?;
//!
//! requests
//!     .with_label_values(&["llama", "chat_completions", "stream", "success"])
//!     .inc();
//! # Ok(())
//! # }
//! ```
//!
//! # On nemo-lens's Prometheus endpoint
//!
//! Text and protobuf scrapes carry each family with the name, type, HELP,
//! labels and values the crate's own encoder writes (`prometheus`'s
//! `TextEncoder`, `prometheus-client`'s `prometheus_text::encode`: a
//! counter registered as `requests` is `requests_total`, an info family
//! `build_info` a gauge of 1). What differs from serving the registry
//! directly, and why:
//!
//! - Every series also carries nemo-lens's resource labels
//!   (`NEMO_LENS_PROMETHEUS_RESOURCE_LABELS`) and the endpoint has
//!   `target_info`, as on every nemo-lens endpoint, so the series join the
//!   same dashboards as nemo-lens's own. A label the series already has
//!   keeps the registry's value.
//! - Families are sorted by name among nemo-lens's own. The `prometheus`
//!   crate's series are sorted by their label values and an empty HELP is
//!   left out, as for nemo-lens's own families; a text scrape copies a
//!   `prometheus-client` family's lines as the crate wrote them (its series
//!   order, its empty HELP), since writing them again would cost twice the
//!   crate's own encoding. Prometheus reads them the same either way.
//! - A family with more label sets than `NEMO_LENS_CARDINALITY_LIMIT` keeps
//!   the first ones seen, merges the rest into one series labelled
//!   `otel_metric_overflow="true"` (counts and values added up) and is
//!   warned about once, as every nemo-lens instrument is: a runaway label
//!   cannot grow the scrape without bound.
//! - A name that a nemo-lens instrument already exports with another type
//!   keeps the first type and is warned about once, because Prometheus
//!   refuses a scrape with two types for one name.
//! - An untyped family (a `prometheus` collector of your own can make one)
//!   is served as `untyped`; the crate's own `TextEncoder` panics on it.
//! - `prometheus-client`'s exemplars and native histograms are not carried:
//!   its Prometheus text encoder, which the bridge reads, writes neither.
//! - The endpoint is nemo-lens's: bound where `OTEL_EXPORTER_PROMETHEUS_HOST`
//!   and `_PORT` say (loopback by default), plain HTTP, with its request
//!   limits and the protobuf format a Prometheus with native histograms asks
//!   for.
//!
//! # Over OTLP
//!
//! Each registry goes out under an instrumentation scope of its own
//! (`nemo_lens.registry_bridge`, with attributes naming the library and
//! numbering the registry):
//!
//! - counters as monotonic cumulative sums, gauges and untyped families as
//!   gauges;
//! - histograms as cumulative explicit-bucket histograms: the Prometheus
//!   buckets de-cumulated, what `+Inf` adds as the overflow bucket;
//! - summaries as OTLP summary points, quantiles kept;
//! - names made legal as the metrics bridge makes them (`:` becomes `.`; a
//!   name not starting with a letter gets `m-` in front); the name keeps
//!   its `_total`, so a collector's Prometheus exporter writes it back
//!   unchanged;
//! - cumulative whatever `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`
//!   says, since a registry keeps running totals only; each series' start
//!   time is when nemo-lens first gathered it, and does not move;
//! - no unit: neither crate states one apart from the name's suffix.
//!
//! The console exporter writes them the same way, in each export's JSON
//! line.

#![cfg_attr(docsrs, feature(doc_cfg))]

mod bridge;
mod error;
#[cfg(feature = "prometheus-client")]
mod prometheus_client_source;
#[cfg(feature = "prometheus")]
mod prometheus_crate;
mod scope;
#[cfg(any(feature = "prometheus", feature = "prometheus-client"))]
mod text;

pub use bridge::RegistryBridge;
pub use error::RegistryBridgeError;
pub use scope::{LIBRARY_ATTRIBUTE, REGISTRY_ATTRIBUTE, SCOPE};
