//! `setup_telemetry` end to end with injected exporters and readers.
//!
//! Setup touches process-wide state (the "already set up" guard and the
//! global provider), so every test holds `SERIAL`.

use crate::support::{exclusive, Exclusive};

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use nemo_lens::telemetry::{
    EnvLookup, ExportStrategy, NemoLensConfig, PrometheusResourceLabels, SetupError, SetupOptions,
};
use opentelemetry::{Key, KeyValue, Value};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::reader::MetricReader;
use opentelemetry_sdk::metrics::{
    InMemoryMetricExporter, InstrumentKind, ManualReader, Pipeline, Temporality,
};
use opentelemetry_sdk::resource::{Resource, ResourceDetector, TelemetryResourceDetector};

fn serial() -> Exclusive {
    exclusive()
}

fn config(pairs: &[(&str, &str)]) -> NemoLensConfig {
    let mut all = vec![("NEMO_LENS_ENABLED", "1")];
    all.extend_from_slice(pairs);
    NemoLensConfig::from_lookup(EnvLookup::from_pairs(all)).unwrap()
}

pub(crate) fn options(env: &[(&str, &str)]) -> SetupOptions {
    SetupOptions::new()
        .env(EnvLookup::from_pairs(env.iter().copied()))
        .allow_reinit(true)
        .probe_gpus(false)
}

fn resource_attr(rm: &ResourceMetrics, key: &'static str) -> Option<Value> {
    rm.resource().get(&opentelemetry::Key::from_static_str(key))
}

#[test]
fn disabled_setup_gives_a_noop_meter() {
    let _serial = serial();
    let disabled = NemoLensConfig::from_lookup(EnvLookup::from_pairs([("X", "1")])).unwrap();
    for _ in 0..2 {
        let handle = nemo_lens::setup_telemetry(&disabled, 0, 1).unwrap();
        assert!(!handle.is_exporting);
        assert!(!handle.meter.is_enabled());
        assert!(handle.prometheus_url().is_none());
        assert_eq!(
            handle.why_not_exporting(),
            Some(
                "nemo-lens telemetry is off until NEMO_LENS_ENABLED=true (or 1) is set; nothing \
                 is recorded or exported"
            )
        );
        handle.shutdown().unwrap();
    }
    let sdk_off = NemoLensConfig::from_lookup(EnvLookup::from_pairs([
        ("NEMO_LENS_ENABLED", "1"),
        ("OTEL_SDK_DISABLED", "true"),
    ]))
    .unwrap();
    let handle = nemo_lens::setup_telemetry(&sdk_off, 0, 1).unwrap();
    assert!(handle
        .why_not_exporting()
        .unwrap()
        .contains("OTEL_SDK_DISABLED=true"));
}

#[test]
fn a_rank_that_does_not_export_says_which_variable_selects_it() {
    let _serial = serial();
    let handle = options(&[])
        .push_exporter(InMemoryMetricExporter::default())
        .setup(&config(&[]), 0, 4)
        .unwrap();
    assert!(!handle.is_exporting);
    assert_eq!(
        handle.why_not_exporting(),
        Some(
            "nemo-lens telemetry is not exported from rank 0 of 4: \
             NEMO_LENS_EXPORT_STRATEGY=single_rank selects other ranks \
             (NEMO_LENS_EXPORT_RANK=-1 picks rank 3) (set \
             NEMO_LENS_EXPORT_STRATEGY=all_ranks, or NEMO_LENS_EXPORT_RANK=0 with single_rank, \
             to export from this one)"
        )
    );
    let exporting = options(&[])
        .push_exporter(InMemoryMetricExporter::default())
        .setup(&config(&[]), 3, 4)
        .unwrap();
    assert_eq!(exporting.why_not_exporting(), None);
}

