//! The Prometheus exporter through `setup_telemetry`: names, labels and
//! values a scraper sees, and the endpoint's robustness.

use crate::support::{exclusive, Exclusive};

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use nemo_lens::telemetry::{EnvLookup, NemoLensConfig, SetupError, SetupOptions};
use nemo_lens::Descriptor;
use opentelemetry::KeyValue;

fn serial() -> Exclusive {
    exclusive()
}

fn config(port: &str) -> NemoLensConfig {
    NemoLensConfig::from_lookup(EnvLookup::from_pairs([
        ("NEMO_LENS_ENABLED", "1"),
        ("NEMO_LENS_EXPORTER", "prometheus"),
        ("OTEL_EXPORTER_PROMETHEUS_PORT", port),
        ("OTEL_SERVICE_NAME", "rust_peer"),
        ("NEMO_LENS_RUN_ID", "runP"),
    ]))
    .unwrap()
}

fn options() -> SetupOptions {
    SetupOptions::new()
        .env(EnvLookup::from_pairs([("X", "1")]))
        .allow_reinit(true)
        .probe_gpus(false)
}

/// Sends `request` and reads until the server closes, which it does after
/// the response when the request asks for `Connection: close` (HTTP/1.1
/// connections otherwise stay open for the next scrape).
fn get(addr: SocketAddr, request: &str) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}

/// The sample line of `metric` whose labels include every one of `labels`.
fn sample(body: &str, metric: &str, labels: &[&str]) -> f64 {
    body.lines()
        .filter(|l| l.starts_with(&format!("{metric}{{")) || l.starts_with(&format!("{metric} ")))
        .find(|l| labels.iter().all(|label| l.contains(label)))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {metric} with {labels:?} in\n{body}"))
}

#[test]
fn scrape_shows_nemo_lens_names_labels_and_values() {
    let _serial = serial();
    let handle = options().setup(&config("0"), 0, 1).unwrap();
    let addr = handle.prometheus_addr().unwrap();
    assert!(addr.ip().is_loopback(), "binds loopback by default: {addr}");
    assert_eq!(
        handle.prometheus_url().unwrap(),
        format!("http://{addr}/metrics")
    );

    let meter = handle.meter.otel();
    let bounds = vec![
        0.0, 5.0, 10.0, 25.0, 50.0, 75.0, 100.0, 250.0, 500.0, 750.0, 1000.0, 2500.0, 5000.0,
        7500.0, 10000.0,
    ];
    let generation = meter
        .f64_histogram("rl.generation.duration_ms")
        .with_unit("ms")
        .with_description("Duration of text generation in milliseconds.")
        .with_boundaries(bounds.clone())
        .build();
    generation.record(1234.5, &[]);
    let tokens = meter
        .u64_histogram("gen_ai.client.token.usage")
        .with_unit("{token}")
        .with_boundaries(bounds.clone())
        .build();
    let base = [
        KeyValue::new("gen_ai.operation.name", "text_completion"),
        KeyValue::new("gen_ai.provider.name", "nemo"),
        KeyValue::new("gen_ai.request.model", "llama-3-8b"),
    ];
    let with = |kind: &'static str| {
        let mut a = base.to_vec();
        a.push(KeyValue::new("gen_ai.token.type", kind));
        a
    };
    tokens.record(128, &with("input"));
    tokens.record(256, &with("output"));
    let duration = meter
        .f64_histogram("gen_ai.server.request.duration")
        .with_unit("s")
        .with_boundaries(bounds)
        .build();
    duration.record(0.42, &base);
    meter.f64_gauge("rl.reward.mean").build().record(0.75, &[]);
    meter.u64_counter("gym.requests").build().add(3, &[]);

    let response = get(
        addr,
        "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    assert!(response.starts_with("HTTP/1.1 200 OK"), "{response}");
    let body = response.split("\r\n\r\n").nth(1).unwrap();

    assert!(
        body.contains("# TYPE rl_generation_duration_ms_milliseconds histogram"),
        "{body}"
    );
    assert_eq!(
        sample(
            body,
            "rl_generation_duration_ms_milliseconds_bucket",
            &["le=\"1000\""]
        ),
        0.0
    );
    assert_eq!(
        sample(
            body,
            "rl_generation_duration_ms_milliseconds_bucket",
            &["le=\"2500\""]
        ),
        1.0
    );
    assert_eq!(
        sample(body, "rl_generation_duration_ms_milliseconds_sum", &[]),
        1234.5
    );
    assert_eq!(
        sample(body, "rl_generation_duration_ms_milliseconds_count", &[]),
        1.0
    );
    let input = [
        "gen_ai_token_type=\"input\"",
        "gen_ai_request_model=\"llama-3-8b\"",
    ];
    assert_eq!(sample(body, "gen_ai_client_token_usage_sum", &input), 128.0);
    assert_eq!(
        sample(
            body,
            "gen_ai_client_token_usage_bucket",
            &["gen_ai_token_type=\"output\"", "le=\"250\""]
        ),
        0.0
    );
    assert_eq!(
        sample(
            body,
            "gen_ai_client_token_usage_bucket",
            &["gen_ai_token_type=\"output\"", "le=\"500\""]
        ),
        1.0
    );
    assert_eq!(
        sample(
            body,
            "gen_ai_server_request_duration_seconds_bucket",
            &[
                "gen_ai_operation_name=\"text_completion\"",
                "gen_ai_provider_name=\"nemo\"",
                "le=\"5\""
            ]
        ),
        1.0
    );
    assert_eq!(
        sample(body, "rl_reward_mean", &["otel_scope_name=\"nemo.lens\""]),
        0.75
    );
    assert_eq!(sample(body, "gym_requests_total", &[]), 3.0);
    assert_eq!(
        sample(
            body,
            "target_info",
            &[
                "service_name=\"rust_peer\"",
                "service_instance_id=\"runP-rank0\"",
                "dl_rank=\"0\""
            ]
        ),
        1.0
    );

    // Other paths and methods.
    assert!(
        get(addr, "GET /other HTTP/1.1\r\nConnection: close\r\n\r\n").starts_with("HTTP/1.1 404")
    );
    assert!(get(
        addr,
        "DELETE /metrics HTTP/1.1\r\nConnection: close\r\n\r\n"
    )
    .starts_with("HTTP/1.1 405"));

    handle.shutdown().unwrap();
    // The port is released on shutdown.
    assert!(TcpListener::bind(addr).is_ok());
}

