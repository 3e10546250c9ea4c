//! [`declared`]: what an `Instruments` type declares, as a stable text table
//! for snapshot tests.

use std::fmt::Write as _;

use nemo_lens_core::{
    AttributeDescriptor, Descriptor, InstrumentKind, Instruments, SemconvGate, ValueType,
};

/// What `T` declares, one line per [`Descriptor`] in declaration order
/// (`T::DESCRIPTORS`), each line ending in `\n`, labels and attributes in the
/// order the wire carries them (labels sorted by name as a scrape shows them,
/// attributes by key as OTLP sends them):
///
/// ```text
/// {field}: {name} {kind}<{value type}> unit="{unit}" prometheus={family}{{labels}} attributes=[{attributes}]
/// ```
///
/// followed, when they apply, by ` buckets=[..]` (a histogram's explicit
/// boundaries, or `buckets=default` for the SDK's), ` aggregation=..` (an
/// aggregation the declaration pins) and ` semconv=..` (`opt_in(value)` or
/// `until_opt_in(value)` for an instrument a semantic-convention opt-in
/// gates). The kind is the derive's key (`up_down_counter`), the value type
/// `f64`, `u64` or `i64`, the family and its labels are what a Prometheus
/// scrape shows ([`Descriptor::prometheus_names`]). Attributes are
/// separated by `, `, each written as:
///
/// - `key=value`: a static attribute, always that value;
/// - `key:a|b|c`: one of a fixed set of values (an enum, `bool`);
/// - `key:*`: a free-form value (strings, numbers);
///
/// with `(default=v)` after the last two when an unset field records `v`
/// (without it, an unset field leaves the attribute out). Numbers are
/// written as Rust writes `f64` (`0.005`, `10`).
///
/// Descriptions are left out, so rewording a doc comment does not change
/// the table; everything a dashboard or an alert queries is in it.
///
/// ```
/// use nemo_lens::Instruments;
///
/// #[derive(Instruments, Default)]
/// struct Steps {
///     /// Training loss of the step.
///     #[gauge("train.loss")]
///     loss: Option<f64>,
///     /// Time of one step.
///     #[histogram("train.step.duration", unit = "s", buckets = [0.5, 1, 2])]
///     duration_s: Option<f64>,
/// }
///
/// assert_eq!(
///     nemo_lens::testing::declared::<Steps>(),
///     "loss: train.loss gauge<f64> unit=\"\" prometheus=train_loss{} attributes=[]\n\
///      duration_s: train.step.duration histogram<f64> unit=\"s\" \
///      prometheus=train_step_duration_seconds{} attributes=[] buckets=[0.5,1,2]\n"
/// );
/// ```
pub fn declared<T: Instruments + ?Sized>() -> String {
    let mut out = String::new();
    for descriptor in T::DESCRIPTORS {
        line(&mut out, descriptor);
    }
    out
}

fn line(out: &mut String, d: &Descriptor) {
    let mut names = d.prometheus_names();
    // In the order the wire carries them: a scrape sorts labels by name,
    // OTLP (the SDK's attribute sets) sorts attributes by key.
    names.labels.sort();
    let mut attributes: Vec<&AttributeDescriptor> = d.attributes.iter().collect();
    attributes.sort_by_key(|a| a.key);
    let _ = write!(
        out,
        "{}: {} {}<{}> unit=\"{}\" prometheus={}{{{}}} attributes=[",
        d.field,
        d.name,
        d.kind.as_str(),
        value_type(d.value_type),
        d.unit,
        names.family,
        names.labels.join(","),
    );
    for (i, attribute) in attributes.into_iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        push_attribute(out, attribute, d.static_attributes);
    }
    out.push(']');
    if d.kind == InstrumentKind::Histogram {
        match d.buckets {
            Some(bounds) => {
                let bounds: Vec<String> = bounds.iter().map(f64::to_string).collect();
                let _ = write!(out, " buckets=[{}]", bounds.join(","));
            }
            None => out.push_str(" buckets=default"),
        }
    }
    if let Some(aggregation) = d.aggregation {
        let _ = write!(out, " aggregation={}", aggregation.as_str());
    }
    match d.semconv {
        SemconvGate::Always => {}
        SemconvGate::OptIn(value) => {
            let _ = write!(out, " semconv=opt_in({value})");
        }
        SemconvGate::UntilOptIn(value) => {
            let _ = write!(out, " semconv=until_opt_in({value})");
        }
    }
    out.push('\n');
}

