//! Warnings are seen without a `tracing` subscriber: a program that installs
//! none gets one stderr line per kind of warning (here a dropped value and
//! a cardinality overflow), however often it happens.
//!
//! The program is this test binary run again as a child (stderr and the
//! process-wide "said once" state are the child's own).

use crate::support::messages::Messages;
use crate::support::process;

use nemo_lens::instruments::gym::GymMetrics;
use nemo_lens::instruments::rl::RlMetrics;
use nemo_lens::opentelemetry::KeyValue;
use nemo_lens::opentelemetry_sdk::metrics::InMemoryMetricExporter;
use nemo_lens::{EnvLookup, Guarded, Instruments, NemoLensConfig, SetupOptions};

/// The child, by its name in this binary.
const CHILD: &str = "warnings::warning_child";

#[test]
fn each_kind_of_warning_reaches_stderr_once_without_a_subscriber() {
    let output = process::child(CHILD).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the child failed: {stderr}");
    let lines = |needle: &str| stderr.lines().filter(|l| l.contains(needle)).count();
    assert_eq!(
        lines("nemo-lens warning: nemo-lens dropped a measurement"),
        1,
        "{stderr}"
    );
    assert!(
        stderr.contains("field=\"reward_mean\"") || stderr.contains("field=reward_mean"),
        "the line names the field: {stderr}"
    );
    assert_eq!(
        lines("nemo-lens warning: instrument `test.requests_by_model` has more than 2"),
        1,
        "{stderr}"
    );
    assert_eq!(
        lines(
            "nemo-lens warning: SandboxExec was recorded without nemo.gym.sandbox.provider, \
             which it needs: set it with `.provider(..)`"
        ),
        1,
        "{stderr}"
    );
    assert_eq!(
        lines("install a tracing subscriber"),
        3,
        "each line says how to see the rest: {stderr}"
    );
}

/// With a subscriber, each required attribute left unset is warned about
/// once, naming the set, the attribute and its setter; a record that sets
/// it says nothing, and the records go out all the same.
#[test]
fn a_required_attribute_left_unset_is_named_once() {
    use nemo_lens::instruments::gym::{ConnectionPoolQueue, SandboxExec};
    use nemo_lens::testing::Capture;

    let messages = Messages::default();
    let capture = Capture::new();
    tracing::subscriber::with_default(messages.clone(), || {
        for _ in 0..3 {
            SandboxExec {
                duration: Some(std::time::Duration::from_millis(5)),
                ..Default::default()
            }
            .record(capture.meter());
        }
        SandboxExec::default()
            .provider("docker")
            .start(capture.meter())
            .finish();
        ConnectionPoolQueue::default()
            .start(capture.meter())
            .finish();
    });
    assert_eq!(
        messages.said(),
        [
            "WARN SandboxExec was recorded without nemo.gym.sandbox.provider, which it needs: set it \
             with `.provider(..)` (this record and any other without it go out without the \
             label; said once)",
            "WARN ConnectionPoolQueue was recorded without nemo.gym.http.destination.server.name, \
             which it needs: set it with `.destination(..)` (this record and any other without \
             it go out without the label; said once)",
        ]
    );
    assert_eq!(capture.count("gym.sandbox.exec_duration_ms", &[]), Some(4));
    assert_eq!(
        capture.count("gym.http.connection_pool.queue_duration_ms", &[]),
        Some(1)
    );
}

/// A required attribute scoped to one field is still noted by a record of
/// the set's other fields alone, which record without looking the
/// attribute values up: the rule is "a record with measurements".
#[test]
fn a_required_attribute_is_noted_by_a_record_of_unscoped_fields_too() {
    use nemo_lens::testing::Capture;

    /// Requests of a router.
    #[derive(Instruments, Default)]
    struct Routed {
        /// Requests sent, by backend.
        #[counter("test.routed.requests", unit = "{request}")]
        requests: Option<u64>,
        /// Requests sent, all backends together.
        #[counter("test.routed.total", unit = "{request}")]
        total: Option<u64>,
        /// The backend.
        #[attribute("server.address", required, only(requests))]
        backend: Option<String>,
    }

    let messages = Messages::default();
    let capture = Capture::new();
    tracing::subscriber::with_default(messages.clone(), || {
        Routed::default().record(capture.meter());
        assert_eq!(messages.said(), [] as [&str; 0], "a record of nothing");
        Routed::default().total(2).record(capture.meter());
        Routed::default().total(1).record(capture.meter());
    });
    assert_eq!(
        messages.said(),
        [
            "WARN Routed was recorded without server.address, which it needs: set it with \
          `.backend(..)` (this record and any other without it go out without the label; \
          said once)"
        ]
    );
    assert_eq!(capture.sum("test.routed.total", &[]), Some(3.0));
}

/// The child: drops a value in each of two sets and overflows a counter, with no
/// subscriber installed. Does nothing when run as an ordinary test.
#[test]
fn warning_child() {
    if !process::is_child(CHILD) {
        return;
    }
    let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs([
        ("NEMO_LENS_ENABLED", "1"),
        ("NEMO_LENS_EXPORTER", "console"),
    ]))
    .unwrap();
    let handle = SetupOptions::new()
        .env(EnvLookup::from_pairs::<&str, &str>([]))
        .probe_gpus(false)
        .set_global(false)
        .cardinality_limit(2)
        .push_exporter(InMemoryMetricExporter::default())
        .setup(&config, 0, 1)
        .unwrap();
    RlMetrics::default()
        .reward_mean(f64::NAN)
        .record(&handle.meter);
    // Another set: its first drop is warned through a subscriber as well,
    // and on stderr only the first of the kind is.
    GymMetrics::default()
        .verify_success_rate(f64::INFINITY)
        .record(&handle.meter);
    let requests = handle
        .meter
        .otel()
        .u64_counter("test.requests_by_model")
        .build();
    for model in 0..5 {
        requests.add(1, &[KeyValue::new("model", format!("m{model}"))]);
    }
    for _ in 0..3 {
        nemo_lens::instruments::gym::SandboxExec::default()
            .start(&handle.meter)
            .finish();
    }
    handle.shutdown().unwrap();
}
