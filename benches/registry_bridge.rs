//! One Prometheus scrape of 10,000 bridged series against the bridged
//! crate's own text encoder on the same registry, for the `prometheus`
//! crate and for `prometheus-client`. The bridge's side runs twice: the
//! code the scrape endpoint runs (gather, cardinality limit, families,
//! text) through a test capture, without HTTP or resource labels; and a
//! whole HTTP scrape of nemo-lens's endpoint on loopback, with the default
//! resource labels added to every series (the own encoder's side is then
//! not served, so the ratio includes HTTP). Rounds alternate; medians of
//! each side and their ratio are printed.
//!
//! `cargo bench --bench registry_bridge`

use std::sync::Arc;
use std::time::{Duration, Instant};

use std::io::{Read as _, Write as _};

use nemo_lens::registry_bridge::RegistryBridge;
use nemo_lens::testing::Capture;
use nemo_lens::{EnvLookup, NemoLensConfig, SetupOptions, TelemetryHandle};
use prometheus::{Encoder as _, GaugeVec, HistogramOpts, HistogramVec, IntCounterVec, Opts};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;

const MODELS: usize = 2_000;
const ROUNDS: usize = 21;
const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];
const TOKEN_BUCKETS: [f64; 8] = [1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0];

fn model(i: usize) -> String {
    format!("model-{i:04}")
}

/// Five families of 2,000 models each, as `benches/scrape.rs` records.
fn prometheus_registry() -> prometheus::Registry {
    let registry = prometheus::Registry::new();
    let requests =
        IntCounterVec::new(Opts::new("scrape_requests_total", "Requests"), &["model"]).unwrap();
    let active = GaugeVec::new(Opts::new("scrape_active", "Active"), &["model"]).unwrap();
    let queue = GaugeVec::new(Opts::new("scrape_queue", "Queue"), &["model"]).unwrap();
    let duration = HistogramVec::new(
        HistogramOpts::new("scrape_duration_seconds", "Duration")
            .buckets(DURATION_BUCKETS.to_vec()),
        &["model"],
    )
    .unwrap();
    let tokens = HistogramVec::new(
        HistogramOpts::new("scrape_tokens", "Tokens").buckets(TOKEN_BUCKETS.to_vec()),
        &["model"],
    )
    .unwrap();
    registry.register(Box::new(requests.clone())).unwrap();
    registry.register(Box::new(active.clone())).unwrap();
    registry.register(Box::new(queue.clone())).unwrap();
    registry.register(Box::new(duration.clone())).unwrap();
    registry.register(Box::new(tokens.clone())).unwrap();
    for i in 0..MODELS {
        let model = model(i);
        for value in 0..3_u64 {
            requests.with_label_values(&[&model]).inc();
            active.with_label_values(&[&model]).inc();
            queue.with_label_values(&[&model]).set(value as f64);
            duration
                .with_label_values(&[&model])
                .observe(0.05 * value as f64);
            tokens
                .with_label_values(&[&model])
                .observe(100.0 * value as f64);
        }
    }
    registry
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Model {
    model: String,
}

fn client_registry() -> prometheus_client::registry::Registry {
    let mut registry = prometheus_client::registry::Registry::default();
    let requests = Family::<Model, Counter>::default();
    let active = Family::<Model, Gauge>::default();
    let queue = Family::<Model, Gauge>::default();
    let duration =
        Family::<Model, Histogram>::new_with_constructor(|| Histogram::new(DURATION_BUCKETS));
    let tokens = Family::<Model, Histogram>::new_with_constructor(|| Histogram::new(TOKEN_BUCKETS));
    registry.register("scrape_requests", "Requests", requests.clone());
    registry.register("scrape_active", "Active", active.clone());
    registry.register("scrape_queue", "Queue", queue.clone());
    registry.register("scrape_duration_seconds", "Duration", duration.clone());
    registry.register("scrape_tokens", "Tokens", tokens.clone());
    for i in 0..MODELS {
        let labels = Model { model: model(i) };
        for value in 0..3_u64 {
            requests.get_or_create(&labels).inc();
            active.get_or_create(&labels).inc();
            queue.get_or_create(&labels).set(value as i64);
            duration.get_or_create(&labels).observe(0.05 * value as f64);
            tokens.get_or_create(&labels).observe(100.0 * value as f64);
        }
    }
    registry
}

/// Telemetry serving nemo-lens's endpoint on a free loopback port.
fn serving() -> (TelemetryHandle, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let port_text = port.to_string();
    let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs([
        ("NEMO_LENS_ENABLED", "true"),
        ("NEMO_LENS_EXPORTER", "prometheus"),
        ("OTEL_EXPORTER_PROMETHEUS_PORT", port_text.as_str()),
        ("OTEL_SERVICE_NAME", "bench"),
    ]))
    .expect("config");
    let telemetry = SetupOptions::new()
        .env(EnvLookup::from_pairs::<&str, &str>([]))
        .probe_gpus(false)
        .allow_reinit(true)
        .set_global(false)
        .setup(&config, 0, 1)
        .expect("setup");
    (telemetry, port)
}

