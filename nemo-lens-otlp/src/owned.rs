//! The owned series of an export, added to the request the SDK's data
//! became: each scope's histograms beside that scope's SDK instruments.

use std::collections::HashMap;

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{
    InstrumentationScope as ProtoScope, KeyValue as ProtoKeyValue,
};
use opentelemetry_proto::tonic::metrics::v1::exponential_histogram_data_point::Buckets;
use opentelemetry_proto::tonic::metrics::v1::{
    exemplar, metric::Data, AggregationTemporality, Exemplar, ExponentialHistogram,
    ExponentialHistogramDataPoint, Histogram, HistogramDataPoint, Metric, ScopeMetrics,
};
use opentelemetry_proto::transform::common::tonic::Attributes;

use super::gathered::{self, nanos};
use nemo_lens_core::owned::{Batch, OwnedData, OwnedMetric, KEEPALIVE_SCOPE};

/// Drops the keep-alive scope from `request` and adds `batch`'s series.
pub(super) fn merge(request: &mut ExportMetricsServiceRequest, batch: &Batch) {
    let Some(resource) = request.resource_metrics.first_mut() else {
        return;
    };
    resource.scope_metrics.retain(|scope| {
        scope
            .scope
            .as_ref()
            .is_none_or(|s| s.name != KEEPALIVE_SCOPE)
    });
    restart_scalars(&mut resource.scope_metrics, batch);
    let start = nanos(batch.start);
    let time = nanos(batch.time);
    let temporality = if batch.delta {
        AggregationTemporality::Delta
    } else {
        AggregationTemporality::Cumulative
    };
    for owned in &batch.scopes {
        let metrics = owned
            .metrics
            .iter()
            .map(|metric| histogram(metric, start, time, temporality));
        add(&mut resource.scope_metrics, &owned.scope, metrics);
    }
    // The Prometheus names of nemo-lens's own metrics in this request: a
    // bridged family of one of those names is left out, as on a scrape.
    let own: std::collections::HashSet<String> = resource
        .scope_metrics
        .iter()
        .flat_map(|scope| {
            let bridged = scope
                .scope
                .as_ref()
                .is_some_and(|s| s.name == nemo_lens_core::__internal::bridge::SCOPE);
            scope
                .metrics
                .iter()
                .map(move |m| prometheus_family(m, bridged))
        })
        .collect();
    for source in &batch.gathered {
        let metrics = gathered::metrics(source, time, batch.delta, &own);
        add(
            &mut resource.scope_metrics,
            &source.scope,
            metrics.into_iter(),
        );
    }
}

/// Gives each point of an owned counter or up-down counter the start of its
/// own series: the SDK gives every point its instrument's, and a series that
/// ended and came back must start again, or a backend would read its lower
/// value as a drop within one series.
fn restart_scalars(scopes: &mut [ScopeMetrics], batch: &Batch) {
    if batch.scalar_starts.is_empty() {
        return;
    }
    for scope in scopes {
        let Some(proto_scope) = &scope.scope else {
            continue;
        };
        let version = (!proto_scope.version.is_empty()).then(|| proto_scope.version.clone());
        for metric in &mut scope.metrics {
            let Some(Data::Sum(sum)) = &mut metric.data else {
                continue;
            };
            let key = (
                proto_scope.name.clone(),
                version.clone(),
                metric.name.to_ascii_lowercase(),
            );
            let Some(series) = batch.scalar_starts.get(&key) else {
                continue;
            };
            let starts: HashMap<Vec<u8>, u64> = series
                .iter()
                .map(|(attributes, start)| {
                    let proto = Attributes::from(attributes.iter().cloned()).0;
                    (attribute_key(proto), nanos(Some(*start)))
                })
                .collect();
            for point in &mut sum.data_points {
                if let Some(start) = starts.get(&attribute_key(point.attributes.clone())) {
                    point.start_time_unix_nano = point.start_time_unix_nano.max(*start);
                }
            }
        }
    }
}

