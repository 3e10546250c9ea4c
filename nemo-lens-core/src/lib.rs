//! Runtime of [nemo-lens](https://crates.io/crates/nemo-lens): the [`Meter`]
//! handle with its per-meter instrument cache, the [`Instruments`] trait the
//! derive implements, and the [`Descriptor`]s sets publish.
//!
//! Depend on the `nemo-lens` facade crate rather than on this one.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

mod aggregation;
mod attributes;
mod cache;
pub mod cells;
mod descriptor;
mod error_debug;
pub mod exemplar;
mod global;
mod instruments;
mod meter;
#[doc(hidden)]
pub mod observe;
pub mod owned;
mod prometheus_names;
mod record;
mod semconv;

#[doc(hidden)]
pub mod __private;

pub use aggregation::{
    pin_histogram_aggregation, pinned_histogram_aggregation, HistogramAggregation,
    DEFAULT_HISTOGRAM_AGGREGATION,
};
pub use attributes::Attributes;
pub use cache::SetSlot;
pub use descriptor::{AttributeDescriptor, Descriptor, InstrumentKind, ValueType};
pub use exemplar::ExemplarFilter;
pub use global::get_meter;
pub use instruments::{Guarded, Instruments};
#[doc(hidden)]
pub use meter::MeterLease;
pub use meter::{Meter, WeakMeter};
pub use observe::{Observation, ObserveError};
pub use prometheus_names::{prometheus_label, PrometheusNames};
pub use record::{AttributeValue, FixedAttributeValue, KeyPart};
pub use semconv::{
    SemconvGate, SemconvOptIn, GEN_AI_LATEST_EXPERIMENTAL, SEMCONV_STABILITY_OPT_IN,
};

pub mod export;
pub mod groups;
pub mod telemetry;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;
#[doc(hidden)]
pub mod warnings;

pub use telemetry::{
    register_export_strategy, setup_telemetry, ConfigError, EnvLookup, ExportStrategy,
    ExporterKind, NemoLensConfig, OtlpProtocol, PrometheusResourceLabels, RankContext, SetupError,
    SetupOptions, ShutdownError, TelemetryHandle,
};
