//! `#[instruments(guard)]`: one record per guard however it ends, the
//! elapsed time, and the in-flight count back to zero.

use std::time::Duration;

use nemo_lens::testing::Capture;
use nemo_lens::{Guarded, Instruments};

/// One job of a worker.
#[derive(Instruments, Default)]
#[instruments(guard)]
struct Job {
    /// Time of one job.
    #[histogram("app.job.duration", unit = "ms", elapsed)]
    duration: Option<Duration>,
    /// Jobs running.
    #[up_down_counter("app.jobs.active", unit = "{job}", in_flight)]
    active: Option<i64>,
    /// Items the job handled.
    #[counter("app.job.items", unit = "{item}")]
    items: Option<u64>,
    /// The queue, set while the job runs.
    #[attribute("app.queue", only(duration, items))]
    queue: Option<String>,
    /// How the job ended.
    #[attribute("error.type", error_type, on_drop = "cancelled", only(duration))]
    error_type: Option<String>,
}

const DURATION: &str = "app.job.duration";

/// Durations recorded with `error.type = error`.
fn ended_with(c: &Capture, error: &str) -> Option<u64> {
    c.count(DURATION, &[("error.type", error)])
}

/// The in-flight count, which must be one series without attributes: the
/// +1 and the -1 land on the same one whatever the job set in between.
fn active(c: &Capture) -> Option<f64> {
    let exposition = c.exposition();
    let series: Vec<&str> = exposition
        .lines()
        .filter(|l| l.starts_with("app_jobs_active"))
        .collect();
    assert_eq!(series.len(), 1, "one series: {series:?}");
    assert!(
        series[0].starts_with("app_jobs_active{otel_scope_name=\"nemo.lens\"} "),
        "no attribute on the in-flight count: {series:?}"
    );
    c.sum("app.jobs.active", &[])
}

#[test]
fn finish_records_once_with_the_elapsed_time() {
    let c = Capture::new();
    let mut job = Job::start(c.meter());
    assert_eq!(active(&c), Some(1.0), "in flight while it runs");
    job.queue = Some("math".into());
    job.items = Some(3);
    std::thread::sleep(Duration::from_millis(20));
    job.finish();

    assert_eq!(c.count(DURATION, &[]), Some(1), "recorded once");
    assert_eq!(c.count(DURATION, &[("app.queue", "math")]), Some(1));
    assert!(
        !c.exposition().contains("error_type"),
        "a finished job has no error.type"
    );
    let ms = c.sum(DURATION, &[]).unwrap();
    assert!((20.0..2_000.0).contains(&ms), "{ms} ms");
    assert_eq!(c.sum("app.job.items", &[("app.queue", "math")]), Some(3.0));
    assert_eq!(active(&c), Some(0.0), "back to zero");
}

#[test]
fn fail_sets_the_error_type() {
    let c = Capture::new();
    let job = Job::start(c.meter());
    job.fail("timeout");
    assert_eq!(ended_with(&c, "timeout"), Some(1));
    assert_eq!(c.count(DURATION, &[]), Some(1), "and nothing else");
    assert_eq!(active(&c), Some(0.0));
}

#[test]
fn a_dropped_guard_records_its_on_drop_value() {
    let c = Capture::new();
    {
        let _job = Job::start(c.meter());
    }
    assert_eq!(ended_with(&c, "cancelled"), Some(1));
    assert_eq!(c.count(DURATION, &[]), Some(1));
    assert_eq!(active(&c), Some(0.0));
}

#[test]
fn a_panic_inside_a_task_ends_the_guard_once() {
    let c = Capture::new();
    let meter = c.meter().clone();
    let result = std::thread::spawn(move || {
        let mut job = Job::start(&meter);
        job.items = Some(1);
        panic!("the job failed");
    })
    .join();
    assert!(result.is_err());
    assert_eq!(ended_with(&c, "cancelled"), Some(1));
    assert_eq!(c.count(DURATION, &[]), Some(1));
    assert_eq!(
        c.sum("app.job.items", &[]),
        Some(1.0),
        "set before the panic"
    );
    assert_eq!(active(&c), Some(0.0));
}

#[test]
fn a_cancelled_future_ends_the_guard() {
    let c = Capture::new();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let meter = c.meter().clone();
    runtime.block_on(async move {
        let work = async {
            let job = Job::start(&meter);
            tokio::time::sleep(Duration::from_secs(60)).await;
            job.finish();
        };
        // The timeout drops the future, and the guard with it.
        let timed_out = tokio::time::timeout(Duration::from_millis(10), work).await;
        assert!(timed_out.is_err());
    });
    assert_eq!(ended_with(&c, "cancelled"), Some(1));
    assert_eq!(active(&c), Some(0.0));
}

#[test]
fn an_explicit_error_type_is_kept_on_drop() {
    let c = Capture::new();
    {
        let mut job = Job::start(c.meter());
        job.error_type = Some("oom".into());
    }
    assert_eq!(ended_with(&c, "oom"), Some(1));
    assert_eq!(ended_with(&c, "cancelled"), None);
}

#[test]
fn a_disabled_meter_records_nothing_and_reads_no_clock() {
    let job = Job::start(&nemo_lens::Meter::noop());
    assert_eq!(job.elapsed(), Duration::ZERO);
    job.finish();
}

#[test]
fn the_guard_is_send() {
    fn send<T: Send>() {}
    send::<JobGuard>();
}

