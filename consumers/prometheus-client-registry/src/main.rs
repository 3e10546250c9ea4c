//! A service's `prometheus-client` registry exported through nemo-lens:
//! every sample its own encoder writes is on nemo-lens's exposition.

use std::sync::Arc;

use nemo_lens::registry_bridge::RegistryBridge;
use nemo_lens::testing::Capture;
use prometheus_client::encoding::prometheus_text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

pub fn main() {
    let mut registry = Registry::default();
    let requests = Family::<Vec<(String, String)>, Counter>::default();
    registry.register("router_requests", "Requests routed", requests.clone());
    let workers = Gauge::<i64>::default();
    registry.register("router_workers", "Healthy workers", workers.clone());
    let latency = Histogram::new([0.1, 0.5, 1.0]);
    registry.register("router_latency_seconds", "Latency", latency.clone());
    requests
        .get_or_create(&vec![("worker".to_owned(), "w1".to_owned())])
        .inc_by(5);
    workers.set(4);
    latency.observe(0.3);
    latency.observe(0.8);
    let registry = Arc::new(registry);

    let capture = Capture::new();
    RegistryBridge::new()
        .prometheus_client(Arc::clone(&registry))
        .install_on(capture.meter())
        .expect("the bridge installs on a capture");
    let ours = capture.exposition();

    let mut theirs = String::new();
    encode(&mut theirs, &registry).unwrap();
    // The crate's Prometheus text (0.0.4) encoder, which a `/metrics` of
    // its own would serve.
    let mut checked = 0;
    for line in theirs.lines().filter(|l| !l.starts_with('#')) {
        assert!(ours.contains(line), "{line} missing from\n{ours}");
        checked += 1;
    }
    assert!(checked >= 7, "{theirs}");
    assert!(
        ours.contains("router_requests_total{worker=\"w1\"} 5\n"),
        "{ours}"
    );
    println!("prometheus-client-registry: {checked} samples as the crate writes them");
}