#[test]
fn busy_port_is_an_error_naming_the_address() {
    let _serial = serial();
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let err = options().setup(&config(&port), 0, 1).unwrap_err();
    assert!(matches!(err, SetupError::Bind { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        format!(
            "cannot serve Prometheus metrics on 127.0.0.1:{port}: the port is in use (another \
             process, or another rank on this host); set OTEL_EXPORTER_PROMETHEUS_PORT to a free \
             port, or 0 for any, or NEMO_LENS_PROMETHEUS_PORT_PER_LOCAL_RANK=true for one port \
             per rank on this host"
        )
    );
    // The OS error once, from source(), and in Debug after the message.
    let source = std::error::Error::source(&err).unwrap().to_string();
    assert!(!err.to_string().contains(&source));
    assert!(
        format!("{err:?}").ends_with(&format!("on this host: {source}")),
        "{err:?}"
    );
}

/// The label set of the first sample line of `metric`.
fn labels_of<'a>(body: &'a str, metric: &str) -> &'a str {
    body.lines()
        .find(|l| l.starts_with(&format!("{metric}{{")))
        .and_then(|l| l.split_once('{'))
        .and_then(|(_, rest)| rest.rsplit_once('}'))
        .map(|(labels, _)| labels)
        .unwrap_or_else(|| panic!("no {metric} in\n{body}"))
}

fn scrape(addr: SocketAddr) -> String {
    // `Connection: close`: a kept-alive connection would hold the read until
    // the server's idle timeout.
    let response = get(addr, "GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n");
    assert!(response.starts_with("HTTP/1.1 200 OK"), "{response}");
    response.split("\r\n\r\n").nth(1).unwrap().to_owned()
}

