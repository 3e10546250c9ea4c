//! `Duration` fields: recorded in their histogram's declared unit.

use std::time::Duration;

use nemo_lens::testing::Capture;
use nemo_lens::Instruments;

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

/// Count and sum of the histogram `name`. A fractional sum also shows the
/// duration was recorded as `f64`, not truncated to an integer type.
fn histogram(c: &Capture, name: &str) -> (u64, f64) {
    let count = c
        .count(name, &[])
        .unwrap_or_else(|| panic!("{name} recorded"));
    (count, c.sum(name, &[]).unwrap())
}

/// `(le, cumulative count)` of each bucket of the histogram family
/// `family`, as a scrape reads them.
fn cumulative_buckets(c: &Capture, family: &str) -> Vec<(String, u64)> {
    let prefix = format!("{family}_bucket{{");
    c.exposition()
        .lines()
        .filter(|line| line.starts_with(&prefix))
        .map(|line| {
            let (_, le) = line.rsplit_once("le=\"").unwrap();
            let (le, count) = le.split_once("\"} ").unwrap();
            (le.to_owned(), count.parse().unwrap())
        })
        .collect()
}

#[test]
fn a_duration_is_recorded_in_the_declared_unit() {
    let c = Capture::new();
    RolloutTimings::default()
        .duration(Duration::from_millis(2500))
        .reset(Duration::from_micros(1500))
        .record(c.meter());
    RolloutTimings::default()
        .reset(Duration::from_millis(7))
        .record(c.meter());

    assert_eq!(histogram(&c, "app.rollout.duration"), (1, 2.5), "seconds");
    assert_eq!(
        histogram(&c, "app.env.reset.duration"),
        (2, 8.5),
        "milliseconds"
    );
    // 1.5 ms falls in (1, 2], 7 ms in (5, 10].
    let buckets = cumulative_buckets(&c, "app_env_reset_duration_milliseconds");
    let want = [("1", 0), ("2", 1), ("5", 1), ("10", 2), ("+Inf", 2)];
    assert_eq!(buckets, want.map(|(le, n)| (le.to_owned(), n)));
}

#[test]
fn each_duration_of_a_vec_is_recorded() {
    let c = Capture::new();
    RolloutTimings::default()
        .tool_calls(vec![
            Duration::from_micros(250),
            Duration::from_nanos(1_500),
            Duration::from_millis(1),
        ])
        .record(c.meter());
    assert_eq!(histogram(&c, "app.tool.duration"), (3, 1251.5));
    assert_eq!(
        c.count("app.rollout.duration", &[]),
        None,
        "None is not recorded"
    );
}
