//! The Prometheus exporter through `setup_telemetry`: names, labels and
//! values a scraper sees, and the endpoint's robustness.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use lens_core::telemetry::{EnvLookup, NemoLensConfig, SetupError, SetupOptions};
use opentelemetry::KeyValue;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
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
    assert!(
        err.to_string().contains(&format!("127.0.0.1:{port}")),
        "{err}"
    );
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
