//! A `prometheus-client` 0.26 registry as a source: what its Prometheus
//! text encoder (format 0.0.4) writes, copied as it is into text scrapes
//! and read back for protobuf scrapes and OTLP. The registry offers no
//! other way to read its values without `protoc` at build time, and this
//! one yields exactly the names, types, HELP and labels its own endpoint
//! serves.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use nemo_lens_core::__internal::warnings::{emit, Warning};
use nemo_lens_core::owned::{Gather, GatheredFamily};
use opentelemetry::InstrumentationScope;
use prometheus_client::registry::Registry;

pub(crate) struct ClientSource {
    registry: Arc<Registry>,
    scope: InstrumentationScope,
    /// The last text's length: the next one is sized once.
    last_len: AtomicUsize,
}

impl ClientSource {
    pub(crate) fn new(registry: Arc<Registry>) -> Self {
        ClientSource {
            registry,
            scope: crate::scope::next("prometheus-client", "0.26"),
            last_len: AtomicUsize::new(0),
        }
    }
}

impl Gather for ClientSource {
    fn scope(&self) -> &InstrumentationScope {
        &self.scope
    }

    fn gather(&self) -> Vec<GatheredFamily> {
        self.text()
            .map(|text| crate::text::parse(&text))
            .unwrap_or_default()
    }

    fn text(&self) -> Option<String> {
        let mut text = String::with_capacity(self.last_len.load(Ordering::Relaxed));
        // Fails only when a label set's own `EncodeLabelSet` does; the
        // encoder then writes nothing, so this collection has none of the
        // registry's families, and says so.
        if let Err(error) =
            prometheus_client::encoding::prometheus_text::encode(&mut text, &self.registry)
        {
            emit(Warning::Export, || {
                tracing::warn!(
                    target: "nemo_lens",
                    "a prometheus-client registry could not be encoded ({error}): a label set's \
                     `EncodeLabelSet` failed, so this scrape or export has none of its families"
                )
            });
            return None;
        }
        self.last_len.store(text.len(), Ordering::Relaxed);
        Some(text)
    }
}
