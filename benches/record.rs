//! Recording cost of the built-in sets: the derive against hand-written
//! OpenTelemetry SDK calls, in one run. `scripts/bench.sh` turns the output
//! into the ratios of BENCHMARKS.md.
//!
//! Every group has a `baseline` (instruments built once, attributes built per
//! call as the opentelemetry docs show) and the derive's `record` (cache look-up
//! included), `record_with` (a held set), `disabled` (the no-op meter) and
//! `first_use` (a fresh meter: building the set, then recording).

use divan::{black_box, Bencher};
use nemo_lens::instruments::gym::GymMetrics;
use nemo_lens::instruments::rl::RlMetrics;
use nemo_lens::instruments::InferenceMetrics;
use nemo_lens::opentelemetry::metrics::{Gauge, Histogram, Meter as OtelMeter, MeterProvider as _};
use nemo_lens::opentelemetry::StringValue;
use nemo_lens::opentelemetry_sdk::metrics::SdkMeterProvider;
use nemo_lens::{Instruments, Meter};

mod support;

use nemo_lens::testing::Capture;
use support::{provider, HandInference};

fn main() {
    divan::main();
}

/// The meter `setup_telemetry` gives (series in nemo-lens's cells, read by
/// the exporters): a test capture's, whose reader collects only when asked.
/// Kept for the process: benches borrow it from their closures.
fn meter(_: &SdkMeterProvider) -> Meter {
    let capture: &'static Capture = Box::leak(Box::new(Capture::new()));
    capture.meter().clone()
}

fn rl_all() -> RlMetrics {
    RlMetrics::default()
        .reward_mean(0.75)
        .kl_divergence(0.0123)
        .policy_loss(-0.31)
        .value_loss(0.084)
        .entropy(1.92)
        .response_length_mean(412.5)
        .grad_norm(1.7)
        .learning_rate(3e-6)
        .throughput_tokens_per_sec(12_500.0)
        .generation_duration_ms(1234.5)
        .rollout_duration_ms(5678.9)
}

fn gym_all() -> GymMetrics {
    GymMetrics::default()
        .server_request_duration_ms(12.5)
        .rollout_duration_ms(3456.7)
        .verify_duration_ms(45.6)
        .verify_success_rate(0.875)
        .active_servers(4)
}

fn inference(model: StringValue) -> InferenceMetrics {
    InferenceMetrics::default()
        .request_duration_s(0.42)
        .model(model)
        .input_tokens(128)
        .output_tokens(256)
}

/// `metrics.record(&meter)`, warmed up so the set is built before timing.
fn bench_record<T: Instruments>(bencher: Bencher, metrics: T) {
    let provider = provider();
    let meter = meter(&provider);
    metrics.record(&meter);
    bencher.bench_local(|| black_box(&metrics).record(&meter));
}

/// `metrics.record_with(&set)` on a set built up front.
fn bench_record_with<T: Instruments>(bencher: Bencher, metrics: T) {
    let provider = provider();
    let set = T::build_set(&meter(&provider));
    metrics.record_with(&set);
    bencher.bench_local(|| black_box(&metrics).record_with(&set));
}

/// `record` on the no-op meter a rank that does not export gets.
fn bench_disabled<T: Instruments>(bencher: Bencher, metrics: T) {
    let meter = Meter::noop();
    bencher.bench_local(|| black_box(&metrics).record(black_box(&meter)));
}

/// `record` on a fresh meter: building the set, then recording.
fn bench_first_use<T: Instruments + Sync>(bencher: Bencher, metrics: T) {
    let provider = provider();
    bencher
        .with_inputs(|| meter(&provider))
        .bench_local_values(|meter| {
            metrics.record(&meter);
            meter
        });
}

/// What a careful user writes by hand for the RL set.
struct HandRl {
    gauges: [Gauge<f64>; 9],
    generation: Histogram<f64>,
    rollout: Histogram<f64>,
}

