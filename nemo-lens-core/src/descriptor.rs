//! Static descriptions of the instruments a set records, for catalogs, docs
//! and tests.

use std::fmt;

use crate::{HistogramAggregation, SemconvGate};

/// The OpenTelemetry instrument kind of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InstrumentKind {
    /// A monotonic sum: values are added, never negative.
    Counter,
    /// A sum that may go up and down.
    UpDownCounter,
    /// The last value recorded.
    Gauge,
    /// A distribution of values in explicit buckets.
    Histogram,
}

impl InstrumentKind {
    /// The attribute name used to declare this kind, e.g. `up_down_counter`.
    pub const fn as_str(self) -> &'static str {
        match self {
            InstrumentKind::Counter => "counter",
            InstrumentKind::UpDownCounter => "up_down_counter",
            InstrumentKind::Gauge => "gauge",
            InstrumentKind::Histogram => "histogram",
        }
    }
}

impl fmt::Display for InstrumentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The number type an instrument records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValueType {
    /// `f64` (fields of `f32` are widened).
    F64,
    /// `u64` (fields of smaller unsigned types are widened).
    U64,
    /// `i64` (fields of smaller signed types are widened).
    I64,
}

/// One recorded field and an instrument it feeds, with the attributes it
/// carries there. A field that feeds several instruments (a renamed metric
/// under its old and new names) has one descriptor per instrument.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Descriptor {
    /// The Rust field name (the keyword name in Python nemo-lens).
    pub field: &'static str,
    /// The OpenTelemetry instrument name.
    pub name: &'static str,
    /// The instrument kind.
    pub kind: InstrumentKind,
    /// The number type recorded.
    pub value_type: ValueType,
    /// The UCUM unit, empty when dimensionless.
    pub unit: &'static str,
    /// The instrument description.
    pub description: &'static str,
    /// Explicit bucket boundaries, `None` for the SDK default (histograms) or
    /// for other kinds.
    pub buckets: Option<&'static [f64]>,
    /// Keys of every attribute a measurement of this field may carry: the
    /// struct's attribute fields, then the field's static attributes.
    pub attribute_keys: &'static [&'static str],
    /// The static attributes of this field, as `(key, value)`.
    pub static_attributes: &'static [(&'static str, &'static str)],
    /// Which semantic-convention opt-in records the instrument.
    pub semconv: SemconvGate,
    /// The aggregation a histogram's declaration pins; `None` to follow the
    /// default (`OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION`).
    pub aggregation: Option<HistogramAggregation>,
}
