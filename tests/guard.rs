//! `#[instruments(guard)]`: one record per guard however it ends, the
//! elapsed time, and the in-flight count back to zero.

mod support;

use std::time::Duration;

use nemo_lens::Instruments;
use support::{Harness, Value};

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

/// (count, sum) of the duration histogram series whose `error.type` is
/// `error` (None: no error.type).
fn durations(h: &Harness, error: Option<&str>) -> Option<(u64, f64)> {
    h.points_of("app.job.duration")
        .into_iter()
        .find(|p| p.str_attr("error.type") == error)
        .map(|p| match p.value {
            Value::Histogram { count, sum, .. } => (count, sum),
            _ => unreachable!(),
        })
}

fn active(h: &Harness) -> f64 {
    let points = h.points_of("app.jobs.active");
    assert_eq!(points.len(), 1, "one series: {points:?}");
    assert!(points[0].attributes.is_empty(), "{points:?}");
    points[0].number()
}

#[test]
fn finish_records_once_with_the_elapsed_time() {
    let h = Harness::new();
    let mut job = Job::start(&h.meter);
    assert_eq!(active(&h), 1.0, "in flight while it runs");
    job.queue = Some("math".into());
    job.items = Some(3);
    std::thread::sleep(Duration::from_millis(20));
    job.finish();

    let (count, sum) = durations(&h, None).expect("a duration without error.type");
    assert_eq!(count, 1);
    assert!((20.0..2_000.0).contains(&sum), "{sum} ms");
    let items = h.points_of("app.job.items");
    assert_eq!(items[0].str_attr("app.queue"), Some("math"));
    assert_eq!(items[0].number(), 3.0);
    assert_eq!(active(&h), 0.0, "back to zero");
}

#[test]
fn fail_sets_the_error_type() {
    let h = Harness::new();
    let job = Job::start(&h.meter);
    job.fail("timeout");
    assert_eq!(durations(&h, Some("timeout")).map(|d| d.0), Some(1));
    assert_eq!(durations(&h, None), None);
    assert_eq!(active(&h), 0.0);
}

#[test]
fn a_dropped_guard_records_its_on_drop_value() {
    let h = Harness::new();
    {
        let _job = Job::start(&h.meter);
    }
    assert_eq!(durations(&h, Some("cancelled")).map(|d| d.0), Some(1));
    assert_eq!(active(&h), 0.0);
}

#[test]
fn a_panic_inside_a_task_ends_the_guard_once() {
    let h = Harness::new();
    let meter = h.meter.clone();
    let result = std::thread::spawn(move || {
        let mut job = Job::start(&meter);
        job.items = Some(1);
        panic!("the job failed");
    })
    .join();
    assert!(result.is_err());
    assert_eq!(durations(&h, Some("cancelled")).map(|d| d.0), Some(1));
    assert_eq!(
        h.points_of("app.job.items")[0].number(),
        1.0,
        "set before the panic"
    );
    assert_eq!(active(&h), 0.0);
}

#[test]
fn a_cancelled_future_ends_the_guard() {
    let h = Harness::new();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let meter = h.meter.clone();
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
    assert_eq!(durations(&h, Some("cancelled")).map(|d| d.0), Some(1));
    assert_eq!(active(&h), 0.0);
}

#[test]
fn an_explicit_error_type_is_kept_on_drop() {
    let h = Harness::new();
    {
        let mut job = Job::start(&h.meter);
        job.error_type = Some("oom".into());
    }
    assert_eq!(durations(&h, Some("oom")).map(|d| d.0), Some(1));
    assert_eq!(durations(&h, Some("cancelled")), None);
}

#[test]
fn the_guard_is_send() {
    fn send<T: Send>() {}
    send::<JobGuard>();
}
