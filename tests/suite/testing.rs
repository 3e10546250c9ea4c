//! `nemo_lens::testing`: a capture's values, its exposition, and the table of
//! what a set declares, asserted exactly.

use nemo_lens::testing::{declared, Capture};
use nemo_lens::{AttributeValue, Instruments};

/// How a rollout ended.
#[derive(AttributeValue, Clone, Copy, Debug, PartialEq)]
#[attribute_value(rename_all = "snake_case")]
enum Outcome {
    Success,
    Failure,
}

/// Rollouts of one environment.
#[derive(Instruments, Default)]
struct Rollouts {
    /// Rollouts finished.
    #[counter("app.rollout.finished", unit = "{rollout}")]
    finished: Option<u64>,
    /// Rollouts running.
    #[up_down_counter("app.rollout.running", unit = "{rollout}")]
    running: Option<i64>,
    /// Rollouts waiting for a worker.
    #[gauge("app.rollout.queued", unit = "{rollout}")]
    queued: Option<u64>,
    /// Time of one rollout.
    #[histogram("app.rollout.duration", unit = "s", buckets = [1, 5])]
    duration_s: Option<f64>,
    /// How the rollout ended.
    #[attribute("app.rollout.outcome")]
    outcome: Option<Outcome>,
    /// The worker's port (an integer attribute).
    #[attribute("server.port")]
    port: Option<i64>,
    /// The environment.
    #[attribute("app.env", default = "unknown")]
    env: Option<String>,
}

/// The same set recorded twice, on two workers.
fn recorded() -> Capture {
    let capture = Capture::new();
    Rollouts::default()
        .finished(1)
        .running(1)
        .queued(4)
        .duration_s(2.0)
        .outcome(Outcome::Success)
        .port(8000)
        .env("math".to_owned())
        .record(capture.meter());
    Rollouts::default()
        .finished(2)
        .running(-1)
        .queued(6)
        .duration_s(7.0)
        .outcome(Outcome::Failure)
        .port(8001)
        .record(capture.meter());
    capture
}

#[test]
fn queries_sum_the_points_that_carry_every_pair() {
    let capture = recorded();
    assert_eq!(capture.sum("app.rollout.finished", &[]), Some(3.0));
    assert_eq!(
        capture.sum(
            "app.rollout.finished",
            &[("app.rollout.outcome", "failure")]
        ),
        Some(2.0)
    );
    // An integer attribute matches its label spelling.
    assert_eq!(
        capture.sum("app.rollout.finished", &[("server.port", "8000")]),
        Some(1.0)
    );
    // An unset attribute with a default matches the default.
    assert_eq!(
        capture.sum(
            "app.rollout.finished",
            &[("app.env", "unknown"), ("app.rollout.outcome", "failure")]
        ),
        Some(2.0)
    );
    assert_eq!(capture.sum("app.rollout.running", &[]), Some(0.0));
    assert_eq!(
        capture.sum("app.rollout.running", &[("app.env", "math")]),
        Some(1.0)
    );

    // Gauges: one point per attribute set; a filter that matches several
    // adds their values.
    assert_eq!(
        capture.last_value("app.rollout.queued", &[("server.port", "8001")]),
        Some(6.0)
    );
    assert_eq!(capture.last_value("app.rollout.queued", &[]), Some(10.0));

    // Histograms: count of values, and their sum.
    assert_eq!(capture.count("app.rollout.duration", &[]), Some(2));
    assert_eq!(capture.sum("app.rollout.duration", &[]), Some(9.0));
    assert_eq!(
        capture.count(
            "app.rollout.duration",
            &[("app.rollout.outcome", "success")]
        ),
        Some(1)
    );
}

#[test]
fn no_such_point_is_none() {
    let capture = recorded();
    assert_eq!(capture.sum("app.rollout.started", &[]), None);
    assert_eq!(
        capture.sum(
            "app.rollout.finished",
            &[("app.rollout.outcome", "timeout")]
        ),
        None
    );
    assert_eq!(
        capture.sum("app.rollout.finished", &[("no.such.key", "x")]),
        None
    );
    // The Prometheus name is not the instrument's name.
    assert_eq!(capture.sum("app_rollout_finished_total", &[]), None);
    // An empty capture has nothing.
    assert_eq!(Capture::new().count("app.rollout.duration", &[]), None);
}

#[test]
fn each_query_collects_anew() {
    let capture = recorded();
    assert_eq!(capture.sum("app.rollout.finished", &[]), Some(3.0));
    Rollouts::default()
        .finished(5)
        .outcome(Outcome::Success)
        .port(8000)
        .env("math".to_owned())
        .record(capture.meter());
    assert_eq!(capture.sum("app.rollout.finished", &[]), Some(8.0));
    // Captures do not share measurements.
    assert_eq!(recorded().sum("app.rollout.finished", &[]), Some(3.0));
}

#[test]
#[should_panic(expected = "app.rollout.queued is a gauge: read it with last_value")]
fn a_query_of_the_wrong_kind_names_the_right_one() {
    recorded().sum("app.rollout.queued", &[]);
}

