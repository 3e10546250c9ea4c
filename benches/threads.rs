//! Throughput of one series recorded from many threads at once, and of a
//! series per thread, for every way nemo-lens records, against the same work
//! written by hand with the OpenTelemetry SDK and through
//! `metrics-exporter-prometheus`.
//!
//! ```sh
//! cargo bench --bench threads -- 1 2 4 8 16   # thread counts; 1 2 by default
//! cargo bench --bench threads -- 1 2 --only rl # rows whose name contains "rl"
//! ```
//!
//! Each measurement is a window of wall-clock time (bounded in time and in
//! count) in which every thread records as fast as it can; windows of the
//! different thread counts alternate, round after round. Printed: the
//! median of the rounds' total records per second over all threads, and the
//! median of the rounds' ratios to the first count's window of the same
//! round, with their range. A ratio is taken within a round, from windows
//! a fraction of a second apart, so that a stretch of a shared machine's
//! noise falls on both sides of it rather than on one count's median.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use metrics::{Key, Label, Metadata, Recorder};
use metrics_exporter_prometheus::PrometheusBuilder;
use nemo_lens::instruments::rl::RlMetrics;
use nemo_lens::instruments::{InferenceMetrics, InferenceRequest};
use nemo_lens::metrics_bridge::MetricsBridge;
use nemo_lens::opentelemetry::KeyValue;
use nemo_lens::testing::Capture;
use nemo_lens::{Instruments, Meter};

mod support;

const WINDOW: Duration = Duration::from_millis(150);
const ROUNDS: usize = 9;
/// Records one thread makes in one window, at most.
const MAX_OPS: u64 = 200_000_000;
const BATCH: u64 = 64;

/// One counter series, keyed by the attribute `series`.
#[derive(Instruments, Default, Clone)]
struct Counted {
    /// Things counted.
    #[counter("bench.counted", unit = "{thing}")]
    things: Option<u64>,
    /// Which series.
    #[attribute("bench.series")]
    series: Option<String>,
}

/// One up-down counter series.
#[derive(Instruments, Default, Clone)]
struct InFlight {
    /// Requests in flight.
    #[up_down_counter("bench.in_flight", unit = "{request}")]
    change: Option<i64>,
    /// Which series.
    #[attribute("bench.series")]
    series: Option<String>,
}

/// One explicit-bucket histogram series.
#[derive(Instruments, Default, Clone)]
struct Latency {
    /// Time taken.
    #[histogram(
        "bench.latency",
        unit = "s",
        buckets = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24],
        aggregation = "explicit_bucket_histogram"
    )]
    seconds: Option<f64>,
    /// Which series.
    #[attribute("bench.series")]
    series: Option<String>,
}

/// One base-2 exponential histogram series.
#[derive(Instruments, Default, Clone)]
struct ExpLatency {
    /// Time taken, in exponential buckets.
    #[histogram(
        "bench.latency.exponential",
        unit = "s",
        aggregation = "base2_exponential_bucket_histogram"
    )]
    seconds: Option<f64>,
    /// Which series.
    #[attribute("bench.series")]
    series: Option<String>,
}

/// How one row records: `work(thread, i)` is one record by `thread`.
type Work<'a> = Box<dyn Fn(usize, u64) + Sync + 'a>;
/// One record through a `metrics` handle.
type Handle = Box<dyn Fn(u64) + Send + Sync>;
/// Registers a `metrics` handle for a key.
type Register<'a> = &'a dyn Fn(&Key) -> Handle;

struct Row<'a> {
    name: &'static str,
    /// Every thread records into the same series.
    shared: Work<'a>,
    /// Each thread records into a series of its own.
    own: Work<'a>,
}

