//! `#[instruments(observe)]`: a set's gauges and sums reported from one
//! source per collection; a series the source stops returning ends.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use nemo_lens::testing::Capture;
use nemo_lens::{AttributeValue, Instruments};

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

/// The value of `name` on the math and the code queue.
fn values(c: &Capture, name: &str) -> [Option<f64>; 2] {
    let read = |queue| match name {
        "app.queue.waiting" => c.last_value(name, &[("app.queue.name", queue)]),
        _ => c.sum(name, &[("app.queue.name", queue)]),
    };
    [read("math"), read("code")]
}

#[test]
fn series_appear_and_end_with_what_the_source_returns() {
    let c = Capture::new();
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
    let _observation = QueueState::observe(c.meter(), move || {
        counted.fetch_add(1, Ordering::Relaxed);
        source.lock().unwrap().clone()
    })
    .expect("the first source of the set");

    assert_eq!(values(&c, "app.queue.waiting"), [Some(3.0), Some(1.0)]);
    assert_eq!(values(&c, "app.queue.served"), [Some(10.0), Some(4.0)]);
    assert_eq!(values(&c, "app.queue.busy"), [Some(2.0), Some(1.0)]);
    // Six queries, each a collection: the source ran once for each, not
    // once per instrument.
    assert_eq!(calls.load(Ordering::Relaxed), 6);

    // The code queue goes away; math moves on.
    *state.lock().unwrap() = vec![QueueState::default()
        .queue(Queue::Math)
        .waiting(0)
        .served(12)];
    assert_eq!(values(&c, "app.queue.waiting"), [Some(0.0), None]);
    assert_eq!(values(&c, "app.queue.served"), [Some(12.0), None]);
    // A field left None is not reported: busy has no series this time.
    assert_eq!(values(&c, "app.queue.busy"), [None, None]);
    assert!(
        !c.exposition().contains("app_queue_name=\"code\""),
        "the code queue's series ended:\n{}",
        c.exposition()
    );
}

#[test]
fn a_disabled_meter_never_calls_the_source() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let observation = QueueState::observe(&nemo_lens::Meter::noop(), move || {
        counted.fetch_add(1, Ordering::Relaxed);
        Vec::new()
    })
    .expect("nothing to refuse");
    assert!(!observation.is_active());
    assert_eq!(calls.load(Ordering::Relaxed), 0);
}

fn waiting(math: u64) -> impl Fn() -> Vec<QueueState> + Send + Sync + 'static {
    move || vec![QueueState::default().queue(Queue::Math).waiting(math)]
}

#[test]
fn dropping_the_observation_ends_the_source_and_frees_it() {
    let c = Capture::new();
    let captured = Arc::new(());
    let held = Arc::clone(&captured);
    let observation = QueueState::observe(c.meter(), move || {
        let _ = &held;
        vec![QueueState::default().queue(Queue::Math).waiting(3)]
    })
    .expect("first");
    assert_eq!(values(&c, "app.queue.waiting"), [Some(3.0), None]);
    drop(observation);
    assert_eq!(
        Arc::strong_count(&captured),
        1,
        "the source and what it captured are freed"
    );
    assert_eq!(
        values(&c, "app.queue.waiting"),
        [None, None],
        "its series end"
    );

    // The set can be observed again, from a new source.
    let _again = QueueState::observe(c.meter(), waiting(5)).expect("the first one is gone");
    assert_eq!(values(&c, "app.queue.waiting"), [Some(5.0), None]);
}

#[test]
fn a_second_source_of_the_same_set_is_refused_while_the_first_reports() {
    let c = Capture::new();
    let first = QueueState::observe(c.meter(), waiting(1)).expect("first");
    let refused = QueueState::observe(c.meter(), waiting(2)).expect_err("second");
    assert!(refused.set().ends_with("QueueState"), "{}", refused.set());
    assert!(
        refused.to_string().contains("already observed"),
        "{refused}"
    );
    assert_eq!(
        values(&c, "app.queue.waiting"),
        [Some(1.0), None],
        "the first source still reports, alone"
    );

    // Kept, it reports for the meter's life, and the set stays taken.
    first.keep();
    assert_eq!(values(&c, "app.queue.waiting"), [Some(1.0), None]);
    assert!(QueueState::observe(c.meter(), waiting(3)).is_err());

    // Another meter is another registration.
    let other = Capture::new();
    let _on_other = QueueState::observe(other.meter(), waiting(4)).expect("own meter");
    assert_eq!(values(&other, "app.queue.waiting"), [Some(4.0), None]);
}

/// A set whose first instrument is gated off on a meter without the opt-in.
#[derive(Instruments, Default, Clone)]
#[instruments(observe)]
struct Gated {
    /// Requests waiting, the draft's name.
    #[gauge(
        "app.draft.waiting",
        unit = "{request}",
        opt_in = "gen_ai_latest_experimental"
    )]
    draft: Option<u64>,
    /// Requests waiting.
    #[gauge("app.waiting", unit = "{request}")]
    waiting: Option<u64>,
}

#[test]
fn the_first_instrument_built_calls_the_source() {
    let c = Capture::new();
    let _observation =
        Gated::observe(c.meter(), || [Gated::default().draft(1).waiting(7)]).expect("one source");
    assert_eq!(c.last_value("app.waiting", &[]), Some(7.0));
    assert!(!c.exposition().contains("app_draft_waiting"));
}
