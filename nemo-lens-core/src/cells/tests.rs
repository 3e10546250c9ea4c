//! What the cells promise: exact totals from many threads, collections
//! during recording that neither lose nor double-count, totals kept after
//! a thread exits, and stripes only under contention, within the limit.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::*;

const THREADS: usize = 4;
const PER_THREAD: u64 = 200_000;

fn on_threads(threads: usize, work: impl Fn(usize) + Sync) {
    std::thread::scope(|scope| {
        for thread in 0..threads {
            let work = &work;
            scope.spawn(move || work(thread));
        }
    });
}

#[test]
fn sums_from_many_threads_are_exact() {
    let counter = Sum::<u64>::new();
    let up_down = Sum::<i64>::new();
    let float = Sum::<f64>::new();
    on_threads(THREADS, |thread| {
        for i in 0..PER_THREAD {
            counter.add(3);
            up_down.add(if thread % 2 == 0 { 5 } else { -2 });
            float.add((i % 4) as f64);
        }
    });
    let n = THREADS as u64 * PER_THREAD;
    assert_eq!(counter.value(), 3 * n);
    assert_eq!(up_down.value(), (5 - 2) * (n / 2) as i64);
    // 0 + 1 + 2 + 3 per four records: integers, so the f64 sum is exact.
    assert_eq!(float.value(), 6.0 * (n / 4) as f64);
    assert!(counter.stripes() <= stripe_limit());
}

#[test]
fn histograms_from_many_threads_are_exact() {
    let histogram = Histogram::<u64>::new([10.0, 100.0].into());
    on_threads(THREADS, |thread| {
        for i in 0..PER_THREAD {
            // 5, 50 and 500 in turn, and the thread's number on each tenth.
            let value = [5, 50, 500][(i % 3) as usize] + u64::from(i % 10 == 0) * thread as u64;
            histogram.record(value);
        }
    });
    let snapshot = histogram.snapshot();
    let n = THREADS as u64 * PER_THREAD;
    assert_eq!(snapshot.count, n);
    assert_eq!(snapshot.bucket_counts.iter().sum::<u64>(), n);
    // Each third lands in its bucket (the tenths' +0..3 move none across).
    let third = |r: u64| (0..PER_THREAD).filter(|i| i % 3 == r).count() as u64 * THREADS as u64;
    assert_eq!(snapshot.bucket_counts, [third(0), third(1), third(2)]);
    let extra: u64 = (0..THREADS as u64)
        .map(|t| t * (0..PER_THREAD).filter(|i| i % 10 == 0).count() as u64)
        .sum();
    assert_eq!(
        snapshot.sum,
        5 * third(0) + 50 * third(1) + 500 * third(2) + extra
    );
    assert_eq!(snapshot.min, Some(5));
    assert_eq!(snapshot.max, Some(500 + THREADS as u64 - 1));
}

#[test]
fn collections_during_recording_neither_lose_nor_double_count() {
    let counter = Sum::<u64>::new();
    let histogram = Histogram::<f64>::new([0.5].into());
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let reader = scope.spawn(|| {
            let (mut last_sum, mut last_count, mut readings) = (0, 0, 0_u64);
            // Bounded: the writers end after a fixed count.
            while !done.load(Ordering::Acquire) || readings == 0 {
                let sum = counter.value();
                assert!(sum >= last_sum, "a sum went back: {last_sum} -> {sum}");
                assert!(sum <= THREADS as u64 * PER_THREAD);
                let snapshot = histogram.snapshot();
                assert_eq!(snapshot.count, snapshot.bucket_counts.iter().sum::<u64>());
                assert!(snapshot.count >= last_count);
                // Every counted observation's sum is in (1.0 each).
                assert!(snapshot.sum >= snapshot.count as f64);
                (last_sum, last_count) = (sum, snapshot.count);
                readings += 1;
            }
            readings
        });
        std::thread::scope(|writers| {
            for _ in 0..THREADS {
                writers.spawn(|| {
                    for _ in 0..PER_THREAD {
                        counter.add(1);
                        histogram.record(1.0);
                    }
                });
            }
        });
        done.store(true, Ordering::Release);
        assert!(reader.join().expect("the reader's checks hold") > 0);
    });
    let n = THREADS as u64 * PER_THREAD;
    assert_eq!(counter.value(), n);
    let snapshot = histogram.snapshot();
    assert_eq!((snapshot.count, snapshot.sum), (n, n as f64));
    assert_eq!(snapshot.bucket_counts, [0, n]);
}

