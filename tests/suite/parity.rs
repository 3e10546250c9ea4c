//! Wire parity with Python nemo-lens: the calls of the reference dump,
//! recorded through the built-in sets, export the same names, units,
//! descriptions, kinds, attributes and values. Bucket bounds differ only on
//! the two GenAI histograms, which take the bounds the conventions advise.

use crate::support::{Harness, Point, Value};
use nemo_lens::instruments::gym::GymMetrics;
use nemo_lens::instruments::rl::RlMetrics;
use nemo_lens::instruments::{GenAiAttributes, InferenceMetrics};
use nemo_lens::testing::Capture;
use nemo_lens::{Descriptor, InstrumentKind, Instruments, Meter, SemconvOptIn, ValueType};
use serde_json::Value as Json;

fn load(file: &str) -> Json {
    let path = format!("{}/tests/data/{file}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).expect(&path)).expect(&path)
}

fn f64_arg(call: &Json, key: &str) -> Option<f64> {
    call.get(key).and_then(Json::as_f64)
}

fn u64_arg(call: &Json, key: &str) -> Option<u64> {
    call.get(key).and_then(Json::as_u64)
}

/// The reference calls, replayed through the Rust sets.
fn replay(reference: &Json, meter: &Meter) {
    let calls = &reference["calls"];
    let inference = &calls["record_inference_metrics"];
    InferenceMetrics {
        request_duration_s: f64_arg(inference, "request_duration_s"),
        input_tokens: u64_arg(inference, "input_tokens"),
        output_tokens: u64_arg(inference, "output_tokens"),
        base: GenAiAttributes {
            model: inference["model"].as_str().map(|m| m.to_owned().into()),
            ..Default::default()
        },
        ..Default::default()
    }
    .record(meter);

    let rl = &calls["record_rl_metrics"];
    RlMetrics {
        reward_mean: f64_arg(rl, "reward_mean"),
        kl_divergence: f64_arg(rl, "kl_divergence"),
        policy_loss: f64_arg(rl, "policy_loss"),
        value_loss: f64_arg(rl, "value_loss"),
        entropy: f64_arg(rl, "entropy"),
        response_length_mean: f64_arg(rl, "response_length_mean"),
        generation_duration_ms: f64_arg(rl, "generation_duration_ms"),
        rollout_duration_ms: f64_arg(rl, "rollout_duration_ms"),
        ..Default::default()
    }
    .record(meter);

    let gym = &calls["record_gym_metrics"];
    GymMetrics {
        server_request_duration_ms: f64_arg(gym, "server_request_duration_ms"),
        rollout_duration_ms: f64_arg(gym, "rollout_duration_ms"),
        verify_duration_ms: f64_arg(gym, "verify_duration_ms"),
        verify_success_rate: f64_arg(gym, "verify_success_rate"),
        active_servers: u64_arg(gym, "active_servers"),
    }
    .record(meter);
}

fn semconv_buckets(name: &str) -> Vec<f64> {
    let semconv = load("genai-semconv-metrics.json");
    let metric = semconv["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("{name} in the GenAI conventions"));
    metric["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_f64().unwrap())
        .collect()
}

/// Bucket counts for `value` over `bounds`, with OpenTelemetry's
/// upper-inclusive buckets and one overflow bucket.
fn counts_for(value: f64, bounds: &[f64]) -> Vec<u64> {
    let index = bounds
        .iter()
        .position(|b| value <= *b)
        .unwrap_or(bounds.len());
    (0..=bounds.len()).map(|i| u64::from(i == index)).collect()
}

#[test]
fn every_reference_point_is_exported_identically() {
    let reference = load("nemo-lens-0.1.0-points.json");
    let harness = Harness::new();
    replay(&reference, &harness.meter);
    let points = harness.points();

    let expected_metrics = reference["metrics"].as_array().unwrap();
    let expected_points: usize = expected_metrics
        .iter()
        .map(|m| m["points"].as_array().unwrap().len())
        .sum();
    assert_eq!(
        points.len(),
        expected_points,
        "exported points: {points:#?}"
    );

    for metric in expected_metrics {
        let name = metric["name"].as_str().unwrap();
        for expected in metric["points"].as_array().unwrap() {
            let attributes = crate::support::json_attributes(&expected["attributes"]);
            let point = points
                .iter()
                .find(|p| p.name == name && p.attributes == attributes)
                .unwrap_or_else(|| panic!("{name} {attributes:?} was not exported: {points:#?}"));
            assert_eq!(
                point.scope,
                metric["scope"].as_str().unwrap(),
                "{name} scope"
            );
            assert_eq!(
                point.description,
                metric["description"].as_str().unwrap(),
                "{name} description"
            );
            assert_eq!(point.unit, metric["unit"].as_str().unwrap(), "{name} unit");
            assert_eq!(point.kind, metric["kind"].as_str().unwrap(), "{name} kind");
            match &point.value {
                Value::Number(value) => {
                    assert_eq!(*value, expected["value"].as_f64().unwrap(), "{name} value");
                    let python_type = expected["value_type"].as_str().unwrap();
                    let rust_type = if point.number == "f64" {
                        "float"
                    } else {
                        "int"
                    };
                    assert_eq!(rust_type, python_type, "{name} value type");
                }
                Value::Histogram {
                    count,
                    sum,
                    min,
                    max,
                    bounds,
                    bucket_counts,
                } => {
                    assert_eq!(*count, expected["count"].as_u64().unwrap(), "{name} count");
                    assert_eq!(*sum, expected["sum"].as_f64().unwrap(), "{name} sum");
                    assert_eq!(*min, expected["min"].as_f64(), "{name} min");
                    assert_eq!(*max, expected["max"].as_f64(), "{name} max");
                    let python_bounds: Vec<f64> = expected["explicit_bounds"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|b| b.as_f64().unwrap())
                        .collect();
                    if name.starts_with("gen_ai.") {
                        // The one deliberate difference: the advised bounds.
                        assert_eq!(*bounds, semconv_buckets(name), "{name} bounds");
                        assert_eq!(*bucket_counts, counts_for(*sum, bounds), "{name} buckets");
                    } else {
                        assert_eq!(*bounds, python_bounds, "{name} bounds");
                        let python_counts: Vec<u64> = expected["bucket_counts"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|c| c.as_u64().unwrap())
                            .collect();
                        assert_eq!(*bucket_counts, python_counts, "{name} buckets");
                    }
                }
            }
        }
    }
}

#[test]
fn descriptors_match_every_python_instrument() {
    let reference = load("nemo-lens-instruments.json");
    let sets = [
        ("inference", InferenceMetrics::DESCRIPTORS),
        ("rl", RlMetrics::DESCRIPTORS),
        ("gym", GymMetrics::DESCRIPTORS),
    ];
    let mut measurements = 0;
    let mut names = std::collections::BTreeSet::new();
    for (set, all) in sets {
        // Parity is with the default names: what Python records, and what
        // a meter without OTEL_SEMCONV_STABILITY_OPT_IN records too.
        let descriptors: Vec<&Descriptor> = all
            .iter()
            .filter(|d| d.semconv.is_open(&SemconvOptIn::none()))
            .collect();
        let expected = reference["sets"][set]["instruments"].as_array().unwrap();
        // Python's arguments come first, in its order; the inference set
        // adds the GenAI server measurements Python nemo-lens lacks.
        let additions: Vec<&str> = descriptors[expected.len().min(descriptors.len())..]
            .iter()
            .map(|d| d.field)
            .collect();
        let expected_additions: &[&str] = match set {
            "inference" => &["time_to_first_token_s", "time_per_output_token_s"],
            _ => &[],
        };
        assert_eq!(
            additions, expected_additions,
            "{set}: one descriptor per argument"
        );
        for (descriptor, expected) in descriptors.iter().copied().zip(expected) {
            let field = descriptor.field;
            assert_eq!(
                field,
                expected["arg"].as_str().unwrap(),
                "{set} field order"
            );
            assert_eq!(
                descriptor.name,
                expected["name"].as_str().unwrap(),
                "{field} name"
            );
            assert_eq!(
                descriptor.unit,
                expected["unit"].as_str().unwrap(),
                "{field} unit"
            );
            assert_eq!(
                descriptor.description,
                expected["description"].as_str().unwrap(),
                "{field} description"
            );
            let kind = match expected["kind"].as_str().unwrap() {
                "gauge" => InstrumentKind::Gauge,
                "histogram" => InstrumentKind::Histogram,
                other => panic!("unexpected kind {other}"),
            };
            assert_eq!(descriptor.kind, kind, "{field} kind");
            let value_type = match expected.get("value_type").and_then(Json::as_str) {
                Some("int") => ValueType::U64,
                _ => ValueType::F64,
            };
            assert_eq!(descriptor.value_type, value_type, "{field} value type");
            let expected_attrs = expected
                .get("attributes")
                .and_then(Json::as_str)
                .unwrap_or("none");
            let statics: Vec<String> = descriptor
                .static_attributes
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            let actual_attrs = match (set, statics.is_empty()) {
                ("inference", true) => "base".to_owned(),
                ("inference", false) => format!("base + {}", statics.join(", ")),
                (_, _) => "none".to_owned(),
            };
            if set == "inference" {
                assert_eq!(actual_attrs, expected_attrs, "{field} attributes");
                for key in [
                    "gen_ai.request.model",
                    "gen_ai.operation.name",
                    "gen_ai.provider.name",
                ] {
                    assert!(
                        descriptor.attribute_keys.contains(&key),
                        "{field} base attribute keys: {:?}",
                        descriptor.attribute_keys
                    );
                }
            } else {
                assert!(
                    descriptor.attribute_keys.is_empty(),
                    "{field} has no attributes"
                );
                assert_eq!(reference["sets"][set]["attributes"], "none");
            }
            measurements += 1;
            names.insert(descriptor.name);
        }
    }
    assert_eq!(
        (measurements, names.len()),
        (19, 18),
        "19 measurements of 18 instruments"
    );
}

/// The meter `setup_telemetry` gives keeps its series in nemo-lens's cells
/// (a capture's does too): the same calls give the same series, values and
/// counts there as through the SDK's own instruments, which the test above
/// holds to the Python dump.
#[test]
fn series_in_nemo_lens_cells_export_what_the_sdks_instruments_do() {
    let reference = load("nemo-lens-0.1.0-points.json");
    let harness = Harness::new();
    replay(&reference, &harness.meter);
    let capture = Capture::new();
    replay(&reference, capture.meter());
    let points = harness.points();
    assert!(points.len() > 10, "{points:#?}");
    let labelled = |p: &Point| -> Vec<(String, String)> {
        p.attributes
            .iter()
            .map(|(k, v)| (k.clone(), v.to_string()))
            .collect()
    };
    for point in &points {
        let attributes = labelled(point);
        let pairs: Vec<(&str, &str)> = attributes
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let name = point.name.as_str();
        match &point.value {
            Value::Number(n) if point.kind == "Gauge" => {
                assert_eq!(capture.last_value(name, &pairs), Some(*n), "{name}")
            }
            Value::Number(n) => assert_eq!(capture.sum(name, &pairs), Some(*n), "{name}"),
            Value::Histogram { count, sum, .. } => {
                assert_eq!(capture.count(name, &pairs), Some(*count), "{name}");
                assert_eq!(capture.sum(name, &pairs), Some(*sum), "{name}");
            }
        }
        let mut series: Vec<Vec<(String, String)>> = points
            .iter()
            .filter(|p| p.name == point.name)
            .map(labelled)
            .collect();
        series.sort();
        assert_eq!(capture.attribute_sets(name), series, "{name}");
    }
}
