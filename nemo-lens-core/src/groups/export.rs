//! A derived set written out as a group spec, so a Python process can
//! register the same metrics a Rust service declares.

use nemo_lens_naming::rules;

use super::file::SpecFile;
use super::spec::{MetricKind, MetricSpec};
use crate::{InstrumentKind, Instruments, SemconvOptIn};

impl SpecFile {
    /// The instruments `T` records under `opt_in`, as group `group`: one
    /// spec per field and instrument, keyed by the field name (by field and
    /// instrument when a field feeds several).
    ///
    /// ```
    /// use nemo_lens::groups::SpecFile;
    /// use nemo_lens::instruments::rl::RlMetrics;
    /// use nemo_lens::SemconvOptIn;
    ///
    /// let file = SpecFile::of::<RlMetrics>("rl", &SemconvOptIn::none());
    /// let json = file.to_json();
    /// assert!(json.contains("\"name\": \"rl.reward.mean\""));
    /// // It reads back, and follows the rules.
    /// assert_eq!(SpecFile::from_json(&json).unwrap().groups[0].1.len(), file.groups[0].1.len());
    /// ```
    pub fn of<T: Instruments + ?Sized>(group: &str, opt_in: &SemconvOptIn) -> Self {
        let mut specs: Vec<MetricSpec> = Vec::new();
        for d in T::DESCRIPTORS.iter().filter(|d| d.semconv.is_open(opt_in)) {
            let mut key = d.field.to_owned();
            if specs.iter().any(|s| s.key == key) {
                key = format!("{}_{}", d.field, nemo_lens_naming::sanitize_name(d.name));
            }
            let kind = match d.kind {
                InstrumentKind::Counter => MetricKind::Counter,
                InstrumentKind::UpDownCounter => MetricKind::UpDownCounter,
                InstrumentKind::Gauge => MetricKind::Gauge,
                InstrumentKind::Histogram => MetricKind::Histogram,
            };
            let statics: Vec<&str> = d.static_attributes.iter().map(|(k, _)| *k).collect();
            let mut spec = MetricSpec::new(key, d.name, kind)
                .unit(d.unit)
                .description(d.description)
                .attributes(
                    d.attribute_keys
                        .iter()
                        .filter(|k| !statics.contains(k))
                        .copied(),
                )
                .unit_in_name(
                    rules::spelled_unit(d.name, d.unit, d.kind == InstrumentKind::Counter)
                        .is_some(),
                );
            spec.buckets = d.buckets.map(<[f64]>::to_vec);
            spec.static_attributes = d
                .static_attributes
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect();
            specs.push(spec);
        }
        SpecFile {
            groups: vec![(group.to_owned(), specs)],
        }
    }
}
