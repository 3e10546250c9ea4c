//! The instruments of an unreleased NeMo-Gym commit (`gym::unreleased`):
//! each of the ten that no release records exported with the name, kind,
//! unit, description and typed attributes of that commit's list,
//! `tests/data/nemo-gym-instruments.json` (a copy of the shared reference).
//! Its two sandbox instruments follow the release instead
//! (`tests/gym_release.rs`).

use std::collections::BTreeSet;

use crate::support::{AttrValue, Harness, Point, Value};
use nemo_lens::instruments::gym::unreleased::{
    GpuMetrics, HttpMetrics, ModelServerCallMetrics, ProcessCpuMetrics, QueueMetrics, RetryReason,
    RolloutMetrics, RolloutOutcome,
};
use nemo_lens::instruments::gym::GymMetrics;
use nemo_lens::{Descriptor, InstrumentKind, Instruments};
use serde_json::Value as Json;

fn reference() -> Json {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/nemo-gym-instruments.json"
    ))
    .expect("the reference copy");
    serde_json::from_str(&text).unwrap()
}

/// The commit's instruments that no release has: all but the sandbox ones.
fn unreleased(reference: &Json) -> Vec<&Json> {
    reference["instruments"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| !i["name"].as_str().unwrap().starts_with("gym.sandbox."))
        .collect()
}

fn attributed_descriptors() -> Vec<Descriptor> {
    [
        QueueMetrics::DESCRIPTORS,
        RolloutMetrics::DESCRIPTORS,
        ModelServerCallMetrics::DESCRIPTORS,
        HttpMetrics::DESCRIPTORS,
        ProcessCpuMetrics::DESCRIPTORS,
        GpuMetrics::DESCRIPTORS,
    ]
    .concat()
}

/// Records every set once, with every attribute set.
fn record_all(harness: &Harness) {
    let meter = &harness.meter;
    QueueMetrics::default()
        .site("rollout_driver")
        .wait_ms(12.5)
        .record(meter);
    RolloutMetrics::default()
        .outcome(RolloutOutcome::Success)
        .completed(3)
        .record(meter);
    RolloutMetrics::default()
        .outcome(RolloutOutcome::Failure)
        .completed(1)
        .record(meter);
    ModelServerCallMetrics::default()
        .dialect("openai_chat")
        .server_name("policy")
        .duration_ms(1430.0)
        .time_to_first_byte_ms(85.0)
        .record(meter);
    // One call with both scoped attributes: each counter carries its own.
    HttpMetrics::default()
        .internal(true)
        .timeouts(1)
        .retry_reason(RetryReason::ServerDisconnected)
        .retries(2)
        .record(meter);
    ProcessCpuMetrics::default()
        .cpu_percent(150.0)
        .record(meter);
    GpuMetrics::default()
        .index(1)
        .uuid("GPU-8c1f")
        .utilization_percent(87.0)
        .memory_used_mib(40_000.0)
        .memory_total_mib(81_920.0)
        .record(meter);
}

fn kind_of(point: &Point) -> &'static str {
    match (point.kind, &point.value) {
        ("Sum", _) => "counter",
        ("Gauge", _) => "gauge",
        (_, Value::Histogram { .. }) => "histogram",
        (other, _) => panic!("unexpected kind {other}"),
    }
}