#[test]
fn a_thread_that_exits_keeps_what_it_recorded() {
    let counter = Arc::new(Sum::<u64>::new());
    let histogram = Arc::new(Histogram::<i64>::new([0.0].into()));
    // Force stripes, so that exiting threads leave values in them.
    counter.add_contended(1);
    histogram.record_contended(0, -1);
    for thread in 0..8_i64 {
        let (counter, histogram) = (Arc::clone(&counter), Arc::clone(&histogram));
        std::thread::spawn(move || {
            counter.add(10);
            histogram.record(thread);
        })
        .join()
        .expect("the thread records");
    }
    assert_eq!(counter.value(), 81);
    let snapshot = histogram.snapshot();
    assert_eq!(snapshot.bucket_counts, [2, 7]);
    assert_eq!(snapshot.sum, -1 + (0..8).sum::<i64>());
    assert_eq!((snapshot.min, snapshot.max), (Some(-1), Some(7)));
}

#[test]
fn an_uncontended_series_never_stripes() {
    let counter = Sum::<u64>::new();
    let histogram = Histogram::<f64>::new([1.0].into());
    for _ in 0..100_000 {
        counter.add(1);
        histogram.record(0.5);
    }
    assert_eq!((counter.stripes(), histogram.stripes()), (0, 0));
    assert_eq!(counter.value(), 100_000);
}

#[test]
fn a_second_thread_records_into_a_stripe_of_its_own() {
    let histogram = Histogram::<u64>::new([10.0].into());
    histogram.record(5);
    std::thread::scope(|scope| {
        scope.spawn(|| (0..1000).for_each(|_| histogram.record(50)));
    });
    histogram.record(5);
    assert_eq!(histogram.stripes(), 1, "the first thread keeps its cell");
    let snapshot = histogram.snapshot();
    assert_eq!(
        (snapshot.bucket_counts, snapshot.sum),
        (vec![2, 1000], 50_010)
    );
}

#[test]
fn threads_past_the_stripes_share_the_commons_and_lose_nothing() {
    // More threads than stripes and probes can give each its own cell.
    let threads = stripe_limit() * 2 + 4;
    let histogram = Histogram::<u64>::new([10.0, 100.0].into());
    on_threads(threads, |thread| {
        for i in 0..20_000_u64 {
            histogram.record(if (i + thread as u64).is_multiple_of(2) {
                5
            } else {
                500
            });
        }
    });
    // And the commons taken directly, beside whatever the threads made.
    histogram.record_in_commons(1, 50);
    let snapshot = histogram.snapshot();
    let n = threads as u64 * 20_000;
    assert_eq!(snapshot.bucket_counts, [n / 2, 1, n / 2]);
    assert_eq!(snapshot.sum, 505 * (n / 2) + 50);
    assert_eq!((snapshot.min, snapshot.max), (Some(5), Some(500)));
    assert!(histogram.stripes() <= stripe_limit());
}

#[test]
fn a_collision_moves_the_series_to_stripes_and_keeps_its_total() {
    let counter = Sum::<i64>::new();
    counter.add(-4);
    counter.add_contended(10);
    assert_eq!(
        counter.stripes(),
        1,
        "one stripe, made where the thread landed"
    );
    for _ in 0..1000 {
        counter.add(1);
    }
    assert_eq!(counter.value(), 1006);
    assert!(counter.stripes() <= stripe_limit());
}

