//! The names generated code uses, and nothing else: a re-export shim over
//! `record` (the record path) and the SDK, so that a derive expands to
//! `::nemo_lens::__private::..` paths that survive any shadowing in the
//! user's crate. Not public API: anything here may change in any release.

pub use crate::record::{
    checked, duration_in, field_attributes, AttributeValue, BoundMap, DropWarnings, KeyPart,
    Measure, MissingAttribute, Reject, BOUND_LIMIT,
};

pub use crate::exemplar::Captured as ExemplarSpan;
pub use crate::exemplar::SpanOnce;
pub use crate::owned::expiry::pinned;
pub use crate::owned::{
    BoundCounter, BoundGauge, BoundHistogram, BoundUpDownCounter, Counter, Gauge, Histogram,
    UpDownCounter,
};
pub use opentelemetry::{Key, KeyValue, Value};

pub use crate::{
    pin_histogram_aggregation, AttributeDescriptor, Descriptor, Guarded, HistogramAggregation,
    InstrumentKind, Instruments, Meter, MeterLease, SemconvGate, SetSlot, ValueType,
};

/// What `fail` on a guard needs: an attribute marked `error_type` to set.
/// Never implemented, so that calling `fail` on a guard without one says
/// what to add instead of "no method named `fail`".
#[diagnostic::on_unimplemented(
    message = "`fail` sets the attribute marked `error_type`, and `{Self}` has none",
    label = "`{Self}` has no attribute marked `error_type`",
    note = "mark the attribute that says why the work failed, for example \
            #[attribute(\"error.type\", error_type)] on an `Option<String>` field, or end the \
            guard with `finish()`"
)]
pub trait ErrorTypeAttribute<E> {}

pub use crate::attributes::{concat_attributes, concat_keys, keys_disjoint, Attributes};
pub use crate::observe::{Observation, ObserveError, Observed, ObservedSlot};
pub use ::core::option::Option::{self, None, Some};
pub use ::core::result::Result::{self, Err, Ok};
pub use ::std::boxed::Box;
pub use ::std::sync::Arc;
pub use ::std::sync::OnceLock;
pub use ::std::time::Instant;
pub use ::std::vec::Vec;
pub use opentelemetry as otel;

// What `#[derive(AttributeValue)]` expands to.
pub use crate::record::FixedAttributeValue;
pub use ::core::fmt::{Display, Formatter, Result as FmtResult};
pub use ::core::mem::forget;
