//! The registry: one instrument per scope and name, series per attribute
//! set in either order, the cardinality limit, and deltas.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use opentelemetry::{InstrumentationScope, KeyValue};

use super::*;
use crate::overflow::OVERFLOW_ATTRIBUTE;

fn scope() -> InstrumentationScope {
    InstrumentationScope::builder("test.scope").build()
}

fn instrument(registry: &Registry, name: &str, limit: usize) -> Arc<HistogramInstrument<u64>> {
    registry.instrument(&scope(), name, || {
        Arc::new(HistogramInstrument::new(
            scope(),
            (name.to_owned(), "Time taken.".to_owned(), "ms".to_owned()),
            limit,
            registry.expiry().clone(),
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

/// One reading of one series of bounds `[10]`: `count` observations in
/// the first bucket, `sum`, and the interval's extremes.
fn reading(count: u64, sum: f64, extremes: Option<(f64, f64)>) -> Vec<OwnedScope> {
    vec![OwnedScope {
        scope: scope(),
        metrics: vec![OwnedMetric {
            name: "app.latency".to_owned(),
            description: String::new(),
            unit: "ms".to_owned(),
            value_type: crate::ValueType::F64,
            data: OwnedData::Explicit(vec![HistogramPoint {
                attributes: Vec::new(),
                start_time: SystemTime::UNIX_EPOCH,
                bounds: [10.0].into(),
                bucket_counts: vec![count, 0],
                count,
                sum,
                min: extremes.map(|(min, _)| min),
                max: extremes.map(|(_, max)| max),
                exemplars: Vec::new(),
            }]),
        }],
    }]
}

/// The three readings of the issue: (1, 7), then a reading between the
/// second record's sum and its bucket (1, 14), then (2, 14). The deltas
/// must add up to count 2 and sum 14, with the half-seen record's
/// extremes carried to the point that counts it.
#[test]
fn a_reading_that_sees_half_a_record_moves_no_baseline() {
    let t0 = SystemTime::UNIX_EPOCH;
    let mut delta = Delta::new(t0);
    let mut sent = Vec::new();
    let readings = [
        reading(1, 7.0, Some((7.0, 7.0))),
        reading(1, 14.0, Some((7.0, 7.0))),
        reading(2, 14.0, None),
    ];
    for (i, reading) in readings.into_iter().enumerate() {
        let (scopes, _) = delta.apply(reading, t0 + Duration::from_secs(i as u64 + 1));
        sent.extend(scopes.iter().flat_map(|s| points(&s.metrics[0]).to_vec()));
    }
    let counts: Vec<(u64, f64)> = sent.iter().map(|p| (p.count, p.sum)).collect();
    assert_eq!(counts, [(1, 7.0), (1, 7.0)]);
    assert_eq!(sent[1].bucket_counts, [1, 0]);
    assert_eq!((sent[1].min, sent[1].max), (Some(7.0), Some(7.0)));
}

/// One thread records while another collects as a delta reader as fast as
/// it can: the deltas add up to what was recorded, count and sum, and the
/// run's extremes reach the points (a record's extremes can land after the
/// reading that counted it: they go out with the next point, here the one
/// of a last record).
#[test]
fn deltas_taken_while_a_thread_records_add_up_to_what_it_recorded() {
    const RECORDS: u64 = 2_000_000;
    let registry = Registry::new();
    let histogram = instrument(&registry, "app.latency", 10);
    let series = histogram.series(&[]);
    let mut delta = Delta::new(registry.start_time());
    let done = std::sync::atomic::AtomicBool::new(false);
    let (mut count, mut sum) = (0u64, 0f64);
    let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
    let mut take = |delta: &mut Delta| {
        let (scopes, _) = delta.apply(registry.collect(true), SystemTime::now());
        for point in scopes.iter().flat_map(|s| points(&s.metrics[0]).to_vec()) {
            count += point.count;
            sum += point.sum;
            min = point.min.map_or(min, |m| min.min(m));
            max = point.max.map_or(max, |m| max.max(m));
        }
    };
    let mut readings = 0;
    std::thread::scope(|scope| {
        scope.spawn(|| {
            for value in 1..=RECORDS {
                series.record(value);
            }
            done.store(true, std::sync::atomic::Ordering::Release);
        });
        let mut last = false;
        while !last {
            // One more reading after the recorder is done: it sees all.
            last = done.load(std::sync::atomic::Ordering::Acquire);
            readings += 1;
            take(&mut delta);
        }
    });
    series.record(0);
    take(&mut delta);
    assert_eq!(count, RECORDS + 1, "after {readings} readings");
    assert_eq!(
        sum,
        (RECORDS * (RECORDS + 1) / 2) as f64,
        "after {readings} readings"
    );
    assert_eq!((min, max), (0.0, RECORDS as f64));
}

/// A gathered family of `kind` with one series of `value`.
fn gathered(kind: GatheredKind, value: GatheredValue) -> Vec<GatheredScope> {
    vec![GatheredScope {
        scope: scope(),
        families: vec![GatheredFamily {
            name: "worker_requests_total".to_owned(),
            help: String::new(),
            unit: String::new(),
            kind,
            series: vec![GatheredSeries::new(
                vec![("worker".to_owned(), "w1".to_owned())],
                value,
            )],
        }],
        text: Vec::new(),
    }]
}

fn only_value(scopes: &[GatheredScope]) -> (GatheredValue, Option<SystemTime>) {
    let series = &scopes[0].families[0].series[0];
    (series.value.clone(), series.start)
}

/// A gathered counter read 5, 8, then 3 (the library's process restarted
/// its count): deltas 5, 3 and 3, never negative, adding up to what it
/// counted (8 before the reset, 3 after), each from the reading before.
#[test]
fn gathered_counters_go_out_as_what_they_gained() {
    let t0 = SystemTime::UNIX_EPOCH;
    let at = |s: u64| t0 + Duration::from_secs(s);
    let mut delta = Delta::new(t0);
    let mut sent = Vec::new();
    for (second, value) in [(1, 5.0), (2, 8.0), (3, 3.0)] {
        let scopes = delta.apply_gathered(
            gathered(GatheredKind::Counter, GatheredValue::Number(value)),
            at(second),
        );
        sent.push(only_value(&scopes));
    }
    assert_eq!(
        sent,
        [
            (GatheredValue::Number(5.0), None),
            (GatheredValue::Number(3.0), Some(at(1))),
            (GatheredValue::Number(3.0), Some(at(2))),
        ]
    );
    // A gauge is a gauge: as it is.
    let (gauge, _) = only_value(&delta.apply_gathered(
        gathered(GatheredKind::Gauge, GatheredValue::Number(2.0)),
        at(4),
    ));
    assert_eq!(gauge, GatheredValue::Number(2.0));
}

#[test]
fn gathered_histograms_go_out_as_what_each_bucket_gained() {
    let t0 = SystemTime::UNIX_EPOCH;
    let mut delta = Delta::new(t0);
    let reading = |count, sum, low, high| GatheredValue::Histogram {
        count,
        sum,
        buckets: vec![(0.5, low), (1.0, high)],
    };
    delta.apply_gathered(gathered(GatheredKind::Histogram, reading(2, 0.9, 1, 2)), t0);
    let (second, start) = only_value(&delta.apply_gathered(
        gathered(GatheredKind::Histogram, reading(5, 3.4, 2, 4)),
        t0 + Duration::from_secs(1),
    ));
    assert_eq!(second, reading(3, 2.5, 1, 2));
    assert_eq!(start, Some(t0));
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
