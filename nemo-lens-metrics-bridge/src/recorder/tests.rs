//! The recorder's registration, limits and expiry, seen through a
//! Prometheus renderer.

use std::sync::Mutex;

use metrics::{counter, gauge, histogram};
use nemo_lens_core::PrometheusResourceLabels;
use nemo_lens_prometheus::{Format, PrometheusRenderer};
use nemo_lens_telemetry::{EnvLookup, NemoLensConfig, SetupOptions, TelemetryHandle};

use super::*;
use crate::MetricsBridge;

/// The cardinality limit is process-wide: these tests take turns.
static SERIAL: Mutex<()> = Mutex::new(());

fn telemetry(limit: &str) -> (TelemetryHandle, PrometheusRenderer) {
    let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs([
        ("NEMO_LENS_ENABLED", "true"),
        ("NEMO_LENS_CARDINALITY_LIMIT", limit),
    ]))
    .expect("config");
    let (reader, renderer) =
        PrometheusRenderer::new(&PrometheusResourceLabels::None).expect("renderer");
    let telemetry = SetupOptions::new()
        .env(EnvLookup::from_pairs::<&str, &str>([]))
        .probe_gpus(false)
        .allow_reinit(true)
        .set_global(false)
        .metric_reader(reader)
        .setup(&config, 0, 1)
        .expect("setup");
    (telemetry, renderer)
}

fn text(renderer: &PrometheusRenderer) -> String {
    String::from_utf8(renderer.render_as(Format::Text).expect("render").body).expect("utf-8")
}

fn assert_lines(text: &str, lines: &[&str]) {
    for line in lines {
        assert!(text.contains(line), "{line} in {text}");
    }
}

#[test]
fn keys_past_the_cardinality_limit_stay_out_of_the_look_up() {
    let _turn = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let (telemetry, renderer) = telemetry("4");
    let recorder = MetricsBridge::new().build(&telemetry);
    metrics::with_local_recorder(&recorder, || {
        for worker in 0..1_000 {
            let worker = worker.to_string();
            counter!("past_limit_total", "worker" => worker.clone()).increment(1);
            gauge!("past_limit_gauge", "worker" => worker.clone()).increment(1.0);
            // Not exported (already a counter): bounded too.
            gauge!("past_limit_total", "worker" => worker).increment(1.0);
        }
    });
    assert_eq!(recorder.inner.counters.len(), 4);
    assert_eq!(recorder.inner.gauges.len(), 4 + 4);
    let text = text(&renderer);
    assert_lines(
        &text,
        &[
            "past_limit_total{otel_metric_overflow=\"true\"} 996\n",
            "past_limit_gauge{otel_metric_overflow=\"true\"} 996\n",
            "past_limit_total{worker=\"3\"} 1\n",
        ],
    );
}

/// Collections expiring every idle series while another thread records
/// through fresh handles: every key in the look-up reaches the series
/// its labels have in the export, and every exported series is reached
/// by its keys (no orphan exported for good beside a newer one).
#[test]
fn expiry_racing_registration_leaves_no_orphan() {
    let _turn = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let (telemetry, renderer) = telemetry("2000");
    let recorder = MetricsBridge::new()
        .idle_timeout(MetricKindMask::COUNTER, Some(Duration::ZERO))
        .build(&telemetry);
    let key = Key::from_parts("expiry_race_total", vec![metrics::Label::new("a", "1")]);
    let mut expired_rounds = 0;
    for _ in 0..200 {
        std::thread::scope(|scope| {
            scope.spawn(|| {
                for _ in 0..5 {
                    let _ = text(&renderer);
                }
            });
            scope.spawn(|| {
                metrics::with_local_recorder(&recorder, || {
                    for _ in 0..50 {
                        counter!("expiry_race_total", "a" => "1").increment(1);
                    }
                })
            });
        });
        let families = recorder.inner.lock_families();
        let Some(Family {
            exported: Some((_, Instrument::Counter { observed, .. })),
            ..
        }) = families.get("expiry_race_total")
        else {
            panic!("the counter family");
        };
        let series = observed.lock();
        assert!(series.by_labels.len() <= 1);
        let registered = recorder.inner.counters.get(&key);
        match series.by_labels.values().next() {
            Some(entry) => {
                assert_eq!(entry.keys.len(), 1);
                let registered = registered.expect("the exported series' key");
                assert!(Arc::ptr_eq(&registered, &entry.series));
            }
            None => {
                expired_rounds += 1;
                assert!(registered.is_none(), "a key to an unexported series");
            }
        }
    }
    assert!(expired_rounds > 0, "the series never expired");
}

#[test]
fn histogram_keys_past_the_cardinality_limit_go_to_the_overflow_series() {
    let _turn = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let (telemetry, renderer) = telemetry("4");
    let recorder = MetricsBridge::new()
        .set_buckets_for_metric(Matcher::Full("past_limit_seconds".into()), &[1.0])
        .expect("buckets")
        .set_summary_for_metric(Matcher::Full("past_limit_summary".into()))
        .build(&telemetry);
    metrics::with_local_recorder(&recorder, || {
        for worker in 0..1_000 {
            let worker = worker.to_string();
            histogram!("past_limit_seconds", "worker" => worker.clone()).record(0.5);
            histogram!("past_limit_summary", "worker" => worker).record(2.0);
        }
    });
    // Keys past the limit stay out of the look-up, as for counters.
    assert_eq!(recorder.inner.histograms.len(), 4 + 4);
    let text = text(&renderer);
    assert_lines(
        &text,
        &[
            "past_limit_seconds_count{otel_metric_overflow=\"true\"} 996\n",
            "past_limit_seconds_count{worker=\"3\"} 1\n",
            "past_limit_summary_count{otel_metric_overflow=\"true\"} 996\n",
            "past_limit_summary{otel_metric_overflow=\"true\",quantile=\"0\"} 2\n",
            "past_limit_summary_sum{otel_metric_overflow=\"true\"} 1992\n",
            "past_limit_summary_count{worker=\"3\"} 1\n",
        ],
    );
    assert!(!text.contains("worker=\"4\""), "{text}");
    let overflowing = nemo_lens_core::__internal::overflow::overflowing_instruments();
    assert!(
        overflowing.iter().any(|name| name == "past_limit_seconds"),
        "{overflowing:?}"
    );
}

