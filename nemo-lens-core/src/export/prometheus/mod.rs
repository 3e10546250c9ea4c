//! The Prometheus exporter: a pull reader on the meter provider and what
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
//! - `families` (in `export::exposition`): a collection as metric families,
//!   named, labelled, sorted;
//! - `text` (in `export::exposition`) and `protobuf`: the two expositions;
//! - `native` (in `export::exposition`): an exponential histogram as
//!   Prometheus reads it.
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

crate::error_debug::debug_as_sentence!(PrometheusError, RenderError);

pub mod proto;
mod protobuf;

// The server-free parts live in `export::exposition`, which `testing` uses
// too; imported here so `protobuf` reads them as its siblings.
use super::exposition::{exemplars, families, native, openmetrics, text};

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::Duration;

use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::reader::MetricReader;
use opentelemetry_sdk::metrics::{InstrumentKind, ManualReader, Pipeline, Temporality};

use super::scrape_server::{Render, ScrapeServer};
// The one telemetry type the exporter reads: which resource attributes to
// label with (parsed from the environment there).
use crate::telemetry::PrometheusResourceLabels;
use families::Known;

/// Why the Prometheus exporter could not be built.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum PrometheusError {
    /// The endpoint could not be bound.
    #[error("cannot serve Prometheus metrics on {addr}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

/// The content type of the text exposition format, version 0.0.4.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
/// The content type of the protobuf exposition: length-delimited
/// `io.prometheus.client.MetricFamily` messages.
pub const PROTOBUF_CONTENT_TYPE: &str =
    "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited";

/// The content type of the OpenMetrics 1.0 text exposition.
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// An exposition format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Text, version 0.0.4: what every scraper reads; exponential
    /// histograms as classic buckets; no exemplars (a 0.0.4 parser fails
    /// the whole scrape on one).
    Text,
    /// OpenMetrics 1.0 text, what Prometheus asks for first: the text
    /// exposition with exemplars on histogram buckets.
    OpenMetrics,
    /// Protobuf: native histograms; what Prometheus asks for with
    /// `--enable-feature=native-histograms`.
    Protobuf,
}

impl Format {
    /// The format to answer a request with `Accept: accept`: the one the
    /// scraper weighs highest (`q`, 1 when absent; the earlier entry on a
    /// tie). Protobuf is the delimited `io.prometheus.client.MetricFamily`
    /// media type; OpenMetrics is `application/openmetrics-text` of version
    /// 1.0.0 (or none given); text answers `text/plain`, `text/*` and
    /// `*/*`. No header, or none listed with a non-zero weight, is text.
    pub fn negotiate(accept: Option<&str>) -> Format {
        let Some(accept) = accept else {
            return Format::Text;
        };
        // (weight, position) of the best entry of each format.
        let mut protobuf: Option<(f64, usize)> = None;
        let mut openmetrics: Option<(f64, usize)> = None;
        let mut text: Option<(f64, usize)> = None;
        for (position, entry) in accept.split(',').enumerate() {
            let mut parts = entry.split(';').map(str::trim);
            let media = parts.next().unwrap_or_default().to_ascii_lowercase();
            let (mut proto, mut delimited, mut weight) = (false, false, 1.0);
            let mut version_1 = true;
            for parameter in parts {
                let Some((key, value)) = parameter.split_once('=') else {
                    continue;
                };
                let value = value.trim().trim_matches('"');
                match key.trim().to_ascii_lowercase().as_str() {
                    "proto" => proto = value == "io.prometheus.client.MetricFamily",
                    "encoding" => delimited = value == "delimited",
                    "q" => weight = value.parse().unwrap_or(0.0),
                    "version" => version_1 = value == "1.0.0",
                    _ => {}
                }
            }
            if weight <= 0.0 {
                continue;
            }
            let best = match media.as_str() {
                "application/vnd.google.protobuf" if proto && delimited => &mut protobuf,
                "application/openmetrics-text" if version_1 => &mut openmetrics,
                "text/plain" | "text/*" | "*/*" => &mut text,
                _ => continue,
            };
            if best.is_none_or(|(w, _)| weight > w) {
                *best = Some((weight, position));
            }
        }
        // Highest weight, then earliest; text when nothing was listed.
        [
            (protobuf, Format::Protobuf),
            (openmetrics, Format::OpenMetrics),
            (text, Format::Text),
        ]
        .into_iter()
        .filter_map(|(best, format)| best.map(|(weight, at)| (weight, at, format)))
        .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)))
        .map_or(Format::Text, |(_, _, format)| format)
    }

    /// The `Content-Type` of an exposition in this format.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Text => CONTENT_TYPE,
            Format::OpenMetrics => OPENMETRICS_CONTENT_TYPE,
            Format::Protobuf => PROTOBUF_CONTENT_TYPE,
        }
    }
}

