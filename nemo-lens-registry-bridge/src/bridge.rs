//! The builder that collects registries and installs them on a telemetry
//! handle.

use std::fmt;
use std::sync::Arc;

use nemo_lens_core::owned::Gather;
use nemo_lens_core::Meter;
use nemo_lens_telemetry::TelemetryHandle;

use crate::RegistryBridgeError;

/// Registries of the `prometheus` and `prometheus-client` crates to export
/// through nemo-lens. Give each registry, then [`install`](Self::install).
#[derive(Default)]
#[must_use = "a bridge exports nothing until it is installed"]
pub struct RegistryBridge {
    sources: Vec<Arc<dyn Gather>>,
}

impl RegistryBridge {
    /// A bridge with no registry yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a `prometheus` 0.14 registry (feature `prometheus-crate-bridge`
    /// of `nemo-lens`; a clone shares its metrics, so
    /// pass a clone of the one your metrics are registered in). Callable
    /// more than once; `prometheus::default_registry().clone()` is the one
    /// the crate's `register_*!` macros use.
    #[cfg(feature = "prometheus")]
    pub fn prometheus(mut self, registry: prometheus::Registry) -> Self {
        self.sources
            .push(Arc::new(crate::prometheus_crate::PrometheusSource::new(
                registry,
            )));
        self
    }

    /// Adds a `prometheus-client` 0.26 registry (feature
    /// `prometheus-client-bridge` of `nemo-lens`). Callable more than once.
    /// Register every metric before wrapping the registry in an `Arc`
    /// (registering takes `&mut`); metrics keep recording through their
    /// own handles.
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// use nemo_lens::registry_bridge::RegistryBridge;
    /// use nemo_lens::testing::Capture;
    /// use prometheus_client::metrics::counter::Counter;
    /// use prometheus_client::registry::Registry;
    ///
    /// let mut registry = Registry::default();
    /// let requests: Counter = Counter::default();
    /// registry.register("router_requests", "Requests routed", requests.clone());
    ///
    /// // In a service: `.install(&telemetry)`; in a test, on a capture.
    /// let capture = Capture::new();
    /// RegistryBridge::new()
    ///     .prometheus_client(Arc::new(registry))
    ///     .install_on(capture.meter())?;
    /// requests.inc();
    /// assert!(capture.exposition().contains("router_requests_total 1\n"));
    /// # Ok::<(), nemo_lens::registry_bridge::RegistryBridgeError>(())
    /// ```
    #[cfg(feature = "prometheus-client")]
    pub fn prometheus_client(
        mut self,
        registry: Arc<prometheus_client::registry::Registry>,
    ) -> Self {
        self.sources.push(Arc::new(
            crate::prometheus_client_source::ClientSource::new(registry),
        ));
        self
    }

    /// From now on every scrape of nemo-lens's Prometheus endpoint and every
    /// OTLP export of `telemetry` gathers the registries. On a telemetry
    /// that exports nothing (disabled, or a rank that does not export) it
    /// does nothing and succeeds. A family name that two installed
    /// registries give (the same registry installed twice, or one name
    /// registered in two) is exported once, from the registry installed
    /// first, on the Prometheus endpoint (text and protobuf) and over OTLP
    /// alike; a warning names it once. A family with the Prometheus name of
    /// one of nemo-lens's own instruments (a derived set, the metrics
    /// bridge) is left out the same way: the instrument's is exported.
    ///
    /// # Errors
    ///
    /// [`RegistryBridgeError::NoRegistry`] when no registry was given,
    /// [`RegistryBridgeError::ForeignReader`] when `telemetry` exports
    /// through a reader or exporter of the application's own.
    pub fn install(self, telemetry: &TelemetryHandle) -> Result<(), RegistryBridgeError> {
        if self.sources.is_empty() {
            return Err(RegistryBridgeError::NoRegistry);
        }
        if !telemetry.is_exporting {
            return Ok(());
        }
        self.install_on(&telemetry.meter)
    }

    /// [`install`](Self::install) on the exporters that read `meter`: a
    /// `testing::Capture`'s meter, whose exposition then shows the
    /// registries, or a telemetry handle's.
    ///
    /// # Errors
    ///
    /// [`RegistryBridgeError::NoRegistry`] when no registry was given,
    /// [`RegistryBridgeError::ForeignReader`] when `meter` is not read by
    /// nemo-lens's exporters (a meter of your own, or a no-op one).
    pub fn install_on(self, meter: &Meter) -> Result<(), RegistryBridgeError> {
        if self.sources.is_empty() {
            return Err(RegistryBridgeError::NoRegistry);
        }
        let registry = meter.registry().ok_or(RegistryBridgeError::ForeignReader)?;
        for source in self.sources {
            registry.add_source(source);
        }
        Ok(())
    }
}

impl fmt::Debug for RegistryBridge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegistryBridge")
            .field("registries", &self.sources.len())
            .finish()
    }
}
