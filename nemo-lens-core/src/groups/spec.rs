//! One metric of a runtime group: Lens's `MetricSpec`, plus what a derive
//! declaration can also say (buckets, attributes, the `unit_in_name`
//! opt-out).

use std::fmt;
use std::sync::Arc;

use opentelemetry::metrics::AsyncInstrument;

use crate::InstrumentKind;

/// The kind of a runtime metric, named as Lens names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MetricKind {
    /// The last value recorded (`gauge`).
    Gauge,
    /// A distribution (`histogram`).
    Histogram,
    /// A monotonic sum (`counter`).
    Counter,
    /// A sum that may go down (`up_down_counter`).
    UpDownCounter,
    /// A gauge read from its callback at each collection (`observable_gauge`):
    /// for series whose attributes come and go.
    ObservableGauge,
    /// A monotonic sum read from its callback (`observable_counter`).
    ObservableCounter,
    /// A sum read from its callback (`observable_up_down_counter`).
    ObservableUpDownCounter,
}

impl MetricKind {
    /// Every kind, in Lens's sorted order of names.
    pub const ALL: [MetricKind; 7] = [
        MetricKind::Counter,
        MetricKind::Gauge,
        MetricKind::Histogram,
        MetricKind::ObservableCounter,
        MetricKind::ObservableGauge,
        MetricKind::ObservableUpDownCounter,
        MetricKind::UpDownCounter,
    ];

    /// The name in a spec (`observable_gauge`).
    pub const fn as_str(self) -> &'static str {
        match self {
            MetricKind::Gauge => "gauge",
            MetricKind::Histogram => "histogram",
            MetricKind::Counter => "counter",
            MetricKind::UpDownCounter => "up_down_counter",
            MetricKind::ObservableGauge => "observable_gauge",
            MetricKind::ObservableCounter => "observable_counter",
            MetricKind::ObservableUpDownCounter => "observable_up_down_counter",
        }
    }

    /// The kind called `name`, exactly as Lens spells it.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == name)
    }

    /// Whether values come from a callback rather than from
    /// [`record_metrics`](super::record_metrics).
    pub const fn is_observable(self) -> bool {
        matches!(
            self,
            MetricKind::ObservableGauge
                | MetricKind::ObservableCounter
                | MetricKind::ObservableUpDownCounter
        )
    }

    /// The instrument kind it is exported as (an observable gauge is a gauge
    /// on the wire).
    pub const fn instrument_kind(self) -> InstrumentKind {
        match self {
            MetricKind::Gauge | MetricKind::ObservableGauge => InstrumentKind::Gauge,
            MetricKind::Histogram => InstrumentKind::Histogram,
            MetricKind::Counter | MetricKind::ObservableCounter => InstrumentKind::Counter,
            MetricKind::UpDownCounter | MetricKind::ObservableUpDownCounter => {
                InstrumentKind::UpDownCounter
            }
        }
    }
}

impl fmt::Display for MetricKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What an observable metric reports at each collection: every point it
/// calls `observe` with, and nothing else, so a series it stops reporting
/// ends.
pub type ObservableCallback = Arc<dyn Fn(&dyn AsyncInstrument<f64>) + Send + Sync>;

/// One metric of a group: the caller records it by `key`, it is exported as
/// `name`.
///
/// ```
/// use nemo_lens::groups::{MetricKind, MetricSpec};
///
/// let spec = MetricSpec::new("step_duration", "rl.step.duration", MetricKind::Histogram)
///     .unit("s")
///     .description("Wall-clock duration of a training step.")
///     .buckets([0.5, 1.0, 2.0, 4.0]);
/// assert_eq!(spec.kind.as_str(), "histogram");
/// ```
#[derive(Clone)]
pub struct MetricSpec {
    /// What the caller records it by; unique within its group.
    pub key: String,
    /// The OpenTelemetry instrument name exported (`rl.reward.mean`).
    pub name: String,
    /// The kind.
    pub kind: MetricKind,
    /// The UCUM unit, empty when dimensionless.
    pub unit: String,
    /// The description exported with it; required (a spec without one is
    /// refused, as the derive refuses a field without one).
    pub description: String,
    /// Explicit bucket bounds of a histogram; `None` for the default.
    pub buckets: Option<Vec<f64>>,
    /// The attribute keys its measurements may carry; none when empty. Any
    /// other attribute given is left off (with one warning per attribute)
    /// and the value recorded without it, so the metric has only the series
    /// its spec declares: exactly one when it declares none.
    pub attributes: Vec<String>,
    /// Attributes on every measurement, as `(key, value)`.
    pub static_attributes: Vec<(String, String)>,
    /// The name spells its unit on purpose (it must stay as it is on the
    /// wire), as the derive's `unit_in_name`.
    pub unit_in_name: bool,
    /// What an observable kind reports; required for those, refused for the
    /// others.
    pub callback: Option<ObservableCallback>,
}

impl MetricSpec {
    /// A spec with no unit, buckets or attributes, and no description yet
    /// (it needs one to be registered).
    pub fn new(key: impl Into<String>, name: impl Into<String>, kind: MetricKind) -> Self {
        MetricSpec {
            key: key.into(),
            name: name.into(),
            kind,
            unit: String::new(),
            description: String::new(),
            buckets: None,
            attributes: Vec::new(),
            static_attributes: Vec::new(),
            unit_in_name: false,
            callback: None,
        }
    }

    /// Sets the UCUM unit.
    #[must_use]
    pub fn unit(mut self, unit: impl Into<String>) -> Self {
        self.unit = unit.into();
        self
    }

    /// Sets the description.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// Sets a histogram's explicit bucket bounds.
    #[must_use]
    pub fn buckets(mut self, bounds: impl IntoIterator<Item = f64>) -> Self {
        self.buckets = Some(bounds.into_iter().collect());
        self
    }

    /// Declares the attribute keys its measurements may carry; others are
    /// left off.
    #[must_use]
    pub fn attributes<S: Into<String>>(mut self, keys: impl IntoIterator<Item = S>) -> Self {
        self.attributes = keys.into_iter().map(Into::into).collect();
        self
    }

    /// Adds an attribute every measurement carries.
    #[must_use]
    pub fn static_attribute(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.static_attributes.push((key.into(), value.into()));
        self
    }

    /// Keeps a name that spells its unit.
    #[must_use]
    pub fn unit_in_name(mut self, keep: bool) -> Self {
        self.unit_in_name = keep;
        self
    }

    /// Sets the callback of an observable kind.
    #[must_use]
    pub fn callback(
        mut self,
        callback: impl Fn(&dyn AsyncInstrument<f64>) + Send + Sync + 'static,
    ) -> Self {
        self.callback = Some(Arc::new(callback));
        self
    }
}

impl fmt::Debug for MetricSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MetricSpec")
            .field("key", &self.key)
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("unit", &self.unit)
            .field("description", &self.description)
            .field("buckets", &self.buckets)
            .field("attributes", &self.attributes)
            .field("static_attributes", &self.static_attributes)
            .field("unit_in_name", &self.unit_in_name)
            .field("callback", &self.callback.as_ref().map(|_| "Fn"))
            .finish()
    }
}
