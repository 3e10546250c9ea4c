//! The Prometheus exposition without a server: a collection as metric
//! families (`families`), written as text (`text`) or OpenMetrics text with
//! exemplars (`text` too, with `openmetrics`'s metadata; exemplars placed
//! by `exemplars`), with exponential histograms as Prometheus reads them
//! (`native`) and what they quote escaped (`escape`).
//!
//! Compiled without the `prometheus` feature too, so that `testing` can
//! render the text exposition without the scrape server's hyper and tokio;
//! the exporter uses the same code, so both write the same bytes.

pub(crate) mod escape;
pub(crate) mod exemplars;
pub(crate) mod families;
pub(crate) mod native;
pub(crate) mod openmetrics;
pub(crate) mod passthrough;
pub(crate) mod text;
