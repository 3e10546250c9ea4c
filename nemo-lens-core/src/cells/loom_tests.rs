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