#[test]
fn the_exposition_is_what_the_exporter_writes_sorted() {
    let capture = recorded();
    assert_eq!(
        capture.exposition(),
        r#"# HELP app_rollout_duration_seconds Time of one rollout.
# TYPE app_rollout_duration_seconds histogram
app_rollout_duration_seconds_bucket{app_env="math",app_rollout_outcome="success",server_port="8000",otel_scope_name="nemo.lens",le="1"} 0
app_rollout_duration_seconds_bucket{app_env="math",app_rollout_outcome="success",server_port="8000",otel_scope_name="nemo.lens",le="5"} 1
app_rollout_duration_seconds_bucket{app_env="math",app_rollout_outcome="success",server_port="8000",otel_scope_name="nemo.lens",le="+Inf"} 1
app_rollout_duration_seconds_sum{app_env="math",app_rollout_outcome="success",server_port="8000",otel_scope_name="nemo.lens"} 2
app_rollout_duration_seconds_count{app_env="math",app_rollout_outcome="success",server_port="8000",otel_scope_name="nemo.lens"} 1
app_rollout_duration_seconds_bucket{app_env="unknown",app_rollout_outcome="failure",server_port="8001",otel_scope_name="nemo.lens",le="1"} 0
app_rollout_duration_seconds_bucket{app_env="unknown",app_rollout_outcome="failure",server_port="8001",otel_scope_name="nemo.lens",le="5"} 0
app_rollout_duration_seconds_bucket{app_env="unknown",app_rollout_outcome="failure",server_port="8001",otel_scope_name="nemo.lens",le="+Inf"} 1
app_rollout_duration_seconds_sum{app_env="unknown",app_rollout_outcome="failure",server_port="8001",otel_scope_name="nemo.lens"} 7
app_rollout_duration_seconds_count{app_env="unknown",app_rollout_outcome="failure",server_port="8001",otel_scope_name="nemo.lens"} 1
# HELP app_rollout_finished_total Rollouts finished.
# TYPE app_rollout_finished_total counter
app_rollout_finished_total{app_env="math",app_rollout_outcome="success",server_port="8000",otel_scope_name="nemo.lens"} 1
app_rollout_finished_total{app_env="unknown",app_rollout_outcome="failure",server_port="8001",otel_scope_name="nemo.lens"} 2
# HELP app_rollout_queued Rollouts waiting for a worker.
# TYPE app_rollout_queued gauge
app_rollout_queued{app_env="math",app_rollout_outcome="success",server_port="8000",otel_scope_name="nemo.lens"} 4
app_rollout_queued{app_env="unknown",app_rollout_outcome="failure",server_port="8001",otel_scope_name="nemo.lens"} 6
# HELP app_rollout_running Rollouts running.
# TYPE app_rollout_running gauge
app_rollout_running{app_env="math",app_rollout_outcome="success",server_port="8000",otel_scope_name="nemo.lens"} 1
app_rollout_running{app_env="unknown",app_rollout_outcome="failure",server_port="8001",otel_scope_name="nemo.lens"} -1
"#
    );
}

#[test]
fn an_empty_capture_exposes_nothing() {
    assert_eq!(Capture::new().exposition(), "");
}

#[test]
fn declared_is_one_stable_line_per_descriptor() {
    assert_eq!(
        declared::<Rollouts>(),
        "finished: app.rollout.finished counter<u64> unit=\"{rollout}\" \
         prometheus=app_rollout_finished_total{app_env,app_rollout_outcome,server_port} \
         attributes=[app.env:*(default=unknown), app.rollout.outcome:success|failure, \
         server.port:*]\n\
         running: app.rollout.running up_down_counter<i64> unit=\"{rollout}\" \
         prometheus=app_rollout_running{app_env,app_rollout_outcome,server_port} \
         attributes=[app.env:*(default=unknown), app.rollout.outcome:success|failure, \
         server.port:*]\n\
         queued: app.rollout.queued gauge<u64> unit=\"{rollout}\" \
         prometheus=app_rollout_queued{app_env,app_rollout_outcome,server_port} \
         attributes=[app.env:*(default=unknown), app.rollout.outcome:success|failure, \
         server.port:*]\n\
         duration_s: app.rollout.duration histogram<f64> unit=\"s\" \
         prometheus=app_rollout_duration_seconds{app_env,app_rollout_outcome,server_port} \
         attributes=[app.env:*(default=unknown), app.rollout.outcome:success|failure, \
         server.port:*] buckets=[1,5]\n"
    );
}

/// The labels `declared` lists are those of the scrape, in its order.
#[test]
fn declared_labels_are_in_the_order_of_the_scrape() {
    let exposition = recorded().exposition();
    for line in declared::<Rollouts>().lines() {
        let labels = line
            .split_once("prometheus=")
            .and_then(|(_, rest)| rest.split_once('{'))
            .and_then(|(family, rest)| Some((family, rest.split_once('}')?.0)))
            .expect("a family and its labels");
        let (family, labels) = labels;
        let sample = exposition
            .lines()
            .find(|l| l.starts_with(family) && !l.starts_with('#'))
            .unwrap_or_else(|| panic!("{family} in the scrape"));
        let scraped: Vec<&str> = sample
            .split_once('{')
            .and_then(|(_, rest)| rest.split_once('}'))
            .map(|(labels, _)| {
                labels
                    .split(',')
                    .map(|kv| kv.split('=').next().unwrap_or(kv))
            })
            .expect("labels")
            .filter(|name| *name != "otel_scope_name" && *name != "le")
            .collect();
        assert_eq!(labels.split(',').collect::<Vec<_>>(), scraped, "{family}");
    }
}
