//! Instruments whose series nemo-lens owns: their values live in
//! [`cells`](crate::cells) rather than in the SDK's per-series state, so a
//! series recorded from every worker thread runs at per-thread speed.
//!
//! A meter from [`setup_telemetry`](crate::setup_telemetry) (or a
//! `testing::Capture`) carries a [`Registry`] shared with the exporters it
//! feeds; each exporter reads the registry beside what the SDK collected, at
//! the same moment, so both exporters of one provider read the same cells
//! and nothing is recorded twice. A [`Meter`](crate::Meter) wrapped around
//! an OpenTelemetry meter of your own, or set up with a reader of your own
//! (`SetupOptions::metric_reader`), has no registry: its instruments are the
//! SDK's, read by whatever readers you installed.
//!
//! Owned: histograms, explicit and exponential, which exporters read from
//! the registry (the SDK has no observable histogram), and counters,
//! up-down counters and gauges, which an observable instrument reports
//! through the SDK. Every instrument of a meter without a registry is the
//! SDK's.

mod collected;
pub mod expiry;
mod feed;
mod gathered;
mod handle;
mod histogram;
mod registry;
mod scalar;
mod series;

pub use collected::{Delta, ExponentialPoint, HistogramPoint, OwnedData, OwnedMetric, OwnedScope};
pub(crate) use feed::{keep_exports_coming, Feed};
pub use feed::{Batch, Pending, KEEPALIVE_SCOPE};
pub(crate) use gathered::warn_shadowed;
pub use gathered::{
    Gather, GatheredFamily, GatheredKind, GatheredScope, GatheredSeries, GatheredValue, TextBlock,
};
pub(crate) use handle::OwnedContext;
pub use handle::{BoundHistogram, Histogram, HistogramBuilder, HistogramValue};
pub use histogram::{ExponentialInstrument, HistogramCell, HistogramInstrument, OwnedHistogram};
pub use registry::{Registry, Starts};
pub use scalar::{
    BoundCounter, BoundGauge, BoundScalar, BoundUpDownCounter, Counter, CounterOf, Gauge, GaugeOf,
    Scalar, ScalarBuilder, ScalarCell, ScalarInstrument, ScalarKind, UpDownCounter,
    UpDownCounterOf,
};
pub use series::Touched;

#[cfg(all(test, feature = "testing"))]
mod expiry_tests;
#[cfg(test)]
mod tests;
