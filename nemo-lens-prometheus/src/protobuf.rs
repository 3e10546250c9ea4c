//! The protobuf exposition (`io.prometheus.client.MetricFamily`, each
//! family length-delimited), the one format that carries native
//! histograms. The messages are those of prometheus/client_model v0.3.0
//! (what Prometheus 2.42 reads), written out with prost's derive: only the
//! fields nemo-lens fills, with their field numbers.

use prost::Message;

use std::time::UNIX_EPOCH;

use crate::proto::{
    Bucket, BucketSpan, Counter, Exemplar as ProtoExemplar, Gauge, Histogram, LabelPair, Metric,
    MetricFamily, Quantile, Summary, Timestamp, Untyped,
};
use nemo_lens_core::exemplar::Exemplar;

use crate::exposition::exemplars::by_bucket;
use crate::exposition::families::{Family, Kind, Sample};
use crate::exposition::native::{self, NativeSide, ZERO_THRESHOLD};

/// The families as length-delimited protobuf messages.
pub(super) fn encode(families: &[Family]) -> Vec<u8> {
    let mut out = Vec::new();
    for family in families {
        let message = MetricFamily {
            name: family.name.clone(),
            help: family.help.clone(),
            r#type: match family.kind {
                Kind::Counter => 0,
                Kind::Gauge => 1,
                Kind::Summary => 2,
                Kind::Untyped => 3,
                Kind::Histogram => 4,
            },
            metric: family
                .metrics
                .iter()
                .filter_map(|series| {
                    let label = series
                        .labels
                        .iter()
                        .map(|(name, value)| LabelPair {
                            name: name.clone(),
                            value: value.clone(),
                        })
                        .collect();
                    let mut metric = Metric {
                        label,
                        ..Metric::default()
                    };
                    match (&series.value, family.kind) {
                        (Sample::Number(value), Kind::Counter) => {
                            metric.counter = Some(Counter { value: *value })
                        }
                        (Sample::Number(value), Kind::Gauge) => {
                            metric.gauge = Some(Gauge { value: *value })
                        }
                        (Sample::Number(value), Kind::Untyped) => {
                            metric.untyped = Some(Untyped { value: *value })
                        }
                        (
                            Sample::Histogram {
                                count,
                                sum,
                                buckets,
                            },
                            Kind::Histogram,
                        ) => {
                            metric.histogram =
                                Some(classic(*count, *sum, buckets, &series.exemplars));
                        }
                        (Sample::Exponential(point), Kind::Histogram) => {
                            // A scale Prometheus cannot read is dropped, as
                            // the OpenTelemetry specification says.
                            let native = native::native(point)?;
                            // Classic buckets beside the native ones: 2.42
                            // ignores them, later versions can keep both.
                            let mut histogram = classic(
                                point.count,
                                point.sum,
                                &native::classic(point),
                                &series.exemplars,
                            );
                            histogram.schema = native.schema;
                            histogram.zero_threshold = ZERO_THRESHOLD;
                            histogram.zero_count = native.zero_count;
                            (histogram.positive_span, histogram.positive_delta) =
                                spans(native.positive);
                            (histogram.negative_span, histogram.negative_delta) =
                                spans(native.negative);
                            metric.histogram = Some(histogram);
                        }
                        (
                            Sample::Summary {
                                quantiles,
                                sum,
                                count,
                            },
                            Kind::Summary,
                        ) => {
                            metric.summary = Some(Summary {
                                sample_count: *count,
                                sample_sum: *sum,
                                quantile: quantiles
                                    .iter()
                                    .map(|(quantile, value)| Quantile {
                                        quantile: *quantile,
                                        value: *value,
                                    })
                                    .collect(),
                            });
                        }
                        _ => return None,
                    }
                    Some(metric)
                })
                .collect(),
        };
        if message.metric.is_empty() {
            continue;
        }
        // Writing into a Vec cannot run out of room.
        let _ = message.encode_length_delimited(&mut out);
    }
    out
}

/// Classic buckets, each with the exemplar that falls in it; a `+Inf`
/// bucket is written only to carry one (Prometheus implies it otherwise).
fn classic(count: u64, sum: f64, buckets: &[(f64, u64)], exemplars: &[Exemplar]) -> Histogram {
    let placed = by_bucket(buckets, exemplars);
    let mut bucket: Vec<Bucket> = buckets
        .iter()
        .enumerate()
        .map(|(at, (upper_bound, cumulative_count))| Bucket {
            cumulative_count: *cumulative_count,
            upper_bound: *upper_bound,
            exemplar: placed.get(at).copied().flatten().map(message),
        })
        .collect();
    if let Some(Some(last)) = placed.get(buckets.len()) {
        bucket.push(Bucket {
            cumulative_count: count,
            upper_bound: f64::INFINITY,
            exemplar: Some(message(last)),
        });
    }
    Histogram {
        sample_count: count,
        sample_sum: sum,
        bucket,
        ..Histogram::default()
    }
}