/// A scrape after a summarised name's first series became findable, and
/// was recorded to by another thread's look-up, but before it was
/// summarised: the name must never be taken for a histogram, which would
/// refuse its summary as a second type for good.
#[test]
fn a_scrape_before_the_first_summary_keeps_the_name_a_summary() {
    let _turn = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let (telemetry, renderer) = telemetry("2000");
    let recorder = MetricsBridge::new()
        .set_summary_for_metric(Matcher::Full("raced_seconds".into()))
        .build(&telemetry);
    let key = Key::from_name("raced_seconds");
    let mut scraped = String::new();
    recorder
        .inner
        .new_histogram(
            parts(&key),
            SeriesKey::V024(key.clone()),
            |inner, series| {
                let registered = inner.histograms.insert(key.clone(), series);
                let found = inner.histograms.get(&key).expect("findable");
                metrics::HistogramFn::record(&*found, 3.0);
                scraped = text(&renderer);
                registered
            },
        )
        .expect("an exported series");
    assert!(!scraped.contains("histogram"), "{scraped}");
    let text = text(&renderer);
    assert_lines(
        &text,
        &[
            "# TYPE raced_seconds summary\n",
            "raced_seconds{quantile=\"0\"} 3\n",
            "raced_seconds_sum 3\n",
            "raced_seconds_count 1\n",
        ],
    );
}

/// An update through a handle taken and dropped after a collection found
/// the series idle, before it expired: the series stays for the next
/// collection to export the update.
#[test]
fn an_update_between_idle_and_expiry_keeps_the_series() {
    let _turn = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let (telemetry, renderer) = telemetry("2000");
    let recorder = MetricsBridge::new()
        .idle_timeout(MetricKindMask::COUNTER, Some(Duration::from_secs(3600)))
        .build(&telemetry);
    let inner = &recorder.inner;
    let key = Key::from_name("late_total");
    let expire = inner.expiry(Inner::unregister_counter, Inner::reregister_counter);
    metrics::with_local_recorder(&recorder, || counter!("late_total").increment(1));
    let expires_now = || {
        let families = inner.lock_families();
        let Some(Family {
            exported: Some((_, Instrument::Counter { observed, .. })),
            ..
        }) = families.get("late_total")
        else {
            panic!("the counter family");
        };
        let series = observed.lock();
        expire(series.by_labels.values().next().expect("the series"))
    };
    // The collection notes the first update.
    assert!(text(&renderer).contains("late_total 1\n"));
    metrics::with_local_recorder(&recorder, || counter!("late_total").increment(1));
    assert!(!expires_now(), "expired with an update not exported");
    assert!(
        inner.counters.get(&key).is_some(),
        "the key left the look-up"
    );
    assert!(text(&renderer).contains("late_total 2\n"));
    // Nothing since that collection: it may go.
    assert!(expires_now());
    assert!(inner.counters.get(&key).is_none());
}

/// Counts what a `tracing` subscriber writes through the facade, as a
/// service logging into its own metrics does.
struct LogLines;

impl std::io::Write for LogLines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        counter!("log_writes_total").increment(1);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_subscriber_recording_through_the_facade_can_take_the_warnings() {
    let _turn = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let (telemetry, renderer) = telemetry("2000");
    let recorder = MetricsBridge::new().build(&telemetry);
    let (done, finished) = std::sync::mpsc::channel();
    let worker = recorder.clone();
    // A thread of its own: a deadlock fails the test instead of hanging it.
    std::thread::spawn(move || {
        let subscriber = tracing_subscriber::fmt().with_writer(|| LogLines).finish();
        tracing::subscriber::with_default(subscriber, || {
            metrics::with_local_recorder(&worker, || {
                counter!("two_kinds").increment(1);
                // Warned: already a counter.
                gauge!("two_kinds").set(1.0);
            })
        });
        let _ = done.send(());
    });
    finished
        .recv_timeout(Duration::from_secs(60))
        .expect("warning about `two_kinds` deadlocked the recorder");
    let text = text(&renderer);
    assert!(text.contains("two_kinds_total 1\n") || text.contains("two_kinds 1\n"));
    let writes: Vec<&str> = text
        .lines()
        .filter(|line| line.starts_with("log_writes_total "))
        .collect();
    assert!(
        matches!(writes.as_slice(), [line] if line != &"log_writes_total 0"),
        "{text}"
    );
}

#[test]
fn an_empty_description_leaves_room_for_a_later_one() {
    let _turn = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let (telemetry, renderer) = telemetry("2000");
    let recorder = MetricsBridge::new().build(&telemetry);
    metrics::with_local_recorder(&recorder, || {
        metrics::describe_counter!("described_later_total", "");
        metrics::describe_counter!("described_later_total", "Requests served.");
        counter!("described_later_total").increment(1);
    });
    let text = text(&renderer);
    assert!(
        text.contains("# HELP described_later_total Requests served.\n"),
        "{text}"
    );
    let families = recorder.inner.lock_families();
    let described = families["described_later_total"].described.as_ref();
    assert_eq!(
        described.map(|d| d.description.as_str()),
        Some("Requests served.")
    );
}