#[test]
fn resource_attributes_are_labels_on_every_series_as_configured() {
    let _serial = serial();
    let identity = [
        "service_name=\"rust_peer\"",
        "service_instance_id=\"runP-rank0\"",
        "nemo_run_id=\"runP\"",
        "dl_rank=\"0\"",
    ];
    let mut sizes = Vec::new();
    for (setting, present, absent) in [
        // The default: what Lens's dashboards select on, and the rank.
        (
            None,
            &identity[..],
            &["process_pid=", "telemetry_sdk_name="][..],
        ),
        (
            Some("all"),
            &[
                "service_name=\"rust_peer\"",
                "process_pid=",
                "telemetry_sdk_name=\"opentelemetry\"",
            ][..],
            &[][..],
        ),
        (
            Some("none"),
            &[][..],
            &["service_name=", "nemo_run_id="][..],
        ),
        // A key nemo-lens sets only under Slurm is skipped elsewhere.
        (
            Some("nemo.run.id,slurm.job.id"),
            &["nemo_run_id=\"runP\""][..],
            &["service_name=", "slurm_job_id="][..],
        ),
    ] {
        let mut config = config("0");
        if let Some(setting) = setting {
            config.prometheus_resource_labels =
                nemo_lens::telemetry::PrometheusResourceLabels::parse(
                    "NEMO_LENS_PROMETHEUS_RESOURCE_LABELS",
                    setting,
                )
                .unwrap();
        }
        let handle = options().setup(&config, 0, 1).unwrap();
        let meter = handle.meter.otel();
        meter.f64_gauge("rl.reward.mean").build().record(0.5, &[]);
        meter
            .f64_histogram("rl.generation.duration_ms")
            .with_unit("ms")
            .build()
            .record(12.0, &[KeyValue::new("app.kind", "x")]);
        let body = scrape(handle.prometheus_addr().unwrap());
        for metric in [
            "rl_reward_mean",
            "rl_generation_duration_ms_milliseconds_bucket",
        ] {
            let labels = labels_of(&body, metric);
            for want in present {
                assert!(
                    labels.contains(want),
                    "{setting:?}: {metric} lacks {want}: {labels}"
                );
            }
            for unwanted in absent {
                assert!(
                    !labels.contains(unwanted),
                    "{setting:?}: {metric} has {unwanted}: {labels}"
                );
            }
        }
        // target_info keeps the whole resource whatever the selection.
        let target = labels_of(&body, "target_info");
        for want in identity.iter().chain(&["process_pid="]) {
            assert!(
                target.contains(want),
                "{setting:?}: target_info lacks {want}"
            );
        }
        sizes.push((setting.unwrap_or("default"), body.len()));
        handle.shutdown().unwrap();
    }
    // The series-size trade-off the docs describe, printed with --nocapture.
    println!("scrape size by resource-label setting (bytes): {sizes:?}");
    let size = |s: &str| sizes.iter().find(|(k, _)| *k == s).unwrap().1;
    assert!(
        size("none") < size("default") && size("default") < size("all"),
        "{sizes:?}"
    );
}

#[test]
fn unknown_resource_label_keys_are_refused_by_name() {
    let _serial = serial();
    for (setting, key, hint) in [
        // The Prometheus spelling of a key: its OpenTelemetry one suggested.
        ("service_name", "service_name", "`service.name`"),
        ("nemo.run.id,dl_rank", "dl_rank", "`dl.rank`"),
        ("missing.key", "missing.key", "OTEL_RESOURCE_ATTRIBUTES"),
    ] {
        let mut config = config("0");
        config.prometheus_resource_labels = nemo_lens::telemetry::PrometheusResourceLabels::parse(
            "NEMO_LENS_PROMETHEUS_RESOURCE_LABELS",
            setting,
        )
        .unwrap();
        let Err(nemo_lens::SetupError::Config(err)) = options().setup(&config, 0, 1) else {
            panic!("{setting} was accepted");
        };
        assert_eq!(
            (err.variable.as_str(), err.value.as_str()),
            ("NEMO_LENS_PROMETHEUS_RESOURCE_LABELS", key)
        );
        assert!(err.to_string().contains(hint), "{err}");
    }
    // A key the caller puts on the resource is a key like any other.
    let mut config = config("0");
    config.prometheus_resource_labels =
        nemo_lens::telemetry::PrometheusResourceLabels::keys(["team"]);
    let handle = options()
        .resource_attribute(KeyValue::new("team", "rl"))
        .setup(&config, 0, 1)
        .unwrap();
    handle.shutdown().unwrap();
}

