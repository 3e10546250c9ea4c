//! Exporters behind cargo features: `otlp`, `prometheus`, `console`.

#[cfg(feature = "console")]
pub mod console;
#[cfg(feature = "otlp")]
pub(crate) mod otlp;
#[cfg(feature = "prometheus")]
pub mod prometheus;
#[cfg(feature = "prometheus")]
pub(crate) mod scrape_server;