fn push_attribute(
    out: &mut String,
    a: &AttributeDescriptor,
    static_attributes: &[(&'static str, &'static str)],
) {
    if let Some((_, value)) = static_attributes.iter().find(|(key, _)| *key == a.key) {
        let _ = write!(out, "{}={value}", a.key);
        return;
    }
    match a.values {
        Some(values) => {
            let _ = write!(out, "{}:{}", a.key, values.join("|"));
        }
        None => {
            let _ = write!(out, "{}:*", a.key);
        }
    }
    if let Some(default) = a.default {
        let _ = write!(out, "(default={default})");
    }
}

fn value_type(value_type: ValueType) -> &'static str {
    match value_type {
        ValueType::F64 => "f64",
        ValueType::U64 => "u64",
        ValueType::I64 => "i64",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nemo_lens_core::{Meter, SetSlot};

    /// A hand-written set: every part of a line, without the derive (which
    /// this crate's own tests cannot use).
    struct Declared;

    const OUTCOME: &[&str] = &["success", "failure"];

    impl Instruments for Declared {
        type Set = ();
        const DESCRIPTORS: &'static [Descriptor] = &[
            Descriptor {
                field: "finished",
                name: "app.rollout.finished",
                kind: InstrumentKind::Counter,
                value_type: ValueType::U64,
                unit: "{rollout}",
                description: "Rollouts finished.",
                buckets: None,
                attribute_keys: &["app.rollout.outcome", "app.model", "app.env.kind"],
                attributes: &[
                    AttributeDescriptor {
                        key: "app.rollout.outcome",
                        values: Some(OUTCOME),
                        default: None,
                    },
                    AttributeDescriptor {
                        key: "app.model",
                        values: None,
                        default: Some("unknown"),
                    },
                    AttributeDescriptor {
                        key: "app.env.kind",
                        values: Some(&["sandbox"]),
                        default: Some("sandbox"),
                    },
                ],
                static_attributes: &[("app.env.kind", "sandbox")],
                semconv: SemconvGate::Always,
                aggregation: None,
            },
            Descriptor {
                field: "ttft",
                name: "app.ttft",
                kind: InstrumentKind::Histogram,
                value_type: ValueType::F64,
                unit: "s",
                description: "Time to first token.",
                buckets: None,
                attribute_keys: &[],
                attributes: &[],
                static_attributes: &[],
                semconv: SemconvGate::OptIn("gen_ai_latest_experimental"),
                aggregation: Some(nemo_lens_core::HistogramAggregation::Base2Exponential),
            },
        ];
        fn build_set(_: &Meter) {}
        fn slot() -> &'static SetSlot {
            static SLOT: SetSlot = SetSlot::new();
            &SLOT
        }
        fn record_with(&self, _: &()) {}
    }

    #[test]
    fn every_part_of_a_descriptor_has_its_place_on_the_line() {
        assert_eq!(
            declared::<Declared>(),
            "finished: app.rollout.finished counter<u64> unit=\"{rollout}\" \
             prometheus=app_rollout_finished_total{app_env_kind,app_model,app_rollout_outcome} \
             attributes=[app.env.kind=sandbox, app.model:*(default=unknown), \
             app.rollout.outcome:success|failure]\n\
             ttft: app.ttft histogram<f64> unit=\"s\" prometheus=app_ttft_seconds{} \
             attributes=[] buckets=default aggregation=base2_exponential_bucket_histogram \
             semconv=opt_in(gen_ai_latest_experimental)\n"
        );
    }
}