#[test]
fn setup_option_overrides_the_configured_resource_labels() {
    let _serial = serial();
    let handle = options()
        .prometheus_resource_labels(nemo_lens::telemetry::PrometheusResourceLabels::None)
        .setup(&config("0"), 0, 1)
        .unwrap();
    handle
        .meter
        .otel()
        .f64_gauge("rl.entropy")
        .build()
        .record(1.0, &[]);
    let body = scrape(handle.prometheus_addr().unwrap());
    let labels = labels_of(&body, "rl_entropy");
    assert!(!labels.contains("service_name"), "{labels}");
    handle.shutdown().unwrap();
}

/// Records one value into every built-in instrument exactly as the derive
/// declares it (name, kind, value type, unit, description, buckets, static
/// attributes), from the descriptors alone, so instruments added later are
/// covered without editing this test.
fn record_from_descriptors(meter: &opentelemetry::metrics::Meter, sets: &[&[Descriptor]]) {
    use nemo_lens::{InstrumentKind as K, ValueType as V};
    for d in sets.iter().flat_map(|s| s.iter()) {
        let attrs: Vec<KeyValue> = d
            .attribute_keys
            .iter()
            .map(|k| {
                let fixed = d.static_attributes.iter().find(|(sk, _)| sk == k);
                KeyValue::new(*k, fixed.map_or("v", |(_, v)| *v))
            })
            .collect();
        let buckets = d.buckets.map(<[f64]>::to_vec);
        match (d.kind, d.value_type) {
            (K::Histogram, V::U64) => {
                let mut b = meter
                    .u64_histogram(d.name)
                    .with_unit(d.unit)
                    .with_description(d.description);
                if let Some(bounds) = buckets {
                    b = b.with_boundaries(bounds);
                }
                b.build().record(3, &attrs);
            }
            (K::Histogram, _) => {
                let mut b = meter
                    .f64_histogram(d.name)
                    .with_unit(d.unit)
                    .with_description(d.description);
                if let Some(bounds) = buckets {
                    b = b.with_boundaries(bounds);
                }
                b.build().record(3.0, &attrs);
            }
            (K::Gauge, V::U64) => meter
                .u64_gauge(d.name)
                .with_unit(d.unit)
                .build()
                .record(3, &attrs),
            (K::Gauge, V::I64) => meter
                .i64_gauge(d.name)
                .with_unit(d.unit)
                .build()
                .record(3, &attrs),
            (K::Gauge, V::F64) => meter
                .f64_gauge(d.name)
                .with_unit(d.unit)
                .build()
                .record(3.0, &attrs),
            (K::Counter, V::F64) => meter
                .f64_counter(d.name)
                .with_unit(d.unit)
                .build()
                .add(3.0, &attrs),
            (K::Counter, _) => meter
                .u64_counter(d.name)
                .with_unit(d.unit)
                .build()
                .add(3, &attrs),
            (K::UpDownCounter, V::F64) => meter
                .f64_up_down_counter(d.name)
                .with_unit(d.unit)
                .build()
                .add(3.0, &attrs),
            (K::UpDownCounter, _) => meter
                .i64_up_down_counter(d.name)
                .with_unit(d.unit)
                .build()
                .add(3, &attrs),
        }
    }
}

