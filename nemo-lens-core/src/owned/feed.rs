//! How a push exporter gets the owned series of each export: the reporting
//! wrapper reads the registry as the export starts (in delta, what each
//! series gained since the last export) and leaves the batch where the
//! exporter's transport picks it up, once per attempt.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::InstrumentationScope;
use opentelemetry_sdk::metrics::{SdkMeterProvider, Temporality};

use super::{Delta, OwnedScope, Registry};

/// The scope of the one SDK instrument a push pipeline with owned series
/// adds: the SDK's periodic reader skips an export when the SDK itself
/// collected nothing, so this gauge keeps every export coming. Exporters
/// drop the scope; it is never sent.
pub const KEEPALIVE_SCOPE: &str = "nemo_lens.owned.keepalive";

/// Registers the keep-alive gauge on `provider`. Its callback, registered
/// before any other, also sweeps `registry`'s series: a push exporter's
/// collection runs the callbacks (which report owned counters and gauges)
/// before the exporter reads the histograms, and idle series must be gone
/// from both.
pub fn keep_exports_coming(provider: &SdkMeterProvider, registry: &Arc<Registry>) {
    let registry = Arc::downgrade(registry);
    let _gauge = provider
        .meter_with_scope(InstrumentationScope::builder(KEEPALIVE_SCOPE).build())
        .u64_observable_gauge("nemo_lens.owned.keepalive")
        .with_callback(move |observer| {
            if let Some(registry) = registry.upgrade() {
                registry.sweep_in_collection();
            }
            observer.observe(1, &[]);
        })
        .build();
}

/// The owned series of one export.
#[derive(Debug, Clone, Default)]
pub struct Batch {
    /// The series, by scope.
    pub scopes: Vec<OwnedScope>,
    /// Where the interval (delta) or the series (cumulative) started.
    pub start: Option<SystemTime>,
    /// When they were read.
    pub time: Option<SystemTime>,
    /// How the values are to be read.
    pub delta: bool,
    /// Families gathered from other libraries' registries, each series
    /// with its own start: with `delta`, counters and histograms as what
    /// they gained since the last export.
    pub gathered: Vec<super::GatheredScope>,
    /// When each series of the owned counters, up-down counters and gauges
    /// started (cumulative only): the SDK, through which they are read,
    /// gives its instrument's start to every series, and a series that
    /// ended and came back has a start of its own.
    pub scalar_starts: super::Starts,
}

/// The batch of the export under way, shared by the reporting wrapper (which
/// fills it) and the transport (which reads it on every attempt).
#[derive(Debug, Default)]
pub struct Pending(Mutex<Batch>);

impl Pending {
    /// Runs `f` on the batch of the export under way (every attempt of one
    /// export reads the same batch).
    pub fn with<R>(&self, f: impl FnOnce(&Batch) -> R) -> R {
        f(&self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    fn set(&self, batch: Batch) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = batch;
    }
}

/// Reads a registry for a push exporter of a given temporality.
#[derive(Debug)]
pub struct Feed {
    registry: Arc<Registry>,
    delta: Option<Mutex<Delta>>,
    pending: Arc<Pending>,
    /// The newest exemplar time this exporter has sent: histograms keep
    /// their exemplars across collections, and each is sent once.
    exemplars_sent: Mutex<SystemTime>,
}

impl Feed {
    /// A feed of `registry`'s series at `temporality`, and the batch an
    /// exporter reads each export.
    pub fn new(registry: Arc<Registry>, temporality: Temporality) -> (Self, Arc<Pending>) {
        let pending = Arc::new(Pending::default());
        let delta = (temporality == Temporality::Delta)
            .then(|| Mutex::new(Delta::new(registry.start_time())));
        (
            Feed {
                registry,
                delta,
                pending: Arc::clone(&pending),
                exemplars_sent: Mutex::new(SystemTime::UNIX_EPOCH),
            },
            pending,
        )
    }

