//! A Dynamo-shaped frontend keeps its `prometheus` registry and exports it
//! through nemo-lens: every series the crate's own encoder writes is on
//! nemo-lens's exposition, with the same value.

use nemo_lens::registry_bridge::RegistryBridge;
use nemo_lens::testing::Capture;
use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, IntGauge, Opts, TextEncoder,
};

pub fn main() {
    let registry = prometheus::Registry::new();
    let requests = IntCounterVec::new(
        Opts::new(
            "dynamo_frontend_requests_total",
            "Total LLM requests processed",
        ),
        &["model", "status"],
    )
    .unwrap();
    let inflight = IntGauge::new("dynamo_frontend_inflight_requests", "Inflight requests").unwrap();
    let ttft = HistogramVec::new(
        HistogramOpts::new("dynamo_frontend_time_to_first_token_seconds", "TTFT")
            .buckets(vec![0.05, 0.1, 0.5, 1.0]),
        &["model"],
    )
    .unwrap();
    registry.register(Box::new(requests.clone())).unwrap();
    registry.register(Box::new(inflight.clone())).unwrap();
    registry.register(Box::new(ttft.clone())).unwrap();
    requests.with_label_values(&["llama", "success"]).inc_by(7);
    requests.with_label_values(&["llama", "error"]).inc();
    inflight.set(3);
    for seconds in [0.04, 0.2, 0.7] {
        ttft.with_label_values(&["llama"]).observe(seconds);
    }

    let capture = Capture::new();
    RegistryBridge::new()
        .prometheus(registry.clone())
        .install_on(capture.meter())
        .expect("the bridge installs on a capture");
    let ours = capture.exposition();

    let mut theirs = Vec::new();
    TextEncoder::new()
        .encode(&registry.gather(), &mut theirs)
        .unwrap();
    let theirs = String::from_utf8(theirs).unwrap();
    let mut checked = 0;
    for line in theirs.lines().filter(|l| !l.starts_with('#')) {
        assert!(ours.contains(line), "{line} missing from\n{ours}");
        checked += 1;
    }
    assert_eq!(checked, 10, "{theirs}");
    assert!(ours.contains("dynamo_frontend_requests_total{model=\"llama\",status=\"success\"} 7\n"));
    assert!(ours.contains(
        "dynamo_frontend_time_to_first_token_seconds_bucket{model=\"llama\",le=\"0.5\"} 2\n"
    ));
    println!("prometheus-frontend: {checked} series as the crate writes them");
}
