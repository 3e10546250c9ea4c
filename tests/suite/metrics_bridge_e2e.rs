//! Real-server test of the metrics bridge: Debian's Prometheus with native
//! histograms on scrapes nemo-lens's own endpoint, where a service's
//! `metrics` macros record: the unmatched histogram arrives as a native
//! histogram (`histogram_count` reads only those), the matched one as
//! classic buckets under its name as written, counters and gauges under
//! theirs (`tgi_request_success`, `smg:requests:by_model`).
//!
//! Ignored by default because it needs `prometheus`; run it with
//! `scripts/e2e.sh`.

use std::time::Duration;

use metrics::{counter, gauge, histogram};
use nemo_lens::metrics_bridge::{Matcher, MetricsBridge};
use nemo_lens::{EnvLookup, NemoLensConfig, SetupOptions};

use crate::support::servers::*;

const SAMPLES: usize = 500;

#[test]
#[ignore = "needs prometheus; run scripts/e2e.sh"]
fn prometheus_reads_bridged_series_and_native_histograms() {
    // Sets up telemetry without `allow_reinit`: first in its process.
    crate::support::own_process!(prometheus_reads_bridged_series_and_native_histograms);
    let metrics_port = free_port();
    let port_text = metrics_port.to_string();
    let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs([
        ("NEMO_LENS_ENABLED", "true"),
        ("NEMO_LENS_EXPORTER", "prometheus"),
        ("OTEL_EXPORTER_PROMETHEUS_HOST", "127.0.0.1"),
        ("OTEL_EXPORTER_PROMETHEUS_PORT", port_text.as_str()),
        ("OTEL_SERVICE_NAME", "bridge-e2e"),
        ("NEMO_LENS_PROMETHEUS_RESOURCE_LABELS", "none"),
    ]))
    .unwrap();
    let telemetry = SetupOptions::new()
        .env(EnvLookup::from_pairs::<&str, &str>([]))
        .probe_gpus(false)
        .setup(&config, 0, 1)
        .unwrap();
    MetricsBridge::new()
        .set_buckets_for_metric(
            Matcher::Suffix("duration_seconds".into()),
            &[0.01, 0.1, 1.0, 10.0],
        )
        .unwrap()
        .install(&telemetry)
        .unwrap();
    for i in 0..SAMPLES {
        let value = 0.001 * 1.01f64.powi(i as i32);
        histogram!("smg_worker_retry_backoff_seconds", "attempt" => "2").record(value);
        histogram!("smg_http_request_duration_seconds", "path" => "/v1/chat").record(value);
    }
    counter!("tgi_request_success").increment(SAMPLES as u64);
    counter!("smg:requests:by_model", "model" => "llama").increment(3);
    gauge!("tgi_queue_size").set(4.0);

    let (_prometheus, prom_port) = prometheus_scraping("bridge", metrics_port);
    let timeout = Duration::from_secs(30);
    let count = value(
        &wait_for(
            prom_port,
            "histogram_count(sum(smg_worker_retry_backoff_seconds))",
            timeout,
        )[0],
    );
    assert_eq!(count, SAMPLES as f64, "the native histogram's count");
    wait_for(
        prom_port,
        &format!(
            "sum(smg_http_request_duration_seconds_bucket{{le=\"+Inf\",path=\"/v1/chat\"}}) == {SAMPLES}"
        ),
        timeout,
    );
    let p50 = value(
        &wait_for(
            prom_port,
            "histogram_quantile(0.5, sum by (le) (smg_http_request_duration_seconds_bucket))",
            timeout,
        )[0],
    );
    assert!((0.01..=1.0).contains(&p50), "p50 {p50}");
    wait_for(
        prom_port,
        &format!("tgi_request_success == {SAMPLES}"),
        timeout,
    );
    wait_for(
        prom_port,
        "smg:requests:by_model{model=\"llama\"} == 3",
        timeout,
    );
    wait_for(prom_port, "tgi_queue_size == 4", timeout);
    telemetry.shutdown().unwrap();
}
