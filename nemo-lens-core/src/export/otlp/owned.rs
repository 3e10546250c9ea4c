//! The owned series of an export, added to the request the SDK's data
//! became: each scope's histograms beside that scope's SDK instruments.

use std::time::{SystemTime, UNIX_EPOCH};

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::common::v1::InstrumentationScope as ProtoScope;
use opentelemetry_proto::tonic::metrics::v1::exponential_histogram_data_point::Buckets;
use opentelemetry_proto::tonic::metrics::v1::{
    metric::Data, AggregationTemporality, ExponentialHistogram, ExponentialHistogramDataPoint,
    Histogram, HistogramDataPoint, Metric, ScopeMetrics,
};
use opentelemetry_proto::transform::common::tonic::Attributes;

use super::gathered;
use crate::owned::{Batch, OwnedData, OwnedMetric, KEEPALIVE_SCOPE};

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
                .is_some_and(|s| s.name == crate::export::bridge::SCOPE);
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

/// The family a metric of the request has on a Prometheus endpoint.
fn prometheus_family(metric: &Metric, bridged: bool) -> String {
    if bridged {
        return crate::export::bridge::prometheus_name(&metric.name);
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
                    start_time_unix_nano: start,
                    time_unix_nano: time,
                    count: point.count,
                    sum: Some(point.sum),
                    bucket_counts: point.bucket_counts.clone(),
                    explicit_bounds: point.bounds.to_vec(),
                    exemplars: Vec::new(),
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
                    let side = |b: &crate::cells::ExponentialBuckets| Buckets {
                        offset: b.offset,
                        bucket_counts: b.counts.clone(),
                    };
                    ExponentialHistogramDataPoint {
                        attributes: Attributes::from(point.attributes.iter().cloned()).0,
                        start_time_unix_nano: start,
                        time_unix_nano: time,
                        count: point.count,
                        sum: Some(point.sum),
                        scale: point.scale.into(),
                        zero_count: point.zero_count,
                        positive: Some(side(&point.positive)),
                        negative: Some(side(&point.negative)),
                        flags: 0,
                        exemplars: Vec::new(),
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

pub(super) fn nanos(time: Option<SystemTime>) -> u64 {
    time.and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as u64)
}
