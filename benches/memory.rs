//! Resident memory: 10,000 cycles of set up, record, drop (nothing may be
//! kept), and memory held as the number of distinct model names grows.
//! Prints one line per measurement; `scripts/bench.sh` copies them into
//! BENCHMARKS.md.

use nemo_lens::instruments::gym::GymMetrics;
use nemo_lens::instruments::rl::RlMetrics;
use nemo_lens::instruments::InferenceMetrics;
use nemo_lens::opentelemetry::metrics::MeterProvider as _;
use nemo_lens::{Instruments, Meter};

mod support;

use support::provider;

fn rss_kib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4
}

fn cycle(i: u64) {
    let provider = provider();
    let meter = Meter::from(provider.meter("nemo.lens"));
    RlMetrics::default()
        .reward_mean(i as f64)
        .rollout_duration_ms(5.0)
        .record(&meter);
    GymMetrics::default().active_servers(i).record(&meter);
    InferenceMetrics::default()
        .request_duration_s(0.1)
        .model("llama-3-8b")
        .input_tokens(i)
        .record(&meter);
    drop(meter);
    let _ = provider.shutdown();
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo bench -- --list` and test discovery: nothing to list
    }
    for i in 0..200 {
        cycle(i);
    }
    let before = rss_kib();
    for i in 0..10_000 {
        cycle(i);
    }
    let after = rss_kib();
    println!(
        "memory: 10000 set-up/record/drop cycles: rss {before} KiB -> {after} KiB, growth {} KiB",
        after.saturating_sub(before)
    );

    for models in [1_usize, 100, 10_000] {
        let provider = provider();
        let meter = Meter::from(provider.meter("nemo.lens"));
        let before = rss_kib();
        for i in 0..models.max(10_000) {
            InferenceMetrics::default()
                .request_duration_s(0.2)
                .model(format!("model-{:05}", i % models))
                .input_tokens(100)
                .output_tokens(200)
                .record(&meter);
        }
        let after = rss_kib();
        println!(
            "memory: inference over {models} distinct models: rss growth {} KiB",
            after.saturating_sub(before)
        );
        let _ = provider.shutdown();
    }
}