impl HandRl {
    fn new(meter: &OtelMeter) -> Self {
        let gauge = |name: &'static str, description: &'static str| {
            meter.f64_gauge(name).with_description(description).build()
        };
        HandRl {
            gauges: [
                gauge("rl.reward.mean", "Mean reward across rollout batch."),
                gauge(
                    "rl.kl_divergence",
                    "KL divergence between policy and reference.",
                ),
                gauge("rl.policy_loss", "Policy gradient loss."),
                gauge("rl.value_loss", "Value function loss."),
                gauge("rl.entropy", "Policy entropy."),
                gauge(
                    "rl.response_length.mean",
                    "Mean generated response length (tokens).",
                ),
                gauge("rl.grad_norm", "Gradient norm of the policy update."),
                gauge("rl.learning_rate", "Current optimizer learning rate."),
                meter
                    .f64_gauge("rl.throughput.tokens_per_sec")
                    .with_unit("{token}/s")
                    .with_description("Training throughput in tokens per second.")
                    .build(),
            ],
            generation: meter
                .f64_histogram("rl.generation.duration_ms")
                .with_unit("ms")
                .with_description("Duration of text generation in milliseconds.")
                .build(),
            rollout: meter
                .f64_histogram("rl.rollout.duration_ms")
                .with_unit("ms")
                .with_description("Duration of rollout collection in milliseconds.")
                .build(),
        }
    }

    fn record_all(&self, values: &[f64; 11]) {
        for (gauge, value) in self.gauges.iter().zip(values) {
            gauge.record(*value, &[]);
        }
        self.generation.record(values[9], &[]);
        self.rollout.record(values[10], &[]);
    }
}

const RL_VALUES: [f64; 11] = [
    0.75, 0.0123, -0.31, 0.084, 1.92, 412.5, 1.7, 3e-6, 12_500.0, 1234.5, 5678.9,
];

/// What a careful user writes by hand for the gym set.
struct HandGym {
    request: Histogram<f64>,
    rollout: Histogram<f64>,
    verify: Histogram<f64>,
    success: Gauge<f64>,
    active: Gauge<u64>,
}

impl HandGym {
    fn new(meter: &OtelMeter) -> Self {
        let ms = |name: &'static str, description: &'static str| {
            meter
                .f64_histogram(name)
                .with_unit("ms")
                .with_description(description)
                .build()
        };
        HandGym {
            request: ms(
                "gym.server.request_duration_ms",
                "Gym server request duration in milliseconds.",
            ),
            rollout: ms(
                "gym.rollout.duration_ms",
                "Rollout collection duration in milliseconds.",
            ),
            verify: ms(
                "gym.verify.duration_ms",
                "Verification endpoint duration in milliseconds.",
            ),
            success: meter
                .f64_gauge("gym.verify.success_rate")
                .with_description("Fraction of successful verifications.")
                .build(),
            active: meter
                .u64_gauge("gym.servers.active")
                .with_description("Number of active Gym servers.")
                .build(),
        }
    }

    fn record_all(&self) {
        self.request.record(12.5, &[]);
        self.rollout.record(3456.7, &[]);
        self.verify.record(45.6, &[]);
        self.success.record(0.875, &[]);
        self.active.record(4, &[]);
    }
}

mod rl_11_values {
    use super::*;

    #[divan::bench]
    fn baseline(bencher: Bencher) {
        let provider = provider();
        let hand = HandRl::new(&provider.meter("nemo.lens"));
        hand.record_all(&RL_VALUES);
        bencher.bench_local(|| hand.record_all(black_box(&RL_VALUES)));
    }

    #[divan::bench]
    fn record(bencher: Bencher) {
        bench_record(bencher, rl_all());
    }

    #[divan::bench]
    fn record_with(bencher: Bencher) {
        bench_record_with(bencher, rl_all());
    }

    #[divan::bench]
    fn disabled(bencher: Bencher) {
        bench_disabled(bencher, rl_all());
    }

    /// A library's `get_meter` before the application installs a provider
    /// (this bench process installs none).
    #[divan::bench]
    fn no_provider(bencher: Bencher) {
        let meter = nemo_lens::get_meter("bench.no_provider");
        let metrics = rl_all();
        metrics.record(&meter);
        bencher.bench_local(|| black_box(&metrics).record(black_box(&meter)));
    }

    #[divan::bench(sample_count = 200, sample_size = 1)]
    fn first_use(bencher: Bencher) {
        bench_first_use(bencher, rl_all());
    }

    #[divan::bench(threads = [1, 2], sample_size = 1000)]
    fn record_threads(bencher: Bencher) {
        let provider = provider();
        let meter = meter(&provider);
        let metrics = rl_all();
        metrics.record(&meter);
        bencher.bench(|| black_box(&metrics).record(&meter));
    }
}

mod rl_1_value {
    use super::*;

    #[divan::bench]
    fn baseline(bencher: Bencher) {
        let provider = provider();
        let hand = HandRl::new(&provider.meter("nemo.lens"));
        bencher.bench_local(|| hand.gauges[0].record(black_box(0.75), &[]));
    }