#[test]
fn exporting_rank_records_values_with_the_full_resource() {
    let _serial = serial();
    let exporter = InMemoryMetricExporter::default();
    let cfg = config(&[
        ("NEMO_LENS_RUN_ID", "run9"),
        ("NEMO_LENS_USER_ID", "bob"),
        ("DEPLOYMENT_ENV", "ci"),
        ("OTEL_RESOURCE_ATTRIBUTES", "cluster=eos"),
    ]);
    let handle = options(&[("SLURM_JOB_NAME", "grpo"), ("CUDA_VISIBLE_DEVICES", "0,1")])
        .service_version("9.9.9")
        .resource_attribute(KeyValue::new("team", "rl"))
        .push_exporter(exporter.clone())
        .setup(&cfg, 3, 4)
        .unwrap();
    assert!(handle.is_exporting && handle.meter.is_enabled());

    let meter = handle.meter.otel();
    let steps = meter.u64_counter("test.steps").with_unit("{step}").build();
    steps.add(2, &[KeyValue::new("phase", "train")]);
    steps.add(5, &[KeyValue::new("phase", "train")]);
    let latency = meter
        .f64_histogram("test.latency")
        .with_unit("ms")
        .with_boundaries(vec![10.0, 100.0])
        .build();
    latency.record(5.0, &[]);
    latency.record(50.0, &[]);
    latency.record(500.0, &[]);
    handle.force_flush().unwrap();

    let exported = exporter.get_finished_metrics().unwrap();
    let rm = exported.last().unwrap();
    for (key, value) in [
        ("service.name", Value::from("nemo")),
        ("service.version", "9.9.9".into()),
        ("dl.rank", Value::I64(3)),
        ("dl.world_size", Value::I64(4)),
        ("nemo.run.id", "run9".into()),
        ("service.instance.id", "run9-rank3".into()),
        ("nemo.user.id", "bob".into()),
        ("deployment.environment", "ci".into()),
        ("host.gpu.count", Value::I64(2)),
        ("slurm.job.name", "grpo".into()),
        ("cluster", "eos".into()),
        ("team", "rl".into()),
        ("process.pid", Value::I64(i64::from(std::process::id()))),
    ] {
        assert_eq!(resource_attr(rm, key), Some(value), "{key}");
    }
    let scope = rm.scope_metrics().next().unwrap();
    assert_eq!(scope.scope().name(), "nemo.lens");
    let metric = |name: &str| scope.metrics().find(|m| m.name() == name).unwrap();
    let steps = metric("test.steps");
    assert_eq!(steps.unit(), "{step}");
    let AggregatedMetrics::U64(MetricData::Sum(sum)) = steps.data() else {
        panic!("test.steps is not a u64 sum")
    };
    let point = sum.data_points().next().unwrap();
    assert_eq!(point.value(), 7);
    assert_eq!(
        point.attributes().cloned().collect::<Vec<_>>(),
        vec![KeyValue::new("phase", "train")]
    );
    assert_eq!(sum.temporality(), Temporality::Cumulative);
    let AggregatedMetrics::F64(MetricData::Histogram(hist)) = metric("test.latency").data() else {
        panic!("test.latency is not an f64 histogram")
    };
    let point = hist.data_points().next().unwrap();
    assert_eq!(point.count(), 3);
    assert_eq!(point.sum(), 555.0);
    assert_eq!(point.bucket_counts().collect::<Vec<_>>(), vec![1, 1, 1]);
    handle.shutdown().unwrap();
}

#[test]
fn service_version_is_the_applications_never_nemo_lens_s() {
    let _serial = serial();
    let sdk = TelemetryResourceDetector.detect();
    let resource_of = |cfg: &NemoLensConfig, options: SetupOptions| {
        let exporter = InMemoryMetricExporter::default();
        let handle = options
            .push_exporter(exporter.clone())
            .setup(cfg, 0, 1)
            .unwrap();
        handle
            .meter
            .otel()
            .u64_counter("test.version")
            .build()
            .add(1, &[]);
        handle.shutdown().unwrap();
        let exported = exporter.get_finished_metrics().unwrap();
        exported.last().unwrap().resource().clone()
    };
    let version = |r: &Resource| r.get(&Key::from_static_str("service.version"));

    // Nothing set: left out, as Python nemo-lens leaves it.
    let r = resource_of(&config(&[]), options(&[]));
    assert_eq!(version(&r), None);
    // The SDK's own attributes stay the SDK's.
    for key in [
        "telemetry.sdk.name",
        "telemetry.sdk.language",
        "telemetry.sdk.version",
    ] {
        let key = Key::from_static_str(key);
        assert!(sdk.get(&key).is_some(), "{key}");
        assert_eq!(r.get(&key), sdk.get(&key), "{key}");
    }
    assert_eq!(
        r.get(&Key::from_static_str("telemetry.sdk.language")),
        Some("rust".into())
    );

    let from_env = config(&[("OTEL_RESOURCE_ATTRIBUTES", "service.version=4.5.6")]);
    let r = resource_of(&from_env, options(&[]));
    assert_eq!(version(&r), Some("4.5.6".into()));
    let r = resource_of(&from_env, options(&[]).service_version("1.2.3"));
    assert_eq!(version(&r), Some("1.2.3".into()), "the option wins");
}

