//! Items used by code that `#[derive(Instruments)]` generates. Not public API:
//! anything here may change in any release.

mod attribute;
mod bound;
mod value;
mod warn;

pub use attribute::AttributeValue;
pub use bound::{concat, BoundMap, KeyPart, BOUND_LIMIT};
pub use value::{checked, Measure, Reject};
pub use warn::DropWarnings;

pub use opentelemetry::metrics::{
    BoundCounter, BoundGauge, BoundHistogram, BoundUpDownCounter, Counter, Gauge, Histogram,
    UpDownCounter,
};
pub use opentelemetry::{Key, KeyValue, Value};

pub use crate::{Descriptor, InstrumentKind, Instruments, SetSlot, ValueType};

pub use ::core::option::Option::{self, None, Some};
pub use ::core::result::Result::{self, Err, Ok};
pub use ::std::boxed::Box;
pub use ::std::sync::OnceLock;
pub use ::std::vec::Vec;
pub use opentelemetry as otel;