    #[divan::bench]
    fn record(bencher: Bencher) {
        bench_record(bencher, RlMetrics::default().reward_mean(0.75));
    }

    #[divan::bench]
    fn record_with(bencher: Bencher) {
        bench_record_with(bencher, RlMetrics::default().reward_mean(0.75));
    }
}

mod gym_5_values {
    use super::*;

    #[divan::bench]
    fn baseline(bencher: Bencher) {
        let provider = provider();
        let hand = HandGym::new(&provider.meter("nemo.lens"));
        hand.record_all();
        bencher.bench_local(|| black_box(&hand).record_all());
    }

    #[divan::bench]
    fn record(bencher: Bencher) {
        bench_record(bencher, gym_all());
    }

    #[divan::bench]
    fn record_with(bencher: Bencher) {
        bench_record_with(bencher, gym_all());
    }

    #[divan::bench]
    fn disabled(bencher: Bencher) {
        bench_disabled(bencher, gym_all());
    }

    #[divan::bench(sample_count = 200, sample_size = 1)]
    fn first_use(bencher: Bencher) {
        bench_first_use(bencher, gym_all());
    }
}

mod inference_with_model {
    use super::*;

    #[divan::bench]
    fn baseline(bencher: Bencher) {
        let provider = provider();
        let hand = HandInference::new(&provider.meter("nemo.lens"));
        let model = StringValue::from("llama-3-8b");
        hand.record(&model);
        bencher.bench_local(|| hand.record(black_box(&model)));
    }

    #[divan::bench]
    fn record(bencher: Bencher) {
        bench_record(bencher, inference("llama-3-8b".into()));
    }

    #[divan::bench]
    fn record_with(bencher: Bencher) {
        bench_record_with(bencher, inference("llama-3-8b".into()));
    }

    #[divan::bench]
    fn disabled(bencher: Bencher) {
        bench_disabled(bencher, inference("llama-3-8b".into()));
    }

    #[divan::bench(sample_count = 200, sample_size = 1)]
    fn first_use(bencher: Bencher) {
        bench_first_use(bencher, inference("llama-3-8b".into()));
    }

    /// Two threads, each serving its own model: the derive's shared state
    /// (cache, bound handles) is only read here, so this shows its scaling.
    #[divan::bench(threads = [1, 2], sample_size = 1000)]
    fn record_threads(bencher: Bencher) {
        let provider = provider();
        let meter = meter(&provider);
        let requests: Vec<InferenceMetrics> = (0..2)
            .map(|i| inference(format!("model-{i}").into()))
            .collect();
        bencher.bench(|| requests[thread_index() % 2].record(&meter));
    }

    #[divan::bench(threads = [1, 2], sample_size = 1000)]
    fn baseline_threads(bencher: Bencher) {
        let provider = provider();
        let hand = HandInference::new(&provider.meter("nemo.lens"));
        let models: Vec<StringValue> = (0..2).map(|i| format!("model-{i}").into()).collect();
        models.iter().for_each(|m| hand.record(m));
        bencher.bench(|| hand.record(&models[thread_index() % 2]));
    }
}

/// A small number fixed per thread, so each bench thread records its own series.
fn thread_index() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local!(static INDEX: usize = NEXT.fetch_add(1, Ordering::Relaxed));
    INDEX.with(|i| *i)
}

/// Cost per request as the number of distinct model names grows; the models
/// are cycled so every call may hit a different attribute set.
mod inference_models {
    use super::*;

    const MODELS: &[usize] = &[1, 100, 10_000];

    fn names(n: usize) -> Vec<StringValue> {
        (0..n).map(|i| format!("model-{i:05}").into()).collect()
    }

    #[divan::bench(args = MODELS)]
    fn baseline(bencher: Bencher, n: usize) {
        let provider = provider();
        let hand = HandInference::new(&provider.meter("nemo.lens"));
        let names = names(n);
        names.iter().for_each(|m| hand.record(m));
        let mut i = 0;
        bencher.bench_local(|| {
            i = (i + 1) % names.len();
            hand.record(&names[i]);
        });
    }

    #[divan::bench(args = MODELS)]
    fn record(bencher: Bencher, n: usize) {
        let provider = provider();
        let meter = meter(&provider);
        let requests: Vec<InferenceMetrics> = names(n).into_iter().map(inference).collect();
        requests.iter().for_each(|r| r.record(&meter));
        let mut i = 0;
        bencher.bench_local(|| {
            i = (i + 1) % requests.len();
            requests[i].record(&meter);
        });
    }
}
