//! What one Prometheus scrape of 10,000 series costs: collecting them
//! (cells read, the SDK's aggregates read) and writing the text exposition,
//! through the same code the scrape endpoint runs (a test capture renders
//! as the exporter does, without the HTTP server).
//!
//! `cargo bench --bench scrape`

use std::time::{Duration, Instant};

use nemo_lens::testing::Capture;
use nemo_lens::Instruments;

const MODELS: usize = 2_000;
const RENDERS: usize = 21;

/// Five instruments of every kind, 2,000 models each: 10,000 series.
#[derive(Instruments, Default)]
struct Served {
    /// Requests served.
    #[counter("scrape.requests", unit = "{request}")]
    requests: Option<u64>,
    /// Requests being served.
    #[up_down_counter("scrape.active", unit = "{request}")]
    active: Option<i64>,
    /// Queue depth.
    #[gauge("scrape.queue", unit = "{request}")]
    queue: Option<u64>,
    /// Request duration.
    #[histogram(
        "scrape.duration",
        unit = "s",
        buckets = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92],
        aggregation = "explicit_bucket_histogram"
    )]
    duration_s: Option<f64>,
    /// Tokens per request.
    #[histogram(
        "scrape.tokens",
        unit = "{token}",
        buckets = [1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0],
        aggregation = "explicit_bucket_histogram"
    )]
    tokens: Option<u64>,
    /// The model.
    #[attribute("gen_ai.request.model")]
    model: Option<String>,
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let capture = Capture::new();
    for i in 0..MODELS {
        for value in 0..3_u64 {
            Served::default()
                .requests(1)
                .active(1)
                .queue(value)
                .duration_s(0.05 * value as f64)
                .tokens(100 * value)
                .model(format!("model-{i:04}"))
                .record(capture.meter());
        }
    }
    let first = capture.exposition();
    let series = first
        .lines()
        .filter(|l| !l.starts_with('#') && !l.contains("_bucket{"))
        .count();
    let mut times: Vec<Duration> = (0..RENDERS)
        .map(|_| {
            let begun = Instant::now();
            let body = capture.exposition();
            let took = begun.elapsed();
            assert_eq!(body.len(), first.len());
            took
        })
        .collect();
    times.sort();
    println!(
        "scrape: {MODELS} models x 5 instruments ({series} samples besides buckets, {} KiB): \
         median {:?} per render (of {RENDERS})",
        first.len() / 1024,
        times[RENDERS / 2]
    );
}
