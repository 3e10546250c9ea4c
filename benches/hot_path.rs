//! One thread recording on the meter `setup_telemetry` gives (a Prometheus
//! endpoint that nothing scrapes during the run) against what a careful user
//! writes by hand with the OpenTelemetry SDK: the ratios the hot path is
//! held to (`BENCHMARKS.md`, "The hot path").
//!
//! - `rl`: the 11 RL values, the struct built per call, as a trainer's step
//!   loop does; by hand, 9 gauges and 2 histograms built once.
//! - `inference`: a request duration and the input and output tokens with a
//!   model among four, the struct built per call, as a server does per
//!   request; by hand, the same three records with their attributes built
//!   per call, as the opentelemetry docs show.
//! - `scheduling`: one request through an engine's scheduler as the example
//!   server records it (`ScheduledRequest` queued, its prefix-cache look-up,
//!   started, first token, finished, and the KV-cache usage gauge as it
//!   takes and gives back blocks), times given; by hand, the same twelve
//!   SDK calls on instruments built once.
//! - `histogram cell` and `histogram set`: one histogram record (the GenAI
//!   request-duration buckets, no span current) with the exemplar filter
//!   `always_off` against `trace_based`, on a bare cell and through a set
//!   on a meter. `scripts/bench_exemplars.sh` runs this binary against the
//!   same one built with `RUSTFLAGS="--cfg nemo_lens_no_exemplars"` (no
//!   exemplar storage or code at all) for the ratios to that.
//! - `histogram stripe`: a record into a series' first cell by the thread
//!   that owns it, against a record by another thread (into a stripe of its
//!   own): the second thread's price on one series.
//!
//! This machine's speed drifts within seconds, so the two sides of a pair
//! are timed in alternating blocks (20,000 calls each, the order swapped
//! every round, 41 rounds) and the ratio is the median of the rounds'
//! ratios: both sides see the same machine. `--only NAME` runs one pair;
//! `--calls N` runs N calls of one side (`--only rl/nemo_lens`) and nothing
//! else, for `valgrind --tool=callgrind`. One thread throughout: for
//! several, `cargo bench --bench threads -- 1 2 4 ..`.

use std::hint::black_box;
use std::sync::OnceLock;
use std::time::Instant;

use nemo_lens::instruments::rl::RlMetrics;
use nemo_lens::instruments::InferenceMetrics;
use nemo_lens::opentelemetry::metrics::{Gauge, Histogram, Meter as OtelMeter, MeterProvider as _};
use nemo_lens::opentelemetry::StringValue;
use nemo_lens::{Instruments, Meter, TelemetryHandle};

mod support;

/// Calls per timed block.
const BLOCK: usize = 20_000;
/// Rounds of one block per side.
const ROUNDS: usize = 41;

/// The telemetry of the process, as a server sets it up: one, kept for the
/// run (a Prometheus endpoint on a port of the system's choosing).
fn telemetry() -> &'static TelemetryHandle {
    static TELEMETRY: OnceLock<TelemetryHandle> = OnceLock::new();
    TELEMETRY.get_or_init(support::serving_telemetry)
}

fn meter() -> &'static Meter {
    &telemetry().meter
}

/// A hand-written baseline's meter: the SDK's own provider, whose reader
/// never exports during the run.
fn sdk_meter() -> OtelMeter {
    static PROVIDER: OnceLock<nemo_lens::opentelemetry_sdk::metrics::SdkMeterProvider> =
        OnceLock::new();
    PROVIDER.get_or_init(support::provider).meter("nemo.lens")
}

/// A baseline and the side measured against it.
type Pair = (Side<'static>, Side<'static>);

/// What builds a pair, ready to time.
type MakePair = fn() -> Pair;

/// One side of a pair: `call(i)` records once.
struct Side<'a> {
    name: &'static str,
    call: Box<dyn FnMut(usize) + 'a>,
}

