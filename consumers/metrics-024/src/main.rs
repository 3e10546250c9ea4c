//! A router on `metrics` 0.24 exporting through the metrics bridge.

#[path = "../../common/router.rs"]
pub mod router;

use nemo_lens::metrics_bridge::{Matcher, MetricsBridge};

pub fn main() {
    let (telemetry, renderer) = router::telemetry();
    let recorder = MetricsBridge::new()
        .set_buckets_for_metric(Matcher::Suffix("duration_seconds".into()), &[0.5, 1.0])
        .unwrap()
        .build(&telemetry);
    metrics::with_local_recorder(&recorder, || {
        for seconds in [0.3, 0.7] {
            metrics::counter!("router_requests_total", "worker" => "w1").increment(1);
            metrics::histogram!("router_request_duration_seconds").record(seconds);
        }
        metrics::gauge!("router_workers_healthy").set(4.0);
    });
    router::check(&renderer, "metrics 0.24");
    telemetry.shutdown().unwrap();
}
