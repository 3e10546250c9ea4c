//! Instrument sets and the distinct instruments they record into.

use nemo_lens::groups::SpecFile;
use nemo_lens::instruments::goodput::GoodputMetrics;
use nemo_lens::instruments::gym::unreleased::{
    GpuMetrics, HttpMetrics, ModelServerCallMetrics, ProcessCpuMetrics, QueueMetrics,
    RolloutMetrics,
};
use nemo_lens::instruments::gym::{
    ConnectionPoolConnects, ConnectionPoolQueue, GymMetrics, HostMemoryMetrics, SandboxMetrics,
    ServerMemoryMetrics,
};
use nemo_lens::instruments::rl::RlMetrics;
use nemo_lens::instruments::serving::SchedulingMetrics;
use nemo_lens::instruments::{InferenceMetrics, ModelCallMetrics};
use nemo_lens::telemetry::HistogramAggregation;
use nemo_lens::{
    AttributeDescriptor, Descriptor, InstrumentKind, Instruments, PrometheusNames, SemconvGate,
    SemconvOptIn, ValueType,
};

/// A titled list of descriptors: one derived struct, usually.
#[derive(Debug, Clone)]
pub struct InstrumentSet {
    /// The title of the set's dashboard row and catalog section.
    pub title: String,
    /// One descriptor per recorded field and instrument it feeds.
    pub descriptors: Vec<Descriptor>,
}

impl InstrumentSet {
    /// A set from a title and descriptors.
    pub fn new(title: impl Into<String>, descriptors: impl Into<Vec<Descriptor>>) -> Self {
        InstrumentSet {
            title: title.into(),
            descriptors: descriptors.into(),
        }
    }

    /// The set of a derived struct: every instrument it declares, under
    /// every semantic-convention opt-in.
    pub fn of<T: Instruments>(title: impl Into<String>) -> Self {
        Self::new(title, T::DESCRIPTORS)
    }

    /// The instruments a meter with `opt_in` records
    /// (`OTEL_SEMCONV_STABILITY_OPT_IN`): for example the GenAI draft's
    /// token counters instead of `gen_ai.client.token.usage` with
    /// `gen_ai_latest_experimental`.
    #[must_use]
    pub fn for_semconv(mut self, opt_in: &SemconvOptIn) -> Self {
        self.descriptors.retain(|d| d.semconv.is_open(opt_in));
        self
    }

    /// The histograms of a service whose
    /// `OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION` is
    /// `default`: those whose declaration pins none follow it, so queries
    /// read exponential ones as native histograms too.
    #[must_use]
    pub fn for_histogram_aggregation(mut self, default: HistogramAggregation) -> Self {
        for d in &mut self.descriptors {
            if d.kind == InstrumentKind::Histogram && d.aggregation.is_none() {
                d.aggregation = Some(default);
            }
        }
        self
    }

    /// The distinct instruments, in order of first declaration: fields that
    /// share an instrument (input and output tokens) are one instrument.
    pub fn instruments(&self) -> Vec<Instrument> {
        let mut instruments: Vec<Instrument> = Vec::new();
        for d in &self.descriptors {
            match instruments
                .iter_mut()
                .find(|i| i.name.eq_ignore_ascii_case(d.name))
            {
                Some(shared) => shared.add(d),
                None => instruments.push(Instrument::new(d)),
            }
        }
        instruments
    }
}

