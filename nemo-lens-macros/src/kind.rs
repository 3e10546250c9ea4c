//! The vocabulary shared by every stage: instrument kinds, the SDK number
//! types, the Rust field types, and every mapping from them to names and
//! tokens. Each mapping is written here once.
//!
//! The names match nemo-lens-core's `InstrumentKind` and `ValueType`, which the
//! generated descriptors name.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// The OpenTelemetry instrument kind a field is declared with.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum InstrumentKind {
    Counter,
    UpDownCounter,
    Gauge,
    Histogram,
}

impl InstrumentKind {
    pub const ALL: [InstrumentKind; 4] = [
        InstrumentKind::Gauge,
        InstrumentKind::Histogram,
        InstrumentKind::Counter,
        InstrumentKind::UpDownCounter,
    ];

    /// The field attribute that declares it: `#[up_down_counter(..)]`.
    pub fn attr_name(self) -> &'static str {
        match self {
            InstrumentKind::Counter => "counter",
            InstrumentKind::UpDownCounter => "up_down_counter",
            InstrumentKind::Gauge => "gauge",
            InstrumentKind::Histogram => "histogram",
        }
    }

    pub fn from_attr_name(name: &str) -> Option<InstrumentKind> {
        InstrumentKind::ALL
            .into_iter()
            .find(|k| k.attr_name() == name)
    }

    /// The variant of nemo-lens-core's `InstrumentKind` and the SDK type name:
    /// `Counter` names both `InstrumentKind::Counter` and `Counter<T>`.
    pub fn type_name(self) -> &'static str {
        match self {
            InstrumentKind::Counter => "Counter",
            InstrumentKind::UpDownCounter => "UpDownCounter",
            InstrumentKind::Gauge => "Gauge",
            InstrumentKind::Histogram => "Histogram",
        }
    }

    /// The SDK method that records a value: sums add, the others record.
    pub fn record_method(self) -> TokenStream {
        match self {
            InstrumentKind::Counter | InstrumentKind::UpDownCounter => quote!(add),
            InstrumentKind::Gauge | InstrumentKind::Histogram => quote!(record),
        }
    }

    /// Whether values must not be negative.
    pub fn is_monotonic(self) -> bool {
        self == InstrumentKind::Counter
    }

    /// `p::Counter<u64>`, or `p::BoundCounter<u64>` when `bound`.
    pub fn instrument_type(self, value: ValueType, p: &TokenStream, bound: bool) -> TokenStream {
        let name = if bound {
            format_ident!("Bound{}", self.type_name())
        } else {
            format_ident!("{}", self.type_name())
        };
        let primitive = value.primitive_type();
        quote!(#p::#name<#primitive>)
    }

    /// The meter method that builds the instrument: `meter.u64_counter(..)`.
    pub fn builder_method(self, value: ValueType) -> proc_macro2::Ident {
        format_ident!("{}_{}", value.primitive(), self.attr_name())
    }
}

/// The number type the SDK records, which a field's type widens to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ValueType {
    F64,
    U64,
    I64,
}

impl ValueType {
    /// `f64`, `u64` or `i64`.
    pub fn primitive(self) -> &'static str {
        match self {
            ValueType::F64 => "f64",
            ValueType::U64 => "u64",
            ValueType::I64 => "i64",
        }
    }

    /// `::core::primitive::f64`, immune to a shadowed `f64`.
    pub fn primitive_type(self) -> TokenStream {
        let primitive = format_ident!("{}", self.primitive());
        quote!(::core::primitive::#primitive)
    }

    /// The variant of nemo-lens-core's `ValueType`: `F64`.
    pub fn variant(self) -> proc_macro2::Ident {
        format_ident!("{}", self.primitive().to_uppercase())
    }
}

/// A Rust type a measured field may hold: a number or a `Duration`, one or a
/// `Vec` of them (several values of one histogram, recorded with one
/// look-up).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct FieldType {
    /// The type as written, e.g. `f32` or `Duration`.
    pub rust: &'static str,
    /// What the SDK records it as.
    pub value: ValueType,
    /// `Vec<..>`: each value is recorded.
    pub repeated: bool,
    /// A `std::time::Duration`, recorded as an `f64` in the declared unit.
    pub duration: bool,
}

impl FieldType {
    pub const SUPPORTED: [&'static str; 12] = [
        "f64", "f32", "u64", "u32", "u16", "u8", "usize", "i64", "i32", "i16", "i8", "Duration",
    ];

    pub fn from_rust(name: &str, repeated: bool) -> Option<FieldType> {
        let rust = *Self::SUPPORTED.iter().find(|s| **s == name)?;
        if rust == "Duration" {
            return Some(FieldType {
                rust,
                value: ValueType::F64,
                repeated,
                duration: true,
            });
        }
        let value = match rust.as_bytes()[0] {
            b'f' => ValueType::F64,
            b'u' => ValueType::U64,
            _ => ValueType::I64,
        };
        Some(FieldType {
            rust,
            value,
            repeated,
            duration: false,
        })
    }
}

/// The aggregation a histogram declaration pins, named as
/// `OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION` names it; the
/// variants of nemo-lens-core's `HistogramAggregation`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Aggregation {
    ExplicitBucket,
    Base2Exponential,
}

impl Aggregation {
    pub const ALL: [Aggregation; 2] = [Aggregation::ExplicitBucket, Aggregation::Base2Exponential];

    pub fn name(self) -> &'static str {
        match self {
            Aggregation::ExplicitBucket => "explicit_bucket_histogram",
            Aggregation::Base2Exponential => "base2_exponential_bucket_histogram",
        }
    }

    pub fn from_name(name: &str) -> Option<Aggregation> {
        Aggregation::ALL.into_iter().find(|a| a.name() == name)
    }

    /// The variant of nemo-lens-core's `HistogramAggregation`.
    pub fn variant(self) -> proc_macro2::Ident {
        match self {
            Aggregation::ExplicitBucket => format_ident!("ExplicitBucket"),
            Aggregation::Base2Exponential => format_ident!("Base2Exponential"),
        }
    }
}
