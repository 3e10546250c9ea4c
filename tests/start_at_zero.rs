//! `start_at_zero`: every series of a counter exists at 0 before its first
//! event, one per combination of its enum attribute values.

mod support;

use nemo_lens::{AttributeValue, Instruments};
use support::Harness;

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

fn series(h: &Harness, name: &str) -> Vec<(String, f64)> {
    let mut series: Vec<(String, f64)> = h
        .points_of(name)
        .into_iter()
        .map(|p| {
            let attrs = p
                .attributes
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(",");
            (attrs, p.number())
        })
        .collect();
    series.sort_by(|a, b| a.0.cmp(&b.0));
    series
}

#[test]
fn every_combination_of_enum_values_starts_at_zero() {
    let h = Harness::new();
    Rollouts::start_at_zero(&h.meter);

    let finished = series(&h, "app.rollout.finished");
    // 3 outcomes x 2 retry values.
    assert_eq!(finished.len(), 6, "{finished:?}");
    assert!(finished.iter().all(|(_, v)| *v == 0.0), "{finished:?}");
    for outcome in ["success", "failure", "timed_out"] {
        for retry in ["false", "true"] {
            let want = format!("app.rollout.outcome={outcome},app.rollout.retry={retry}");
            assert!(
                finished.iter().any(|(a, _)| *a == want),
                "{want} in {finished:?}"
            );
        }
    }
    // Attributes scoped away leave one series; static ones are on it.
    assert_eq!(
        series(&h, "app.rollout.running"),
        vec![(String::new(), 0.0)]
    );
    assert_eq!(
        series(&h, "app.env.started"),
        vec![("app.env.kind=sandbox".to_owned(), 0.0)]
    );
    // Not a start_at_zero instrument: nothing recorded.
    assert!(h.points_of("app.rollout.duration").is_empty());
}

#[test]
fn events_after_the_start_add_to_the_zero_series() {
    let h = Harness::new();
    Rollouts::start_at_zero(&h.meter);
    Rollouts::default()
        .finished(1)
        .outcome(Outcome::TimedOut)
        .retry(true)
        .record(&h.meter);
    let finished = series(&h, "app.rollout.finished");
    assert_eq!(finished.len(), 6, "no new series: {finished:?}");
    let total: f64 = finished.iter().map(|(_, v)| v).sum();
    assert_eq!(total, 1.0);
    let timed_out = finished
        .iter()
        .find(|(a, _)| a.contains("=timed_out") && a.contains("retry=true"))
        .unwrap();
    assert_eq!(timed_out.1, 1.0);
}
