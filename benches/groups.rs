//! Recording the RL set three ways in one run: hand-written SDK calls (the
//! baseline), the derive, and a runtime group recorded by key (the same
//! instruments registered from `SpecFile::of::<RlMetrics>`).

use divan::{black_box, Bencher};
use nemo_lens::groups::{record_metrics, MetricKind, SpecFile};
use nemo_lens::instruments::rl::RlMetrics;
use nemo_lens::opentelemetry::metrics::{Gauge, Histogram, MeterProvider as _};
use nemo_lens::{Instruments, Meter, SemconvOptIn};

mod support;

use support::provider;

fn main() {
    divan::main();
}

/// The RL set's keys and one value each.
fn values() -> Vec<(String, f64)> {
    SpecFile::of::<RlMetrics>("bench_rl", &SemconvOptIn::none()).groups[0]
        .1
        .iter()
        .enumerate()
        .map(|(i, spec)| (spec.key.clone(), 0.5 + i as f64))
        .collect()
}

mod rl_set {
    use super::*;

    enum Hand {
        Gauge(Gauge<f64>),
        Histogram(Histogram<f64>),
    }

    #[divan::bench(sample_count = 500, sample_size = 100)]
    fn baseline(bencher: Bencher) {
        let provider = provider();
        let meter = provider.meter("nemo.lens");
        let file = SpecFile::of::<RlMetrics>("bench_rl", &SemconvOptIn::none());
        let instruments: Vec<Hand> = file.groups[0]
            .1
            .iter()
            .map(|spec| match spec.kind {
                MetricKind::Histogram => Hand::Histogram(
                    meter
                        .f64_histogram(spec.name.clone())
                        .with_unit(spec.unit.clone())
                        .build(),
                ),
                _ => Hand::Gauge(
                    meter
                        .f64_gauge(spec.name.clone())
                        .with_unit(spec.unit.clone())
                        .build(),
                ),
            })
            .collect();
        let values = values();
        bencher.bench_local(|| {
            for (instrument, (_, value)) in instruments.iter().zip(&values) {
                match instrument {
                    Hand::Gauge(g) => g.record(black_box(*value), &[]),
                    Hand::Histogram(h) => h.record(black_box(*value), &[]),
                }
            }
        });
    }

    #[divan::bench(sample_count = 500, sample_size = 100)]
    fn derive(bencher: Bencher) {
        let provider = provider();
        let meter = Meter::new(provider.meter("nemo.lens"));
        let metrics = RlMetrics::default()
            .reward_mean(0.5)
            .kl_divergence(1.5)
            .policy_loss(2.5)
            .value_loss(3.5)
            .entropy(4.5)
            .response_length_mean(5.5)
            .grad_norm(6.5)
            .learning_rate(7.5)
            .throughput_tokens_per_sec(8.5)
            .generation_duration_ms(9.5)
            .rollout_duration_ms(10.5);
        bencher.bench_local(|| black_box(&metrics).record(&meter));
    }

    #[divan::bench(sample_count = 500, sample_size = 100)]
    fn by_key(bencher: Bencher) {
        let file = SpecFile::of::<RlMetrics>("bench_rl", &SemconvOptIn::none());
        // Registered once per process; a second bench run in the same
        // process finds it there.
        let _ = file.register();
        let provider = provider();
        let meter = Meter::new(provider.meter("nemo.lens"));
        let values = values();
        bencher.bench_local(|| {
            record_metrics(
                &meter,
                "bench_rl",
                values.iter().map(|(k, v)| (k.as_str(), black_box(*v))),
                &[],
            )
        });
    }
}