#[test]
fn histogram_buckets_follow_opentelemetry_bounds() {
    let histogram = Histogram::<f64>::new([0.0, 5.0, 10.0].into());
    for value in [-1.0, 0.0, 0.1, 5.0, 5.5, 10.0, 10.5, 1e300] {
        histogram.record(value);
    }
    let snapshot = histogram.snapshot();
    // (-inf, 0], (0, 5], (5, 10], (10, +inf)
    assert_eq!(snapshot.bucket_counts, [2, 2, 2, 2]);
    assert_eq!((snapshot.min, snapshot.max), (Some(-1.0), Some(1e300)));
    let empty = Histogram::<u64>::new(Arc::from([]));
    assert_eq!(
        empty.snapshot(),
        HistogramSnapshot {
            bucket_counts: vec![0],
            count: 0,
            sum: 0,
            min: None,
            max: None
        }
    );
    empty.record(7);
    assert_eq!(empty.snapshot().bucket_counts, [1]);
}

#[test]
fn counting_bounds_finds_the_bucket_a_search_finds() {
    // Short bound lists are counted, long ones searched: both must agree
    // with the SDK's rule at, between and beyond the bounds.
    for len in [0, 1, 14, 32, 33, 160] {
        let bounds: Vec<f64> = (0..len).map(|i| f64::from(i) * 1.5 - 4.0).collect();
        let mut values = vec![f64::NEG_INFINITY, f64::INFINITY, f64::NAN, -1e300, 1e300];
        values.extend(bounds.iter().flat_map(|b| [*b, b - 0.25, b + 0.25]));
        for value in values {
            assert_eq!(
                histogram::bucket_of(&bounds, value),
                bounds.partition_point(|bound| *bound < value),
                "{value} among {len} bounds"
            );
        }
    }
}

#[test]
fn the_last_value_is_the_last_written() {
    let gauge = LastValue::new(0.0_f64);
    on_threads(2, |thread| {
        for i in 0..10_000 {
            gauge.record(if thread == 0 { 1.0 } else { i as f64 });
        }
    });
    gauge.record(-2.5);
    assert_eq!(gauge.value(), -2.5);
}

#[test]
fn the_stripe_limit_is_a_power_of_two_within_the_bound() {
    let limit = stripe_limit();
    assert!(limit.is_power_of_two() && (2..=MAX_STRIPES).contains(&limit));
}

/// Log-spread values, negative and zero among them, from a fixed seed.
fn spread(n: usize, seed: u64) -> Vec<f64> {
    let mut state = seed;
    (0..n)
        .map(|i| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let unit = (state >> 11) as f64 / (1u64 << 53) as f64;
            let magnitude = 10f64.powf(unit * 8.0 - 4.0);
            match i % 17 {
                0 => 0.0,
                1 => -magnitude,
                _ => magnitude,
            }
        })
        .collect()
}

#[test]
fn exponential_stripes_merge_to_what_one_histogram_of_the_same_values_holds() {
    let striped = ExponentialHistogram::<f64>::new(160, 20);
    let values: Vec<Vec<f64>> = (0..THREADS as u64).map(|t| spread(20_000, t + 1)).collect();
    // Force stripes so the merge is exercised whatever the scheduler does.
    striped.record_contended(values[0][0]);
    on_threads(THREADS, |thread| {
        for (i, value) in values[thread].iter().enumerate() {
            if thread == 0 && i == 0 {
                continue;
            }
            striped.record(*value);
        }
    });
    assert!(striped.stripes() >= 1);
    let single = ExponentialHistogram::<f64>::new(160, 20);
    for value in values.iter().flatten() {
        single.record(*value);
    }
    let (merged, alone) = (striped.snapshot(), single.snapshot());
    assert_eq!(merged.count, 4 * 20_000);
    assert_eq!(
        (
            merged.scale,
            merged.zero_count,
            &merged.positive,
            &merged.negative
        ),
        (
            alone.scale,
            alone.zero_count,
            &alone.positive,
            &alone.negative
        )
    );
    assert_eq!((merged.min, merged.max), (alone.min, alone.max));
    assert!((merged.sum - alone.sum).abs() <= 1e-9 * alone.sum.abs());
    assert!(merged.positive.counts.len() <= 160 && merged.negative.counts.len() <= 160);
}