/// A rendered scrape: the body and the `Content-Type` to send it with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exposition {
    /// [`CONTENT_TYPE`], [`OPENMETRICS_CONTENT_TYPE`] or
    /// [`PROTOBUF_CONTENT_TYPE`].
    pub content_type: &'static str,
    /// The exposition.
    pub body: Vec<u8>,
}

/// Why a scrape could not be rendered: telemetry is off (answer 503,
/// [`is_telemetry_off`](Self::is_telemetry_off)), or collecting failed
/// (answer 500).
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[error(transparent)]
pub struct RenderError(RenderFailure);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum RenderFailure {
    #[error(
        "telemetry is off: this renderer's reader is not installed on a meter provider \
         (NEMO_LENS_ENABLED is not true, NEMO_LENS_METRICS_ENABLED or OTEL_SDK_DISABLED \
         switched metrics off, or this rank does not export), so nothing is recorded to serve"
    )]
    NotInstalled,
    #[error("telemetry was shut down: nothing is recorded to serve")]
    ShutDown,
    #[error("rendering Prometheus metrics failed: {0}")]
    Collect(String),
}

impl RenderError {
    /// Whether nothing is rendered because telemetry is off or was shut
    /// down (its reader is on no running provider), rather than because
    /// collecting failed: a `/metrics` route answers 503 then.
    pub fn is_telemetry_off(&self) -> bool {
        matches!(
            self.0,
            RenderFailure::NotInstalled | RenderFailure::ShutDown
        )
    }
}

/// Where a [`PrometheusReader`] is in its life, for the renderer's error.
#[derive(Debug, Default)]
struct ReaderState(AtomicU8);

impl ReaderState {
    const NOT_INSTALLED: u8 = 0;
    const INSTALLED: u8 = 1;
    const SHUT_DOWN: u8 = 2;

    fn set(&self, state: u8) {
        self.0.store(state, Ordering::Release);
    }

    fn check(&self) -> Result<(), RenderError> {
        match self.0.load(Ordering::Acquire) {
            Self::NOT_INSTALLED => Err(RenderError(RenderFailure::NotInstalled)),
            Self::SHUT_DOWN => Err(RenderError(RenderFailure::ShutDown)),
            _ => Ok(()),
        }
    }
}

/// Renders what a [`PrometheusReader`] collects, for mounting `GET /metrics`
/// on an application's own router (axum, hyper, actix, ...). Cheap to
/// clone; each render collects from the meter provider.
#[derive(Clone)]
pub struct PrometheusRenderer {
    reader: Arc<ManualReader>,
    state: Arc<ReaderState>,
    resource_labels: PrometheusResourceLabels,
    known: Arc<Mutex<Known>>,
    /// The owned series of the provider `setup_telemetry` built, read at
    /// the same scrape: set by setup, also when the reader was handed to it
    /// with `SetupOptions::metric_reader`.
    registry: RegistrySlot,
}

/// Where setup puts the registry of the provider a reader is installed on.
pub(crate) type RegistrySlot = Arc<OnceLock<Arc<crate::owned::Registry>>>;

impl PrometheusReader {
    /// Where setup puts the registry of the provider this reader is on.
    pub(crate) fn registry_slot(&self) -> RegistrySlot {
        Arc::clone(&self.registry)
    }
}

impl std::fmt::Debug for PrometheusRenderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrometheusRenderer")
            .field("resource_labels", &self.resource_labels)
            .finish_non_exhaustive()
    }
}

impl PrometheusRenderer {
    /// A reader to install on the meter provider (for example with
    /// [`SetupOptions::metric_reader`](crate::telemetry::SetupOptions::metric_reader),
    /// which keeps the resource, the rank selection and shutdown of
    /// `setup_telemetry`) and the renderer of what it collects, with the
    /// resource attributes `resource_labels` selects as labels on every
    /// series.
    pub fn new(
        resource_labels: &PrometheusResourceLabels,
    ) -> Result<(PrometheusReader, PrometheusRenderer), PrometheusError> {
        let reader = Arc::new(
            ManualReader::builder()
                .with_temporality(Temporality::Cumulative)
                .build(),
        );
        let state = Arc::new(ReaderState::default());
        let registry = RegistrySlot::default();
        let renderer = PrometheusRenderer {
            reader: Arc::clone(&reader),
            state: Arc::clone(&state),
            resource_labels: resource_labels.clone(),
            known: Arc::default(),
            registry: Arc::clone(&registry),
        };
        Ok((
            PrometheusReader {
                reader,
                state,
                registry,
            },
            renderer,
        ))
    }

    /// The current exposition in the text format.
    pub fn render(&self) -> Result<Exposition, RenderError> {
        self.render_as(Format::Text)
    }

    /// The current exposition in the format a request with `Accept: accept`
    /// asks for ([`Format::negotiate`]): native histograms for a Prometheus
    /// that reads them, OpenMetrics (with exemplars) for one that does not,
    /// text for everyone else.
    pub fn render_for(&self, accept: Option<&str>) -> Result<Exposition, RenderError> {
        self.render_as(Format::negotiate(accept))
    }