/// The groups of a spec file as sets, one per group titled by its name.
///
/// A descriptor holds `&'static str`s, so the specs' strings are leaked:
/// this is for one-shot tools such as the `nemo-lens` command, not for a
/// long-running process.
pub fn spec_sets(file: &SpecFile) -> Vec<InstrumentSet> {
    fn leak(s: &str) -> &'static str {
        Box::leak(s.to_owned().into_boxed_str())
    }
    file.groups
        .iter()
        .map(|(group, specs)| {
            let descriptors: Vec<Descriptor> = specs
                .iter()
                .map(|spec| {
                    let statics: Vec<(&'static str, &'static str)> = spec
                        .static_attributes
                        .iter()
                        .map(|(k, v)| (leak(k), leak(v)))
                        .collect();
                    // A spec file declares keys, not their values: its
                    // attributes are free-form, its static ones fixed.
                    let attributes: Vec<AttributeDescriptor> = spec
                        .attributes
                        .iter()
                        .map(|k| AttributeDescriptor {
                            key: leak(k),
                            values: None,
                            default: None,
                        })
                        .chain(statics.iter().map(|&(key, value)| AttributeDescriptor {
                            key,
                            values: Some(std::slice::from_ref(Box::leak(Box::new(value)))),
                            default: Some(value),
                        }))
                        .collect();
                    let keys: Vec<&'static str> = attributes.iter().map(|a| a.key).collect();
                    Descriptor {
                        field: leak(&spec.key),
                        name: leak(&spec.name),
                        kind: spec.kind.instrument_kind(),
                        value_type: ValueType::F64,
                        unit: leak(&spec.unit),
                        description: leak(&spec.description),
                        buckets: spec
                            .buckets
                            .as_ref()
                            .map(|b| &*Box::leak(b.clone().into_boxed_slice())),
                        attribute_keys: Box::leak(keys.into_boxed_slice()),
                        attributes: Box::leak(attributes.into_boxed_slice()),
                        static_attributes: Box::leak(statics.into_boxed_slice()),
                        semconv: SemconvGate::Always,
                        aggregation: None,
                    }
                })
                .collect();
            InstrumentSet::new(group.clone(), descriptors)
        })
        .collect()
}

/// The built-in sets with their default names (Python nemo-lens's): the
/// GenAI server and client, an engine's scheduling, RL, and gym (Python
/// nemo-lens's set, then NeMo-Gym 0.7.0's sets by concern). Not the
/// instruments of an unreleased NeMo-Gym: [`unreleased_sets`].
pub fn builtin_sets() -> Vec<InstrumentSet> {
    builtin_sets_for(&SemconvOptIn::none())
}

/// The built-in sets as a meter with `opt_in` records them.
pub fn builtin_sets_for(opt_in: &SemconvOptIn) -> Vec<InstrumentSet> {
    all_builtin_sets()
        .into_iter()
        .map(|set| set.for_semconv(opt_in))
        .collect()
}

/// What a built-in set serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuiltinGroup {
    /// GenAI servers, clients and engines' scheduling.
    Inference,
    /// RL training.
    Rl,
    /// Gym servers.
    Gym,
}

/// The group of the set at `position` of [`builtin_sets`]: the first four
/// serve inference, the fifth is RL, the rest are gym sets.
pub fn builtin_group(position: usize) -> BuiltinGroup {
    match position {
        0..=3 => BuiltinGroup::Inference,
        4 => BuiltinGroup::Rl,
        _ => BuiltinGroup::Gym,
    }
}

/// The sets of `nemo_lens::instruments::gym::unreleased`: instruments of an
/// unreleased NeMo-Gym commit that no release records, each titled so, and
/// in no catalog, dashboard or rule file unless asked for.
pub fn unreleased_sets() -> Vec<InstrumentSet> {
    vec![
        InstrumentSet::of::<QueueMetrics>("Gym concurrency (unreleased NeMo-Gym)"),
        InstrumentSet::of::<RolloutMetrics>("Gym rollouts (unreleased NeMo-Gym)"),
        InstrumentSet::of::<ModelServerCallMetrics>("Gym model-server calls (unreleased NeMo-Gym)"),
        InstrumentSet::of::<HttpMetrics>("Gym outbound HTTP (unreleased NeMo-Gym)"),
        InstrumentSet::of::<ProcessCpuMetrics>("Process CPU (unreleased NeMo-Gym)"),
        InstrumentSet::of::<GpuMetrics>("GPUs (unreleased NeMo-Gym)"),
    ]
}