#[test]
fn every_reference_instrument_is_exported_as_python_records_it() {
    let reference = reference();
    let harness = Harness::new();
    record_all(&harness);
    let points = harness.points();
    let instruments = unreleased(&reference);
    assert_eq!(instruments.len(), 10);
    for expected in instruments {
        let name = expected["name"].as_str().unwrap();
        let mine: Vec<&Point> = points.iter().filter(|p| p.name == name).collect();
        assert!(!mine.is_empty(), "{name} was not exported");
        let keys: BTreeSet<&str> = expected["attributes"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        for point in mine {
            assert_eq!(kind_of(point), expected["kind"], "{name} kind");
            assert_eq!(point.unit, expected["unit"], "{name} unit");
            assert_eq!(
                point.description, expected["description"],
                "{name} description"
            );
            let exported: BTreeSet<&str> = point.attributes.keys().map(String::as_str).collect();
            assert_eq!(exported, keys, "{name} attribute keys");
            for (key, ty) in expected["attributes"].as_object().unwrap() {
                let ty = ty.as_str().unwrap();
                let value = point.attr(key).unwrap();
                let matches = match value {
                    AttrValue::String(_) => ty.starts_with("string"),
                    AttrValue::Bool(_) => ty == "bool",
                    AttrValue::I64(_) => ty == "int",
                    _ => false,
                };
                assert!(
                    matches,
                    "{name}: {key} is {value:?}, the reference says {ty}"
                );
            }
        }
    }
    let exported: BTreeSet<&str> = points.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(exported.len(), 10, "{exported:?}");
}

#[test]
fn descriptors_match_the_reference() {
    let reference = reference();
    let descriptors = attributed_descriptors();
    let instruments = unreleased(&reference);
    assert_eq!(descriptors.len(), instruments.len());
    for (d, expected) in descriptors.iter().zip(instruments) {
        assert_eq!(d.name, expected["name"]);
        assert_eq!(d.unit, expected["unit"], "{}", d.name);
        assert_eq!(d.description, expected["description"], "{}", d.name);
        let kind = match expected["kind"].as_str().unwrap() {
            "counter" => InstrumentKind::Counter,
            "gauge" => InstrumentKind::Gauge,
            _ => InstrumentKind::Histogram,
        };
        assert_eq!(d.kind, kind, "{}", d.name);
        let keys: BTreeSet<&str> = d.attribute_keys.iter().copied().collect();
        let expected_keys: BTreeSet<&str> = expected["attributes"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, expected_keys, "{}", d.name);
    }
}

#[test]
fn values_and_attributes_are_exported_typed() {
    let harness = Harness::new();
    record_all(&harness);
    let completed = harness.points_of("gym.rollout.completed_total");
    let count = |outcome: &str| {
        completed
            .iter()
            .find(|p| p.str_attr("nemo.gym.rollout.outcome") == Some(outcome))
            .map(Point::number)
    };
    assert_eq!((count("success"), count("failure")), (Some(3.0), Some(1.0)));

    let timeouts = harness.points_of("gym.http.timeout_total");
    assert_eq!(timeouts.len(), 1);
    assert_eq!(timeouts[0].attributes.len(), 1, "{timeouts:?}");
    assert_eq!(
        timeouts[0].attr("nemo.gym.http.internal"),
        Some(&AttrValue::Bool(true))
    );
    assert_eq!(timeouts[0].number(), 1.0);
    let retries = harness.points_of("gym.http.retry_total");
    assert_eq!(retries.len(), 1);
    assert_eq!(retries[0].attributes.len(), 1, "{retries:?}");
    assert_eq!(
        retries[0].str_attr("nemo.gym.http.retry_reason"),
        Some("server_disconnected")
    );
    assert_eq!(retries[0].number(), 2.0);

    let gpu = harness.points_of("gym.process.gpu.memory_total_mib");
    assert_eq!(gpu[0].attr("nemo.gym.gpu.index"), Some(&AttrValue::I64(1)));
    assert_eq!(gpu[0].str_attr("nemo.gym.gpu.uuid"), Some("GPU-8c1f"));
    assert_eq!(gpu[0].number(), 81_920.0);
    assert_eq!(
        harness.points_of("gym.process.cpu.percent")[0].number(),
        150.0
    );

    let histogram = |name: &str| match &harness.points_of(name)[0].value {
        Value::Histogram { count, sum, .. } => (*count, *sum),
        Value::Number(_) => panic!("{name} is a histogram"),
    };
    assert_eq!(histogram("gym.model.call_duration_ms"), (1, 1430.0));
    assert_eq!(histogram("gym.model.time_to_first_byte_ms"), (1, 85.0));
    let gauge = |name: &str| harness.points_of(name)[0].number();
    assert_eq!(gauge("gym.process.gpu.utilization_percent"), 87.0);
    assert_eq!(gauge("gym.process.gpu.memory_used_mib"), 40_000.0);
    let call = &harness.points_of("gym.model.time_to_first_byte_ms")[0];
    assert_eq!(call.str_attr("nemo.gym.model.dialect"), Some("openai_chat"));
    assert_eq!(call.str_attr("nemo.gym.server.name"), Some("policy"));

    let wait = &harness.points_of("gym.concurrency.queue_wait_duration_ms")[0];
    assert_eq!(
        wait.str_attr("nemo.gym.concurrency.site"),
        Some("rollout_driver")
    );
    match &wait.value {
        Value::Histogram { count, sum, .. } => assert_eq!((*count, *sum), (1, 12.5)),
        Value::Number(_) => panic!("a histogram"),
    }
}

#[test]
fn an_unknown_server_name_is_exported_empty_as_python_does() {
    let harness = Harness::new();
    ModelServerCallMetrics::default()
        .dialect("openai_chat")
        .duration_ms(10.0)
        .record(&harness.meter);
    let call = &harness.points_of("gym.model.call_duration_ms")[0];
    assert_eq!(call.str_attr("nemo.gym.server.name"), Some(""));
}

#[test]
fn enum_values_are_the_wire_values() {
    let outcomes: Vec<&str> = RolloutOutcome::ALL.iter().map(|o| o.as_str()).collect();
    assert_eq!(outcomes, ["success", "failure"]);
    let reasons: Vec<String> = RetryReason::ALL.iter().map(ToString::to_string).collect();
    assert_eq!(
        reasons,
        ["server_disconnected", "client_os_error", "timeout", "other"]
    );
}

#[test]
fn the_python_gym_set_is_unchanged() {
    assert_eq!(GymMetrics::DESCRIPTORS.len(), 5);
    assert!(GymMetrics::DESCRIPTORS
        .iter()
        .all(|d| d.attribute_keys.is_empty()));
}
