//! Series that end (`owned::expiry` of the model), read through the
//! capture: idle ones after the timeout, forgotten ones at once, and the
//! ones that must never end.

use std::sync::Arc;
use std::time::Duration;

use opentelemetry::KeyValue;

use nemo_lens_core::__internal::{meter_with_owned, OwnedContext, Streams};
use nemo_lens_core::owned::{Delta, OwnedData, Registry};

use nemo_lens_core::owned::expiry::Clock;

use crate::testing::{Capture, ManualClock};

const TIMEOUT: Duration = Duration::from_secs(60);

fn capture() -> (Capture, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new());
    (Capture::with_idle_timeout(TIMEOUT, clock.clone()), clock)
}

fn backend(n: u32) -> KeyValue {
    KeyValue::new("server.address", format!("10.0.0.{n}:8000"))
}

fn addresses(capture: &Capture, name: &str) -> Vec<String> {
    capture
        .attribute_sets(name)
        .into_iter()
        .flatten()
        .map(|(_, v)| v)
        .collect()
}

#[test]
fn an_idle_series_ends_after_the_timeout_and_comes_back_new() {
    let (capture, clock) = capture();
    let meter = capture.meter();
    let latency = meter.f64_histogram("router.latency").build();
    let requests = meter.u64_counter("router.requests").build();
    let last = meter.f64_gauge("router.queue").build();
    for n in [1, 2] {
        latency.record(5.0, &[backend(n)]);
        requests.add(3, &[backend(n)]);
        last.record(7.0, &[backend(n)]);
    }
    assert_eq!(capture.registry().series(), 6);
    // Each reading sweeps, as each scrape or export does: a series ends
    // within one reading of the timeout.
    assert_eq!(capture.count("router.latency", &[]), Some(2));
    clock.advance(TIMEOUT / 2);
    latency.record(1.0, &[backend(2)]);
    requests.add(1, &[backend(2)]);
    last.record(7.0, &[backend(2)]);
    // Backend 1 idle for half the timeout: still there.
    assert_eq!(capture.count("router.latency", &[]), Some(3));
    clock.advance(TIMEOUT / 2 - Duration::from_secs(1));
    assert_eq!(addresses(&capture, "router.latency").len(), 2);
    clock.advance(Duration::from_secs(1));
    // Backend 1 idle past the timeout: gone from every instrument and
    // from memory; backend 2 was recorded since.
    for name in ["router.latency", "router.requests", "router.queue"] {
        assert_eq!(addresses(&capture, name), ["10.0.0.2:8000"], "{name}");
    }
    assert_eq!(capture.registry().series(), 3);
    assert_eq!(capture.sum("router.requests", &[]), Some(4.0));
    // Recorded again: a new series, counting from nothing.
    requests.add(1, &[backend(1)]);
    latency.record(9.0, &[backend(1)]);
    let one = [("server.address", "10.0.0.1:8000")];
    assert_eq!(capture.sum("router.requests", &one), Some(1.0));
    assert_eq!(capture.count("router.latency", &one), Some(1));
    assert_eq!(capture.sum("router.latency", &one), Some(9.0));
}

#[test]
fn a_held_series_lives_until_its_handle_is_dropped() {
    let (capture, clock) = capture();
    let meter = capture.meter();
    let latency = meter.f64_histogram("router.latency").build();
    let bound = latency.bind(&[backend(1)]);
    bound.record(1.0);
    assert_eq!(capture.count("router.latency", &[]), Some(1));
    clock.advance(TIMEOUT * 10);
    assert_eq!(capture.count("router.latency", &[]), Some(1));
    drop(bound);
    assert_eq!(capture.count("router.latency", &[]), None);
}

