//! Families gathered from other libraries' registries as OTLP metrics:
//! counters as monotonic sums, gauges and untyped families as gauges,
//! histograms as explicit-bucket histograms and summaries as summaries.
//! Cumulative, each series from when nemo-lens first gathered it; for a
//! delta exporter, counters and histograms come already turned into what
//! they gained since the last export (`owned::Delta::apply_gathered`) and go
//! out as deltas.

use std::collections::HashSet;
use std::time::{SystemTime, UNIX_EPOCH};

use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::metrics::v1::{
    metric::Data, number_data_point, summary_data_point::ValueAtQuantile, AggregationTemporality,
    Gauge, Histogram, HistogramDataPoint, Metric, NumberDataPoint, Sum, Summary, SummaryDataPoint,
};
use opentelemetry_proto::transform::common::tonic::Attributes;

use nemo_lens_core::__internal::overflow::OVERFLOW_ATTRIBUTE;
use nemo_lens_core::owned::{GatheredKind, GatheredScope, GatheredSeries, GatheredValue};

/// The metrics of one source, read at `time`, counters and histograms as
/// deltas with `delta`. A family whose name the SDK would refuse even after
/// the metrics bridge's renaming is left out, and so is one whose name is
/// among `taken` (the Prometheus names of nemo-lens's own metrics), with
/// the warning a scrape gives.
pub(super) fn metrics(
    source: &GatheredScope,
    time: u64,
    delta: bool,
    taken: &HashSet<String>,
) -> Vec<Metric> {
    let temporality = if delta {
        AggregationTemporality::Delta
    } else {
        AggregationTemporality::Cumulative
    } as i32;
    source
        .families
        .iter()
        .filter_map(|family| {
            if taken.contains(&family.name) {
                nemo_lens_core::__internal::warn_shadowed(&family.name);
                return None;
            }
            let name = nemo_lens_core::__internal::bridge::otel_name(&family.name)?;
            let data = match family.kind {
                GatheredKind::Counter => Data::Sum(Sum {
                    data_points: numbers(&family.series, time),
                    aggregation_temporality: temporality,
                    is_monotonic: true,
                }),
                GatheredKind::Gauge | GatheredKind::Untyped => Data::Gauge(Gauge {
                    data_points: numbers(&family.series, time),
                }),
                GatheredKind::Histogram => Data::Histogram(Histogram {
                    data_points: family
                        .series
                        .iter()
                        .filter_map(|series| histogram(series, time))
                        .collect(),
                    aggregation_temporality: temporality,
                }),
                GatheredKind::Summary => Data::Summary(Summary {
                    data_points: family
                        .series
                        .iter()
                        .filter_map(|series| summary(series, time))
                        .collect(),
                }),
            };
            Some(Metric {
                name,
                description: family.help.clone(),
                unit: family.unit.clone(),
                metadata: Vec::new(),
                data: Some(data),
            })
        })
        .collect()
}

fn numbers(series: &[GatheredSeries], time: u64) -> Vec<NumberDataPoint> {
    series
        .iter()
        .filter_map(|series| {
            let GatheredValue::Number(value) = series.value else {
                return None;
            };
            Some(NumberDataPoint {
                attributes: attributes(series),
                start_time_unix_nano: nanos(series.start),
                time_unix_nano: time,
                exemplars: Vec::new(),
                flags: 0,
                value: Some(number_data_point::Value::AsDouble(value)),
            })
        })
        .collect()
}

/// Prometheus's cumulative buckets as OTLP's per-bucket counts.
fn histogram(series: &GatheredSeries, time: u64) -> Option<HistogramDataPoint> {
    let GatheredValue::Histogram { count, sum, .. } = &series.value else {
        return None;
    };
    let (explicit_bounds, bucket_counts) = series.value.per_bucket()?;
    Some(HistogramDataPoint {
        attributes: attributes(series),
        start_time_unix_nano: nanos(series.start),
        time_unix_nano: time,
        count: *count,
        sum: Some(*sum),
        bucket_counts,
        explicit_bounds,
        exemplars: Vec::new(),
        flags: 0,
        min: None,
        max: None,
    })
}

fn summary(series: &GatheredSeries, time: u64) -> Option<SummaryDataPoint> {
    let GatheredValue::Summary {
        quantiles,
        sum,
        count,
    } = &series.value
    else {
        return None;
    };
    Some(SummaryDataPoint {
        attributes: attributes(series),
        start_time_unix_nano: nanos(series.start),
        time_unix_nano: time,
        count: *count,
        sum: *sum,
        quantile_values: quantiles
            .iter()
            .map(|(quantile, value)| ValueAtQuantile {
                quantile: *quantile,
                value: *value,
            })
            .collect(),
        flags: 0,
    })
}