fn all_builtin_sets() -> Vec<InstrumentSet> {
    vec![
        InstrumentSet::of::<InferenceMetrics>("Inference (GenAI)"),
        InstrumentSet::of::<ModelCallMetrics>("Model calls (GenAI client)"),
        InstrumentSet::of::<SchedulingMetrics>("Inference scheduling"),
        InstrumentSet::of::<GoodputMetrics>("Inference goodput (latency objectives)"),
        InstrumentSet::of::<RlMetrics>("RL training"),
        InstrumentSet::of::<GymMetrics>("Gym servers"),
        InstrumentSet::of::<SandboxMetrics>("Gym sandboxes"),
        InstrumentSet::of::<ConnectionPoolQueue>("Gym HTTP connection pool: queued acquisitions"),
        InstrumentSet::of::<ConnectionPoolConnects>("Gym HTTP connection pool: connections"),
        InstrumentSet::of::<ServerMemoryMetrics>("Gym server memory"),
        InstrumentSet::of::<HostMemoryMetrics>("Gym host memory"),
    ]
}

/// One instrument and every field that records into it.
#[derive(Debug, Clone)]
pub struct Instrument {
    /// The OpenTelemetry name.
    pub name: &'static str,
    /// The kind.
    pub kind: InstrumentKind,
    /// The UCUM unit, empty when dimensionless.
    pub unit: &'static str,
    /// The description.
    pub description: &'static str,
    /// Explicit bucket bounds; `None` for the SDK default or non-histograms.
    pub buckets: Option<&'static [f64]>,
    /// The fields that record into it.
    pub fields: Vec<&'static str>,
    /// Every attribute key a measurement may carry, first seen first.
    pub attribute_keys: Vec<&'static str>,
    /// The same attributes, with the values each may take.
    pub attributes: Vec<Attribute>,
    /// The most series its fields' measurements can create (the sum of
    /// [`Descriptor::max_series`]); `None` when an attribute is free-form.
    pub max_series: Option<u64>,
    /// The static attribute keys that tell its fields apart
    /// (`gen_ai.token.type`): charts split by them.
    pub split_by: Vec<&'static str>,
    /// Family, sample and label names on a Prometheus endpoint.
    pub prometheus: PrometheusNames,
    /// A histogram's aggregation, when its declaration or the set
    /// ([`InstrumentSet::for_histogram_aggregation`]) says.
    pub aggregation: Option<HistogramAggregation>,
}

impl Instrument {
    fn new(d: &Descriptor) -> Self {
        let mut instrument = Instrument {
            name: d.name,
            kind: d.kind,
            unit: d.unit,
            description: d.description,
            buckets: d.buckets,
            fields: Vec::new(),
            attribute_keys: Vec::new(),
            attributes: Vec::new(),
            max_series: Some(0),
            split_by: Vec::new(),
            prometheus: d.prometheus_names(),
            aggregation: d.aggregation,
        };
        instrument.add(d);
        instrument
    }

    fn add(&mut self, d: &Descriptor) {
        self.fields.push(d.field);
        for key in d.attribute_keys {
            if !self.attribute_keys.contains(key) {
                self.attribute_keys.push(key);
            }
        }
        for a in d.attributes {
            let values = a.wire_values();
            match self.attributes.iter_mut().find(|seen| seen.key == a.key) {
                Some(seen) => seen.merge(values),
                None => self.attributes.push(Attribute { key: a.key, values }),
            }
        }
        self.max_series = self
            .max_series
            .zip(d.max_series())
            .map(|(sum, series)| sum.saturating_add(series));
        for (key, _) in d.static_attributes {
            if !self.split_by.contains(key) {
                self.split_by.push(key);
            }
        }
        self.prometheus.labels = self
            .attribute_keys
            .iter()
            .map(|k| nemo_lens::prometheus_label(k))
            .collect();
    }

    /// Whether Prometheus may hold it as a native histogram: exponential
    /// histograms are native when the scraper reads them
    /// (`--enable-feature=native-histograms`), classic otherwise.
    pub fn is_exponential(&self) -> bool {
        self.aggregation == Some(HistogramAggregation::Base2Exponential)
    }

    /// The Prometheus labels of [`split_by`](Self::split_by).
    pub fn split_labels(&self) -> Vec<String> {
        self.split_by
            .iter()
            .map(|k| nemo_lens::prometheus_label(k))
            .collect()
    }
}

/// An attribute of an [`Instrument`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attribute {
    /// The attribute key.
    pub key: &'static str,
    /// The values it may take on the wire, over every field that records
    /// into the instrument (defaults included); `None` when free-form.
    pub values: Option<Vec<&'static str>>,
}