#[test]
fn an_up_down_counter_away_from_zero_never_ends() {
    let (capture, clock) = capture();
    let meter = capture.meter();
    let in_flight = meter.i64_up_down_counter("router.in_flight").build();
    in_flight.add(1, &[backend(1)]);
    in_flight.add(1, &[backend(2)]);
    in_flight.add(-1, &[backend(2)]);
    assert_eq!(capture.sum("router.in_flight", &[]), Some(1.0));
    clock.advance(TIMEOUT * 100);
    // A request to backend 1 still runs after a long stall; backend 2 is
    // at zero and idle.
    assert_eq!(addresses(&capture, "router.in_flight"), ["10.0.0.1:8000"]);
    let one = [("server.address", "10.0.0.1:8000")];
    assert_eq!(capture.sum("router.in_flight", &one), Some(1.0));
    in_flight.add(-1, &[backend(1)]);
    assert_eq!(capture.sum("router.in_flight", &one), Some(0.0));
    clock.advance(TIMEOUT * 2);
    assert_eq!(capture.sum("router.in_flight", &[]), None);
}

#[test]
fn forgetting_ends_every_series_carrying_the_value_at_once() {
    let (capture, _clock) = capture();
    let meter = capture.meter();
    let latency = meter.f64_histogram("router.latency").build();
    let requests = meter.u64_counter("router.requests").build();
    let model = KeyValue::new("gen_ai.request.model", "llama");
    for n in [1, 2] {
        latency.record(5.0, &[backend(n), model.clone()]);
        requests.add(1, &[model.clone(), backend(n)]);
    }
    let held = requests.bind(&[backend(1), KeyValue::new("lora", "a")]);
    held.add(1);
    let gone = meter.forget(&backend(1));
    assert_eq!((gone.series, gone.held), (2, 1));
    assert_eq!(addresses(&capture, "router.latency").len(), 2);
    assert_eq!(capture.count("router.latency", &[]), Some(1));
    assert_eq!(
        capture.sum("router.requests", &[("server.address", "10.0.0.1:8000")]),
        Some(1.0),
        "the held series stays"
    );
    drop(held);
    assert_eq!(meter.forget(&backend(1)).series, 1);
    assert_eq!(capture.sum("router.requests", &[]), Some(1.0));
    // A value no series carries forgets nothing.
    assert_eq!(meter.forget(&backend(9)), Default::default());
}

#[test]
fn the_cardinality_limit_counts_live_series_only() {
    let clock = Arc::new(ManualClock::new());
    let registry = Registry::with_idle_timeout(TIMEOUT, Some(clock.clone()));
    let meter = meter_with_owned(
        Capture::new().meter().otel().clone(),
        nemo_lens_core::SemconvOptIn::none(),
        OwnedContext {
            registry: Arc::clone(&registry),
            scope: opentelemetry::InstrumentationScope::builder("test").build(),
            streams: Arc::new(Streams {
                cardinality_limit: Some(3),
                ..Default::default()
            }),
        },
    );
    let latency = meter.f64_histogram("router.latency").build();
    for n in 0..30 {
        // A scrape every 30 s, a new backend between each two.
        clock.advance(TIMEOUT / 2);
        latency.record(1.0, &[backend(n)]);
        registry.sweep();
    }
    let scopes = registry.collect(false);
    let OwnedData::Explicit(points) = &scopes[0].metrics[0].data else {
        panic!("explicit buckets");
    };
    let sets: Vec<_> = points.iter().map(|p| p.attributes.clone()).collect();
    // Each backend was admitted in turn, none overflowed; the last two are
    // younger than the timeout.
    assert_eq!(sets, [vec![backend(28)], vec![backend(29)]]);
}

#[test]
fn a_series_that_comes_back_starts_anew_in_delta_and_cumulative() {
    let (capture, clock) = capture();
    let registry = Arc::clone(capture.registry());
    let latency = capture.meter().f64_histogram("router.latency").build();
    let mut delta = Delta::new(registry.start_time());
    latency.record(5.0, &[backend(1)]);
    latency.record(5.0, &[backend(1)]);
    let read = |delta: &mut Delta| {
        registry.sweep();
        let (scopes, _) = delta.apply(registry.collect(true), std::time::SystemTime::now());
        scopes
            .iter()
            .flat_map(|s| &s.metrics)
            .flat_map(|m| match &m.data {
                OwnedData::Explicit(points) => points.clone(),
                OwnedData::Exponential(_) => unreachable!(),
            })
            .collect::<Vec<_>>()
    };
    let first = read(&mut delta);
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].count, 2);
    let started = first[0].start_time;
    clock.advance(TIMEOUT * 2);
    // The gap: the series ended, and no point says otherwise.
    assert!(read(&mut delta).is_empty());
    latency.record(7.0, &[backend(1)]);
    let back = read(&mut delta);
    assert_eq!(back.len(), 1);
    // One record since it came back: not left out for having fewer than
    // the old series, and nothing subtracted.
    assert_eq!((back[0].count, back[0].sum), (1, 7.0));
    assert!(back[0].start_time > started, "a new start time");
}