/// An exemplar as `io.prometheus.client.Exemplar`, with its timestamp.
fn message(exemplar: &Exemplar) -> ProtoExemplar {
    let since = exemplar.time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let label = exemplar
        .span
        .map(|span| {
            let (trace_id, span_id) = (span.trace_id(), span.span_id());
            vec![
                LabelPair {
                    name: "trace_id".to_owned(),
                    value: format!("{trace_id:032x}"),
                },
                LabelPair {
                    name: "span_id".to_owned(),
                    value: format!("{span_id:016x}"),
                },
            ]
        })
        .unwrap_or_default();
    ProtoExemplar {
        label,
        value: exemplar.value,
        timestamp: Some(Timestamp {
            seconds: i64::try_from(since.as_secs()).unwrap_or(i64::MAX),
            nanos: i32::try_from(since.subsec_nanos()).unwrap_or(0),
        }),
    }
}

fn spans(side: NativeSide) -> (Vec<BucketSpan>, Vec<i64>) {
    let spans = side
        .spans
        .into_iter()
        .map(|(offset, length)| BucketSpan { offset, length })
        .collect();
    (spans, side.deltas)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Format, PrometheusRenderer};
    use nemo_lens_core::{histogram_view, HistogramAggregation, PrometheusResourceLabels};
    use opentelemetry::metrics::MeterProvider as _;
    use opentelemetry_sdk::metrics::SdkMeterProvider;

    /// Exponential histograms of `values` rendered both ways.
    fn rendered(values: &[f64]) -> (String, Vec<u8>) {
        let (reader, renderer) = PrometheusRenderer::new(&PrometheusResourceLabels::None).unwrap();
        let provider = SdkMeterProvider::builder()
            .with_reader(reader)
            .with_view(histogram_view(HistogramAggregation::Base2Exponential))
            .build();
        let histogram = provider
            .meter("test")
            .f64_histogram("ttft")
            .with_unit("s")
            .build();
        for value in values {
            histogram.record(*value, &[]);
        }
        let text = renderer.render_as(Format::Text).unwrap();
        let proto = renderer.render_as(Format::Protobuf).unwrap();
        (String::from_utf8(text.body).unwrap(), proto.body)
    }

    /// A point attribute and a resource attribute of the same key: the
    /// label has the point's value, once, in both formats; a resource key
    /// no point carries is still a label.
    #[test]
    fn a_point_attribute_wins_over_the_resource_label_of_its_key() {
        use opentelemetry::KeyValue;
        use opentelemetry_sdk::Resource;
        for selection in [
            PrometheusResourceLabels::All,
            PrometheusResourceLabels::keys([
                "gen_ai.request.model",
                "nemo.gym.server.name",
                "team",
            ]),
        ] {
            let (reader, renderer) = PrometheusRenderer::new(&selection).unwrap();
            let provider = SdkMeterProvider::builder()
                .with_resource(
                    Resource::builder_empty()
                        .with_attributes([
                            KeyValue::new("gen_ai.request.model", "from-resource"),
                            KeyValue::new("nemo.gym.server.name", "env"),
                            KeyValue::new("team", "rl"),
                        ])
                        .build(),
                )
                .with_reader(reader)
                .build();
            let meter = provider.meter("test");
            meter
                .u64_counter("calls")
                .build()
                .add(1, &[KeyValue::new("gen_ai.request.model", "from-point")]);
            meter
                .f64_gauge("memory")
                .build()
                .record(2.0, &[KeyValue::new("nemo.gym.server.name", "env")]);
            let text = renderer.render_as(Format::Text).unwrap();
            let text = String::from_utf8(text.body).unwrap();
            let calls = text
                .lines()
                .find(|l| l.starts_with("calls_total{"))
                .unwrap();
            assert!(
                calls.contains("gen_ai_request_model=\"from-point\","),
                "{calls}"
            );
            assert_eq!(calls.matches("gen_ai_request_model=").count(), 1, "{calls}");
            assert!(calls.contains("team=\"rl\""), "{calls}");
            let memory = text.lines().find(|l| l.starts_with("memory{")).unwrap();
            assert!(memory.contains("nemo_gym_server_name=\"env\","), "{memory}");

            let proto = renderer.render_as(Format::Protobuf).unwrap();
            let mut bytes = proto.body.as_slice();
            let families: Vec<MetricFamily> =
                std::iter::from_fn(|| MetricFamily::decode_length_delimited(&mut bytes).ok())
                    .collect();
            let labels = |family: &str| -> Vec<(String, String)> {
                let found = families.iter().find(|f| f.name == family).unwrap();
                found.metric[0]
                    .label
                    .iter()
                    .map(|l| (l.name.clone(), l.value.clone()))
                    .collect()
            };
            let calls = labels("calls_total");
            let models: Vec<&(String, String)> = calls
                .iter()
                .filter(|(name, _)| name == "gen_ai_request_model")
                .collect();
            assert_eq!(
                models,
                [&("gen_ai_request_model".to_owned(), "from-point".to_owned())]
            );
            assert!(
                calls.contains(&("team".to_owned(), "rl".to_owned())),
                "{calls:?}"
            );
            let memory = labels("memory");
            let servers: Vec<&(String, String)> = memory
                .iter()
                .filter(|(name, _)| name == "nemo_gym_server_name")
                .collect();
            assert_eq!(
                servers,
                [&("nemo_gym_server_name".to_owned(), "env".to_owned())]
            );
        }
    }

    #[test]
    fn text_scrapes_get_power_of_two_buckets_holding_every_value() {
        let (text, _) = rendered(&[0.0, 0.3, 0.3, 3.0]);
        let buckets: Vec<&str> = text
            .lines()
            .filter(|line| line.starts_with("ttft_seconds_bucket"))
            .collect();
        // Cumulative at each power of two from the zero bucket up to the
        // largest value's.
        assert_eq!(
            buckets,
            [
                "ttft_seconds_bucket{otel_scope_name=\"test\",le=\"0\"} 1",
                "ttft_seconds_bucket{otel_scope_name=\"test\",le=\"0.5\"} 3",
                "ttft_seconds_bucket{otel_scope_name=\"test\",le=\"1\"} 3",
                "ttft_seconds_bucket{otel_scope_name=\"test\",le=\"2\"} 3",
                "ttft_seconds_bucket{otel_scope_name=\"test\",le=\"4\"} 4",
                "ttft_seconds_bucket{otel_scope_name=\"test\",le=\"+Inf\"} 4",
            ]
        );
        assert!(
            text.contains("ttft_seconds_count{otel_scope_name=\"test\"} 4\n"),
            "{text}"
        );
        assert!(
            text.contains("ttft_seconds_sum{otel_scope_name=\"test\"} 3.6\n"),
            "{text}"
        );
    }

    #[test]
    fn protobuf_scrapes_carry_the_native_buckets() {
        let values = [0.0, 0.3, 0.3, 3.0, 5.0];
        let (_, body) = rendered(&values);
        let mut bytes = body.as_slice();
        let family = std::iter::from_fn(|| MetricFamily::decode_length_delimited(&mut bytes).ok())
            .find(|family| family.name == "ttft_seconds")
            .unwrap();
        assert_eq!((family.name.as_str(), family.r#type), ("ttft_seconds", 4));
        let histogram = family.metric[0].histogram.clone().unwrap();
        assert_eq!(histogram.sample_count, 5);
        assert_eq!(histogram.zero_count, 1);
        assert_eq!(histogram.zero_threshold, ZERO_THRESHOLD);
        // 0.3 to 5 is 4.06 powers of two: 32 buckets each fit in the SDK's
        // 160, 64 would not. (Prometheus's schemas stop at 8.)
        assert_eq!(histogram.schema, 5);
        // Absolute counts from the deltas, placed at their indexes by the
        // spans: bucket i covers (2^((i-1)/32), 2^(i/32)].
        let mut counts = histogram.positive_delta.iter().scan(0i64, |count, delta| {
            *count += delta;
            Some(*count)
        });
        let mut index = 0;
        let mut placed = Vec::new();
        for span in &histogram.positive_span {
            index += span.offset;
            for _ in 0..span.length {
                let count = counts.next().unwrap();
                if count > 0 {
                    placed.push((index, count));
                }
                index += 1;
            }
        }
        let expected: Vec<(i32, i64)> = {
            let mut by_index: Vec<(i32, i64)> = Vec::new();
            for value in &values[1..] {
                let index = (value.log2() * 32.0).ceil() as i32;
                match by_index.last_mut() {
                    Some((last, count)) if *last == index => *count += 1,
                    _ => by_index.push((index, 1)),
                }
            }
            by_index
        };
        assert_eq!(placed, expected);
        assert!(histogram.negative_span.is_empty());
    }
}
