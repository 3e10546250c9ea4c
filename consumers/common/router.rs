//! What a router on the `metrics` facade records, and what its scrape
//! must then show: shared by the consumers of both facade versions.

use nemo_lens::prometheus::PrometheusRenderer;
use nemo_lens::telemetry::PrometheusResourceLabels;
use nemo_lens::{EnvLookup, NemoLensConfig, SetupOptions, TelemetryHandle};

/// Telemetry read by a renderer of its own, with nothing from the process
/// environment.
pub fn telemetry() -> (TelemetryHandle, PrometheusRenderer) {
    let config =
        NemoLensConfig::from_lookup(EnvLookup::from_pairs([("NEMO_LENS_ENABLED", "true")]))
            .unwrap();
    let (reader, renderer) = PrometheusRenderer::new(&PrometheusResourceLabels::None).unwrap();
    let telemetry = SetupOptions::new()
        .env(EnvLookup::from_pairs([("X", "1")]))
        .probe_gpus(false)
        // The everything consumer sets up one telemetry per program it runs.
        .allow_reinit(true)
        .metric_reader(reader)
        .setup(&config, 0, 1)
        .unwrap();
    (telemetry, renderer)
}

/// What the router records, through the `metrics` crate named `$metrics`
/// (0.24, or 0.23 under another name), on the bridge `$recorder`.
#[macro_export]
macro_rules! record_router {
    ($metrics:ident, $recorder:expr) => {
        $metrics::with_local_recorder($recorder, || {
            for seconds in [0.3, 0.7] {
                $metrics::counter!("router_requests_total", "worker" => "w1").increment(1);
                $metrics::histogram!("router_request_duration_seconds").record(seconds);
            }
            $metrics::gauge!("router_workers_healthy").set(4.0);
        })
    };
}

/// The bridge, with the router's buckets, on `telemetry`.
pub fn bridge(telemetry: &TelemetryHandle) -> nemo_lens::metrics_bridge::BridgeRecorder {
    use nemo_lens::metrics_bridge::{Matcher, MetricsBridge};
    MetricsBridge::new()
        .set_buckets_for_metric(Matcher::Suffix("duration_seconds".into()), &[0.5, 1.0])
        .unwrap()
        .build(telemetry)
}

/// Checks the scrape after two requests of 0.3 s and 0.7 s to worker w1,
/// four healthy workers.
pub fn check(renderer: &PrometheusRenderer, facade: &str) {
    let text = String::from_utf8(renderer.render().unwrap().body).unwrap();
    for line in [
        "# TYPE router_requests_total counter\n",
        "router_requests_total{worker=\"w1\"} 2\n",
        "router_workers_healthy 4\n",
        "router_request_duration_seconds_bucket{le=\"0.5\"} 1\n",
        "router_request_duration_seconds_count 2\n",
    ] {
        assert!(text.contains(line), "{facade}: no {line:?} in\n{text}");
    }
    println!("{facade}: the bridge exports what the router recorded");
}
