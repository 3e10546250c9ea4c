//! `TelemetryHandle`: what `setup_telemetry` returns, and its shutdown.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use opentelemetry_sdk::metrics::SdkMeterProvider;

use crate::report::ExportReport;
use nemo_lens_core::Meter;

/// Why a flush or shutdown did not complete.
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShutdownError {
    /// The final export did not finish within the shutdown timeout; the
    /// process may exit without it.
    #[error("telemetry shutdown did not finish within {0:?}")]
    Timeout(Duration),
    /// The SDK reported a failure.
    #[error("telemetry shutdown failed: {0}")]
    Sdk(String),
    /// The final export did not finish within the shutdown timeout (for
    /// example a receiver that accepts connections and never answers).
    #[error(
        "telemetry shutdown: the final export{} to {endpoint} did not finish within {timeout:?} \
         ({failed_exports} failed exports since setup)",
        of_points(*points)
    )]
    ExportTimeout {
        /// Where the export went.
        endpoint: String,
        /// The shutdown timeout.
        timeout: Duration,
        /// Exports that failed since setup.
        failed_exports: u64,
        /// The data points the final export carried, when known: what the
        /// receiver may never get.
        points: Option<usize>,
    },
    /// The final export failed (for example an unreachable receiver): what
    /// it carried is lost.
    #[error(
        "telemetry shutdown: the final export{} to {endpoint} failed, so they are lost: {error} \
         ({failed_exports} failed exports since setup)",
        of_points(*points)
    )]
    Export {
        /// Where the export went.
        endpoint: String,
        /// Why the last export failed.
        error: String,
        /// Exports that failed since setup, the final one included.
        failed_exports: u64,
        /// The data points the final export carried, when known.
        points: Option<usize>,
    },
}

/// ` of N data points`, when the exporter said how many.
fn of_points(points: Option<usize>) -> String {
    match points {
        Some(1) => " of 1 data point".to_owned(),
        Some(n) => format!(" of {n} data points"),
        None => String::new(),
    }
}

/// Telemetry for this process: the meter to record on and the pipeline
/// behind it.
///
/// [`shutdown`](Self::shutdown) flushes and stops exporting; dropping the
/// handle does the same, so keep it alive for as long as the program
/// records.
#[derive(Debug)]
pub struct TelemetryHandle {
    /// The meter to record on: a real one on an exporting rank, a
    /// [`Meter::noop`] otherwise.
    pub meter: Meter,
    /// Whether this rank exports (false when disabled or not selected).
    pub is_exporting: bool,
    pub(crate) active: Option<Arc<Active>>,
    pub(crate) idle: Option<String>,
}

impl TelemetryHandle {
    /// A handle that records nothing, because of `reason`: said once through
    /// `tracing`, and kept for [`why_not_exporting`](Self::why_not_exporting).
    pub(crate) fn idle(reason: String) -> Self {
        tracing::info!(target: "nemo_lens", "{reason}");
        TelemetryHandle {
            meter: Meter::noop(),
            is_exporting: false,
            active: None,
            idle: Some(reason),
        }
    }

    /// Instruments that have had more attribute sets than the cardinality
    /// limit (`NEMO_LENS_CARDINALITY_LIMIT`, else the SDK's 2000) since the
    /// process started: each was warned about once through `tracing`, and
    /// its later attribute sets are merged into one series marked
    /// `otel.metric.overflow=true`.
    pub fn overflowing_instruments(&self) -> Vec<String> {
        nemo_lens_core::__internal::overflow::overflowing_instruments()
    }