/// The length of one HTTP/1.0 scrape of `port`'s `/metrics`.
fn http_scrape(port: u16) -> usize {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .write_all(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .expect("request");
    let mut body = Vec::new();
    stream.read_to_end(&mut body).expect("response");
    body.len()
}

/// The length of what the `prometheus` crate's own encoder writes.
fn prometheus_encoded(registry: &prometheus::Registry) -> usize {
    let mut out = Vec::new();
    prometheus::TextEncoder::new()
        .encode(&registry.gather(), &mut out)
        .unwrap();
    out.len()
}

/// The length of what `prometheus-client`'s own Prometheus encoder writes.
fn client_encoded(registry: &prometheus_client::registry::Registry) -> usize {
    let mut out = String::new();
    prometheus_client::encoding::prometheus_text::encode(&mut out, registry).unwrap();
    out.len()
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Times `own` and `bridged` in alternating rounds; prints both medians
/// and their ratio.
fn compare(label: &str, own: impl Fn() -> usize, bridged: impl Fn() -> usize) {
    let (own_len, bridged_len) = (own(), bridged());
    let mut own_times = Vec::with_capacity(ROUNDS);
    let mut bridged_times = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let begun = Instant::now();
        std::hint::black_box(own());
        own_times.push(begun.elapsed());
        let begun = Instant::now();
        std::hint::black_box(bridged());
        bridged_times.push(begun.elapsed());
    }
    let (own_median, bridged_median) = (median(own_times), median(bridged_times));
    println!(
        "{label:<24} own encoder {:>8.2} ms ({own_len} bytes)   through nemo-lens {:>8.2} ms \
         ({bridged_len} bytes)   ratio {:.2}x",
        own_median.as_secs_f64() * 1e3,
        bridged_median.as_secs_f64() * 1e3,
        bridged_median.as_secs_f64() / own_median.as_secs_f64(),
    );
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    println!("one scrape of 10,000 series, median of {ROUNDS} alternating rounds");

    let registry = prometheus_registry();
    let capture = Capture::new();
    RegistryBridge::new()
        .prometheus(registry.clone())
        .install_on(capture.meter())
        .unwrap();
    compare(
        "prometheus 0.14",
        || prometheus_encoded(&registry),
        || capture.exposition().len(),
    );

    let (telemetry, port) = serving();
    RegistryBridge::new()
        .prometheus(registry.clone())
        .install(&telemetry)
        .unwrap();
    compare(
        "prometheus, HTTP",
        || prometheus_encoded(&registry),
        || http_scrape(port),
    );
    telemetry.shutdown().unwrap();

    let registry = Arc::new(client_registry());
    let capture = Capture::new();
    RegistryBridge::new()
        .prometheus_client(Arc::clone(&registry))
        .install_on(capture.meter())
        .unwrap();
    compare(
        "prometheus-client",
        || client_encoded(&registry),
        || capture.exposition().len(),
    );
    let (telemetry, port) = serving();
    RegistryBridge::new()
        .prometheus_client(Arc::clone(&registry))
        .install(&telemetry)
        .unwrap();
    compare(
        "prometheus-client, HTTP",
        || client_encoded(&registry),
        || http_scrape(port),
    );
    telemetry.shutdown().unwrap();
}
