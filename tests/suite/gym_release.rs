//! The gym instruments against NeMo-Gym 0.7.0 as released
//! (`tests/data/nemo-gym-0.7.0-instruments.json`, a copy of the shared
//! reference), both ways: every instrument of the release is built in with
//! its name, kind, unit, description, attributes, attribute values and
//! buckets; every built-in gym instrument is the release's, one of the five
//! nemo-lens instruments it uses, or labelled unreleased.

use std::collections::{BTreeMap, BTreeSet};

use crate::support::{AttrValue, Harness, Value};
use nemo_lens::instruments::gym::unreleased::{
    GpuMetrics, HttpMetrics, ModelServerCallMetrics, ProcessCpuMetrics, QueueMetrics,
    RolloutMetrics,
};
use nemo_lens::instruments::gym::{
    ConnectionPoolConnects, ConnectionPoolQueue, GymMetrics, HostMemoryMetrics, MemoryType,
    QueueConstraint, QueueOutcome, SandboxExec, SandboxHeld, SandboxMetrics, SandboxStartup,
    ServerMemoryMetrics,
};
use nemo_lens::{Descriptor, Guarded, InstrumentKind, Instruments};
use serde_json::Value as Json;

fn release() -> Json {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/nemo-gym-0.7.0-instruments.json"
    ))
    .expect("the release's list");
    serde_json::from_str(&text).expect("JSON")
}

fn names(list: &Json) -> BTreeSet<String> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|name| name.as_str().expect("a name").to_owned())
        .collect()
}

/// Every released gym set, guards and observed sets included.
fn released() -> Vec<(&'static str, &'static [Descriptor])> {
    vec![
        ("SandboxMetrics", SandboxMetrics::DESCRIPTORS),
        ("SandboxStartup", SandboxStartup::DESCRIPTORS),
        ("SandboxExec", SandboxExec::DESCRIPTORS),
        ("SandboxHeld", SandboxHeld::DESCRIPTORS),
        ("ConnectionPoolQueue", ConnectionPoolQueue::DESCRIPTORS),
        (
            "ConnectionPoolConnects",
            ConnectionPoolConnects::DESCRIPTORS,
        ),
        ("ServerMemoryMetrics", ServerMemoryMetrics::DESCRIPTORS),
        ("HostMemoryMetrics", HostMemoryMetrics::DESCRIPTORS),
    ]
}

/// The sets of `gym::unreleased`.
fn unreleased() -> Vec<(&'static str, &'static [Descriptor])> {
    vec![
        ("QueueMetrics", QueueMetrics::DESCRIPTORS),
        ("RolloutMetrics", RolloutMetrics::DESCRIPTORS),
        (
            "ModelServerCallMetrics",
            ModelServerCallMetrics::DESCRIPTORS,
        ),
        ("HttpMetrics", HttpMetrics::DESCRIPTORS),
        ("ProcessCpuMetrics", ProcessCpuMetrics::DESCRIPTORS),
        ("GpuMetrics", GpuMetrics::DESCRIPTORS),
    ]
}

fn kind(release_kind: &str) -> InstrumentKind {
    match release_kind {
        "counter" | "observable_counter" => InstrumentKind::Counter,
        "up_down_counter" => InstrumentKind::UpDownCounter,
        "gauge" => InstrumentKind::Gauge,
        "histogram" => InstrumentKind::Histogram,
        other => panic!("a kind the release does not use: {other}"),
    }
}

