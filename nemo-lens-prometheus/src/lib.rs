//! The Prometheus exporter of [nemo-lens](https://crates.io/crates/nemo-lens):
//! a pull reader on the meter provider and what
//! renders its collections, served by the built-in scrape server or by
//! [`PrometheusRenderer`] on an HTTP server of your own.
//!
//! It names and labels series as `opentelemetry-prometheus` 0.33 does (unit
//! suffixes such as `_milliseconds`, `_total` on counters, `target_info`,
//! `otel_scope_*` labels), which Python's exporter and the dashboards
//! built on it agree with, and it does what that crate cannot (its issue
//! #3591): exponential histograms, served as native histograms in the
//! protobuf exposition to a scraper that asks for it, and as classic
//! buckets at powers of two in the text format.
//!
//! - `exposition::families`: a collection as metric families, named,
//!   labelled, sorted;
//! - `exposition::text` (text and OpenMetrics) and `protobuf`: the
//!   expositions;
//! - `exposition::native`: an exponential histogram as Prometheus reads it;
//! - `reader` and `renderer`: the pull reader on the provider and what
//!   renders its collections; `endpoint` and `scrape_server`: the built-in
//!   endpoint;
//! - `testing` (feature `testing`): a capture that reads values back, and
//!   the exposition for snapshots, without the server.
//!
//! Depend on the `nemo-lens` facade crate (features `prometheus`,
//! `testing`) rather than on this one; its `nemo_lens::prometheus` module
//! re-exports what users name. Without either feature this crate is the
//! exposition only: no hyper, tokio or prost.
//!
//! ```
//! use nemo_lens::opentelemetry::metrics::MeterProvider as _;
//! use nemo_lens::opentelemetry_sdk::metrics::SdkMeterProvider;
//! use nemo_lens::prometheus::PrometheusRenderer;
//! use nemo_lens::telemetry::PrometheusResourceLabels;
//!
//! let (reader, renderer) = PrometheusRenderer::new(&PrometheusResourceLabels::default())?;
//! let provider = SdkMeterProvider::builder().with_reader(reader).build();
//! provider.meter("app").u64_counter("app.requests").build().add(1, &[]);
//! // In a `GET /metrics` handler, with the request's `Accept` header:
//! let exposition = renderer.render_for(None)?;
//! assert_eq!(exposition.content_type, "text/plain; version=0.0.4; charset=utf-8");
//! assert!(String::from_utf8(exposition.body)?.contains("app_requests_total{"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

// Shared by the exporter and `testing`'s capture; the protobuf parts of
// `native` serve only the exporter.
#[cfg(feature = "prometheus")]
mod endpoint;
#[cfg(feature = "prometheus")]
mod error;
#[cfg_attr(not(feature = "prometheus"), allow(dead_code))]
mod exposition;
#[cfg(feature = "prometheus")]
mod format;
#[cfg(feature = "prometheus")]
pub mod proto;
#[cfg(feature = "prometheus")]
mod protobuf;
#[cfg(feature = "prometheus")]
mod reader;
#[cfg(feature = "prometheus")]
mod renderer;
#[cfg(feature = "prometheus")]
mod scrape_server;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;
#[cfg(feature = "web-config")]
#[cfg_attr(docsrs, doc(cfg(feature = "web-config")))]
pub mod web_config;

#[cfg(feature = "prometheus")]
pub use endpoint::serve;
#[cfg(feature = "web-config")]
pub use endpoint::serve_with_web_config;
#[cfg(feature = "prometheus")]
pub use error::PrometheusError;
#[cfg(feature = "prometheus")]
pub use format::{
    Exposition, Format, CONTENT_TYPE, OPENMETRICS_CONTENT_TYPE, PROTOBUF_CONTENT_TYPE,
};
#[cfg(feature = "prometheus")]
pub use reader::{registry_slot, PrometheusReader, RegistrySlot};
#[cfg(feature = "prometheus")]
pub use renderer::{PrometheusRenderer, RenderError};
#[cfg(feature = "prometheus")]
pub use scrape_server::ScrapeServer;
