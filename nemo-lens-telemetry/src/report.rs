//! Export failures reported while they happen: a wrapper around a push
//! exporter that logs each failure through `tracing` (rate-limited), logs
//! the recovery once, and counts failures for the program to read.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::metrics::Temporality;

/// At most one failure warning per this interval; the ones in between are
/// counted and the count is given with the next warning.
pub(crate) const WARN_EVERY: Duration = Duration::from_secs(10);

/// Export outcomes of one pipeline, shared by the exporter and the handle.
#[derive(Debug)]
pub(crate) struct ExportReport {
    /// Where exports go, for messages (`http://collector:4317`, `stdout`).
    endpoint: String,
    failed: AtomicU64,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    last_warning: Option<Instant>,
    suppressed: u64,
    /// Failures since the last success, when the last export failed.
    failing: u64,
    last_error: Option<String>,
    /// What the transport said about the latest failed attempt, when the
    /// exporter's own error drops it.
    cause: Option<String>,
    /// The data points the export under way carries, when the exporter
    /// says.
    sending: Option<usize>,
    /// The data points of the latest failed export, when known.
    lost: Option<usize>,
}

impl ExportReport {
    pub(crate) fn new(endpoint: impl Into<String>) -> Arc<Self> {
        Arc::new(ExportReport {
            endpoint: endpoint.into(),
            failed: AtomicU64::new(0),
            state: Mutex::new(State::default()),
        })
    }

    pub(crate) fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Exports that failed since setup.
    pub(crate) fn failed_exports(&self) -> u64 {
        self.failed.load(Ordering::Relaxed)
    }

    /// The error of the latest failed export.
    pub(crate) fn last_error(&self) -> Option<String> {
        self.lock().last_error.clone()
    }

    /// The data points of the latest failed export, when the exporter said
    /// how many it carried.
    pub(crate) fn lost_points(&self) -> Option<usize> {
        self.lock().lost
    }

    /// The data points of the export under way, when the exporter said.
    pub(crate) fn sending_points(&self) -> Option<usize> {
        self.lock().sending
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn record(&self, result: &OTelSdkResult, now: Instant) {
        let mut state = self.lock();
        match result {
            Ok(()) => {
                if state.failing > 0 {
                    tracing::info!(
                        target: "nemo_lens",
                        endpoint = %self.endpoint,
                        failed_exports = state.failing,
                        "metrics export recovered"
                    );
                }
                // The next outage is reported at once.
                *state = State {
                    last_error: state.last_error.take(),
                    ..State::default()
                };
            }
            Err(error) => {
                let total = self.failed.fetch_add(1, Ordering::Relaxed) + 1;
                state.failing += 1;
                state.lost = state.sending.take();
                let error = match state.cause.take() {
                    Some(cause) => format!("{error} ({cause})"),
                    None => error.to_string(),
                };
                state.last_error = Some(error.clone());
                let due = state
                    .last_warning
                    .is_none_or(|at| now.saturating_duration_since(at) >= WARN_EVERY);
                if due {
                    nemo_lens_core::__internal::warnings::emit(
                        nemo_lens_core::__internal::warnings::Warning::Export,
                        || {
                            tracing::warn!(
                                target: "nemo_lens",
                                endpoint = %self.endpoint,
                                error = %error,
                                failed_exports = total,
                                suppressed = state.suppressed,
                                // Cumulative totals still go out with the next export
                                // that succeeds; delta points of this one are lost.
                                "metrics export failed"
                            );
                        },
                    );
                    state.last_warning = Some(now);
                    state.suppressed = 0;
                } else {
                    state.suppressed += 1;
                }
            }
        }
    }
}

#[cfg(feature = "otlp")]
impl nemo_lens_otlp::Attempts for ExportReport {
    fn sending(&self, points: usize) {
        self.lock().sending = Some(points);
    }

    fn failed(&self, cause: String) {
        self.lock().cause = Some(cause);
    }
}

/// A push exporter whose every export outcome goes to an [`ExportReport`].
#[derive(Debug)]
pub(crate) struct ReportingExporter<E> {
    inner: E,
    report: Arc<ExportReport>,
    /// Owned series, read as each export starts for `inner` to send.
    feed: Option<nemo_lens_core::__internal::Feed>,
}

impl<E> ReportingExporter<E> {
    pub(crate) fn new(inner: E, report: Arc<ExportReport>) -> Self {
        ReportingExporter {
            inner,
            report,
            feed: None,
        }
    }

    /// The same, sending the owned series `feed` reads.
    pub(crate) fn with_feed(mut self, feed: nemo_lens_core::__internal::Feed) -> Self {
        self.feed = Some(feed);
        self
    }
}

impl<E: PushMetricExporter> PushMetricExporter for ReportingExporter<E> {
    async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        if let Some(feed) = &self.feed {
            feed.prepare();
        }
        nemo_lens_core::__internal::overflow::note(metrics);
        let result = self.inner.export(metrics).await;
        self.report.record(&result, Instant::now());
        result
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn temporality(&self) -> Temporality {
        self.inner.temporality()
    }
}

/// An exporter given to setup, watched for cardinality overflow only (its
/// outcomes are its own business).
#[derive(Debug)]
pub(crate) struct OverflowWatching<E>(pub(crate) E);

impl<E: PushMetricExporter> PushMetricExporter for OverflowWatching<E> {
    async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        nemo_lens_core::__internal::overflow::note(metrics);
        self.0.export(metrics).await
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.0.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.0.shutdown_with_timeout(timeout)
    }

    fn temporality(&self) -> Temporality {
        self.0.temporality()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry_sdk::error::OTelSdkError;

    fn fail() -> OTelSdkResult {
        Err(OTelSdkError::InternalFailure("connection refused".into()))
    }

    #[test]
    fn failures_are_counted_warned_at_most_every_interval_and_recovery_resets() {
        let report = ExportReport::new("http://127.0.0.1:1");
        let t0 = Instant::now();
        report.record(&fail(), t0);
        assert_eq!(report.lock().last_warning, Some(t0));
        for i in 1..=5 {
            report.record(&fail(), t0 + Duration::from_secs(i));
        }
        // Five failures inside the interval: counted, not warned.
        assert_eq!(report.lock().suppressed, 5);
        assert_eq!(report.lock().last_warning, Some(t0));
        report.record(&fail(), t0 + WARN_EVERY);
        assert_eq!(report.lock().suppressed, 0);
        assert_eq!(report.lock().last_warning, Some(t0 + WARN_EVERY));
        assert_eq!(report.failed_exports(), 7);
        assert_eq!(report.lock().failing, 7);
        assert_eq!(
            report.last_error().as_deref(),
            Some("Operation failed: connection refused")
        );

        report.record(&Ok(()), t0 + WARN_EVERY + Duration::from_secs(1));
        assert_eq!(report.lock().failing, 0);
        assert_eq!(report.lock().last_warning, None);
        // The total stays; a new outage warns at once.
        assert_eq!(report.failed_exports(), 7);
        let t1 = t0 + WARN_EVERY + Duration::from_secs(2);
        report.record(&fail(), t1);
        assert_eq!(report.lock().last_warning, Some(t1));
        assert_eq!(report.failed_exports(), 8);
    }
}
