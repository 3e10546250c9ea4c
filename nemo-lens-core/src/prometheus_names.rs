//! The names a [`Descriptor`]'s series have on a Prometheus endpoint, by the
//! translation the `opentelemetry-prometheus` exporter applies (see the
//! `nemo-lens-naming` crate): unit suffixes, `_total` on counters,
//! `_bucket`/`_sum`/`_count` on histograms, attribute keys as labels.

use crate::descriptor::{Descriptor, InstrumentKind};

/// What a scraper sees of one instrument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrometheusNames {
    /// The metric family (the `# TYPE` line): `rl_generation_duration_ms_milliseconds`,
    /// `app_requests_total`.
    pub family: String,
    /// The Prometheus metric type of the family: `counter`, `gauge` or
    /// `histogram` (an up-down counter is a gauge).
    pub metric_type: &'static str,
    /// Every sample name: the family itself, or for a histogram the family
    /// with `_bucket`, `_sum` and `_count`.
    pub samples: Vec<String>,
    /// The label of each attribute key, in the order of
    /// [`Descriptor::attribute_keys`] (`gen_ai.token.type` is
    /// `gen_ai_token_type`).
    pub labels: Vec<String>,
}

impl PrometheusNames {
    /// `{family}_bucket` for a histogram, the series `histogram_quantile`
    /// reads.
    pub fn bucket(&self) -> Option<&str> {
        self.sample("_bucket")
    }

    /// `{family}_count` for a histogram: its rate is the rate of
    /// measurements.
    pub fn count(&self) -> Option<&str> {
        self.sample("_count")
    }

    /// `{family}_sum` for a histogram.
    pub fn sum(&self) -> Option<&str> {
        self.sample("_sum")
    }

    fn sample(&self, suffix: &str) -> Option<&str> {
        if self.metric_type != "histogram" {
            return None;
        }
        self.samples
            .iter()
            .map(String::as_str)
            .find(|s| s.strip_prefix(self.family.as_str()) == Some(suffix))
    }
}

/// The Prometheus label an attribute key becomes: every character outside
/// `[A-Za-z0-9:]` is `_` (`gen_ai.token.type` is `gen_ai_token_type`).
pub fn prometheus_label(key: &str) -> String {
    nemo_lens_naming::label_name(key)
}

impl Descriptor {
    /// The metric family name this instrument is scraped as: for
    /// `rl.generation.duration_ms` with unit `ms`,
    /// `rl_generation_duration_ms_milliseconds`; for a counter `app.requests`,
    /// `app_requests_total`.
    ///
    /// ```
    /// use nemo_lens::instruments::rl::RlMetrics;
    /// use nemo_lens::Instruments;
    /// let generation = RlMetrics::DESCRIPTORS.iter().find(|d| d.field == "generation_duration_ms").unwrap();
    /// assert_eq!(generation.prometheus_name(), "rl_generation_duration_ms_milliseconds");
    /// assert_eq!(
    ///     generation.prometheus_names().bucket(),
    ///     Some("rl_generation_duration_ms_milliseconds_bucket")
    /// );
    /// ```
    pub fn prometheus_name(&self) -> String {
        nemo_lens_naming::rules::prometheus_family(
            self.name,
            self.unit,
            self.kind == InstrumentKind::Counter,
        )
    }

    /// The family, its type, every sample name and the attribute labels.
    pub fn prometheus_names(&self) -> PrometheusNames {
        let family = self.prometheus_name();
        let (metric_type, samples) = match self.kind {
            InstrumentKind::Histogram => (
                "histogram",
                nemo_lens_naming::HISTOGRAM_SUFFIXES
                    .iter()
                    .map(|suffix| format!("{family}{suffix}"))
                    .collect(),
            ),
            InstrumentKind::Counter => ("counter", vec![family.clone()]),
            // A non-monotonic sum is exported as a gauge.
            InstrumentKind::UpDownCounter | InstrumentKind::Gauge => {
                ("gauge", vec![family.clone()])
            }
        };
        PrometheusNames {
            family,
            metric_type,
            samples,
            labels: self
                .attribute_keys
                .iter()
                .map(|k| nemo_lens_naming::label_name(k))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptor::ValueType;

    fn descriptor(name: &'static str, kind: InstrumentKind, unit: &'static str) -> Descriptor {
        Descriptor {
            field: "f",
            name,
            kind,
            value_type: ValueType::F64,
            unit,
            description: "d",
            buckets: None,
            attribute_keys: &["gen_ai.token.type", "app.kind"],
            attributes: &[
                crate::AttributeDescriptor {
                    key: "gen_ai.token.type",
                    values: None,
                    default: None,
                },
                crate::AttributeDescriptor {
                    key: "app.kind",
                    values: None,
                    default: None,
                },
            ],
            static_attributes: &[],
            semconv: crate::SemconvGate::Always,
            aggregation: None,
        }
    }

    #[test]
    fn every_kind() {
        let h = descriptor("rl.rollout.duration_ms", InstrumentKind::Histogram, "ms");
        let names = h.prometheus_names();
        assert_eq!(names.family, "rl_rollout_duration_ms_milliseconds");
        assert_eq!(names.metric_type, "histogram");
        assert_eq!(
            names.samples,
            [
                "rl_rollout_duration_ms_milliseconds_bucket",
                "rl_rollout_duration_ms_milliseconds_sum",
                "rl_rollout_duration_ms_milliseconds_count"
            ]
        );
        assert_eq!(
            names.count(),
            Some("rl_rollout_duration_ms_milliseconds_count")
        );
        assert_eq!(names.sum(), Some("rl_rollout_duration_ms_milliseconds_sum"));
        assert_eq!(names.labels, ["gen_ai_token_type", "app_kind"]);

        let c = descriptor("app.bytes", InstrumentKind::Counter, "By").prometheus_names();
        assert_eq!(
            (c.family.as_str(), c.metric_type),
            ("app_bytes_bytes_total", "counter")
        );
        assert_eq!(c.samples, ["app_bytes_bytes_total"]);
        assert_eq!(c.bucket(), None);

        let u = descriptor("app.queue", InstrumentKind::UpDownCounter, "{item}").prometheus_names();
        assert_eq!((u.family.as_str(), u.metric_type), ("app_queue", "gauge"));

        let g = descriptor(
            "rl.throughput.tokens_per_sec",
            InstrumentKind::Gauge,
            "{token}/s",
        );
        assert_eq!(
            g.prometheus_name(),
            "rl_throughput_tokens_per_sec_per_second"
        );
    }
}
