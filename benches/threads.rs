//! Wall-clock throughput of one thread against two recording into one meter,
//! independent of divan's thread mode. Each loop is bounded in time (0.2 s a
//! window, five rounds) and in count.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nemo_lens::instruments::rl::RlMetrics;
use nemo_lens::instruments::InferenceMetrics;
use nemo_lens::opentelemetry::metrics::MeterProvider as _;
use nemo_lens::opentelemetry::KeyValue;
use nemo_lens::{Instruments, Meter};

mod support;

const WINDOW: Duration = Duration::from_millis(200);
/// Alternating 1- and 2-thread windows; the median ratio is reported.
const ROUNDS: usize = 5;
const MAX_OPS: u64 = 50_000_000;

/// Records per second over `threads` threads, each running `work(thread)`.
fn throughput(threads: usize, work: &(dyn Fn(usize) + Sync)) -> f64 {
    let stop = AtomicBool::new(false);
    let start = Instant::now();
    let ops: u64 = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let stop = &stop;
                scope.spawn(move || {
                    let mut ops = 0;
                    while ops < MAX_OPS && !stop.load(Ordering::Relaxed) {
                        for _ in 0..256 {
                            work(t);
                        }
                        ops += 256;
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

fn report(name: &str, work: &(dyn Fn(usize) + Sync)) {
    work(0);
    work(1);
    let mut rounds: Vec<(f64, f64)> = (0..ROUNDS)
        .map(|_| (throughput(1, work), throughput(2, work)))
        .collect();
    rounds.sort_by(|a, b| (a.1 / a.0).total_cmp(&(b.1 / b.0)));
    let (one, two) = rounds[ROUNDS / 2];
    println!(
        "threads: {name}: 1 thread {:.2} M/s, 2 threads {:.2} M/s, scaling {:.2}x (median of {ROUNDS})",
        one / 1e6,
        two / 1e6,
        two / one
    );
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let provider = support::provider();
    let meter = Meter::from(provider.meter("nemo.lens"));

    let rl = RlMetrics::default()
        .reward_mean(0.75)
        .policy_loss(0.3)
        .entropy(1.9)
        .generation_duration_ms(1234.5);
    report("rl, same series on both threads", &|_| rl.record(&meter));

    let requests: Vec<InferenceMetrics> = (0..2)
        .map(|i| {
            InferenceMetrics::default()
                .request_duration_s(0.42)
                .model(format!("model-{i}"))
                .input_tokens(128)
                .output_tokens(256)
        })
        .collect();
    report("inference, one model per thread", &|t| {
        requests[t % 2].record(&meter)
    });
    report("inference, same model on both threads", &|_| {
        requests[0].record(&meter)
    });

    // The same contention without the derive: both threads share the SDK's
    // per-series aggregator (an atomic or a mutex per series).
    let histogram = meter
        .otel()
        .f64_histogram("baseline.request.duration")
        .build();
    let attributes = [
        KeyValue::new("gen_ai.operation.name", "text_completion"),
        KeyValue::new("gen_ai.request.model", "model-0"),
    ];
    report(
        "hand-written histogram, same series on both threads",
        &|_| histogram.record(0.42, &attributes),
    );
    let per_thread = [
        [KeyValue::new("gen_ai.request.model", "model-0")],
        [KeyValue::new("gen_ai.request.model", "model-1")],
    ];
    report("hand-written histogram, one series per thread", &|t| {
        histogram.record(0.42, &per_thread[t % 2])
    });
}
