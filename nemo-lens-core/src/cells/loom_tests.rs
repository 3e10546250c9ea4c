//! The cells' protocol under every interleaving loom explores:
//! `RUSTFLAGS="--cfg nemo_lens_loom" cargo test -p nemo-lens-core --release --lib cells`.

use loom::sync::Arc;
use loom::thread;

use super::*;

#[test]
fn concurrent_adds_and_a_reader_lose_nothing() {
    loom::model(|| {
        let sum = Arc::new(Sum::<u64>::new());
        let writers: Vec<_> = [1, 2]
            .map(|value| {
                let sum = Arc::clone(&sum);
                thread::spawn(move || sum.add(value))
            })
            .into_iter()
            .collect();
        let seen = sum.value();
        assert!([0, 1, 2, 3].contains(&seen));
        for writer in writers {
            writer.join().unwrap();
        }
        assert_eq!(sum.value(), 3);
    });
}

#[test]
fn racing_inflations_make_one_table_and_lose_nothing() {
    loom::model(|| {
        let sum = Arc::new(Sum::<u64>::new());
        let writers: Vec<_> = [1, 2]
            .map(|value| {
                let sum = Arc::clone(&sum);
                thread::spawn(move || sum.add_contended(value))
            })
            .into_iter()
            .collect();
        for writer in writers {
            writer.join().unwrap();
        }
        assert_eq!(sum.value(), 3);
        assert!(sum.stripes() <= stripe_limit());
    });
}

#[test]
fn a_histogram_reader_sees_counts_with_their_sums() {
    loom::model(|| {
        let histogram = Arc::new(Histogram::<u64>::new([1.0].into()));
        let writer = {
            let histogram = Arc::clone(&histogram);
            thread::spawn(move || histogram.record_contended(1, 5))
        };
        histogram.record(1);
        let snapshot = histogram.snapshot();
        assert_eq!(snapshot.count, snapshot.bucket_counts.iter().sum::<u64>());
        // A counted observation's sum and extremes are visible with it.
        if snapshot.bucket_counts[1] == 1 {
            assert!(snapshot.sum >= 5 && snapshot.max == Some(5));
        }
        writer.join().unwrap();
        let done = histogram.snapshot();
        assert_eq!(
            (done.count, done.sum, done.bucket_counts),
            (2, 6, vec![1, 1])
        );
    });
}

/// Another thread records 1 with `other` while this one records 5 with
/// `mine`, then reads: what a reading counts comes whole, and nothing is
/// lost.
fn two_writers_and_a_reader(other: fn(&Histogram<u64>), mine: fn(&Histogram<u64>)) {
    loom::model(move || {
        let histogram = Arc::new(Histogram::<u64>::new([2.0].into()));
        let writer = {
            let histogram = Arc::clone(&histogram);
            thread::spawn(move || other(&histogram))
        };
        mine(&histogram);
        let seen = histogram.snapshot();
        if seen.bucket_counts[0] == 1 {
            assert!(seen.sum == 6 && seen.min == Some(1));
        }
        writer.join().unwrap();
        let done = histogram.snapshot();
        assert_eq!(
            (done.count, done.sum, done.bucket_counts, done.min, done.max),
            (2, 6, vec![1, 1], Some(1), Some(5))
        );
    });
}

#[test]
fn two_histogram_writers_own_a_cell_each_and_lose_nothing() {
    two_writers_and_a_reader(|h| h.record(1), |h| h.record(5));
}

#[test]
fn writers_in_the_commons_take_turns_and_lose_nothing() {
    two_writers_and_a_reader(|h| h.record_in_commons(0, 1), |h| h.record_in_commons(1, 5));
}
