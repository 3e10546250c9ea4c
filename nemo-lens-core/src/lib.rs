//! The model of [nemo-lens](https://crates.io/crates/nemo-lens): the
//! [`Meter`] handle with its per-meter instrument cache, the
//! [`Instruments`] trait the derive implements, the [`Descriptor`]s sets
//! publish, the cells and owned series that recording writes, exemplars,
//! runtime metric groups, and the process-wide state the exporters read.
//!
//! Nothing here does I/O: the exporters (`nemo-lens-prometheus`,
//! `nemo-lens-otlp`) and setup (`nemo-lens-telemetry`) are crates above this
//! one, so an edit to an exporter does not rebuild the model.
//!
//! Depend on the `nemo-lens` facade crate rather than on this one.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]
// Built without exemplar storage (the exemplar benchmark's reference), the
// code only exemplars use is left unused.
#![cfg_attr(nemo_lens_no_exemplars, allow(dead_code, unused_imports))]

mod aggregation;
mod attributes;
mod bridge;
mod cache;
pub mod cells;
pub mod config;
mod descriptor;
mod error_debug;
pub mod exemplar;
mod global;
pub mod groups;
mod instruments;
mod meter;
#[doc(hidden)]
pub mod observe;
mod overflow;
pub mod owned;
mod prometheus_names;
mod record;
mod semconv;
pub mod slo;
mod streams;
mod warnings;

#[doc(hidden)]
pub mod __internal;
#[doc(hidden)]
pub mod __private;

pub use aggregation::{
    histogram_view, pin_histogram_aggregation, pinned_histogram_aggregation, HistogramAggregation,
    DEFAULT_HISTOGRAM_AGGREGATION, EXPONENTIAL_MAX_SCALE, EXPONENTIAL_MAX_SIZE,
};
pub use attributes::Attributes;
pub use cache::SetSlot;
pub use config::{
    visible_gpus, ConfigError, EnvLookup, GpuId, OtlpProtocol, PrometheusResourceLabels,
    DEFAULT_RESOURCE_LABEL_KEYS,
};
pub use descriptor::{AttributeDescriptor, Descriptor, InstrumentKind, ValueType};
pub use exemplar::ExemplarFilter;
pub use global::get_meter;
pub use instruments::{Guarded, Instruments};
#[doc(hidden)]
pub use meter::MeterLease;
pub use meter::{Meter, WeakMeter};
pub use observe::{Observation, ObserveError};
pub use owned::expiry::SeriesExpiry;
pub use prometheus_names::{prometheus_label, PrometheusNames};
pub use record::{AttributeValue, FixedAttributeValue, KeyPart};
pub use semconv::{
    SemconvGate, SemconvOptIn, GEN_AI_LATEST_EXPERIMENTAL, SEMCONV_STABILITY_OPT_IN,
};