/// Attributes in one comparable form: sorted by key, encoded.
fn attribute_key(mut attributes: Vec<ProtoKeyValue>) -> Vec<u8> {
    attributes.sort_by(|a, b| a.key.cmp(&b.key));
    attributes
        .iter()
        .flat_map(prost::Message::encode_length_delimited_to_vec)
        .collect()
}

/// The family a metric of the request has on a Prometheus endpoint.
fn prometheus_family(metric: &Metric, bridged: bool) -> String {
    if bridged {
        return nemo_lens_core::__internal::bridge::prometheus_name(&metric.name);
    }
    let counter = matches!(&metric.data, Some(Data::Sum(sum)) if sum.is_monotonic);
    nemo_lens_naming::rules::prometheus_family(&metric.name, &metric.unit, counter)
}

/// Adds `metrics` to the scope `scope` of `scopes`, which it makes when
/// the SDK's data has no such scope.
fn add(
    scopes: &mut Vec<ScopeMetrics>,
    scope: &opentelemetry::InstrumentationScope,
    metrics: impl Iterator<Item = Metric>,
) {
    let proto_scope = ProtoScope::from((scope, None));
    match scopes
        .iter_mut()
        .find(|s| s.scope.as_ref() == Some(&proto_scope))
    {
        Some(existing) => existing.metrics.extend(metrics),
        None => scopes.push(ScopeMetrics {
            scope: Some(proto_scope),
            metrics: metrics.collect(),
            schema_url: scope.schema_url().map(str::to_owned).unwrap_or_default(),
        }),
    }
}

/// Whether `request` carries no metric at all.
pub(super) fn is_empty(request: &ExportMetricsServiceRequest) -> bool {
    request
        .resource_metrics
        .iter()
        .all(|r| r.scope_metrics.iter().all(|s| s.metrics.is_empty()))
}

/// The data points `request` carries: what is lost when it cannot be sent.
pub(super) fn points(request: &ExportMetricsServiceRequest) -> usize {
    use opentelemetry_proto::tonic::metrics::v1::metric::Data as D;
    request
        .resource_metrics
        .iter()
        .flat_map(|r| &r.scope_metrics)
        .flat_map(|s| &s.metrics)
        .map(|m| match &m.data {
            Some(D::Gauge(g)) => g.data_points.len(),
            Some(D::Sum(s)) => s.data_points.len(),
            Some(D::Histogram(h)) => h.data_points.len(),
            Some(D::ExponentialHistogram(h)) => h.data_points.len(),
            Some(D::Summary(s)) => s.data_points.len(),
            None => 0,
        })
        .sum()
}

fn histogram(
    metric: &OwnedMetric,
    start: u64,
    time: u64,
    temporality: AggregationTemporality,
) -> Metric {
    let data = match &metric.data {
        OwnedData::Explicit(points) => Data::Histogram(Histogram {
            data_points: points
                .iter()
                .map(|point| HistogramDataPoint {
                    attributes: Attributes::from(point.attributes.iter().cloned()).0,
                    start_time_unix_nano: start.max(nanos(Some(point.start_time))),
                    time_unix_nano: time,
                    count: point.count,
                    sum: Some(point.sum),
                    bucket_counts: point.bucket_counts.clone(),
                    explicit_bounds: point.bounds.to_vec(),
                    exemplars: exemplars(&point.exemplars),
                    flags: 0,
                    min: point.min,
                    max: point.max,
                })
                .collect(),
            aggregation_temporality: temporality as i32,
        }),
        OwnedData::Exponential(points) => Data::ExponentialHistogram(ExponentialHistogram {
            data_points: points
                .iter()
                .map(|point| {
                    let side = |b: &nemo_lens_core::cells::ExponentialBuckets| Buckets {
                        offset: b.offset,
                        bucket_counts: b.counts.clone(),
                    };
                    ExponentialHistogramDataPoint {
                        attributes: Attributes::from(point.attributes.iter().cloned()).0,
                        start_time_unix_nano: start.max(nanos(Some(point.start_time))),
                        time_unix_nano: time,
                        count: point.count,
                        sum: Some(point.sum),
                        scale: point.scale.into(),
                        zero_count: point.zero_count,
                        positive: Some(side(&point.positive)),
                        negative: Some(side(&point.negative)),
                        flags: 0,
                        exemplars: exemplars(&point.exemplars),
                        min: point.min,
                        max: point.max,
                        zero_threshold: 0.0,
                    }
                })
                .collect(),
            aggregation_temporality: temporality as i32,
        }),
    };
    Metric {
        name: metric.name.clone(),
        description: metric.description.clone(),
        unit: metric.unit.clone(),
        metadata: Vec::new(),
        data: Some(data),
    }
}

