//! `#[instruments(observe)]`: a set's gauges and sums reported from one
//! source per collection; a series the source stops returning ends.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use nemo_lens::{AttributeValue, Instruments};
use support::Harness;

#[derive(AttributeValue, Clone, Copy, Debug)]
#[attribute_value(rename_all = "lowercase")]
enum Queue {
    Math,
    Code,
}

/// One queue of a gym server, as it stands.
#[derive(Instruments, Default, Clone)]
#[instruments(observe)]
struct QueueState {
    /// Requests waiting.
    #[gauge("app.queue.waiting", unit = "{request}")]
    waiting: Option<u64>,
    /// Requests served since start.
    #[counter("app.queue.served", unit = "{request}")]
    served: Option<u64>,
    /// Workers busy.
    #[up_down_counter("app.queue.busy", unit = "{worker}")]
    busy: Option<i64>,
    /// The queue.
    #[attribute("app.queue.name")]
    queue: Option<Queue>,
}

fn values(h: &Harness, name: &str) -> Vec<(String, f64)> {
    let mut v: Vec<_> = h
        .points_of(name)
        .into_iter()
        .map(|p| {
            (
                p.str_attr("app.queue.name").unwrap_or("").to_owned(),
                p.number(),
            )
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

#[test]
fn series_appear_and_end_with_what_the_source_returns() {
    let h = Harness::new();
    let state = Arc::new(Mutex::new(vec![
        QueueState::default()
            .queue(Queue::Math)
            .waiting(3)
            .served(10)
            .busy(2),
        QueueState::default()
            .queue(Queue::Code)
            .waiting(1)
            .served(4)
            .busy(1),
    ]));
    let calls = Arc::new(AtomicUsize::new(0));
    let (source, counted) = (Arc::clone(&state), Arc::clone(&calls));
    QueueState::observe(&h.meter, move || {
        counted.fetch_add(1, Ordering::Relaxed);
        source.lock().unwrap().clone()
    });

    assert_eq!(
        values(&h, "app.queue.waiting"),
        [("code".into(), 1.0), ("math".into(), 3.0)]
    );
    assert_eq!(
        values(&h, "app.queue.served"),
        [("code".into(), 4.0), ("math".into(), 10.0)]
    );
    assert_eq!(
        values(&h, "app.queue.busy"),
        [("code".into(), 1.0), ("math".into(), 2.0)]
    );
    // values() collected three times; the source ran once per collection.
    assert_eq!(calls.load(Ordering::Relaxed), 3);

    // The code queue goes away; math moves on.
    *state.lock().unwrap() = vec![QueueState::default()
        .queue(Queue::Math)
        .waiting(0)
        .served(12)];
    assert_eq!(values(&h, "app.queue.waiting"), [("math".into(), 0.0)]);
    assert_eq!(values(&h, "app.queue.served"), [("math".into(), 12.0)]);
    // A field left None is not reported: busy has no series this time.
    assert_eq!(values(&h, "app.queue.busy"), []);
}

#[test]
fn a_disabled_meter_never_calls_the_source() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    QueueState::observe(&nemo_lens::Meter::noop(), move || {
        counted.fetch_add(1, Ordering::Relaxed);
        Vec::new()
    });
    assert_eq!(calls.load(Ordering::Relaxed), 0);
}