    /// Leaves on each point only the exemplars this exporter has not sent.
    fn keep_new_exemplars(&self, scopes: &mut [OwnedScope]) {
        let mut sent = self
            .exemplars_sent
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let before = *sent;
        for metric in scopes.iter_mut().flat_map(|s| s.metrics.iter_mut()) {
            for exemplars in metric.exemplars_mut() {
                exemplars.retain(|e| e.time > before);
                if let Some(newest) = exemplars.iter().map(|e| e.time).max() {
                    *sent = (*sent).max(newest);
                }
            }
        }
    }

    /// Reads the registry for the export about to start, and says which
    /// instruments overflowed.
    pub fn prepare(&self) {
        self.registry.sweep();
        let read = self.registry.collect(self.delta.is_some());
        let gathered = self.registry.gather();
        // Read after both: no series starts after the time it is sent with
        // (a gathered series starts when it is first gathered).
        let now = SystemTime::now();
        let batch = match &self.delta {
            Some(delta) => {
                let mut delta = delta.lock().unwrap_or_else(PoisonError::into_inner);
                let (scopes, start) = delta.apply(read, now);
                Batch {
                    scopes,
                    start: Some(start),
                    time: Some(now),
                    delta: true,
                    gathered: delta.apply_gathered(gathered, now),
                    scalar_starts: super::Starts::new(),
                }
            }
            None => Batch {
                scopes: read,
                start: Some(self.registry.start_time()),
                time: Some(now),
                delta: false,
                gathered,
                scalar_starts: self.registry.scalar_starts(),
            },
        };
        let mut batch = batch;
        self.keep_new_exemplars(&mut batch.scopes);
        crate::overflow::note_owned(&batch.scopes);
        self.pending.set(batch);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use opentelemetry::InstrumentationScope;
    use opentelemetry_sdk::metrics::Temporality;

    use super::super::{HistogramInstrument, OwnedData, Registry};
    use super::Feed;
    use crate::exemplar::{self, ExemplarFilter, SpanIds};

    /// The exemplars of each batch's one histogram point.
    fn batch_exemplars(pending: &super::Pending) -> Vec<f64> {
        pending.with(|batch| {
            batch
                .scopes
                .iter()
                .flat_map(|s| &s.metrics)
                .flat_map(|m| match &m.data {
                    OwnedData::Explicit(points) => points.clone(),
                    OwnedData::Exponential(_) => Vec::new(),
                })
                .flat_map(|p| p.exemplars)
                .map(|e| e.value)
                .collect()
        })
    }

    #[test]
    fn each_exemplar_goes_to_an_exporter_once() {
        for temporality in [Temporality::Cumulative, Temporality::Delta] {
            let registry = Registry::with_exemplar_filter(ExemplarFilter::TraceBased);
            let scope = InstrumentationScope::builder("test").build();
            let latency = registry.instrument(&scope, "latency", || {
                Arc::new(HistogramInstrument::<f64>::new(
                    scope.clone(),
                    ("latency".into(), String::new(), "s".into()),
                    100,
                    registry.expiry().clone(),
                    || {
                        crate::cells::Histogram::with_exemplars(
                            [1.0].into(),
                            ExemplarFilter::TraceBased,
                        )
                    },
                ))
            });
            let (feed, pending) = Feed::new(Arc::clone(&registry), temporality);
            let (other, other_pending) = Feed::new(Arc::clone(&registry), temporality);
            let span = SpanIds::from_raw(1, 2);
            exemplar::in_span(Some(span), || latency.record(0.5, &[]));
            feed.prepare();
            assert_eq!(batch_exemplars(&pending), [0.5], "{temporality:?}");
            latency.record(0.7, &[]);
            feed.prepare();
            assert!(
                batch_exemplars(&pending).is_empty(),
                "{temporality:?}: sent again"
            );
            // Each exporter has its own mark.
            other.prepare();
            assert_eq!(batch_exemplars(&other_pending), [0.5], "{temporality:?}");
            std::thread::sleep(std::time::Duration::from_millis(2));
            exemplar::in_span(Some(span), || latency.record(3.0, &[]));
            feed.prepare();
            assert_eq!(batch_exemplars(&pending), [3.0], "{temporality:?}");
        }
    }
}