#[test]
fn descriptor_prometheus_names_are_what_the_endpoint_exports_for_every_builtin_instrument() {
    use nemo_lens::instruments::{gym::GymMetrics, rl::RlMetrics, InferenceMetrics};
    use nemo_lens::Instruments;

    let _serial = serial();
    let handle = options().setup(&config("0"), 0, 1).unwrap();
    let sets = [
        InferenceMetrics::DESCRIPTORS,
        RlMetrics::DESCRIPTORS,
        GymMetrics::DESCRIPTORS,
    ];
    record_from_descriptors(handle.meter.otel(), &sets);
    // A counter and an up-down counter too, which no built-in set has yet.
    let extra = [
        Descriptor {
            field: "requests",
            name: "app.requests",
            kind: nemo_lens::InstrumentKind::Counter,
            value_type: nemo_lens::ValueType::U64,
            unit: "{request}",
            description: "Requests.",
            buckets: None,
            attribute_keys: &["http.route"],
            attributes: &[nemo_lens::AttributeDescriptor {
                key: "http.route",
                values: None,
                default: None,
            }],
            static_attributes: &[],
            semconv: nemo_lens::SemconvGate::Always,
            aggregation: None,
        },
        Descriptor {
            field: "queue_bytes",
            name: "app.queue.size",
            kind: nemo_lens::InstrumentKind::UpDownCounter,
            value_type: nemo_lens::ValueType::I64,
            unit: "By",
            description: "Queued bytes.",
            buckets: None,
            attribute_keys: &[],
            attributes: &[],
            static_attributes: &[],
            semconv: nemo_lens::SemconvGate::Always,
            aggregation: None,
        },
    ];
    record_from_descriptors(handle.meter.otel(), &[&extra]);
    let body = scrape(handle.prometheus_addr().unwrap());

    let mut checked = 0;
    for d in sets.iter().flat_map(|s| s.iter()).chain(&extra) {
        let names = d.prometheus_names();
        let type_line = format!("# TYPE {} {}", names.family, names.metric_type);
        assert!(
            body.lines().any(|l| l == type_line),
            "{}: no `{type_line}` in\n{body}",
            d.name
        );
        for sample in &names.samples {
            let labels = labels_of(&body, sample);
            for label in &names.labels {
                assert!(
                    labels.contains(&format!("{label}=")),
                    "{sample} lacks label {label}: {labels}"
                );
            }
        }
        checked += 1;
    }
    // Every sample family in the scrape is some descriptor's (or target_info).
    let families: std::collections::BTreeSet<&str> = body
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split(' ').next())
        .collect();
    let known: std::collections::BTreeSet<String> = sets
        .iter()
        .flat_map(|s| s.iter())
        .chain(&extra)
        .map(|d| d.prometheus_name())
        .chain(["target_info".to_owned()])
        .collect();
    let unknown: Vec<_> = families.iter().filter(|f| !known.contains(**f)).collect();
    assert!(
        unknown.is_empty(),
        "families no descriptor predicts: {unknown:?}"
    );
    assert!(checked >= 20, "{checked}");
    handle.shutdown().unwrap();
}

/// The endpoint runs on a runtime of its own, so setting it up, scraping it
/// and shutting it down from inside the program's own (current-thread)
/// runtime neither panics nor deadlocks.
#[test]
fn works_inside_a_current_thread_tokio_runtime() {
    let _serial = serial();
    let user_runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    user_runtime.block_on(async {
        let handle = options().setup(&config("0"), 0, 1).unwrap();
        handle
            .meter
            .otel()
            .u64_counter("async.count")
            .build()
            .add(2, &[]);
        let addr = handle.prometheus_addr().unwrap();
        let response = get(
            addr,
            "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
        );
        assert!(response.starts_with("HTTP/1.1 200 OK"), "{response}");
        assert_eq!(sample(&response, "async_count_total", &[]), 2.0);
        handle.shutdown().unwrap();
        drop(handle);
        assert!(TcpListener::bind(addr).is_ok());
    });
}

