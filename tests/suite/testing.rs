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
    assert_eq!(
        capture.sum(
            "app.rollout.finished",
            &[("app.rollout.outcome", "timeout")]
        ),
        None
    );
    // An instrument built and never recorded has nothing.
    let empty = Capture::new();
    empty
        .meter()
        .f64_histogram("app.rollout.duration")
        .with_unit("s")
        .build();
    assert_eq!(empty.count("app.rollout.duration", &[]), None);
    // Every instrument of a set is built on its first record: a field never
    // set reads as nothing recorded, not as a typo.
    let capture = Capture::new();
    Rollouts::default().queued(1).record(capture.meter());
    assert_eq!(capture.sum("app.rollout.finished", &[]), None);
    assert_eq!(capture.names(), ["app.rollout.queued"]);
}

/// Runs `query`, which must panic, and returns where and what it said.
fn panic_of(query: impl FnOnce()) -> (String, u32, String) {
    let said = std::sync::Arc::new(std::sync::Mutex::new(None));
    let keep = std::sync::Arc::clone(&said);
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default();
        let location = info.location().unwrap();
        *keep.lock().unwrap() = Some((location.file().to_owned(), location.line(), message));
    }));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(query));
    let _ = std::panic::take_hook();
    assert!(result.is_err(), "the query did not panic");
    let said = said.lock().unwrap().take();
    said.expect("the panic hook saw the panic")
}

#[test]
fn a_misspelled_name_or_key_fails_at_the_tests_own_line_with_what_there_is() {
    // The panic hook is the process's: this test needs a process of its own.
    crate::support::own_process!(
        a_misspelled_name_or_key_fails_at_the_tests_own_line_with_what_there_is
    );
    let capture = recorded();
    let line = line!() + 2;
    let (file, at, message) = panic_of(|| {
        let _ = capture.sum("app.rollout.finishd", &[]);
    });
    assert_eq!((file.as_str(), at), (file!(), line));
    assert_eq!(
        message,
        "the capture has no instrument named `app.rollout.finishd` (none was created on its \
         meter, or it is an observable that has reported nothing) (did you mean \
         `app.rollout.finished`?); it has: app.rollout.duration, app.rollout.finished, \
         app.rollout.queued, app.rollout.running"
    );

    let line = line!() + 2;
    let (file, at, message) = panic_of(|| {
        let _ = capture.count("app.rollout.duration", &[("app.rollout.outcom", "success")]);
    });
    assert_eq!((file.as_str(), at), (file!(), line));
    assert_eq!(
        message,
        "no series of `app.rollout.duration` carries the attribute `app.rollout.outcom` (did \
         you mean `app.rollout.outcome`?); its series carry: app.env, app.rollout.outcome, \
         server.port (to assert that no series carries it, read \
         capture.attribute_sets(\"app.rollout.duration\"))"
    );

    // The Prometheus name is not the instrument's name.
    let (_, _, message) = panic_of(|| {
        let _ = capture.sum("app_rollout_finished_total", &[]);
    });
    assert!(
        message.contains("no instrument named `app_rollout_finished_total`"),
        "{message}"
    );
    let line = line!() + 2;
    let (file, at, message) = panic_of(|| {
        let _ = capture.last_value("app.rollout.finished", &[]);
    });
    assert_eq!((file.as_str(), at), (file!(), line));
    assert_eq!(
        message,
        "`app.rollout.finished` is a counter or up-down counter: read it with sum, not last_value"
    );
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
#[should_panic(expected = "`app.rollout.queued` is a gauge: read it with last_value, not sum")]
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