fn attributes(series: &GatheredSeries) -> Vec<KeyValue> {
    let labels = series
        .labels
        .iter()
        .map(|(name, value)| opentelemetry::KeyValue::new(name.clone(), value.clone()));
    let overflow = series
        .overflow
        .then(|| opentelemetry::KeyValue::new(OVERFLOW_ATTRIBUTE, true));
    Attributes::from(labels.chain(overflow)).0
}

/// An OTLP time stamp: nanoseconds since the Unix epoch, 0 for none.
pub(super) fn nanos(time: Option<SystemTime>) -> u64 {
    time.and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::InstrumentationScope;

    use nemo_lens_core::owned::GatheredFamily;

    fn scope(kind: GatheredKind, value: GatheredValue) -> GatheredScope {
        let mut series = GatheredSeries::new(vec![("route".into(), "/v1".into())], value);
        series.start = Some(std::time::UNIX_EPOCH + std::time::Duration::from_secs(7));
        GatheredScope {
            scope: InstrumentationScope::builder("s").build(),
            families: vec![GatheredFamily {
                name: "dynamo:latency_seconds".into(),
                help: "Latency".into(),
                unit: "s".into(),
                kind,
                series: vec![series],
            }],
            text: Vec::new(),
        }
    }

    #[test]
    fn histogram_buckets_are_decumulated_with_inf_as_overflow() {
        let source = scope(
            GatheredKind::Histogram,
            GatheredValue::Histogram {
                count: 10,
                sum: 4.5,
                buckets: vec![(0.1, 2), (1.0, 7)],
            },
        );
        let metrics = metrics(&source, 99, false, &HashSet::new());
        assert_eq!(metrics[0].name, "dynamo.latency_seconds");
        assert_eq!(metrics[0].unit, "s");
        let Some(Data::Histogram(h)) = &metrics[0].data else {
            panic!("not a histogram: {:?}", metrics[0].data);
        };
        assert_eq!(h.aggregation_temporality, 2);
        let point = &h.data_points[0];
        assert_eq!(point.bucket_counts, vec![2, 5, 3]);
        assert_eq!(point.explicit_bounds, vec![0.1, 1.0]);
        assert_eq!(point.start_time_unix_nano, 7_000_000_000);
        assert_eq!(point.time_unix_nano, 99);
        assert_eq!(point.attributes[0].key, "route");
    }

    #[test]
    fn counters_are_monotonic_cumulative_sums() {
        let metrics = metrics(
            &scope(GatheredKind::Counter, GatheredValue::Number(3.0)),
            1,
            false,
            &HashSet::new(),
        );
        let Some(Data::Sum(sum)) = &metrics[0].data else {
            panic!("not a sum");
        };
        assert!(sum.is_monotonic);
        assert_eq!(sum.aggregation_temporality, 2);
        assert_eq!(
            sum.data_points[0].value,
            Some(number_data_point::Value::AsDouble(3.0))
        );
    }

    /// For a delta exporter, counters and histograms (already turned into
    /// what they gained) are marked delta; gauges stay gauges.
    #[test]
    fn a_delta_export_marks_counters_and_histograms_delta() {
        let counter = metrics(
            &scope(GatheredKind::Counter, GatheredValue::Number(3.0)),
            1,
            true,
            &HashSet::new(),
        );
        let Some(Data::Sum(sum)) = &counter[0].data else {
            panic!("not a sum");
        };
        assert_eq!(
            sum.aggregation_temporality,
            AggregationTemporality::Delta as i32
        );
        assert!(sum.is_monotonic);
        let histogram = GatheredValue::Histogram {
            count: 1,
            sum: 0.5,
            buckets: vec![(1.0, 1)],
        };
        let histogram = metrics(
            &scope(GatheredKind::Histogram, histogram),
            1,
            true,
            &HashSet::new(),
        );
        let Some(Data::Histogram(h)) = &histogram[0].data else {
            panic!("not a histogram");
        };
        assert_eq!(
            h.aggregation_temporality,
            AggregationTemporality::Delta as i32
        );
        let gauge = metrics(
            &scope(GatheredKind::Gauge, GatheredValue::Number(3.0)),
            1,
            true,
            &HashSet::new(),
        );
        assert!(matches!(gauge[0].data, Some(Data::Gauge(_))));
    }

    #[test]
    fn summaries_keep_their_quantiles() {
        let metrics = metrics(
            &scope(
                GatheredKind::Summary,
                GatheredValue::Summary {
                    quantiles: vec![(0.5, 1.0), (0.99, 2.0)],
                    sum: 9.0,
                    count: 4,
                },
            ),
            1,
            false,
            &HashSet::new(),
        );
        let Some(Data::Summary(summary)) = &metrics[0].data else {
            panic!("not a summary");
        };
        let point = &summary.data_points[0];
        assert_eq!((point.count, point.sum), (4, 9.0));
        assert_eq!(point.quantile_values[1].quantile, 0.99);
        assert_eq!(point.quantile_values[1].value, 2.0);
    }
}