#[test]
fn exponential_buckets_are_the_sdks() {
    use opentelemetry::metrics::MeterProvider as _;
    use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData, ResourceMetrics};
    use opentelemetry_sdk::metrics::reader::MetricReader as _;
    use opentelemetry_sdk::metrics::{ManualReader, SdkMeterProvider};

    #[derive(Debug)]
    struct Shared(Arc<ManualReader>);
    impl opentelemetry_sdk::metrics::reader::MetricReader for Shared {
        fn register_pipeline(&self, p: std::sync::Weak<opentelemetry_sdk::metrics::Pipeline>) {
            self.0.register_pipeline(p)
        }
        fn collect(&self, rm: &mut ResourceMetrics) -> opentelemetry_sdk::error::OTelSdkResult {
            self.0.collect(rm)
        }
        fn force_flush(&self) -> opentelemetry_sdk::error::OTelSdkResult {
            self.0.force_flush()
        }
        fn shutdown_with_timeout(
            &self,
            t: std::time::Duration,
        ) -> opentelemetry_sdk::error::OTelSdkResult {
            self.0.shutdown_with_timeout(t)
        }
        fn temporality(
            &self,
            k: opentelemetry_sdk::metrics::InstrumentKind,
        ) -> opentelemetry_sdk::metrics::Temporality {
            self.0.temporality(k)
        }
    }
    for (seed, n) in [(7, 1), (8, 50), (9, 5_000), (10, 40_000)] {
        let reader = Arc::new(ManualReader::builder().build());
        let provider = SdkMeterProvider::builder()
            .with_reader(Shared(Arc::clone(&reader)))
            .with_view(crate::histogram_view(
                crate::HistogramAggregation::Base2Exponential,
            ))
            .build();
        let sdk = provider
            .meter("oracle")
            .f64_histogram("oracle.values")
            .build();
        let ours = ExponentialHistogram::<f64>::new(160, 20);
        ours.record_contended(0.5);
        sdk.record(0.5, &[]);
        for value in spread(n, seed) {
            sdk.record(value, &[]);
            ours.record(value);
        }
        let mut collected = ResourceMetrics::default();
        reader.collect(&mut collected).unwrap();
        let metric = collected
            .scope_metrics()
            .flat_map(|s| s.metrics())
            .next()
            .expect("the SDK's histogram");
        let AggregatedMetrics::F64(MetricData::ExponentialHistogram(h)) = metric.data() else {
            panic!("not exponential: {:?}", metric.data());
        };
        let point = h.data_points().next().expect("one point");
        let snapshot = ours.snapshot();
        assert_eq!(snapshot.count, point.count() as u64, "{n} values");
        assert_eq!(snapshot.scale, point.scale(), "{n} values");
        assert_eq!(snapshot.zero_count, point.zero_count());
        assert_eq!(snapshot.positive.offset, point.positive_bucket().offset());
        assert_eq!(
            snapshot.positive.counts,
            point.positive_bucket().counts().collect::<Vec<_>>()
        );
        assert_eq!(snapshot.negative.offset, point.negative_bucket().offset());
        assert_eq!(
            snapshot.negative.counts,
            point.negative_bucket().counts().collect::<Vec<_>>()
        );
        assert_eq!((snapshot.min, snapshot.max), (point.min(), point.max()));
    }
}

#[test]
fn taking_an_exponential_series_starts_it_over() {
    let histogram = ExponentialHistogram::<u64>::new(160, 20);
    for value in [1, 1000, 1_000_000] {
        histogram.record(value);
    }
    let first = histogram.take();
    assert_eq!((first.count, first.sum), (3, 1_001_001));
    histogram.record(5);
    let second = histogram.take();
    assert_eq!((second.count, second.sum, second.min), (1, 5, Some(5)));
    // One value alone is held at the finest scale again.
    assert_eq!(second.scale, 20);
    assert_eq!(histogram.take().count, 0);
}

#[test]
fn an_uncontended_series_costs_what_the_module_says() {
    use std::mem::size_of;
    assert_eq!(size_of::<Sum<u64>>(), 64);
    assert_eq!(size_of::<LastValue<f64>>(), 64);
    assert_eq!(size_of::<Histogram<f64>>(), 56);
    assert_eq!(size_of::<ExponentialHistogram<f64>>(), 256);
}