impl Attribute {
    /// The Prometheus label.
    pub fn label(&self) -> String {
        nemo_lens::prometheus_label(self.key)
    }

    /// Adds the values the attribute takes elsewhere: free-form anywhere
    /// is free-form.
    pub(crate) fn merge(&mut self, other: Option<Vec<&'static str>>) {
        self.values = match (self.values.take(), other) {
            (Some(mut values), Some(other)) => {
                for value in other {
                    if !values.contains(&value) {
                        values.push(value);
                    }
                }
                Some(values)
            }
            _ => None,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_instruments_are_merged() {
        let sets = builtin_sets();
        let inference = sets[0].instruments();
        let tokens = inference
            .iter()
            .find(|i| i.name == "gen_ai.client.token.usage")
            .unwrap();
        assert_eq!(tokens.fields, ["input_tokens", "output_tokens"]);
        assert_eq!(tokens.split_by, ["gen_ai.token.type"]);
        assert_eq!(tokens.split_labels(), ["gen_ai_token_type"]);
        assert!(tokens
            .prometheus
            .labels
            .contains(&"gen_ai_token_type".to_owned()));
        let total: usize = sets.iter().map(|s| s.instruments().len()).sum();
        let fields: usize = sets.iter().map(|s| s.descriptors.len()).sum();
        // The input and output token fields of the server and the client
        // sets: one instrument each.
        assert_eq!(total + 2, fields, "only the token fields share");
    }

    #[test]
    fn attribute_values_merge_over_the_fields_of_an_instrument() {
        let sets: Vec<InstrumentSet> = builtin_sets()
            .into_iter()
            .chain(unreleased_sets())
            .collect();
        let instrument = |name: &str| {
            sets.iter()
                .flat_map(|s| s.instruments())
                .find(|i| i.name == name)
                .unwrap()
        };
        let tokens = instrument("gen_ai.client.token.usage");
        let token_type = tokens
            .attributes
            .iter()
            .find(|a| a.key == "gen_ai.token.type")
            .unwrap();
        // One static value per field.
        assert_eq!(token_type.values, Some(vec!["input", "output"]));
        let operation = tokens
            .attributes
            .iter()
            .find(|a| a.key == "gen_ai.operation.name")
            .unwrap();
        assert_eq!(operation.values, None);
        assert_eq!(tokens.max_series, None, "the operation is free-form");

        let rollouts = instrument("gym.rollout.completed_total");
        assert_eq!(
            rollouts.attributes,
            [Attribute {
                key: "nemo.gym.rollout.outcome",
                values: Some(vec!["success", "failure"]),
            }]
        );
        // Success, failure, or no outcome set.
        assert_eq!(rollouts.max_series, Some(3));
        assert_eq!(
            instrument("rl.throughput.tokens_per_sec").max_series,
            Some(1)
        );
    }

    #[test]
    fn free_form_anywhere_is_free_form() {
        let mut a = Attribute {
            key: "app.kind",
            values: Some(vec!["a"]),
        };
        a.merge(Some(vec!["b", "a"]));
        assert_eq!(a.values, Some(vec!["a", "b"]));
        a.merge(None);
        assert_eq!(a.values, None);
        a.merge(Some(vec!["c"]));
        assert_eq!(a.values, None);
    }

    #[test]
    fn spec_groups_declare_free_form_attributes_and_fixed_static_ones() {
        let file = SpecFile::from_json(
            r#"{"groups": {"app": [{"key": "steps", "name": "app.steps", "kind": "counter",
                "unit": "{step}", "description": "Steps.", "attributes": ["app.phase"],
                "static_attributes": {"app.role": "trainer"}}]}}"#,
        )
        .unwrap();
        let set = &spec_sets(&file)[0];
        let d = &set.descriptors[0];
        assert_eq!(d.attribute_keys, ["app.phase", "app.role"]);
        assert_eq!(d.attributes[0].values, None);
        assert_eq!(d.attributes[1].values, Some(&["trainer"][..]));
        assert_eq!(d.max_series(), None);
    }
}
