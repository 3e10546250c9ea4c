//! What the derive's declared types cost on the record path: a set with an
//! enum attribute and a `Duration` field against the same set with a
//! `String` attribute and an `f64` field (the conversion and the look-up
//! written by hand), a flattened attribute group against the same
//! attributes declared in the set, and a generated guard (start to finish)
//! against the same lifecycle written with the SDK. One run, ratios read
//! side by side.

use std::time::{Duration, Instant};

use divan::{black_box, Bencher};
use nemo_lens::opentelemetry::metrics::MeterProvider as _;
use nemo_lens::opentelemetry::KeyValue;
use nemo_lens::{AttributeValue, Attributes, Instruments, Meter};

mod support;

fn main() {
    divan::main();
}

#[derive(AttributeValue, Clone, Copy)]
#[attribute_value(rename_all = "snake_case")]
enum Outcome {
    Success,
    TimedOut,
}

/// Typed: an enum attribute, a `Duration` in milliseconds.
#[derive(Instruments, Default)]
struct Typed {
    /// Time of one step.
    #[histogram("bench.step.duration", unit = "ms")]
    step: Option<Duration>,
    /// How it ended.
    #[attribute("bench.outcome")]
    outcome: Option<Outcome>,
}

/// Untyped: a `String` attribute, an `f64` converted by the caller.
#[derive(Instruments, Default)]
struct Untyped {
    /// Time of one step.
    #[histogram("bench.step.duration", unit = "ms")]
    step_ms: Option<f64>,
    /// How it ended.
    #[attribute("bench.outcome")]
    outcome: Option<String>,
}

#[derive(Attributes, Default, Clone)]
struct Base {
    /// The model.
    #[attribute("gen_ai.request.model")]
    model: Option<&'static str>,
    /// The provider.
    #[attribute("gen_ai.provider.name", default = "nemo")]
    provider: Option<&'static str>,
}

/// The attributes flattened from a group.
#[derive(Instruments, Default)]
struct Flattened {
    /// Tokens.
    #[counter("bench.tokens", unit = "{token}")]
    tokens: Option<u64>,
    /// The base attributes.
    #[flatten]
    base: Base,
}

/// The same attributes declared in the set.
#[derive(Instruments, Default)]
struct Declared {
    /// Tokens.
    #[counter("bench.tokens", unit = "{token}")]
    tokens: Option<u64>,
    /// The model.
    #[attribute("gen_ai.request.model")]
    model: Option<&'static str>,
    /// The provider.
    #[attribute("gen_ai.provider.name", default = "nemo")]
    provider: Option<&'static str>,
}

fn meter() -> (
    nemo_lens::opentelemetry_sdk::metrics::SdkMeterProvider,
    Meter,
) {
    let provider = support::provider();
    let meter = Meter::from(provider.meter("nemo.lens"));
    (provider, meter)
}

const STEP: Duration = Duration::from_micros(12_345);

#[divan::bench]
fn enum_and_duration(bencher: Bencher) {
    let (_provider, meter) = meter();
    let record = || {
        Typed::default()
            .step(black_box(STEP))
            .outcome(black_box(Outcome::TimedOut))
            .record(&meter)
    };
    // The first record builds the set and binds the handles: not timed.
    record();
    bencher.bench_local(record);
}

#[divan::bench]
fn string_and_f64(bencher: Bencher) {
    let (_provider, meter) = meter();
    // The caller's conversion and a String per record, as code without the
    // typed fields writes it.
    let record = || {
        Untyped::default()
            .step_ms(black_box(STEP).as_secs_f64() * 1e3)
            .outcome(black_box(Outcome::TimedOut).as_str().to_owned())
            .record(&meter)
    };
    // The first record builds the set and binds the handles: not timed.
    record();
    bencher.bench_local(record);
}

#[divan::bench]
fn string_and_f64_static(bencher: Bencher) {
    let (_provider, meter) = meter();
    // The cheapest untyped form: a string held elsewhere, cloned per record.
    let outcome = String::from("timed_out");
    let record = || {
        Untyped::default()
            .step_ms(black_box(12.345))
            .outcome(black_box(&outcome).clone())
            .record(&meter)
    };
    // The first record builds the set and binds the handles: not timed.
    record();
    bencher.bench_local(record);
}

#[divan::bench]
fn flattened_group(bencher: Bencher) {
    let (_provider, meter) = meter();
    let record = || {
        Flattened::default()
            .tokens(black_box(128))
            .base(Base::default().model(black_box("llama-3-8b")))
            .record(&meter)
    };
    // The first record builds the set and binds the handles: not timed.
    record();
    bencher.bench_local(record);
}

#[divan::bench]
fn declared_attributes(bencher: Bencher) {
    let (_provider, meter) = meter();
    let record = || {
        Declared::default()
            .tokens(black_box(128))
            .model(black_box("llama-3-8b"))
            .record(&meter)
    };
    // The first record builds the set and binds the handles: not timed.
    record();
    bencher.bench_local(record);
}

/// One job of a worker, timed by its generated guard.
#[derive(Instruments, Default)]
#[instruments(guard)]
struct Job {
    /// Time of one job.
    #[histogram("bench.job.duration", unit = "ms", elapsed)]
    duration: Option<Duration>,
    /// Jobs running.
    #[up_down_counter("bench.jobs.active", unit = "{job}", in_flight)]
    active: Option<i64>,
    /// Items the job handled.
    #[counter("bench.job.items", unit = "{item}")]
    items: Option<u64>,
    /// How the job ended.
    #[attribute("bench.outcome", only(duration, items))]
    outcome: Option<Outcome>,
    /// Why it failed.
    #[attribute("error.type", error_type, on_drop = "cancelled", only(duration))]
    error_type: Option<&'static str>,
}

#[divan::bench]
fn generated_guard(bencher: Bencher) {
    let (_provider, meter) = meter();
    let run = || {
        let mut job = Job::start(&meter);
        job.items = Some(black_box(3));
        job.outcome = Some(black_box(Outcome::Success));
        job.finish();
    };
    // The first run builds the set and binds the handles: not timed.
    run();
    bencher.bench_local(run);
}

/// The same lifecycle as a careful user writes it with the SDK: the
/// instruments built once, the clock read at both ends, +1 and -1 around the
/// work, the attributes as `&'static str`s (no allocation).
#[divan::bench]
fn hand_written_guard(bencher: Bencher) {
    let provider = support::provider();
    let otel = provider.meter("nemo.lens");
    let duration = otel
        .f64_histogram("bench.job.duration")
        .with_unit("ms")
        .build();
    let active = otel
        .i64_up_down_counter("bench.jobs.active")
        .with_unit("{job}")
        .build();
    let items = otel
        .u64_counter("bench.job.items")
        .with_unit("{item}")
        .build();
    let run = || {
        let start = Instant::now();
        active.add(1, &[]);
        let (count, outcome) = (black_box(3), black_box(Outcome::Success));
        let outcome = [KeyValue::new("bench.outcome", outcome.as_str())];
        items.add(count, &outcome);
        duration.record(start.elapsed().as_secs_f64() * 1e3, &outcome);
        active.add(-1, &[]);
    };
    run();
    bencher.bench_local(run);
}
