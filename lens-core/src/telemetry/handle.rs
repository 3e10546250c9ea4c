//! `TelemetryHandle`: what `setup_telemetry` returns, and its shutdown.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::Duration;

use opentelemetry_sdk::metrics::SdkMeterProvider;

use crate::Meter;

/// Why a flush or shutdown did not complete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShutdownError {
    /// The final export did not finish within the shutdown timeout; the
    /// process may exit without it.
    #[error("telemetry shutdown did not finish within {0:?}")]
    Timeout(Duration),
    /// The SDK reported a failure (for example an unreachable receiver).
    #[error("telemetry shutdown failed: {0}")]
    Sdk(String),
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
}

impl TelemetryHandle {
    pub(crate) fn noop() -> Self {
        TelemetryHandle {
            meter: Meter::noop(),
            is_exporting: false,
            active: None,
        }
    }

    /// The address the Prometheus endpoint is bound to, when serving one.
    pub fn prometheus_addr(&self) -> Option<SocketAddr> {
        self.active.as_ref()?.prometheus_addr
    }

    /// The scrape URL of the Prometheus endpoint, when serving one.
    pub fn prometheus_url(&self) -> Option<String> {
        self.prometheus_addr()
            .map(|addr| format!("http://{addr}/metrics"))
    }

    /// Exports everything recorded so far, waiting at most the shutdown
    /// timeout.
    pub fn force_flush(&self) -> Result<(), ShutdownError> {
        match &self.active {
            Some(active) => active.bounded(|p| p.force_flush()),
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
            tracing::warn!(error = %e, "nemo-lens telemetry shutdown on drop");
        }
    }
}

/// Things to stop after the provider, in order.
pub(crate) type Stopper = Box<dyn FnOnce(Duration) + Send>;

/// The live pipeline of an exporting rank.
pub(crate) struct Active {
    pub(crate) provider: SdkMeterProvider,
    pub(crate) prometheus_addr: Option<SocketAddr>,
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
    pub(crate) fn shutdown(&self) -> Result<(), ShutdownError> {
        if self.shut.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let result = self.bounded(|p| p.shutdown());
        let stoppers =
            std::mem::take(&mut *self.stoppers.lock().unwrap_or_else(PoisonError::into_inner));
        for stop in stoppers {
            stop(self.shutdown_timeout);
        }
        result
    }

    /// Runs `op` on a helper thread so a hung export cannot hold the caller
    /// past the shutdown timeout; the SDK's own waits are fixed at 5 s.
    fn bounded(
        &self,
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
        match rx.recv_timeout(self.shutdown_timeout) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(ShutdownError::Sdk(e.to_string())),
            Err(_) => Err(ShutdownError::Timeout(self.shutdown_timeout)),
        }
    }
}