#[test]
fn injected_push_exporter_exports_on_the_configured_interval() {
    let _serial = serial();
    let exporter = InMemoryMetricExporter::default();
    let handle = options(&[])
        .push_exporter(exporter.clone())
        .setup(&config(&[("OTEL_METRIC_EXPORT_INTERVAL", "100")]), 0, 1)
        .unwrap();
    handle
        .meter
        .otel()
        .u64_counter("test.ticks")
        .build()
        .add(1, &[]);
    // Without a flush, only the 100 ms interval (not the SDK's 60 s
    // default) can deliver this within the bound.
    let deadline = Instant::now() + Duration::from_secs(5);
    while exporter.get_finished_metrics().unwrap().is_empty() {
        assert!(Instant::now() < deadline, "no periodic export within 5 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    handle.shutdown().unwrap();
}

#[test]
fn setup_installs_the_global_meter_provider() {
    let _serial = serial();
    let exporter = InMemoryMetricExporter::default();
    let handle = options(&[])
        .push_exporter(exporter.clone())
        .setup(&config(&[]), 0, 1)
        .unwrap();
    // Code that only knows the OpenTelemetry globals, or get_meter, lands
    // in the same pipeline.
    opentelemetry::global::meter_provider()
        .meter("third.party")
        .u64_counter("test.global")
        .build()
        .add(2, &[]);
    nemo_lens::get_meter("nemo.lens")
        .otel()
        .u64_counter("test.get_meter")
        .build()
        .add(3, &[]);
    handle.force_flush().unwrap();
    let exported = exporter.get_finished_metrics().unwrap();
    let total = |name: &str| {
        exported
            .last()
            .into_iter()
            .flat_map(|rm| rm.scope_metrics())
            .flat_map(|s| s.metrics())
            .find(|m| m.name() == name)
            .and_then(|m| match m.data() {
                AggregatedMetrics::U64(MetricData::Sum(s)) => {
                    s.data_points().next().map(|p| p.value())
                }
                _ => None,
            })
    };
    assert_eq!(total("test.global"), Some(2));
    assert_eq!(total("test.get_meter"), Some(3));
    handle.shutdown().unwrap();
}

#[test]
fn strategies_decide_which_ranks_export() {
    let _serial = serial();
    let exporting = |pairs: &[(&str, &str)], env: &[(&str, &str)], world: u32| -> Vec<u32> {
        let cfg = config(pairs);
        (0..world)
            .filter(|&rank| {
                let handle = options(env)
                    .push_exporter(InMemoryMetricExporter::default())
                    .setup(&cfg, rank, world)
                    .unwrap();
                handle.is_exporting
            })
            .collect()
    };
    // Default: single_rank on the last rank.
    assert_eq!(exporting(&[], &[], 4), vec![3]);
    assert_eq!(
        exporting(&[("NEMO_LENS_EXPORT_RANK", "1")], &[], 4),
        vec![1]
    );
    assert_eq!(
        exporting(&[("NEMO_LENS_EXPORT_RANK", "-4")], &[], 4),
        vec![0]
    );
    assert_eq!(
        exporting(&[("NEMO_LENS_EXPORT_STRATEGY", "all_ranks")], &[], 3),
        vec![0, 1, 2]
    );
    // Ranks 3 (bucket 883) and 7 (5555) per Python's hashlib; see the unit
    // test in strategy.rs for how these were computed.
    let sampled = exporting(
        &[
            ("NEMO_LENS_EXPORT_STRATEGY", "sampled"),
            ("NEMO_LENS_EXPORT_SAMPLE_RATE", "0.1"),
        ],
        &[],
        8,
    );
    assert!(sampled.contains(&3) && !sampled.contains(&7), "{sampled:?}");
    let first = [("NEMO_LENS_EXPORT_STRATEGY", "first_rank_per_node")];
    assert_eq!(exporting(&first, &[("LOCAL_RANK", "0")], 2), vec![0, 1]);
    assert_eq!(
        exporting(&first, &[("LOCAL_RANK", "1")], 2),
        Vec::<u32>::new()
    );
    assert_eq!(
        exporting(&first, &[], 2),
        vec![0, 1],
        "missing LOCAL_RANK is 0"
    );

    nemo_lens::register_export_strategy("test_even", |ctx| ctx.rank % 2 == 0).unwrap();
    assert_eq!(
        exporting(&[("NEMO_LENS_EXPORT_STRATEGY", "test_even")], &[], 5),
        vec![0, 2, 4]
    );
    assert_eq!(
        config(&[("NEMO_LENS_EXPORT_STRATEGY", "test_even")]).export_strategy,
        ExportStrategy::by_name("test_even").unwrap()
    );
}

#[test]
fn second_setup_is_an_error_unless_reinit_is_asked_for() {
    let _serial = serial();
    let cfg = config(&[]);
    let first = options(&[])
        .push_exporter(InMemoryMetricExporter::default())
        .setup(&cfg, 0, 1)
        .unwrap();
    let err = options(&[])
        .allow_reinit(false)
        .push_exporter(InMemoryMetricExporter::default())
        .setup(&cfg, 0, 1)
        .unwrap_err();
    assert!(matches!(err, SetupError::AlreadyInitialized), "{err}");
    assert!(err.to_string().contains("allow_reinit"));
    // Re-initialising shuts the earlier pipeline down.
    let second = options(&[])
        .push_exporter(InMemoryMetricExporter::default())
        .setup(&cfg, 0, 1)
        .unwrap();
    assert!(second.is_exporting);
    first.shutdown().unwrap();
}

#[test]
fn invalid_ranks_and_rank_variables_are_errors() {
    let _serial = serial();
    let cfg = config(&[]);
    for (rank, world) in [(0, 0), (4, 4)] {
        let err = options(&[]).setup(&cfg, rank, world).unwrap_err();
        assert!(matches!(err, SetupError::InvalidRank { .. }), "{err}");
    }
    let err = options(&[])
        .setup(&config(&[("NEMO_LENS_EXPORT_RANK", "9")]), 0, 4)
        .unwrap_err();
    let SetupError::Config(err) = err else {
        panic!("{err}")
    };
    assert_eq!(
        (err.variable.as_str(), err.value.as_str()),
        ("NEMO_LENS_EXPORT_RANK", "9")
    );
    let err = options(&[("LOCAL_RANK", "first")])
        .setup(&cfg, 0, 4)
        .unwrap_err();
    assert!(
        err.to_string().contains("LOCAL_RANK") && err.to_string().contains("first"),
        "{err}"
    );
}

#[test]
fn shutdown_is_idempotent_and_drop_flushes() {
    let _serial = serial();
    let exporter = InMemoryMetricExporter::default();
    let handle = options(&[])
        .push_exporter(exporter.clone())
        .setup(&config(&[]), 0, 1)
        .unwrap();
    handle
        .meter
        .otel()
        .u64_counter("test.dropped")
        .build()
        .add(11, &[]);
    drop(handle);
    let exported = exporter.get_finished_metrics().unwrap();
    let value = exported
        .iter()
        .flat_map(|rm| rm.scope_metrics())
        .flat_map(|s| s.metrics())
        .find_map(|m| match m.data() {
            AggregatedMetrics::U64(MetricData::Sum(s)) if m.name() == "test.dropped" => {
                s.data_points().next().map(|p| p.value())
            }
            _ => None,
        });
    assert_eq!(value, Some(11));

    let handle = options(&[])
        .push_exporter(InMemoryMetricExporter::default())
        .setup(&config(&[]), 0, 1)
        .unwrap();
    handle.shutdown().unwrap();
    handle.shutdown().unwrap();
}

/// A reader the test keeps a handle to, as nemo-lens tests pass
/// `metric_reader=InMemoryMetricReader()`.
#[derive(Debug, Clone)]
pub(crate) struct SharedReader(pub(crate) Arc<ManualReader>);

impl MetricReader for SharedReader {
    fn register_pipeline(&self, pipeline: Weak<Pipeline>) {
        self.0.register_pipeline(pipeline)
    }
    fn collect(&self, rm: &mut ResourceMetrics) -> opentelemetry_sdk::error::OTelSdkResult {
        self.0.collect(rm)
    }
    fn force_flush(&self) -> opentelemetry_sdk::error::OTelSdkResult {
        self.0.force_flush()
    }
    fn shutdown_with_timeout(&self, t: Duration) -> opentelemetry_sdk::error::OTelSdkResult {
        self.0.shutdown_with_timeout(t)
    }
    fn temporality(&self, kind: InstrumentKind) -> Temporality {
        self.0.temporality(kind)
    }
}

#[test]
fn injected_reader_replaces_the_configured_exporter() {
    let _serial = serial();
    let reader = SharedReader(Arc::new(ManualReader::builder().build()));
    // The configured exporter (otlp) is never built: no endpoint is needed.
    let handle = options(&[])
        .metric_reader(reader.clone())
        .setup(&config(&[("NEMO_LENS_EXPORTER", "otlp")]), 0, 1)
        .unwrap();
    handle
        .meter
        .otel()
        .f64_gauge("test.gauge")
        .build()
        .record(0.5, &[]);
    let mut rm = ResourceMetrics::default();
    reader.collect(&mut rm).unwrap();
    let metric = rm.scope_metrics().flat_map(|s| s.metrics()).next().unwrap();
    let AggregatedMetrics::F64(MetricData::Gauge(gauge)) = metric.data() else {
        panic!("not a gauge")
    };
    assert_eq!(gauge.data_points().next().unwrap().value(), 0.5);
    assert_eq!(resource_attr(&rm, "dl.rank"), Some(Value::I64(0)));
    let start = Instant::now();
    handle.shutdown().unwrap();
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[cfg(not(feature = "otlp"))]
#[test]
fn exporters_compiled_out_are_named_in_the_error() {
    let _serial = serial();
    let err = options(&[])
        .setup(&config(&[("NEMO_LENS_EXPORTER", "otlp")]), 0, 1)
        .unwrap_err();
    assert!(err.to_string().contains("`otlp` cargo feature"), "{err}");
}

#[test]
fn histogram_boundaries_override_a_built_in_set_at_setup() {
    use nemo_lens::instruments::InferenceRequest;

    let _serial = serial();
    let exporter = InMemoryMetricExporter::default();
    let long = [1.0, 10.0, 100.0, 2560.0];
    let handle = options(&[])
        .histogram_boundaries("gen_ai.server.time_to_first_token", [1.0, 2.0])
        // The later call for the same histogram wins.
        .histogram_boundaries("GEN_AI.server.time_to_first_token", long)
        .push_exporter(exporter.clone())
        .setup(&config(&[]), 0, 1)
        .unwrap();
    let t0 = Instant::now();
    let mut req = InferenceRequest::start_at(&handle.meter, t0).output_tokens(2);
    req.first_token_at(t0 + Duration::from_secs(300));
    req.finish_at(t0 + Duration::from_secs(301));
    handle.shutdown().unwrap();

    let exported = exporter.get_finished_metrics().unwrap();
    let bounds_of = |name: &str| -> Vec<f64> {
        let metric = exported
            .iter()
            .flat_map(|rm| rm.scope_metrics())
            .flat_map(|sm| sm.metrics())
            .find(|m| m.name() == name)
            .unwrap_or_else(|| panic!("{name} was exported"));
        match metric.data() {
            AggregatedMetrics::F64(MetricData::Histogram(h)) => {
                let point = h.data_points().next().unwrap();
                point.bounds().collect()
            }
            _ => panic!("{name} is an f64 histogram"),
        }
    };
    assert_eq!(bounds_of("gen_ai.server.time_to_first_token"), long);
    // Other histograms keep their declared boundaries.
    assert_eq!(
        bounds_of("gen_ai.server.time_per_output_token").len(),
        13,
        "the advised TPOT buckets"
    );
}

#[test]
fn invalid_histogram_boundaries_are_an_error_naming_the_instrument() {
    let _serial = serial();
    let error = options(&[])
        .histogram_boundaries("gen_ai.server.time_to_first_token", [1.0, 0.5])
        .push_exporter(InMemoryMetricExporter::default())
        .setup(&config(&[]), 0, 1)
        .unwrap_err();
    assert!(matches!(error, SetupError::InvalidBoundaries { .. }));
    assert_eq!(
        error.to_string(),
        "invalid bucket boundaries for histogram `gen_ai.server.time_to_first_token`: \
         bounds must be strictly increasing, but 0.5 follows 1"
    );
}

#[test]
fn cardinality_limit_bounds_series_and_overflow_is_reported() {
    let _serial = serial();
    let exporter = InMemoryMetricExporter::default();
    let handle = options(&[])
        .push_exporter(exporter.clone())
        .setup(&config(&[("NEMO_LENS_CARDINALITY_LIMIT", "4")]), 0, 1)
        .unwrap();
    let meter = handle.meter.otel();
    let requests = meter.u64_counter("test.requests_by_model").build();
    for model in 0..10 {
        requests.add(1, &[KeyValue::new("model", format!("m{model}"))]);
    }
    let bounded = meter.u64_counter("test.requests_by_route").build();
    bounded.add(1, &[KeyValue::new("route", "/v1/chat")]);
    let overflowing = handle.overflowing_instruments();
    assert!(
        overflowing.is_empty(),
        "nothing exported yet: {overflowing:?}"
    );
    // The injected exporter is exported to (and watched) on flush.
    handle.shutdown().unwrap();
    assert_eq!(handle.overflowing_instruments(), ["test.requests_by_model"]);

    let batches = exporter.get_finished_metrics().unwrap();
    let metric = batches
        .last()
        .unwrap()
        .scope_metrics()
        .flat_map(|s| s.metrics())
        .find(|m| m.name() == "test.requests_by_model")
        .unwrap();
    let AggregatedMetrics::U64(MetricData::Sum(sum)) = metric.data() else {
        panic!("a sum");
    };
    let (overflow, kept): (Vec<_>, Vec<_>) = sum.data_points().partition(|p| {
        p.attributes()
            .any(|kv| kv.key.as_str() == "otel.metric.overflow")
    });
    // The limit's series, and nothing lost: the other six are counted in
    // the overflow series.
    assert_eq!(kept.len(), 4);
    assert_eq!(overflow.len(), 1);
    let total: u64 = sum.data_points().map(|p| p.value()).sum();
    assert_eq!(total, 10);
}

#[test]
fn resource_labels_for_our_endpoint_are_refused_beside_a_reader_of_your_own() {
    let _serial = serial();
    let reader = SharedReader(Arc::new(ManualReader::builder().build()));
    let refused = options(&[])
        .metric_reader(reader)
        .prometheus_resource_labels(PrometheusResourceLabels::None)
        .setup(&config(&[("NEMO_LENS_EXPORTER", "prometheus")]), 0, 1)
        .expect_err("the labels would be ignored");
    assert!(
        matches!(
            refused,
            SetupError::UnusedOption {
                option: "prometheus_resource_labels",
                ..
            }
        ),
        "{refused}"
    );
    assert!(
        refused
            .to_string()
            .starts_with("SetupOptions::prometheus_resource_labels has no effect with"),
        "{refused}"
    );
}

#[test]
fn a_gym_server_sets_its_resource_attributes_in_code() {
    let _serial = serial();
    let exporter = InMemoryMetricExporter::default();
    let handle = options(&[])
        .gym_server("math_env", "resources_servers")
        .gym_service_group("rollouts")
        .gym_version("0.7.0")
        .push_exporter(exporter.clone())
        .setup(&config(&[]), 0, 1)
        .unwrap();
    handle
        .meter
        .otel()
        .u64_counter("test.gym")
        .build()
        .add(1, &[]);
    handle.force_flush().unwrap();
    let exported = exporter.get_finished_metrics().unwrap();
    let rm = exported.last().unwrap();
    for (key, value) in [
        ("nemo.gym.server.name", "math_env"),
        ("nemo.gym.server.type", "resources_servers"),
        ("nemo.gym.service_group", "rollouts"),
        ("nemo.gym.version", "0.7.0"),
    ] {
        assert_eq!(resource_attr(rm, key), Some(Value::from(value)), "{key}");
    }
}
