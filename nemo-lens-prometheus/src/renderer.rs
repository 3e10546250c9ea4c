//! What renders a [`PrometheusReader`]'s collections: the built-in scrape
//! server, or a `GET /metrics` route of your own.

use std::sync::{Arc, Mutex, PoisonError};

use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::reader::MetricReader;
use opentelemetry_sdk::metrics::{ManualReader, Temporality};

use nemo_lens_core::__internal::overflow;
use nemo_lens_core::PrometheusResourceLabels;

use crate::error::PrometheusError;
use crate::exposition::families::{self, Known};
use crate::exposition::text;
use crate::format::{Exposition, Format};
use crate::protobuf;
use crate::reader::{PrometheusReader, ReaderState, RegistrySlot};

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

impl std::fmt::Debug for PrometheusRenderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrometheusRenderer")
            .field("resource_labels", &self.resource_labels)
            .finish_non_exhaustive()
    }
}

impl PrometheusRenderer {
    /// A reader to install on the meter provider (for example with
    /// [`SetupOptions::metric_reader`](https://docs.rs/nemo-lens/latest/nemo_lens/telemetry/struct.SetupOptions.html#method.metric_reader),
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

    /// The current exposition in the text format 0.0.4, whatever a scraper
    /// asks for: it never carries exemplars (only OpenMetrics does) nor
    /// native histograms. A `/metrics` route answers with
    /// [`render_for`](Self::render_for) and the request's `Accept` header
    /// instead, as the exporters guide's snippet does; this is for a dump
    /// to a file or a log.
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
        match self.state.get() {
            ReaderState::NOT_INSTALLED => return Err(RenderError(RenderFailure::NotInstalled)),
            ReaderState::SHUT_DOWN => return Err(RenderError(RenderFailure::ShutDown)),
            _ => {}
        }
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
        overflow::note(&collected);
        overflow::note_owned(&owned);
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
            Format::OpenMetrics => text::encode_openmetrics(&families),
            Format::Protobuf => protobuf::encode(&families),
        };
        Ok(Exposition {
            content_type: format.content_type(),
            body,
        })
    }
}

nemo_lens_core::__debug_as_sentence!(RenderError);
