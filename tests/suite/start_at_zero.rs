//! `start_at_zero`: every series of a counter exists at 0 before its first
//! event, one per combination of its enum attribute values.

use nemo_lens::testing::Capture;
use nemo_lens::{AttributeValue, Instruments};

/// How a rollout ended.
#[derive(AttributeValue, Clone, Copy, Debug, PartialEq)]
#[attribute_value(rename_all = "snake_case")]
enum Outcome {
    Success,
    Failure,
    TimedOut,
}

/// Rollouts of one environment.
#[derive(Instruments, Default)]
struct Rollouts {
    /// Rollouts finished.
    #[counter("app.rollout.finished", unit = "{rollout}", start_at_zero)]
    finished: Option<u64>,
    /// Rollouts running.
    #[up_down_counter("app.rollout.running", unit = "{rollout}", start_at_zero)]
    running: Option<i64>,
    /// Time of one rollout.
    #[histogram("app.rollout.duration", unit = "s")]
    duration_s: Option<f64>,
    /// How the rollout ended.
    #[attribute("app.rollout.outcome", only(finished))]
    outcome: Option<Outcome>,
    /// Whether the rollout was a retry.
    #[attribute("app.rollout.retry", only(finished))]
    retry: Option<bool>,
    /// The environment (a static value on every series).
    #[counter("app.env.started", unit = "{env}", attr("app.env.kind" = "sandbox"), start_at_zero)]
    started: Option<u64>,
}

/// The exposition's series of the family `family`, without the scope label.
fn series(c: &Capture, family: &str) -> Vec<String> {
    c.exposition()
        .lines()
        .filter(|l| l.starts_with(&format!("{family}{{")))
        .map(|l| l.replace(",otel_scope_name=\"nemo.lens\"", ""))
        .collect()
}

#[test]
fn every_combination_of_enum_values_starts_at_zero() {
    let c = Capture::new();
    Rollouts::start_at_zero(c.meter());

    // 3 outcomes x 2 retry values, all at zero.
    assert_eq!(
        series(&c, "app_rollout_finished_total"),
        [
            r#"app_rollout_finished_total{app_rollout_outcome="failure",app_rollout_retry="false"} 0"#,
            r#"app_rollout_finished_total{app_rollout_outcome="failure",app_rollout_retry="true"} 0"#,
            r#"app_rollout_finished_total{app_rollout_outcome="success",app_rollout_retry="false"} 0"#,
            r#"app_rollout_finished_total{app_rollout_outcome="success",app_rollout_retry="true"} 0"#,
            r#"app_rollout_finished_total{app_rollout_outcome="timed_out",app_rollout_retry="false"} 0"#,
            r#"app_rollout_finished_total{app_rollout_outcome="timed_out",app_rollout_retry="true"} 0"#,
        ]
    );
    // Attributes scoped away leave one series; static ones are on it.
    assert_eq!(c.sum("app.rollout.running", &[]), Some(0.0));
    assert_eq!(series(&c, "app_rollout_running").len(), 1);
    assert_eq!(
        c.sum("app.env.started", &[("app.env.kind", "sandbox")]),
        Some(0.0)
    );
    // Not a start_at_zero instrument: nothing recorded.
    assert_eq!(c.count("app.rollout.duration", &[]), None);
}

#[test]
fn events_after_the_start_add_to_the_zero_series() {
    let c = Capture::new();
    Rollouts::start_at_zero(c.meter());
    Rollouts::default()
        .finished(1)
        .outcome(Outcome::TimedOut)
        .retry(true)
        .record(c.meter());
    let finished = series(&c, "app_rollout_finished_total");
    assert_eq!(finished.len(), 6, "no new series: {finished:?}");
    assert_eq!(c.sum("app.rollout.finished", &[]), Some(1.0));
    let timed_out = [
        ("app.rollout.outcome", "timed_out"),
        ("app.rollout.retry", "true"),
    ];
    assert_eq!(c.sum("app.rollout.finished", &timed_out), Some(1.0));
}