impl Side<'_> {
    /// Nanoseconds per call over one block.
    fn block(&mut self, start: usize) -> f64 {
        let begun = Instant::now();
        for i in start..start + BLOCK {
            (self.call)(black_box(i));
        }
        begun.elapsed().as_nanos() as f64 / BLOCK as f64
    }
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// Times `ours` against `baseline` in alternating blocks and prints the
/// medians and the median ratio.
fn pair(name: &str, mut baseline: Side<'_>, mut ours: Side<'_>) {
    // Warm: series made, code and caches hot.
    baseline.block(0);
    ours.block(0);
    let (mut base_ns, mut ours_ns, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let start = round * BLOCK;
        let (b, o) = if round % 2 == 0 {
            let b = baseline.block(start);
            (b, ours.block(start))
        } else {
            let o = ours.block(start);
            (baseline.block(start), o)
        };
        base_ns.push(b);
        ours_ns.push(o);
        ratios.push(o / b);
    }
    println!(
        "hot_path: {name} | {}: {:.1} ns | {}: {:.1} ns | ratio {:.3}x (median of {ROUNDS} rounds)",
        baseline.name,
        median(base_ns),
        ours.name,
        median(ours_ns),
        median(ratios),
    );
}

mod rl {
    use super::*;

    const VALUES: [f64; 11] = [
        0.75, 0.0123, -0.31, 0.084, 1.92, 412.5, 1.7, 3e-6, 12_500.0, 1234.5, 5678.9,
    ];

    /// What a trainer's step builds: every value set.
    #[inline]
    pub fn step(v: &[f64; 11]) -> RlMetrics {
        RlMetrics::default()
            .reward_mean(v[0])
            .kl_divergence(v[1])
            .policy_loss(v[2])
            .value_loss(v[3])
            .entropy(v[4])
            .response_length_mean(v[5])
            .grad_norm(v[6])
            .learning_rate(v[7])
            .throughput_tokens_per_sec(v[8])
            .generation_duration_ms(v[9])
            .rollout_duration_ms(v[10])
    }

    /// The RL set by hand: instruments built once, values recorded per call.
    struct Hand {
        gauges: [Gauge<f64>; 9],
        generation: Histogram<f64>,
        rollout: Histogram<f64>,
    }

    impl Hand {
        fn new(meter: &OtelMeter) -> Self {
            let gauge = |name: &'static str| meter.f64_gauge(name).build();
            let ms = |name: &'static str| meter.f64_histogram(name).with_unit("ms").build();
            Hand {
                gauges: [
                    gauge("rl.reward.mean"),
                    gauge("rl.kl_divergence"),
                    gauge("rl.policy_loss"),
                    gauge("rl.value_loss"),
                    gauge("rl.entropy"),
                    gauge("rl.response_length.mean"),
                    gauge("rl.grad_norm"),
                    gauge("rl.learning_rate"),
                    gauge("rl.throughput.tokens_per_sec"),
                ],
                generation: ms("rl.generation.duration_ms"),
                rollout: ms("rl.rollout.duration_ms"),
            }
        }

        #[inline]
        fn record(&self, v: &[f64; 11]) {
            for (gauge, value) in self.gauges.iter().zip(v) {
                gauge.record(*value, &[]);
            }
            self.generation.record(v[9], &[]);
            self.rollout.record(v[10], &[]);
        }
    }

    pub fn sides() -> Pair {
        let hand = Hand::new(&sdk_meter());
        let meter = meter();
        (
            Side {
                name: "sdk",
                call: Box::new(move |_| hand.record(black_box(&VALUES))),
            },
            Side {
                name: "nemo_lens",
                call: Box::new(move |_| step(black_box(&VALUES)).record(meter)),
            },
        )
    }
}

mod inference {
    use super::*;

    const MODELS: [&str; 4] = [
        "llama-3-8b",
        "llama-3-70b",
        "mixtral-8x7b",
        "nemotron-4-340b",
    ];

    /// What a server builds per request.
    #[inline]
    fn request(model: &'static str) -> InferenceMetrics {
        InferenceMetrics::default()
            .request_duration_s(0.42)
            .model(model)
            .input_tokens(128)
            .output_tokens(256)
    }

