//! Real-server test of the registry bridge: Debian's Prometheus (native
//! histograms on, so it asks for the protobuf exposition) scrapes the
//! example `prometheus_registry`, a `prometheus` crate registry shaped like
//! Dynamo's frontend, through nemo-lens's endpoint. Dynamo's dashboard
//! queries read it under Dynamo's names, with nemo-lens's resource labels.
//!
//! Ignored by default because it needs `prometheus` and the built example;
//! run it with `scripts/e2e.sh`.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::servers::*;

#[test]
#[ignore = "needs prometheus and the prometheus_registry example; run scripts/e2e.sh"]
fn prometheus_reads_a_bridged_dynamo_registry() {
    let example = std::env::var("E2E_PROMETHEUS_REGISTRY_BIN")
        .expect("E2E_PROMETHEUS_REGISTRY_BIN: the built prometheus_registry example");
    let metrics_port = free_port();
    let _service = Reaped(
        Command::new(example)
            .args(["--seconds", "120"])
            .env("OTEL_EXPORTER_PROMETHEUS_HOST", "127.0.0.1")
            .env("OTEL_EXPORTER_PROMETHEUS_PORT", metrics_port.to_string())
            .env("OTEL_SERVICE_NAME", "dynamo-frontend-e2e")
            .env("NEMO_LENS_RUN_ID", "registry-e2e")
            .stdout(Stdio::null())
            .spawn()
            .expect("start the example"),
    );

    let (_prometheus, prom_port) = prometheus_scraping("frontend", metrics_port);
    let timeout = Duration::from_secs(40);

    // Dynamo's names and labels, with nemo-lens's resource labels.
    let requests = wait_for(
        prom_port,
        "dynamo_frontend_requests_total{model=\"llama-3-8b\",endpoint=\"chat_completions\",\
         request_type=\"stream\",status=\"success\",nemo_run_id=\"registry-e2e\",\
         service_name=\"dynamo-frontend-e2e\"} > 0",
        timeout,
    );
    assert_eq!(requests.len(), 1, "{requests:?}");
    wait_for(
        prom_port,
        "dynamo_frontend_build_info{version=\"0.1.0\"} == 1",
        timeout,
    );
    wait_for(
        prom_port,
        "target_info{service_name=\"dynamo-frontend-e2e\"} == 1",
        timeout,
    );
    // Counters rate, gauges read, classic histograms answer quantiles.
    wait_for(
        prom_port,
        "sum(rate(dynamo_frontend_output_tokens_total[10s])) > 0",
        timeout,
    );
    let inflight = value(
        &wait_for(
            prom_port,
            "max(dynamo_frontend_inflight_requests{model=\"qwen-2.5-7b\"})",
            timeout,
        )[0],
    );
    assert!((0.0..=4.0).contains(&inflight), "inflight {inflight}");
    let p50 = value(
        &wait_for(
            prom_port,
            "histogram_quantile(0.5, sum by (le) \
             (dynamo_frontend_time_to_first_token_seconds_bucket{model=\"llama-3-8b\"}))",
            timeout,
        )[0],
    );
    assert!((0.001..=0.1).contains(&p50), "TTFT p50 {p50}");
    // The buckets add up to the count, as the registry holds them.
    wait_for(
        prom_port,
        "sum(dynamo_frontend_request_duration_seconds_bucket{le=\"+Inf\"}) \
         == sum(dynamo_frontend_request_duration_seconds_count)",
        timeout,
    );
}