/// Jobs of a queue, counted in flight per queue.
#[derive(Instruments, Default)]
#[instruments(guard)]
struct QueuedJob {
    /// Time of one job.
    #[histogram("app.queued.duration", unit = "ms", elapsed)]
    duration: Option<Duration>,
    /// Jobs running, per queue.
    #[up_down_counter("app.queued.active", unit = "{job}", in_flight)]
    active: Option<i64>,
    /// Items the job handled.
    #[counter("app.queued.items", unit = "{item}")]
    items: Option<u64>,
    /// The queue: on every instrument, the in-flight count included.
    #[attribute("app.queue")]
    queue: Option<String>,
    /// The worker's region, with a default.
    #[attribute("cloud.region", default = "local")]
    region: Option<String>,
    /// How the job ended: at the end only, so not on the count.
    #[attribute("error.type", error_type, only(duration))]
    error_type: Option<String>,
}

fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn the_in_flight_count_carries_the_attributes_it_declares() {
    let c = Capture::new();
    let mut job = QueuedJob::default().queue("gpu").start(c.meter());
    assert_eq!(
        c.sum("app.queued.active", &[("app.queue", "gpu")]),
        Some(1.0),
        "up on the prepared queue"
    );
    // A change on the way is recorded at the end, but the count comes back
    // where it went up.
    job.set_queue("cpu").set_items(2);
    job.fail("oom");

    assert_eq!(
        c.attribute_sets("app.queued.active"),
        [kv(&[("app.queue", "gpu"), ("cloud.region", "local")])],
        "one series, with the declared attributes"
    );
    assert_eq!(c.sum("app.queued.active", &[]), Some(0.0));
    assert_eq!(
        c.count(
            "app.queued.duration",
            &[("app.queue", "cpu"), ("error.type", "oom")]
        ),
        Some(1)
    );
    // What the set declares on the count is what the wire carries.
    let declared = nemo_lens::testing::declared::<QueuedJob>();
    let line = declared
        .lines()
        .find(|l| l.starts_with("active:"))
        .expect("declared");
    assert!(
        line.ends_with("attributes=[app.queue:*, cloud.region:*(default=local)]"),
        "{line}"
    );
    assert!(
        line.contains("prometheus=app_queued_active{app_queue,cloud_region}"),
        "{line}"
    );
}

#[test]
fn setters_work_on_guards_by_value_and_by_borrow() {
    let c = Capture::new();
    // Chained on the guard, as on the set.
    QueuedJob::start(c.meter()).queue("a").items(1).finish();
    // Through a borrow.
    let mut job = QueuedJob::start(c.meter());
    job.set_queue("b").set_items(2);
    let borrowed: &mut QueuedJobGuard = &mut job;
    borrowed.set_items(3);
    job.finish();
    assert_eq!(c.sum("app.queued.items", &[("app.queue", "a")]), Some(1.0));
    assert_eq!(c.sum("app.queued.items", &[("app.queue", "b")]), Some(3.0));
    // A set borrowed in place, too.
    let mut set = QueuedJob::default();
    set.set_queue("c").set_items(4);
    set.record(c.meter());
    assert_eq!(c.sum("app.queued.items", &[("app.queue", "c")]), Some(4.0));
}

#[test]
fn built_in_guards_take_the_same_setters_and_start_from_a_set() {
    use nemo_lens::instruments::{InferenceMetrics, InferenceRequest};

    let c = Capture::new();
    let mut request = InferenceRequest::start(c.meter());
    request.set_model("m1").set_input_tokens(7);
    request.finish();
    InferenceMetrics::default()
        .model("m2")
        .start(c.meter())
        .input_tokens(5)
        .finish();
    let mut prepared = InferenceMetrics::default();
    prepared.set_model("m3").set_output_tokens(9);
    prepared.start(c.meter()).finish();

    for (model, tokens) in [("m1", 7.0), ("m2", 5.0)] {
        assert_eq!(
            c.sum(
                "gen_ai.client.token.usage",
                &[
                    ("gen_ai.request.model", model),
                    ("gen_ai.token.type", "input")
                ]
            ),
            Some(tokens),
            "{model}"
        );
    }
    assert_eq!(
        c.count(
            "gen_ai.server.request.duration",
            &[("gen_ai.request.model", "m3")]
        ),
        Some(1)
    );
    assert_eq!(
        c.sum(
            "gen_ai.client.token.usage",
            &[
                ("gen_ai.request.model", "m3"),
                ("gen_ai.token.type", "output")
            ]
        ),
        Some(9.0),
        "a prepared count is kept"
    );
}

#[test]
fn a_guard_on_a_disabled_meter_counts_nothing_and_reads_no_clock() {
    let job = QueuedJob::default()
        .queue("gpu")
        .start(&nemo_lens::Meter::noop());
    assert_eq!(job.elapsed(), Duration::ZERO);
    job.finish();
}

/// A guard keeps the span current when it started: a duration recorded
/// when it ends, outside the request's span (a body's last poll, a
/// callback), still links to that request; a guard started in no sampled
/// span leaves none.
#[test]
fn a_guard_links_its_record_to_the_span_it_started_in() {
    use nemo_lens::exemplar::{self, SpanIds};
    use nemo_lens::opentelemetry::trace::{SpanId, TraceId};
    let c = Capture::new();
    let request = SpanIds::new(TraceId::from(0xfeed_u128), SpanId::from(0xbeef_u64));
    let job = exemplar::in_span(Some(request), || Job::start(c.meter()));
    // Ends outside any span.
    assert_eq!(exemplar::current(), None);
    job.finish();
    let held = c.exemplars(DURATION, &[]);
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!(held[0].span, Some(request));

    let unsampled = Capture::new();
    let job = Job::start(unsampled.meter());
    job.finish();
    assert!(unsampled.exemplars(DURATION, &[]).is_empty());
}