    pub fn sides() -> Pair {
        let hand = support::HandInference::new(&sdk_meter());
        let meter = meter();
        (
            Side {
                name: "sdk",
                call: Box::new(move |i| hand.record(&StringValue::from(MODELS[i % 4]))),
            },
            Side {
                name: "nemo_lens",
                call: Box::new(move |i| request(MODELS[i % 4]).record(meter)),
            },
        )
    }
}

mod scheduling {
    use super::*;
    use nemo_lens::instruments::serving::{FinishReason, ScheduledRequest, SchedulingMetrics};
    use nemo_lens::opentelemetry::metrics::{Counter, UpDownCounter};
    use nemo_lens::opentelemetry::KeyValue;
    use std::time::Duration;

    const BUCKETS: [f64; 17] = [
        0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24,
        20.48, 40.96, 81.92,
    ];

    /// The scheduling set's instruments, by hand.
    struct Hand {
        waiting: UpDownCounter<i64>,
        running: UpDownCounter<i64>,
        usage: Gauge<f64>,
        queue: Histogram<f64>,
        prefill: Histogram<f64>,
        decode: Histogram<f64>,
        finished: Counter<u64>,
        queries: Counter<u64>,
        hits: Counter<u64>,
    }

    impl Hand {
        fn new(meter: &OtelMeter) -> Self {
            let seconds = |name: &'static str| {
                meter
                    .f64_histogram(name)
                    .with_unit("s")
                    .with_boundaries(BUCKETS.to_vec())
                    .build()
            };
            Hand {
                waiting: meter
                    .i64_up_down_counter("nemo.inference.requests.waiting")
                    .build(),
                running: meter
                    .i64_up_down_counter("nemo.inference.requests.running")
                    .build(),
                usage: meter.f64_gauge("nemo.inference.kv_cache.usage").build(),
                queue: seconds("nemo.inference.request.queue.duration"),
                prefill: seconds("nemo.inference.request.prefill.duration"),
                decode: seconds("nemo.inference.request.decode.duration"),
                finished: meter
                    .u64_counter("nemo.inference.requests.finished")
                    .build(),
                queries: meter
                    .u64_counter("nemo.inference.prefix_cache.queries")
                    .build(),
                hits: meter
                    .u64_counter("nemo.inference.prefix_cache.hits")
                    .build(),
            }
        }

        fn serve(&self, times: &Times) {
            self.waiting.add(1, &[]);
            self.queries.add(512, &[]);
            self.hits.add(384, &[]);
            self.waiting.add(-1, &[]);
            self.running.add(1, &[]);
            self.queue
                .record((times.started - times.queued).as_secs_f64(), &[]);
            self.usage.record(0.25, &[]);
            self.prefill
                .record((times.first - times.started).as_secs_f64(), &[]);
            self.running.add(-1, &[]);
            self.decode
                .record((times.finished - times.first).as_secs_f64(), &[]);
            let reason = KeyValue::new("nemo.inference.finish_reason", "length");
            self.finished.add(1, &[reason]);
            self.usage.record(0.0, &[]);
        }
    }

    /// When the request was queued, started, had its first token and
    /// finished.
    struct Times {
        queued: Instant,
        started: Instant,
        first: Instant,
        finished: Instant,
    }

    fn serve(meter: &Meter, times: &Times) {
        let mut request = ScheduledRequest::queued_at(meter, times.queued);
        request.prefix_cache(512, 384);
        request.start_at(times.started);
        SchedulingMetrics::default()
            .kv_cache_usage(0.25)
            .record(meter);
        request.first_token_at(times.first);
        request.finish_at(FinishReason::Length, times.finished);
        SchedulingMetrics::default()
            .kv_cache_usage(0.0)
            .record(meter);
    }

    pub fn sides() -> Pair {
        let hand = Hand::new(&sdk_meter());
        let meter = meter();
        let queued = Instant::now();
        let times = Times {
            queued,
            started: queued + Duration::from_micros(300),
            first: queued + Duration::from_millis(12),
            finished: queued + Duration::from_millis(640),
        };
        let times: &'static Times = Box::leak(Box::new(times));
        (
            Side {
                name: "sdk",
                call: Box::new(move |_| hand.serve(black_box(times))),
            },
            Side {
                name: "nemo_lens",
                call: Box::new(move |_| serve(meter, black_box(times))),
            },
        )
    }
}

