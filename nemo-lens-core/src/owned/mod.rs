//! Instruments whose series nemo-lens owns: their values live in
//! [`cells`](crate::cells) rather than in the SDK's per-series state, so a
//! series recorded from every worker thread runs at per-thread speed.
//!
//! A meter from [`setup_telemetry`](https://docs.rs/nemo-lens/latest/nemo_lens/fn.setup_telemetry.html) (or a
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
pub(crate) mod feed;
pub(crate) mod gathered;
pub(crate) mod handle;
mod histogram;
mod registry;
mod scalar;
mod series;
#[cfg(any(feature = "prometheus", feature = "testing"))]
pub(crate) mod text_blocks;

pub use collected::{Delta, ExponentialPoint, HistogramPoint, OwnedData, OwnedMetric, OwnedScope};
pub use feed::{Batch, Pending, KEEPALIVE_SCOPE};
pub use gathered::{
    Gather, GatheredFamily, GatheredKind, GatheredScope, GatheredSeries, GatheredValue, TextBlock,
};
pub use handle::{BoundHistogram, Histogram, HistogramBuilder, HistogramValue};
pub use histogram::{ExponentialInstrument, HistogramCell, HistogramInstrument, OwnedHistogram};
pub use registry::{Registry, Starts};
pub use scalar::{
    BoundCounter, BoundGauge, BoundScalar, BoundUpDownCounter, Counter, CounterOf, Gauge, GaugeOf,
    Scalar, ScalarBuilder, ScalarCell, ScalarInstrument, ScalarKind, UpDownCounter,
    UpDownCounterOf,
};
pub use series::Touched;

#[cfg(test)]
mod tests;
