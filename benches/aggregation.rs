//! The cost of a histogram record with exponential aggregation against the
//! advised explicit buckets, in one run: the same derived set
//! (`InferenceMetrics`' time to first token), the same values, providers
//! differing only in `histogram_view`'s default.

use divan::{black_box, Bencher};
use nemo_lens::instruments::InferenceMetrics;
use nemo_lens::opentelemetry::metrics::MeterProvider as _;
use nemo_lens::telemetry::{histogram_view, HistogramAggregation};
use nemo_lens::{Instruments, Meter};

mod support;

fn main() {
    divan::main();
}

/// Times to first token over four orders of magnitude, so the exponential
/// histogram settles at the scale a real service sees rather than at one
/// bucket.
fn values() -> Vec<f64> {
    (0..1024)
        .map(|i| 0.002 * 1.5f64.powf((i * 7 % 1024) as f64 / 46.0))
        .collect()
}

fn bench(bencher: Bencher, aggregation: HistogramAggregation) {
    let provider = support::provider_builder()
        .with_view(histogram_view(aggregation))
        .build();
    let meter = Meter::from(provider.meter("nemo.lens"));
    let values = values();
    let mut next = 0usize;
    bencher.bench_local(|| {
        next = (next + 1) % values.len();
        InferenceMetrics::default()
            .time_to_first_token_s(black_box(values[next]))
            .record(&meter);
    });
}

mod histogram_aggregation {
    use super::*;

    /// The advised explicit buckets, what every histogram gets by default.
    #[divan::bench(sample_count = 500, sample_size = 200)]
    fn baseline(bencher: Bencher) {
        bench(bencher, HistogramAggregation::ExplicitBucket);
    }

    #[divan::bench(sample_count = 500, sample_size = 200)]
    fn exponential(bencher: Bencher) {
        bench(bencher, HistogramAggregation::Base2Exponential);
    }
}
