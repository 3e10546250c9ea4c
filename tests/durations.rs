//! `Duration` fields: recorded in their histogram's declared unit.

mod support;

use std::time::Duration;

use nemo_lens::Instruments;
use support::{Harness, Value};

/// Timings of one rollout.
#[derive(Instruments, Default)]
struct RolloutTimings {
    /// Time to run one rollout.
    #[histogram("app.rollout.duration", unit = "s")]
    duration: Option<Duration>,
    /// Time to reset the environment.
    #[histogram("app.env.reset.duration", unit = "ms", buckets = [1, 2, 5, 10])]
    reset: Option<Duration>,
    /// Time of each tool call in the rollout.
    #[histogram("app.tool.duration", unit = "us")]
    tool_calls: Option<Vec<Duration>>,
}

fn histogram(h: &Harness, name: &str) -> (u64, f64, Vec<u64>) {
    let points = h.points_of(name);
    assert_eq!(points.len(), 1, "{name}: {points:?}");
    assert_eq!(points[0].number, "f64", "{name}");
    match &points[0].value {
        Value::Histogram {
            count,
            sum,
            bucket_counts,
            ..
        } => (*count, *sum, bucket_counts.clone()),
        other => panic!("{name}: {other:?}"),
    }
}

#[test]
fn a_duration_is_recorded_in_the_declared_unit() {
    let h = Harness::new();
    RolloutTimings::default()
        .duration(Duration::from_millis(2500))
        .reset(Duration::from_micros(1500))
        .record(&h.meter);
    RolloutTimings::default()
        .reset(Duration::from_millis(7))
        .record(&h.meter);

    let (count, sum, _) = histogram(&h, "app.rollout.duration");
    assert_eq!((count, sum), (1, 2.5), "seconds");
    let (count, sum, buckets) = histogram(&h, "app.env.reset.duration");
    assert_eq!((count, sum), (2, 8.5), "milliseconds");
    // 1.5 ms falls in (1, 2], 7 ms in (5, 10].
    assert_eq!(buckets, vec![0, 1, 0, 1, 0]);
}

#[test]
fn each_duration_of_a_vec_is_recorded() {
    let h = Harness::new();
    RolloutTimings::default()
        .tool_calls(vec![
            Duration::from_micros(250),
            Duration::from_nanos(1_500),
            Duration::from_millis(1),
        ])
        .record(&h.meter);
    let (count, sum, _) = histogram(&h, "app.tool.duration");
    assert_eq!((count, sum), (3, 1251.5));
    assert_eq!(
        h.points_of("app.rollout.duration"),
        vec![],
        "None is not recorded"
    );
}