    /// Why this handle records nothing, naming the variable to set; `None`
    /// when it exports.
    ///
    /// ```
    /// use nemo_lens::{EnvLookup, NemoLensConfig, SetupOptions};
    ///
    /// let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs([
    ///     ("NEMO_LENS_EXPORTER", "prometheus"),
    /// ]))?;
    /// let handle = SetupOptions::new().setup(&config, 0, 1)?;
    /// assert!(handle.why_not_exporting().unwrap().contains("NEMO_LENS_ENABLED=true"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn why_not_exporting(&self) -> Option<&str> {
        self.idle.as_deref()
    }

    /// The address the Prometheus endpoint is bound to, when serving one.
    pub fn prometheus_addr(&self) -> Option<SocketAddr> {
        self.active.as_ref()?.prometheus_addr
    }

    /// The scrape URL of the Prometheus endpoint, when serving one:
    /// `https://` when its web configuration turns TLS on.
    pub fn prometheus_url(&self) -> Option<String> {
        let active = self.active.as_ref()?;
        let scheme = if active.prometheus_tls {
            "https"
        } else {
            "http"
        };
        active
            .prometheus_addr
            .map(|addr| format!("{scheme}://{addr}/metrics"))
    }

    /// Exports that failed since setup (OTLP and console exporters; 0 for
    /// Prometheus, a no-op meter or an injected exporter).
    ///
    /// Each failure is also logged through `tracing` (target `nemo_lens`):
    /// a warning with the endpoint and the error at most every 10 s, with
    /// the count of failures in between, and one info line when exports
    /// succeed again.
    pub fn failed_exports(&self) -> u64 {
        self.report().map_or(0, ExportReport::failed_exports)
    }

    /// The error of the latest failed export, if any failed.
    pub fn last_export_error(&self) -> Option<String> {
        self.report()?.last_error()
    }

    fn report(&self) -> Option<&ExportReport> {
        self.active.as_ref()?.report.as_deref()
    }

    /// Exports everything recorded so far, waiting at most the shutdown
    /// timeout.
    pub fn force_flush(&self) -> Result<(), ShutdownError> {
        match &self.active {
            Some(active) => {
                let deadline = Instant::now() + active.shutdown_timeout;
                active.bounded(deadline, |p| p.force_flush())
            }
            None => Ok(()),
        }
    }

    /// Flushes and stops exporting. Returns within the configured shutdown
    /// timeout (see
    /// [`SetupOptions::shutdown_timeout`](super::SetupOptions::shutdown_timeout))
    /// even when the receiver is unreachable. Calling it again does nothing
    /// and returns `Ok`.
    pub fn shutdown(&self) -> Result<(), ShutdownError> {
        match &self.active {
            Some(active) => active.shutdown(),
            None => Ok(()),
        }
    }
}

impl Drop for TelemetryHandle {
    fn drop(&mut self) {
        if let Err(e) = self.shutdown() {
            nemo_lens_core::__internal::warnings::emit(
                nemo_lens_core::__internal::warnings::Warning::Export,
                || {
                    tracing::warn!(target: "nemo_lens", error = %e, "nemo-lens telemetry shutdown on drop");
                },
            );
        }
    }
}

/// Things to stop after the provider, in order.
pub(crate) type Stopper = Box<dyn FnOnce(Duration) + Send>;

/// The live pipeline of an exporting rank.
pub(crate) struct Active {
    pub(crate) provider: SdkMeterProvider,
    pub(crate) prometheus_addr: Option<SocketAddr>,
    pub(crate) prometheus_tls: bool,
    pub(crate) report: Option<Arc<ExportReport>>,
    pub(crate) shutdown_timeout: Duration,
    pub(crate) stoppers: Mutex<Vec<Stopper>>,
    pub(crate) shut: AtomicBool,
}

impl std::fmt::Debug for Active {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Active")
            .field("prometheus_addr", &self.prometheus_addr)
            .field("shut", &self.shut)
            .finish_non_exhaustive()
    }
}

impl Active {
    /// One deadline for every step: the provider's final export, then each
    /// stopper gets what is left of it.
    pub(crate) fn shutdown(&self) -> Result<(), ShutdownError> {
        if self.shut.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let deadline = Instant::now() + self.shutdown_timeout;
        let result = self.bounded(deadline, |p| p.shutdown());
        let stoppers =
            std::mem::take(&mut *self.stoppers.lock().unwrap_or_else(PoisonError::into_inner));
        for stop in stoppers {
            stop(deadline.saturating_duration_since(Instant::now()));
        }
        match (result, &self.report) {
            // The SDK only says "Failed to shutdown"; the report knows
            // where the export went and why it failed.
            (Err(ShutdownError::Sdk(sdk)), Some(report)) => Err(ShutdownError::Export {
                endpoint: report.endpoint().to_owned(),
                error: report.last_error().unwrap_or(sdk),
                failed_exports: report.failed_exports(),
                points: report.lost_points(),
            }),
            (Err(ShutdownError::Timeout(timeout)), Some(report)) => {
                Err(ShutdownError::ExportTimeout {
                    endpoint: report.endpoint().to_owned(),
                    timeout,
                    failed_exports: report.failed_exports(),
                    points: report.sending_points(),
                })
            }
            (result, _) => result,
        }
    }

    /// Runs `op` on a helper thread so a hung export cannot hold the caller
    /// past `deadline`; the SDK's own waits are fixed at 5 s.
    fn bounded(
        &self,
        deadline: Instant,
        op: impl FnOnce(&SdkMeterProvider) -> opentelemetry_sdk::error::OTelSdkResult + Send + 'static,
    ) -> Result<(), ShutdownError> {
        let provider = self.provider.clone();
        let (tx, rx) = mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("nemo-lens-shutdown".into())
            .spawn(move || {
                let _ = tx.send(op(&provider));
            });
        if let Err(e) = spawned {
            return Err(ShutdownError::Sdk(format!(
                "cannot start shutdown thread: {e}"
            )));
        }
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(ShutdownError::Sdk(e.to_string())),
            Err(_) => Err(ShutdownError::Timeout(self.shutdown_timeout)),
        }
    }
}

nemo_lens_core::__debug_as_sentence!(ShutdownError);
