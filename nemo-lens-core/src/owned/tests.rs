//! The registry: one instrument per scope and name, series per attribute
//! set in either order, the cardinality limit, and deltas.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use opentelemetry::{InstrumentationScope, KeyValue};

use super::*;
use crate::export::overflow::OVERFLOW_ATTRIBUTE;

fn scope() -> InstrumentationScope {
    InstrumentationScope::builder("test.scope").build()
}

fn instrument(registry: &Registry, name: &str, limit: usize) -> Arc<HistogramInstrument<u64>> {
    registry.instrument(&scope(), name, || {
        Arc::new(HistogramInstrument::new(
            scope(),
            (name.to_owned(), "Time taken.".to_owned(), "ms".to_owned()),
            limit,
            || crate::cells::Histogram::new([10.0, 100.0].into()),
        ))
    })
}

#[test]
fn one_instrument_per_scope_and_name_whatever_the_case() {
    let registry = Registry::new();
    let first = instrument(&registry, "app.latency", 10);
    let again = instrument(&registry, "APP.Latency", 10);
    assert!(Arc::ptr_eq(&first, &again));
    assert_eq!(registry.len(), 1);
    first.record(5, &[]);
    again.record(50, &[]);
    let scopes = registry.collect(false);
    assert_eq!(scopes.len(), 1);
    let metric = &scopes[0].metrics[0];
    assert_eq!(
        (metric.name.as_str(), metric.unit.as_str()),
        ("app.latency", "ms")
    );
    assert_eq!(points(metric)[0].bucket_counts, [1, 1, 0]);
    assert_eq!((points(metric)[0].count, points(metric)[0].sum), (2, 55.0));
}

#[test]
fn attributes_in_any_order_reach_one_series_exported_sorted() {
    let registry = Registry::new();
    let histogram = instrument(&registry, "app.latency", 10);
    let (a, b) = (KeyValue::new("a", "1"), KeyValue::new("b", 2_i64));
    histogram.record(1, &[b.clone(), a.clone()]);
    histogram.record(2, &[a.clone(), b.clone()]);
    // A repeated key keeps its first value, as the SDK's sort does.
    histogram.record(3, &[a.clone(), b.clone(), KeyValue::new("a", "other")]);
    let scopes = registry.collect(false);
    let points = points(&scopes[0].metrics[0]);
    assert_eq!(points.len(), 1, "{points:?}");
    assert_eq!(points[0].attributes, [a, b]);
    assert_eq!((points[0].count, points[0].sum), (3, 6.0));
}

#[test]
fn attribute_sets_past_the_limit_share_the_overflow_series() {
    let registry = Registry::new();
    let histogram = instrument(&registry, "app.latency", 2);
    histogram.record(1, &[]);
    for model in ["a", "b", "c", "d"] {
        histogram.record(10, &[KeyValue::new("model", model)]);
    }
    let scopes = registry.collect(false);
    let points = points(&scopes[0].metrics[0]);
    let sets: Vec<(Vec<KeyValue>, u64)> = points
        .iter()
        .map(|p| (p.attributes.clone(), p.count))
        .collect();
    assert_eq!(
        sets,
        [
            (vec![], 1),
            (vec![KeyValue::new("model", "a")], 1),
            (vec![KeyValue::new("model", "b")], 1),
            (vec![KeyValue::new(OVERFLOW_ATTRIBUTE, true)], 2),
        ]
    );
}

#[test]
fn deltas_are_what_each_series_gained_and_idle_series_are_left_out() {
    let registry = Registry::new();
    let histogram = instrument(&registry, "app.latency", 10);
    let idle = histogram.series(&[KeyValue::new("model", "idle")]);
    idle.record(7);
    let busy = histogram.series(&[KeyValue::new("model", "busy")]);
    let t0 = registry.start_time();
    let mut delta = Delta::new(t0);
    busy.record(5);
    let t1 = t0 + Duration::from_secs(1);
    let (first, start) = delta.apply(registry.collect(true), t1);
    assert_eq!(start, t0);
    assert_eq!(points(&first[0].metrics[0]).len(), 2);
    busy.record(500);
    busy.record(50);
    let (second, start) = delta.apply(registry.collect(true), t1 + Duration::from_secs(1));
    assert_eq!(start, t1);
    let points = points(&second[0].metrics[0]);
    assert_eq!(
        points.len(),
        1,
        "the idle series gained nothing: {points:?}"
    );
    let point = &points[0];
    assert_eq!(point.attributes, [KeyValue::new("model", "busy")]);
    assert_eq!((point.count, point.sum), (2, 550.0));
    assert_eq!(point.bucket_counts, [0, 1, 1]);
    // The interval's own extremes, not the series' since it began.
    assert_eq!((point.min, point.max), (Some(50.0), Some(500.0)));
    let (third, _) = delta.apply(registry.collect(true), SystemTime::now());
    assert!(third.is_empty(), "{third:?}");
}

#[test]
fn a_series_without_observations_is_not_exported() {
    let registry = Registry::new();
    let histogram = instrument(&registry, "app.latency", 10);
    let _bound = histogram.series(&[KeyValue::new("model", "m")]);
    assert!(registry.collect(false).is_empty());
}

fn points(metric: &OwnedMetric) -> &[HistogramPoint] {
    match &metric.data {
        OwnedData::Explicit(points) => points,
        other => panic!("not explicit: {other:?}"),
    }
}