/// Records per second over `threads` threads running `work`.
fn throughput(threads: usize, work: &(dyn Fn(usize, u64) + Sync)) -> f64 {
    let stop = AtomicBool::new(false);
    let start = Instant::now();
    let ops: u64 = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let stop = &stop;
                scope.spawn(move || {
                    let mut ops = 0;
                    while ops < MAX_OPS && !stop.load(Ordering::Relaxed) {
                        for i in 0..BATCH {
                            work(t, black_box(ops + i));
                        }
                        ops += BATCH;
                    }
                    ops
                })
            })
            .collect();
        std::thread::sleep(WINDOW);
        stop.store(true, Ordering::Relaxed);
        workers.into_iter().map(|w| w.join().unwrap_or(0)).sum()
    });
    ops as f64 / start.elapsed().as_secs_f64()
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// Each count's rates, one per round, windows alternating.
fn measure(counts: &[usize], work: &(dyn Fn(usize, u64) + Sync)) -> Vec<Vec<f64>> {
    let max = counts.iter().copied().max().unwrap_or(1);
    for t in 0..max {
        work(t, 0);
    }
    let mut samples = vec![Vec::new(); counts.len()];
    for round in 0..ROUNDS {
        let order: Vec<usize> = if round % 2 == 0 {
            (0..counts.len()).collect()
        } else {
            (0..counts.len()).rev().collect()
        };
        for i in order {
            samples[i].push(throughput(counts[i], work));
        }
    }
    samples
}

/// Prints each count's median rate and the median of its per-round ratios
/// to the first count (with their range).
fn report(row: &str, mode: &str, counts: &[usize], samples: &[Vec<f64>]) {
    let cells: Vec<String> = counts
        .iter()
        .zip(samples)
        .enumerate()
        .map(|(i, (t, rates))| {
            let ratios: Vec<f64> = rates.iter().zip(&samples[0]).map(|(r, b)| r / b).collect();
            let (low, high) = ratios
                .iter()
                .fold((f64::MAX, f64::MIN), |(l, h), r| (l.min(*r), h.max(*r)));
            let rate = median(rates.clone()) / 1e6;
            if i == 0 {
                format!("{t}: {rate:.2} M/s (1.00x)")
            } else {
                format!(
                    "{t}: {rate:.2} M/s ({:.2}x; rounds {low:.2}x-{high:.2}x)",
                    median(ratios)
                )
            }
        })
        .collect();
    println!("threads: {row} | {mode} | {}", cells.join(" | "));
}

/// The thread counts and an optional row filter from the command line;
/// cargo's own `--bench` is ignored.
fn arguments() -> (Vec<usize>, Option<String>) {
    let mut counts = Vec::new();
    let mut only = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--only" {
            only = args.next();
        } else if let Ok(n) = arg.parse::<usize>() {
            counts.push(n.max(1));
        }
    }
    if counts.is_empty() {
        counts = vec![1, 2];
    }
    (counts, only)
}