#[test]
fn every_released_instrument_is_built_in_as_released() {
    let release = release();
    let instruments = release["instruments"].as_array().expect("instruments");
    assert_eq!(instruments.len(), 13, "the release's thirteen");
    for expected in instruments {
        let name = expected["name"].as_str().expect("name");
        let declared: Vec<(&str, &Descriptor)> = released()
            .into_iter()
            .flat_map(|(set, descriptors)| descriptors.iter().map(move |d| (set, d)))
            .filter(|(_, d)| d.name == name)
            .collect();
        assert!(!declared.is_empty(), "{name} is missing");
        for (set, d) in declared {
            let at = format!("{set}: {name}");
            assert_eq!(d.kind, kind(expected["kind"].as_str().unwrap()), "{at}");
            assert_eq!(d.unit, expected["unit"], "{at}");
            assert_eq!(d.description, expected["description"], "{at}");
            let keys: BTreeSet<&str> = d.attribute_keys.iter().copied().collect();
            let expected_keys: BTreeSet<&str> = expected["attributes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| k.as_str().unwrap())
                .collect();
            assert_eq!(keys, expected_keys, "{at}: attributes");
            // Fixed values are enums with exactly the release's values.
            if let Some(values) = expected["attribute_values"].as_object() {
                for (key, values) in values {
                    let Some(values) = values.as_array() else {
                        continue; // free-form, described in words
                    };
                    let attribute = d
                        .attributes
                        .iter()
                        .find(|a| a.key == key)
                        .unwrap_or_else(|| panic!("{at}: {key}"));
                    let expected: Vec<&str> = values.iter().map(|v| v.as_str().unwrap()).collect();
                    assert_eq!(attribute.values, Some(&expected[..]), "{at}: {key}");
                }
            }
            let buckets: Option<Vec<f64>> = expected["buckets"]
                .as_array()
                .map(|b| b.iter().map(|v| v.as_f64().unwrap()).collect());
            assert_eq!(d.buckets.map(<[f64]>::to_vec), buckets, "{at}: buckets");
        }
    }
}

#[test]
fn every_built_in_gym_instrument_is_released_or_labelled_unreleased() {
    let release = release();
    let released_names: BTreeSet<String> = release["instruments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap().to_owned())
        .collect();
    let lens = names(&release["lens_instruments_used"]["names"]);
    let not_released = names(&release["not_in_0_7_0"]);

    for (set, descriptors) in released() {
        for d in descriptors {
            assert!(released_names.contains(d.name), "{set}: {}", d.name);
        }
    }
    for d in GymMetrics::DESCRIPTORS {
        assert!(lens.contains(d.name), "GymMetrics: {}", d.name);
    }
    // The unreleased ones are exactly the ten 0.7.0 does not have, and only
    // in the module that says so.
    let unreleased_names: BTreeSet<String> = unreleased()
        .into_iter()
        .flat_map(|(_, descriptors)| descriptors.iter().map(|d| d.name.to_owned()))
        .collect();
    assert_eq!(unreleased_names, not_released);

    // The generated catalog and dashboards keep them apart and say so.
    let catalog = nemo_lens_cli::builtin_sets();
    for set in &catalog {
        for d in &set.descriptors {
            assert!(!not_released.contains(d.name), "{}: {}", set.title, d.name);
        }
    }
    let labelled = nemo_lens_cli::unreleased_sets();
    assert_eq!(labelled.len(), unreleased().len());
    for set in labelled {
        assert!(set.title.contains("unreleased NeMo-Gym"), "{}", set.title);
    }
}

#[test]
fn the_released_sets_export_their_values_with_their_attributes() {
    let harness = Harness::new();
    let meter = &harness.meter;
    SandboxMetrics::default()
        .provider("docker")
        .startup_ms(840.0)
        .exec_ms(125.0)
        .create_retries(2)
        .record(meter);
    let held = SandboxHeld::default().provider("modal").start(meter);
    SandboxStartup::default()
        .provider("modal")
        .start(meter)
        .finish();
    SandboxExec::default()
        .provider("modal")
        .start(meter)
        .finish();
    ConnectionPoolQueue::default()
        .constraint(QueueConstraint::PerHost)
        .destination("policy_model")
        .start(meter)
        .finish();
    drop(
        ConnectionPoolQueue::default()
            .constraint(QueueConstraint::Total)
            .destination("external")
            .start(meter),
    );

    let points = harness.points();
    let of = |name: &str, key: &str, value: &str| {
        points
            .iter()
            .find(|p| p.name == name && p.str_attr(key) == Some(value))
            .unwrap_or_else(|| panic!("{name} with {key}={value}: {points:#?}"))
            .clone()
    };
    const PROVIDER: &str = "nemo.gym.sandbox.provider";
    assert_eq!(of("gym.sandbox.active", PROVIDER, "modal").number(), 1.0);
    assert_eq!(
        of("gym.sandbox.create_retry_total", PROVIDER, "docker").number(),
        2.0
    );
    let histogram = |name: &str, key: &str, value: &str| match of(name, key, value).value {
        Value::Histogram {
            count, sum, bounds, ..
        } => (count, sum, bounds),
        Value::Number(_) => panic!("{name} is a histogram"),
    };
    let (count, sum, bounds) = histogram("gym.sandbox.startup_duration_ms", PROVIDER, "docker");
    assert_eq!((count, sum), (1, 840.0));
    assert_eq!(bounds.first(), Some(&250.0));
    assert_eq!(bounds.last(), Some(&1_800_000.0));
    assert_eq!(
        histogram("gym.sandbox.exec_duration_ms", PROVIDER, "docker").0,
        1
    );
    assert_eq!(
        histogram("gym.sandbox.startup_duration_ms", PROVIDER, "modal").0,
        1
    );
    assert_eq!(
        histogram("gym.sandbox.exec_duration_ms", PROVIDER, "modal").0,
        1
    );

    const OUTCOME: &str = "nemo.gym.http.connection_pool.queue_outcome";
    let ok = of("gym.http.connection_pool.queue_duration_ms", OUTCOME, "ok");
    assert_eq!(
        ok.str_attr("nemo.gym.http.connection_pool.queue_constraint"),
        Some("per_host")
    );
    assert_eq!(
        ok.str_attr("nemo.gym.http.destination.server.name"),
        Some("policy_model")
    );
    let abandoned = of(
        "gym.http.connection_pool.queue_duration_ms",
        OUTCOME,
        "abandoned",
    );
    assert_eq!(
        abandoned.str_attr("nemo.gym.http.connection_pool.queue_constraint"),
        Some("total"),
        "a dropped guard is an abandoned acquisition"
    );
    assert!(QueueOutcome::ALL.contains(&QueueOutcome::Abandoned));

    drop(held);
    assert_eq!(
        harness
            .points_of("gym.sandbox.active")
            .iter()
            .map(|p| p.number())
            .sum::<f64>(),
        0.0,
        "released"
    );
}

#[test]
fn connection_attempts_are_observed_per_destination() {
    let harness = Harness::new();
    let totals = std::sync::Arc::new(std::sync::Mutex::new(BTreeMap::from([
        ("policy_model", 3u64),
        ("external", 1),
    ])));
    let read = std::sync::Arc::clone(&totals);
    let _observation = ConnectionPoolConnects::observe(&harness.meter, move || {
        read.lock()
            .unwrap()
            .iter()
            .map(|(destination, connects)| {
                ConnectionPoolConnects::default()
                    .destination(*destination)
                    .connects(*connects)
            })
            .collect::<Vec<_>>()
    })
    .expect("one source");
    let connects = harness.points_of("gym.http.connection_pool.connect_total");
    let total = |destination: &str| {
        connects
            .iter()
            .find(|p| p.str_attr("nemo.gym.http.destination.server.name") == Some(destination))
            .map(|p| (p.kind, p.number()))
    };
    assert_eq!(total("policy_model"), Some(("Sum", 3.0)));
    assert_eq!(total("external"), Some(("Sum", 1.0)));
}

#[test]
fn memory_sets_carry_the_server_and_the_memory_type() {
    let harness = Harness::new();
    ServerMemoryMetrics::default()
        .server_name("math_env")
        .server_type("resources_servers")
        .pid(4242)
        .memory_type(MemoryType::Pss)
        .usage(1 << 20)
        .sampled_peak(2 << 20)
        .processes(3)
        .record(&harness.meter);
    let usage = &harness.points_of("gym.server.memory.usage")[0];
    assert_eq!(usage.str_attr("memory.type"), Some("pss"));
    assert_eq!(usage.attr("process.pid"), Some(&AttrValue::I64(4242)));
    assert_eq!(
        usage.str_attr("nemo.gym.server.type"),
        Some("resources_servers")
    );
    assert_eq!(usage.number(), f64::from(1 << 20));
    let processes = &harness.points_of("gym.server.processes")[0];
    assert_eq!(processes.attr("memory.type"), None, "not on the count");
    assert_eq!(processes.number(), 3.0);
}

/// The later Lens's gym duration buckets (100 ms to 1 h), set at setup with
/// the two constants, reach the export; without them the three histograms
/// keep the SDK's defaults, as NeMo-Gym 0.7.0 gets them.
#[test]
fn the_later_lens_duration_buckets_apply_at_setup() {
    use nemo_lens::instruments::gym::{GYM_DURATION_BOUNDARIES_MS, GYM_DURATION_HISTOGRAMS};
    use nemo_lens::opentelemetry_sdk::metrics::InMemoryMetricExporter;
    use nemo_lens::{EnvLookup, NemoLensConfig, SetupOptions};

    let _serial = crate::support::exclusive();
    let exported = |later: bool| {
        let config =
            NemoLensConfig::from_lookup(EnvLookup::from_pairs([("NEMO_LENS_ENABLED", "1")]))
                .unwrap();
        let exporter = InMemoryMetricExporter::default();
        let mut options = SetupOptions::new()
            .env(EnvLookup::from_pairs([("X", "1")]))
            .allow_reinit(true)
            .probe_gpus(false)
            .set_global(false)
            .push_exporter(exporter.clone());
        if later {
            for name in GYM_DURATION_HISTOGRAMS {
                options = options.histogram_boundaries(name, GYM_DURATION_BOUNDARIES_MS);
            }
        }
        let handle = options.setup(&config, 0, 1).unwrap();
        GymMetrics::default()
            .server_request_duration_ms(80.0)
            .rollout_duration_ms(45_000.0)
            .verify_duration_ms(2_000.0)
            .record(&handle.meter);
        handle.force_flush().unwrap();
        let points = crate::support::latest_points(&exporter);
        handle.shutdown().unwrap();
        GYM_DURATION_HISTOGRAMS.map(|name| {
            let point = points.iter().find(|p| p.name == name).unwrap();
            match &point.value {
                Value::Histogram {
                    bounds,
                    bucket_counts,
                    ..
                } => (bounds.clone(), bucket_counts.clone()),
                Value::Number(_) => panic!("{name} is a histogram"),
            }
        })
    };
    let one_in = |index: usize, len: usize| -> Vec<u64> {
        (0..len).map(|i| u64::from(i == index)).collect()
    };
    let later = exported(true);
    // 80 ms below 100; 45 s in (30 s, 60 s]; 2 s in (1 s, 2.5 s].
    for ((bounds, counts), bucket) in later.into_iter().zip([0, 8, 4]) {
        assert_eq!(bounds, GYM_DURATION_BOUNDARIES_MS);
        assert_eq!(counts, one_in(bucket, 16));
    }
    let sdk_defaults = [
        0.0, 5.0, 10.0, 25.0, 50.0, 75.0, 100.0, 250.0, 500.0, 750.0, 1000.0, 2500.0, 5000.0,
        7500.0, 10000.0,
    ];
    // 80 ms in (75, 100]; 45 s over the last bound; 2 s in (1000, 2500].
    for ((bounds, counts), bucket) in exported(false).into_iter().zip([6, 15, 11]) {
        assert_eq!(bounds, sdk_defaults);
        assert_eq!(counts, one_in(bucket, 16));
    }
}
