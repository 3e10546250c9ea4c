//! `examples/axum_metrics.rs`: its router serves `/metrics` with the
//! exposition content type, the recorded values and the resource labels.

#[allow(dead_code)] // the example's `main` is not run here
#[path = "../../examples/axum_metrics.rs"]
mod example;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use nemo_lens::opentelemetry::metrics::MeterProvider as _;
use nemo_lens::opentelemetry::KeyValue;
use nemo_lens::opentelemetry_sdk::metrics::SdkMeterProvider;
use nemo_lens::opentelemetry_sdk::Resource;
use nemo_lens::prometheus::{PrometheusRenderer, CONTENT_TYPE};
use nemo_lens::{Meter, NemoLensConfig, PrometheusResourceLabels, SetupOptions};

fn get(addr: std::net::SocketAddr, path: &str) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}

#[test]
fn the_example_router_serves_metrics() {
    let (reader, renderer) = PrometheusRenderer::new(&PrometheusResourceLabels::default()).unwrap();
    let provider = SdkMeterProvider::builder()
        .with_resource(
            Resource::builder_empty()
                .with_attributes([
                    KeyValue::new("service.name", "axum-app"),
                    KeyValue::new("nemo.run.id", "run-axum"),
                    KeyValue::new("host.name", "not-a-label"),
                ])
                .build(),
        )
        .with_reader(reader)
        .build();
    let meter = Meter::from(provider.meter("nemo.lens"));

    let (addr, stop, server) = serve(example::router(example::AppState { meter, renderer }));

    for _ in 0..3 {
        let response = get(addr, "/generate");
        assert!(response.contains(" 200 OK"), "{response}");
    }
    let response = get(addr, "/metrics");
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    assert!(head.contains(" 200 OK"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains(&format!("content-type: {CONTENT_TYPE}")),
        "{head}"
    );
    let count = body
        .lines()
        .find(|l| l.starts_with("gen_ai_server_request_duration_seconds_count{"))
        .unwrap_or_else(|| panic!("no request count in\n{body}"));
    assert!(count.contains("service_name=\"axum-app\""), "{count}");
    assert!(count.contains("nemo_run_id=\"run-axum\""), "{count}");
    assert!(!count.contains("host_name"), "{count}");
    assert!(
        count.contains("gen_ai_request_model=\"llama-3-8b\""),
        "{count}"
    );
    assert!(count.ends_with(" 3"), "three /generate calls: {count}");
    assert!(body.contains("target_info{"), "{body}");
    assert!(get(addr, "/nothing").contains(" 404 "));
    stop.send(()).unwrap();
    let served = server.join().unwrap();
    assert!(matches!(served, Ok(Ok(()))), "{served:?}");
}

#[test]
fn metrics_says_telemetry_is_off_when_it_is() {
    // NEMO_LENS_ENABLED unset: setup installs no reader.
    let config = NemoLensConfig::from_lookup(nemo_lens::telemetry::EnvLookup::from_pairs(
        std::iter::empty::<(&str, &str)>(),
    ))
    .unwrap();
    let (reader, renderer) = PrometheusRenderer::new(&config.prometheus_resource_labels).unwrap();
    let telemetry = SetupOptions::new()
        .metric_reader(reader)
        .setup(&config, 0, 1)
        .unwrap();
    let meter = telemetry.meter.clone();
    let (addr, stop, server) = serve(example::router(example::AppState { meter, renderer }));
    assert!(get(addr, "/generate").contains(" 200 OK"));
    let response = get(addr, "/metrics");
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    assert!(head.contains(" 503 "), "{head}");
    assert!(body.starts_with("telemetry is off: "), "{body}");
    assert!(body.contains("NEMO_LENS_ENABLED"), "{body}");
    stop.send(()).unwrap();
    let served = server.join().unwrap();
    assert!(matches!(served, Ok(Ok(()))), "{served:?}");
    telemetry.shutdown().unwrap();
}

#[test]
fn a_shut_down_renderer_says_so() {
    let (reader, renderer) = PrometheusRenderer::new(&PrometheusResourceLabels::default()).unwrap();
    let provider = SdkMeterProvider::builder().with_reader(reader).build();
    assert!(renderer.render().is_ok());
    provider.shutdown().unwrap();
    let error = renderer.render().unwrap_err();
    assert!(error.is_telemetry_off());
    assert_eq!(
        error.to_string(),
        "telemetry was shut down: nothing is recorded to serve"
    );
}

type Server = std::thread::JoinHandle<Result<std::io::Result<()>, tokio::time::error::Elapsed>>;

/// Serves `app` on 127.0.0.1 until the sender is used (or 60 s pass).
fn serve(
    app: axum::Router,
) -> (
    std::net::SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    Server,
) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = std::thread::spawn(move || {
        runtime.block_on(async {
            let serve = axum::serve(listener, app).with_graceful_shutdown(async {
                let _ = stopped.await;
            });
            // Bounded even if the test fails before stopping it.
            tokio::time::timeout(Duration::from_secs(60), serve).await
        })
    });

    (addr, stop, server)
}
