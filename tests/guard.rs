//! `#[instruments(guard)]`: one record per guard however it ends, the
//! elapsed time, and the in-flight count back to zero.

use std::time::Duration;

use nemo_lens::testing::Capture;
use nemo_lens::Instruments;

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
fn ended_with(c: &Capture, error: &str) -> Option<f64> {
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

    assert_eq!(c.count(DURATION, &[]), Some(1.0), "recorded once");
    assert_eq!(c.count(DURATION, &[("app.queue", "math")]), Some(1.0));
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
    assert_eq!(ended_with(&c, "timeout"), Some(1.0));
    assert_eq!(c.count(DURATION, &[]), Some(1.0), "and nothing else");
    assert_eq!(active(&c), Some(0.0));
}

#[test]
fn a_dropped_guard_records_its_on_drop_value() {
    let c = Capture::new();
    {
        let _job = Job::start(c.meter());
    }
    assert_eq!(ended_with(&c, "cancelled"), Some(1.0));
    assert_eq!(c.count(DURATION, &[]), Some(1.0));
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
    assert_eq!(ended_with(&c, "cancelled"), Some(1.0));
    assert_eq!(c.count(DURATION, &[]), Some(1.0));
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
    assert_eq!(ended_with(&c, "cancelled"), Some(1.0));
    assert_eq!(active(&c), Some(0.0));
}

#[test]
fn an_explicit_error_type_is_kept_on_drop() {
    let c = Capture::new();
    {
        let mut job = Job::start(c.meter());
        job.error_type = Some("oom".into());
    }
    assert_eq!(ended_with(&c, "oom"), Some(1.0));
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
