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
    /// The same attributes as [`attribute_keys`](Self::attribute_keys), in
    /// the same order, with the values each may take.
    pub attributes: &'static [AttributeDescriptor],
    /// The static attributes of this field, as `(key, value)`.
    pub static_attributes: &'static [(&'static str, &'static str)],
    /// Which semantic-convention opt-in records the instrument.
    pub semconv: SemconvGate,
    /// The aggregation a histogram's declaration pins; `None` to follow the
    /// default (`OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION`).
    pub aggregation: Option<HistogramAggregation>,
}

impl Descriptor {
    /// The most series (distinct attribute sets) this field's measurements
    /// can create in the instrument, for one meter; `None` when an attribute
    /// is free-form.
    ///
    /// Each attribute counts its values, plus one for its default when that
    /// is not among them, or plus one for being absent when it has no
    /// default (a static attribute counts one). An instrument fed by several
    /// fields has at most the sum of theirs.
    ///
    /// ```
    /// use nemo_lens::instruments::gym::ConnectionPoolQueue;
    /// use nemo_lens::Instruments;
    ///
    /// let queued = &ConnectionPoolQueue::DESCRIPTORS[0];
    /// let outcome = &queued.attributes[1];
    /// assert_eq!(outcome.key, "nemo.gym.http.connection_pool.queue_outcome");
    /// assert_eq!(outcome.values, Some(&["ok", "abandoned"][..]));
    /// // The destination is free-form: no bound.
    /// assert_eq!(queued.max_series(), None);
    /// ```
    pub fn max_series(&self) -> Option<u64> {
        self.attributes.iter().try_fold(1u64, |series, a| {
            Some(series.saturating_mul(a.max_values()?))
        })
    }
}

/// One attribute a [`Descriptor`]'s measurements may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AttributeDescriptor {
    /// The attribute key.
    pub key: &'static str,
    /// The wire values of an attribute with a fixed set of them (an enum
    /// deriving `AttributeValue`, or `bool`), in declaration order; `None`
    /// for a free-form one (strings, numbers). A static `attr(..)` pair has
    /// its one value, as values and as default.
    pub values: Option<&'static [&'static str]>,
    /// The value recorded when the field is unset, `None` when the attribute
    /// is then left out. A static attribute, never left out, has its value.
    pub default: Option<&'static str>,
}

impl AttributeDescriptor {
    /// The values this attribute may take on the wire: [`values`](Self::values),
    /// then the default when it is not one of them; `None` when free-form.
    pub fn wire_values(&self) -> Option<Vec<&'static str>> {
        let mut values = self.values?.to_vec();
        if let Some(default) = self.default
            && !values.contains(&default)
        {
            values.push(default);
        }
        Some(values)
    }

    /// How many ways the attribute can appear on a measurement: each wire
    /// value, or absent when there is no default.
    fn max_values(&self) -> Option<u64> {
        let values = self.wire_values()?.len() as u64;
        Some(values + u64::from(self.default.is_none()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUTCOMES: &[&str] = &["success", "failure", "timeout"];

    const fn attribute(
        key: &'static str,
        values: Option<&'static [&'static str]>,
        default: Option<&'static str>,
    ) -> AttributeDescriptor {
        AttributeDescriptor {
            key,
            values,
            default,
        }
    }

    fn max_series(attributes: &[AttributeDescriptor]) -> Option<u64> {
        Descriptor {
            field: "completed",
            name: "app.rollouts",
            kind: InstrumentKind::Counter,
            value_type: ValueType::U64,
            unit: "{rollout}",
            description: "d",
            buckets: None,
            attribute_keys: &[],
            attributes: attributes.to_vec().leak(),
            static_attributes: &[],
            semconv: SemconvGate::Always,
            aggregation: None,
        }
        .max_series()
    }

    #[test]
    fn an_unset_attribute_without_a_default_is_one_more_series() {
        assert_eq!(max_series(&[]), Some(1));
        const OUTCOME: AttributeDescriptor = attribute("app.outcome", Some(OUTCOMES), None);
        assert_eq!(OUTCOME.wire_values().unwrap(), OUTCOMES);
        assert_eq!(max_series(&[OUTCOME]), Some(4));
    }

    #[test]
    fn a_default_counts_only_when_it_is_not_a_value() {
        const AMONG: AttributeDescriptor =
            attribute("app.outcome", Some(OUTCOMES), Some("failure"));
        assert_eq!(AMONG.wire_values().unwrap(), OUTCOMES);
        assert_eq!(max_series(&[AMONG]), Some(3));

        const OUTSIDE: AttributeDescriptor =
            attribute("app.outcome", Some(OUTCOMES), Some("unknown"));
        assert_eq!(
            OUTSIDE.wire_values().unwrap(),
            ["success", "failure", "timeout", "unknown"]
        );
        assert_eq!(max_series(&[OUTSIDE]), Some(4));
    }

    #[test]
    fn attributes_multiply_and_a_static_one_counts_once() {
        assert_eq!(
            max_series(&[
                attribute("app.outcome", Some(OUTCOMES), None),
                attribute("app.cached", Some(&["false", "true"]), Some("false")),
                // attr("gen_ai.token.type" = "input")
                attribute("gen_ai.token.type", Some(&["input"]), Some("input")),
            ]),
            Some(4 * 2)
        );
    }

    #[test]
    fn a_free_form_attribute_has_no_bound() {
        const MODEL: AttributeDescriptor = attribute("gen_ai.request.model", None, Some("unknown"));
        assert_eq!(MODEL.wire_values(), None);
        assert_eq!(
            max_series(&[attribute("app.outcome", Some(OUTCOMES), None), MODEL]),
            None
        );
    }
}