/// A meter on `registry` whose instruments keep at most `limit` series,
/// its counters observed through `sdk`'s provider.
fn limited_meter(sdk: &Capture, registry: &Arc<Registry>, limit: usize) -> nemo_lens_core::Meter {
    meter_with_owned(
        sdk.meter().otel().clone(),
        nemo_lens_core::SemconvOptIn::none(),
        OwnedContext {
            registry: Arc::clone(registry),
            scope: opentelemetry::InstrumentationScope::builder("test").build(),
            streams: Arc::new(Streams {
                cardinality_limit: Some(limit),
                ..Default::default()
            }),
        },
    )
}

#[test]
fn label_sets_in_waves_end_before_a_new_one_overflows() {
    // 300 label sets in waves of 20 every 0.7 s, through a limit of 100,
    // with a 2 s timeout and a scrape every 2.1 s: at most 60 were recorded
    // in the last 2 s when a wave comes, yet a series recorded just before
    // a scrape used to count as fresh from that scrape on, and the sixth
    // wave overflowed.
    const WAVE: usize = 20;
    const WAVES: usize = 15;
    let timeout = Duration::from_secs(2);
    let scrape_every = Duration::from_millis(2100);
    let clock = Arc::new(ManualClock::new());
    let registry = Registry::with_idle_timeout(timeout, Some(clock.clone()));
    let sdk = Capture::new();
    let meter = limited_meter(&sdk, &registry, 100);
    let requests = meter.u64_counter("router.requests").build();
    let latency = meter.f64_histogram("router.latency").build();
    let mut next_scrape = scrape_every;
    let mut exported: std::collections::BTreeMap<String, f64> = Default::default();
    let scrape = |exported: &mut std::collections::BTreeMap<String, f64>| {
        registry.sweep();
        let metrics: Vec<_> = registry
            .collect(false)
            .into_iter()
            .flat_map(|s| s.metrics)
            .collect();
        for metric in &metrics {
            let OwnedData::Explicit(points) = &metric.data else {
                panic!("explicit buckets");
            };
            assert!(points.len() <= 100, "{} series", points.len());
            for point in points {
                assert!(
                    point
                        .attributes
                        .iter()
                        .all(|kv| kv.key.as_str() != "otel.metric.overflow"),
                    "an overflow series at {:?}",
                    clock.now()
                );
                let address = point.attributes[0].value.to_string();
                exported.insert(address, point.sum);
            }
        }
        // The counter reaches exporters through the SDK's observable.
        let counters = sdk.exposition();
        assert!(
            !counters.contains("otel_metric_overflow"),
            "an overflow series at {:?}:\n{counters}",
            clock.now()
        );
    };
    for wave in 0..WAVES {
        for n in 0..WAVE {
            let address = [KeyValue::new(
                "server.address",
                format!("10.0.{wave}.{n}:8000"),
            )];
            requests.add(1, &address);
            latency.record(0.25, &address);
        }
        let until = clock.now() + Duration::from_millis(700);
        while next_scrape <= until {
            clock.advance(next_scrape - clock.now());
            scrape(&mut exported);
            next_scrape += scrape_every;
        }
        clock.advance(until - clock.now());
    }
    clock.advance(timeout);
    scrape(&mut exported);
    // Every label set reached a scrape before it ended: nothing was lost.
    assert_eq!(exported.len(), WAVE * WAVES);
    assert!(exported.values().all(|sum| *sum == 0.25), "{exported:?}");
}