fn series(shared: bool, thread: usize) -> String {
    if shared {
        "shared".to_owned()
    } else {
        format!("thread-{thread}")
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let (counts, only) = arguments();
    let max = counts.iter().copied().max().unwrap_or(1);
    // The meter setup_telemetry gives, without an exporter: a capture
    // (whose reader collects only when asked) has the same owned series.
    let capture = keep(Capture::new());
    let meter: &'static Meter = capture.meter();
    // One meter per thread, for sets with no attribute to tell series apart.
    let own_captures: &'static Vec<Capture> = keep((0..max).map(|_| Capture::new()).collect());
    let own_meter = |t: usize| own_captures[t].meter();

    // What the bridge replaces, and the bridge itself.
    let exporter = PrometheusBuilder::new().build_recorder();
    let telemetry = support::serving_telemetry();
    let bridge = MetricsBridge::new().build(&telemetry);
    let metadata: &'static Metadata = keep(Metadata::new("bench", metrics::Level::INFO, None));
    let key = |name: &'static str, series: &str| {
        Key::from_parts(name, vec![Label::new("series", series.to_owned())])
    };
    let handles = |name: &'static str, shared: bool, register: Register<'_>| {
        (0..max)
            .map(|t| register(&key(name, &series(shared, t))))
            .collect::<Vec<_>>()
    };
    let counter_of = |recorder: &'static dyn Recorder| {
        move |k: &Key| -> Handle {
            let c = recorder.register_counter(k, metadata);
            Box::new(move |_| c.increment(1))
        }
    };
    let gauge_of = |recorder: &'static dyn Recorder| {
        move |k: &Key| -> Handle {
            let g = recorder.register_gauge(k, metadata);
            Box::new(move |i| g.set((i & 1023) as f64))
        }
    };
    let histogram_of = |recorder: &'static dyn Recorder| {
        move |k: &Key| -> Handle {
            let h = recorder.register_histogram(k, metadata);
            Box::new(move |i| h.record(VALUES[(i & 7) as usize]))
        }
    };
    // Recorders outlive every row: leaked, as a global recorder would be.
    let exporter: &'static dyn Recorder = Box::leak(Box::new(exporter));
    let bridge: &'static dyn Recorder = Box::leak(Box::new(bridge));

    let mut rows: Vec<Row> = Vec::new();
    let per_kind = |shared: bool| -> Vec<(Counted, InFlight, Latency, ExpLatency)> {
        (0..max)
            .map(|t| {
                let s = series(shared, t);
                (
                    Counted::default().things(1).series(s.clone()),
                    InFlight::default().change(1).series(s.clone()),
                    Latency::default().seconds(0.42).series(s.clone()),
                    ExpLatency::default().seconds(0.42).series(s),
                )
            })
            .collect()
    };
    let (shared_sets, own_sets) = (per_kind(true), per_kind(false));
    let (shared_sets, own_sets) = (keep(shared_sets), keep(own_sets));
    rows.push(Row {
        name: "derive counter",
        shared: Box::new(move |t, _| shared_sets[t].0.record(meter)),
        own: Box::new(move |t, _| own_sets[t].0.record(meter)),
    });
    rows.push(Row {
        name: "derive up-down counter",
        shared: Box::new(move |t, _| shared_sets[t].1.record(meter)),
        own: Box::new(move |t, _| own_sets[t].1.record(meter)),
    });
    rows.push(Row {
        name: "derive explicit histogram",
        shared: Box::new(move |t, _| shared_sets[t].2.record(meter)),
        own: Box::new(move |t, _| own_sets[t].2.record(meter)),
    });
    rows.push(Row {
        name: "derive exponential histogram",
        shared: Box::new(move |t, _| shared_sets[t].3.record(meter)),
        own: Box::new(move |t, _| own_sets[t].3.record(meter)),
    });
    let raw = keep(nemo_lens::cells::ExponentialHistogram::<f64>::new(160, 20));
    let raw_own: &'static Vec<_> = keep(
        (0..max)
            .map(|_| nemo_lens::cells::ExponentialHistogram::<f64>::new(160, 20))
            .collect(),
    );
    rows.push(Row {
        name: "cells exponential",
        shared: Box::new(move |_, _| raw.record(0.42)),
        own: Box::new(move |t, _| raw_own[t].record(0.42)),
    });
    // Every record leaves an exemplar (a clock read and its bucket's slot):
    // the most a shared series' exemplars can cost.
    let explicit =
        |filter| nemo_lens::cells::Histogram::<f64>::with_exemplars([0.1, 0.5, 1.0].into(), filter);
    let plain = keep(explicit(nemo_lens::ExemplarFilter::AlwaysOff));
    let plain_own: &'static Vec<_> = keep(
        (0..max)
            .map(|_| explicit(nemo_lens::ExemplarFilter::AlwaysOff))
            .collect(),
    );
    rows.push(Row {
        name: "cells explicit",
        shared: Box::new(move |_, i| plain.record(VALUES[(i & 7) as usize])),
        own: Box::new(move |t, i| plain_own[t].record(VALUES[(i & 7) as usize])),
    });
    let sampled = keep(explicit(nemo_lens::ExemplarFilter::AlwaysOn));
    let sampled_own: &'static Vec<_> = keep(
        (0..max)
            .map(|_| explicit(nemo_lens::ExemplarFilter::AlwaysOn))
            .collect(),
    );
    rows.push(Row {
        name: "cells explicit, exemplar always_on",
        shared: Box::new(move |_, i| sampled.record(VALUES[(i & 7) as usize])),
        own: Box::new(move |t, i| sampled_own[t].record(VALUES[(i & 7) as usize])),
    });
    let rl = RlMetrics::default()
        .reward_mean(0.75)
        .policy_loss(0.3)
        .entropy(1.9)
        .generation_duration_ms(1234.5);
    let rl = keep(rl);
    rows.push(Row {
        name: "RL set (4 fields)",
        shared: Box::new(move |_, _| rl.record(meter)),
        own: Box::new(move |t, _| rl.record(own_meter(t))),
    });
    let inference = |shared: bool| -> Vec<InferenceMetrics> {
        (0..max)
            .map(|t| {
                InferenceMetrics::default()
                    .request_duration_s(0.42)
                    .model(format!("model-{}", series(shared, t)))
                    .input_tokens(128)
                    .output_tokens(256)
            })
            .collect()
    };
    let (shared_inference, own_inference) = (inference(true), inference(false));
    let (shared_inference, own_inference) = (keep(shared_inference), keep(own_inference));
    rows.push(Row {
        name: "inference set (one model)",
        shared: Box::new(move |t, _| shared_inference[t].record(meter)),
        own: Box::new(move |t, _| own_inference[t].record(meter)),
    });
    let models: Vec<&'static str> = (0..max)
        .map(|t| &*Box::leak(format!("model-thread-{t}").into_boxed_str()))
        .collect();
    let models = keep(models);
    rows.push(Row {
        name: "request guard (start, 4 tokens, finish)",
        shared: Box::new(move |_, _| serve(meter, "model-shared")),
        own: Box::new(move |t, _| serve(meter, models[t])),
    });

    // The same work by hand on the SDK: instruments built once, attributes
    // per call as the opentelemetry docs show.
    let otel = meter.otel();
    let sdk_counter = otel.u64_counter("bench.sdk.counted").build();
    let sdk_histogram = otel
        .f64_histogram("bench.sdk.latency")
        .with_boundaries(vec![
            0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24,
        ])
        .build();
    let sdk_attributes = |shared: bool| -> Vec<[KeyValue; 1]> {
        (0..max)
            .map(|t| [KeyValue::new("bench.series", series(shared, t))])
            .collect()
    };
    let (shared_attributes, own_attributes) = (sdk_attributes(true), sdk_attributes(false));
    let (shared_attributes, own_attributes) = (keep(shared_attributes), keep(own_attributes));
    let (sdk_counter, sdk_histogram) = (keep(sdk_counter), keep(sdk_histogram));
    rows.push(Row {
        name: "hand-written SDK counter",
        shared: Box::new(move |t, _| sdk_counter.add(1, &shared_attributes[t])),
        own: Box::new(move |t, _| sdk_counter.add(1, &own_attributes[t])),
    });
    rows.push(Row {
        name: "hand-written SDK histogram",
        shared: Box::new(move |t, _| sdk_histogram.record(0.42, &shared_attributes[t])),
        own: Box::new(move |t, _| sdk_histogram.record(0.42, &own_attributes[t])),
    });

    let recorded = |name: &'static str, shared: Vec<Handle>, own: Vec<Handle>| Row {
        name,
        shared: Box::new(move |t, i| shared[t](i)),
        own: Box::new(move |t, i| own[t](i)),
    };
    for (recorder, who) in [
        (bridge, "bridge"),
        (exporter, "metrics-exporter-prometheus"),
    ] {
        let (counter, gauge, histogram) = (
            counter_of(recorder),
            gauge_of(recorder),
            histogram_of(recorder),
        );
        rows.push(recorded(
            leak(format!("{who} counter")),
            handles("bench_counter", true, &counter),
            handles("bench_counter", false, &counter),
        ));
        rows.push(recorded(
            leak(format!("{who} gauge")),
            handles("bench_gauge", true, &gauge),
            handles("bench_gauge", false, &gauge),
        ));
        rows.push(recorded(
            leak(format!("{who} histogram")),
            handles("bench_histogram", true, &histogram),
            handles("bench_histogram", false, &histogram),
        ));
    }

    println!(
        "threads: {} cores; thread counts {counts:?}; windows of {WINDOW:?}, {ROUNDS} rounds: median rate, median of the rounds' ratios",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    for row in &rows {
        if only
            .as_ref()
            .is_some_and(|o| !row.name.contains(o.as_str()))
        {
            continue;
        }
        report(
            row.name,
            "one series",
            &counts,
            &measure(&counts, &*row.shared),
        );
        report(
            row.name,
            "a series per thread",
            &counts,
            &measure(&counts, &*row.own),
        );
    }
}

const VALUES: [f64; 8] = [0.0004, 0.003, 0.02, 0.07, 0.3, 0.8, 2.0, 7.0];

/// Bench data lives as long as the process: rows borrow it from threads.
fn keep<T>(value: T) -> &'static T {
    Box::leak(Box::new(value))
}

fn leak(name: String) -> &'static str {
    Box::leak(name.into_boxed_str())
}

/// One streamed request through the request guard: start, first token,
/// four output tokens, finish.
fn serve(meter: &Meter, model: &'static str) {
    let mut request = InferenceRequest::start(meter)
        .model(model)
        .input_tokens(128);
    for _ in 0..4 {
        request.first_token();
        request.add_output_tokens(1);
    }
    request.finish();
}