/// Every kind of instrument with its series in nemo-lens's cells (the
/// meter setup gives) scrapes exactly as the SDK's own instrument of the
/// same kind, unit, description and values: HELP, TYPE, labels (scope and
/// resource ones included), buckets, sum and count.
#[test]
fn owned_series_scrape_exactly_as_the_sdks_instruments() {
    let _serial = serial();
    let handle = options().setup(&config("0"), 0, 1).unwrap();
    let addr = handle.prometheus_addr().unwrap();
    let (meter, otel) = (&handle.meter, handle.meter.otel());
    let bounds = vec![0.1, 1.0, 10.0];
    let attributes = [
        KeyValue::new("model", "llama"),
        KeyValue::new("rank", 3_i64),
    ];
    for (kind, twin) in [("own", false), ("sdk", true)] {
        let name = |what: &str| format!("cells.{kind}.{what}");
        let histogram_of = |what: &str| {
            if twin {
                None
            } else {
                Some(
                    meter
                        .f64_histogram(name(what))
                        .with_unit("s")
                        .with_description("Time taken.")
                        .with_boundaries(bounds.clone())
                        .build(),
                )
            }
        };
        let values = [0.05, 0.5, 5.0, 50.0, 0.5];
        match histogram_of("latency") {
            Some(owned) => {
                assert!(matches!(owned, nemo_lens::owned::Histogram::Owned(_)));
                let bound = owned.bind(&attributes);
                values.iter().for_each(|v| bound.record(*v));
                let counter = meter
                    .u64_counter(name("requests"))
                    .with_unit("{request}")
                    .build();
                counter.add(7, &attributes);
                let gauge = meter
                    .f64_gauge(name("queue"))
                    .with_description("Queue.")
                    .build();
                gauge.record(3.5, &attributes);
                let up_down = meter.i64_up_down_counter(name("active")).build();
                up_down.add(-2, &attributes);
            }
            None => {
                let sdk = otel
                    .f64_histogram(name("latency"))
                    .with_unit("s")
                    .with_description("Time taken.")
                    .with_boundaries(bounds.clone())
                    .build();
                values.iter().for_each(|v| sdk.record(*v, &attributes));
                otel.u64_counter(name("requests"))
                    .with_unit("{request}")
                    .build()
                    .add(7, &attributes);
                otel.f64_gauge(name("queue"))
                    .with_description("Queue.")
                    .build()
                    .record(3.5, &attributes);
                otel.i64_up_down_counter(name("active"))
                    .build()
                    .add(-2, &attributes);
            }
        }
    }
    let body = scrape(addr);
    let of = |kind: &str| -> Vec<String> {
        let prefix = format!("cells_{kind}_");
        let mut lines: Vec<String> = body
            .lines()
            .filter(|l| l.contains(&prefix))
            .map(|l| l.replace(&prefix, "cells_"))
            .collect();
        lines.sort();
        lines
    };
    let (own, sdk) = (of("own"), of("sdk"));
    assert!(own.len() > 12, "{body}");
    assert_eq!(own, sdk, "{body}");
    handle.shutdown().unwrap();
}

/// A key on the resource and on a point (a model named in
/// OTEL_RESOURCE_ATTRIBUTES beside a set's model): one label with the
/// point's value, on owned series (cells) and the SDK's alike, whether the
/// resource labels are `all` or a list naming the key.
#[test]
fn a_point_attribute_keeps_its_value_beside_a_resource_label_of_its_key() {
    let _serial = serial();
    for selection in ["all", "gen_ai.request.model,nemo.gym.server.name"] {
        let mut config = config("0");
        config.prometheus_resource_labels = nemo_lens::telemetry::PrometheusResourceLabels::parse(
            "NEMO_LENS_PROMETHEUS_RESOURCE_LABELS",
            selection,
        )
        .unwrap();
        let handle = options()
            .resource_attribute(KeyValue::new("gen_ai.request.model", "from-resource"))
            .resource_attribute(KeyValue::new("nemo.gym.server.name", "env"))
            .setup(&config, 0, 1)
            .unwrap();
        let model = [KeyValue::new("gen_ai.request.model", "from-point")];
        // Owned by nemo-lens's cells.
        handle
            .meter
            .f64_histogram("app.latency")
            .with_unit("s")
            .build()
            .record(0.25, &model);
        handle.meter.u64_counter("app.calls").build().add(2, &model);
        handle
            .meter
            .u64_gauge("app.memory")
            .build()
            .record(7, &[KeyValue::new("nemo.gym.server.name", "env")]);
        // The SDK's own instrument.
        handle
            .meter
            .otel()
            .f64_gauge("app.sdk")
            .build()
            .record(1.0, &model);
        let body = scrape(handle.prometheus_addr().unwrap());
        for metric in ["app_latency_seconds_count", "app_calls_total", "app_sdk"] {
            let labels = labels_of(&body, metric);
            assert!(
                labels.contains("gen_ai_request_model=\"from-point\""),
                "{selection}: {metric}: {labels}"
            );
            assert_eq!(
                labels.matches("gen_ai_request_model=").count(),
                1,
                "{selection}: {metric}: {labels}"
            );
            assert!(
                labels.contains("nemo_gym_server_name=\"env\""),
                "{selection}: {metric}: {labels}"
            );
        }
        let memory = labels_of(&body, "app_memory");
        assert!(
            memory.contains("nemo_gym_server_name=\"env\"") && !memory.contains("env;env"),
            "{selection}: {memory}"
        );
        // target_info keeps the resource's own value.
        let target = labels_of(&body, "target_info");
        assert!(
            target.contains("gen_ai_request_model=\"from-resource\""),
            "{target}"
        );
        handle.shutdown().unwrap();
    }
}