/// Exemplars as OTLP carries them: the value, when, and the span's ids
/// (absent for a record outside any span).
fn exemplars(held: &[nemo_lens_core::exemplar::Exemplar]) -> Vec<Exemplar> {
    held.iter()
        .map(|e| {
            let (trace_id, span_id) = e
                .span
                .map(|s| {
                    (
                        s.trace_id().to_bytes().to_vec(),
                        s.span_id().to_bytes().to_vec(),
                    )
                })
                .unwrap_or_default();
            Exemplar {
                filtered_attributes: Vec::new(),
                time_unix_nano: nanos(Some(e.time)),
                span_id,
                trace_id,
                value: Some(exemplar::Value::AsDouble(e.value)),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;
    use std::time::UNIX_EPOCH;

    use opentelemetry::KeyValue;
    use opentelemetry_proto::tonic::metrics::v1::{NumberDataPoint, ResourceMetrics, Sum};

    use super::*;

    fn point(backend: &str, start: u64) -> NumberDataPoint {
        NumberDataPoint {
            // Out of order: matched as a set.
            attributes: Attributes::from(
                [
                    KeyValue::new("server.address", backend.to_owned()),
                    KeyValue::new("gen_ai.request.model", "llama"),
                ]
                .into_iter(),
            )
            .0,
            start_time_unix_nano: start,
            ..Default::default()
        }
    }

    /// A counter series that ended and came back keeps the start of its
    /// own series, not the instrument's.
    #[test]
    fn scalar_points_take_the_start_of_their_own_series() {
        let scope = opentelemetry::InstrumentationScope::builder("nemo.lens")
            .with_version("0.1.0")
            .build();
        let instrument_start = 1_000;
        let mut request = ExportMetricsServiceRequest {
            resource_metrics: vec![ResourceMetrics {
                scope_metrics: vec![ScopeMetrics {
                    scope: Some(ProtoScope::from((&scope, None))),
                    metrics: vec![Metric {
                        name: "router.requests".to_owned(),
                        data: Some(Data::Sum(Sum {
                            data_points: vec![
                                point("10.0.0.1:8000", instrument_start),
                                point("10.0.0.2:8000", instrument_start),
                            ],
                            aggregation_temporality: AggregationTemporality::Cumulative as i32,
                            is_monotonic: true,
                        })),
                        ..Default::default()
                    }],
                    ..Default::default()
                }],
                ..Default::default()
            }],
        };
        let came_back = UNIX_EPOCH + Duration::from_secs(50);
        let mut batch = Batch::default();
        batch.scalar_starts.insert(
            (
                "nemo.lens".to_owned(),
                Some("0.1.0".to_owned()),
                "router.requests".to_owned(),
            ),
            [(
                vec![
                    KeyValue::new("gen_ai.request.model", "llama"),
                    KeyValue::new("server.address", "10.0.0.2:8000"),
                ],
                came_back,
            )]
            .into(),
        );
        merge(&mut request, &batch);
        let Some(Data::Sum(sum)) = &request.resource_metrics[0].scope_metrics[0].metrics[0].data
        else {
            panic!("the sum");
        };
        let starts: Vec<u64> = sum
            .data_points
            .iter()
            .map(|p| p.start_time_unix_nano)
            .collect();
        assert_eq!(starts, [instrument_start, 50_000_000_000]);
    }
}