mod histogram {
    use super::*;
    use nemo_lens::cells;
    use nemo_lens::testing::Capture;
    use nemo_lens::ExemplarFilter;

    /// The GenAI request-duration buckets.
    const BOUNDS: [f64; 14] = [
        0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
    ];
    const VALUES: [f64; 8] = [0.012, 0.05, 0.3, 0.07, 1.5, 0.9, 0.033, 4.0];

    /// One histogram field, as a server's own set declares it.
    #[derive(Instruments, Default)]
    struct Latency {
        /// Request latency.
        #[histogram(
            "bench.request.duration",
            unit = "s",
            buckets = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]
        )]
        seconds: Option<f64>,
    }

    fn cell(filter: ExemplarFilter, name: &'static str) -> Side<'static> {
        let cell = cells::Histogram::<f64>::with_exemplars(BOUNDS.into(), filter);
        Side {
            name,
            call: Box::new(move |i| cell.record(VALUES[i & 7])),
        }
    }

    fn set(filter: ExemplarFilter, name: &'static str) -> Side<'static> {
        let capture: &'static Capture = Box::leak(Box::new(Capture::with_exemplar_filter(filter)));
        let meter = capture.meter();
        Side {
            name,
            call: Box::new(move |i| {
                Latency {
                    seconds: Some(VALUES[i & 7]),
                }
                .record(meter)
            }),
        }
    }

    pub fn cells() -> Pair {
        (
            cell(ExemplarFilter::AlwaysOff, "always_off"),
            cell(ExemplarFilter::TraceBased, "trace_based"),
        )
    }

    /// A record by the thread that owns a series' first cell against one
    /// by a thread that does not, which writes a stripe of its own: what
    /// the second of two threads on one series pays per record, which
    /// bounds their throughput over one thread's (`threads`, one series).
    pub fn stripes() -> Pair {
        let owned = cells::Histogram::<f64>::new(BOUNDS.into());
        owned.record(VALUES[0]);
        let striped = cells::Histogram::<f64>::new(BOUNDS.into());
        // Owned by a thread that has ended; this thread's number, drawn
        // above, is not its.
        std::thread::scope(|scope| {
            scope.spawn(|| striped.record(VALUES[0]));
        });
        (
            Side {
                name: "owner",
                call: Box::new(move |i| owned.record(VALUES[i & 7])),
            },
            Side {
                name: "stripe",
                call: Box::new(move |i| striped.record(VALUES[i & 7])),
            },
        )
    }

    pub fn sets() -> Pair {
        (
            set(ExemplarFilter::AlwaysOff, "always_off"),
            set(ExemplarFilter::TraceBased, "trace_based"),
        )
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let only = value("--only");
    let pairs: [(&str, MakePair); 6] = [
        ("rl", rl::sides),
        ("inference", inference::sides),
        ("scheduling", scheduling::sides),
        ("histogram cell", histogram::cells),
        ("histogram set", histogram::sets),
        ("histogram stripe", histogram::stripes),
    ];
    if let Some(calls) = value("--calls").and_then(|n| n.parse::<usize>().ok()) {
        // One side alone, for an instruction count.
        let wanted = only.unwrap_or_default();
        for (name, sides) in pairs {
            let (baseline, ours) = sides();
            for mut side in [baseline, ours] {
                if wanted == format!("{name}/{}", side.name) {
                    (0..calls).for_each(|i| (side.call)(black_box(i)));
                    println!("hot_path: {wanted}: {calls} calls");
                }
            }
        }
        return;
    }
    if args.iter().any(|a| a == "--list") {
        return;
    }
    for (name, sides) in pairs {
        if only.as_deref().is_some_and(|o| !name.starts_with(o)) {
            continue;
        }
        let (baseline, ours) = sides();
        pair(name, baseline, ours);
    }
}