    /// The current exposition in `format`.
    pub fn render_as(&self, format: Format) -> Result<Exposition, RenderError> {
        self.state.check()?;
        if let Some(registry) = self.registry.get() {
            registry.sweep();
        }
        let mut collected = ResourceMetrics::default();
        self.reader
            .collect(&mut collected)
            .map_err(|e| RenderError(RenderFailure::Collect(e.to_string())))?;
        let owned = self
            .registry
            .get()
            .map(|registry| registry.collect(false))
            .unwrap_or_default();
        let gathered = self
            .registry
            .get()
            .map(|registry| match format {
                Format::Text => registry.gather_for_text(),
                Format::OpenMetrics | Format::Protobuf => registry.gather(),
            })
            .unwrap_or_default();
        crate::export::overflow::note(&collected);
        crate::export::overflow::note_owned(&owned);
        let families = {
            let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
            families::families(
                &collected,
                &owned,
                gathered,
                &self.resource_labels,
                &mut known,
            )
        };
        let body = match format {
            Format::Text => text::encode(&families),
            Format::OpenMetrics => openmetrics::encode(&families),
            Format::Protobuf => protobuf::encode(&families),
        };
        Ok(Exposition {
            content_type: format.content_type(),
            body,
        })
    }
}

/// The pull reader behind a [`PrometheusRenderer`]: install it on the meter
/// provider; it collects when the renderer renders.
#[derive(Debug)]
pub struct PrometheusReader {
    reader: Arc<ManualReader>,
    registry: RegistrySlot,
    state: Arc<ReaderState>,
}

impl MetricReader for PrometheusReader {
    fn register_pipeline(&self, pipeline: Weak<Pipeline>) {
        self.reader.register_pipeline(pipeline);
        self.state.set(ReaderState::INSTALLED);
    }

    fn collect(&self, rm: &mut ResourceMetrics) -> OTelSdkResult {
        self.reader.collect(rm)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.reader.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.state.set(ReaderState::SHUT_DOWN);
        self.reader.shutdown_with_timeout(timeout)
    }

    fn temporality(&self, _kind: InstrumentKind) -> Temporality {
        Temporality::Cumulative
    }
}

/// The pull reader to install on the provider and the server that exposes it.
pub(crate) fn build(
    addr: SocketAddr,
    resource_labels: &PrometheusResourceLabels,
    registry: Arc<crate::owned::Registry>,
) -> Result<(PrometheusReader, ScrapeServer), PrometheusError> {
    let (reader, renderer) = PrometheusRenderer::new(resource_labels)?;
    let _ = reader.registry.set(registry);
    let render: Render = Arc::new(move |accept: Option<&str>| {
        renderer
            .render_for(accept)
            .map(|e| (e.content_type, e.body))
            .map_err(|e| e.to_string())
    });
    let server = ScrapeServer::start(addr, render)
        .map_err(|source| PrometheusError::Bind { addr, source })?;
    Ok((reader, server))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prometheus_gets_protobuf_with_native_histograms_openmetrics_without_and_others_text() {
        // The Accept headers Prometheus 2.42 sends with and without
        // --enable-feature=native-histograms.
        let native = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;\
                      encoding=delimited,application/openmetrics-text;version=1.0.0;q=0.8,\
                      application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;\
                      q=0.5,*/*;q=0.1";
        let classic = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;\
                       version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(Format::negotiate(Some(native)), Format::Protobuf);
        assert_eq!(Format::negotiate(Some(classic)), Format::OpenMetrics);
        // OpenMetrics of another version, or weighed below text, is not chosen.
        let old = "application/openmetrics-text;version=0.0.1,text/plain;q=0.5";
        assert_eq!(Format::negotiate(Some(old)), Format::Text);
        let lighter = "application/openmetrics-text;q=0.2,text/plain;q=0.5";
        assert_eq!(Format::negotiate(Some(lighter)), Format::Text);
        assert_eq!(
            Format::negotiate(Some("application/openmetrics-text")),
            Format::OpenMetrics
        );
        assert_eq!(Format::negotiate(None), Format::Text);
        assert_eq!(Format::negotiate(Some("*/*")), Format::Text);
        // The higher weight wins, whatever the order.
        let text_first = "text/plain;version=0.0.4;q=0.6,\
                          application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;\
                          encoding=delimited;q=0.5";
        assert_eq!(Format::negotiate(Some(text_first)), Format::Text);
        let proto_heavier = "text/plain;q=0.4,application/vnd.google.protobuf;\
                             proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.9";
        assert_eq!(Format::negotiate(Some(proto_heavier)), Format::Protobuf);
        // Another protobuf, a text encoding, or a zero weight is not ours.
        for other in [
            "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=text",
            "application/vnd.google.protobuf;proto=other.Message;encoding=delimited",
            "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0",
        ] {
            assert_eq!(Format::negotiate(Some(other)), Format::Text, "{other}");
        }
    }
}
