//! Goodput against aiperf, its reference: the example server makes every
//! fourth request slow, `NEMO_LENS_SLO` holds the very string passed to
//! aiperf's `--goodput`, and the server's count of requests that met every
//! objective equals aiperf's `good_request_count`, its count of judged
//! requests aiperf's request count.
//!
//! Needs the built server, aiperf and a tokenizer directory; run by
//! `scripts/e2e.sh` (see `aiperf_e2e`).

use std::process::Command;

use crate::support::aiperf::*;
use crate::support::servers::{free_port, Reaped};

const REQUESTS: u64 = 200;
/// Below `MAX_RUNNING_HERE`: no request waits in the queue, so a request's
/// time to first token is the server's delay and lies far from the targets
/// on both sides.
const CONCURRENCY: u64 = 8;
const MAX_RUNNING_HERE: u64 = 16;
const OUTPUT_TOKENS: u64 = 24;

/// The example server with `flags` and `NEMO_LENS_SLO=slo`.
fn start_judging_server(port: u16, slo: &str, flags: &[&str]) -> Reaped {
    let mut command = Command::new(env_path("E2E_OPENAI_SERVER_BIN"));
    command
        .args(["--port", &port.to_string(), "--model", MODEL])
        .args(["--max-running", &MAX_RUNNING_HERE.to_string()])
        .args(flags)
        .env("NEMO_LENS_SLO", slo);
    start_serving(command, port)
}

/// The judged requests on the server's `/metrics`, by result.
fn judged(exposition: &str, result: Option<&str>) -> f64 {
    total(
        &samples(exposition),
        "nemo_inference_requests_judged_total",
        |labels| {
            result.is_none_or(|r| {
                labels.get("nemo_inference_slo_result").map(String::as_str) == Some(r)
            })
        },
    )
}

/// The metering proxy in front of the example server (started with
/// `flags`, judging nothing), `NEMO_LENS_SLO=slo` on the proxy.
fn start_judging_proxy(port: u16, upstream: u16, slo: &str, flags: &[&str]) -> [Reaped; 2] {
    let mut server = Command::new(env_path("E2E_OPENAI_SERVER_BIN"));
    server
        .args(["--port", &upstream.to_string(), "--model", MODEL])
        .args(["--max-running", &MAX_RUNNING_HERE.to_string()])
        .args(flags);
    let server = start_serving(server, upstream);
    let mut proxy = Command::new(env_path("E2E_OPENAI_PROXY_BIN"));
    proxy
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .args(["--upstream", &format!("http://127.0.0.1:{upstream}")])
        .args(["--model", MODEL])
        .env("NEMO_LENS_SLO", slo);
    [server, start_serving(proxy, port)]
}

/// aiperf streams 200 requests with `--goodput slo` at the server started
/// with `flags` and `NEMO_LENS_SLO=slo`: the server judged as many requests
/// as aiperf counted, its good count is aiperf's `good_request_count`, and
/// the slow quarter missed `missed`.
fn run(label: &str, slo: &str, flags: &[&str], missed: &str) {
    let port = free_port();
    let _server = start_judging_server(port, slo, flags);
    agree(label, port, slo, missed);
}

/// aiperf's run at `port` with `--goodput slo` against what `port` counted.
fn agree(label: &str, port: u16, slo: &str, missed: &str) {
    let artifacts = artifacts(label);
    let profile = Profile {
        endpoint_type: "chat",
        streaming: true,
        requests: REQUESTS,
        concurrency: CONCURRENCY,
        output_tokens: Some(OUTPUT_TOKENS),
        cancel: None,
        goodput: Some(slo),
    };
    run_aiperf(port, &artifacts, &profile);
    let summary = read_json(&artifacts.join("profile_export_aiperf.json"));
    let requests = stat(&summary, "request_count", "avg");
    let good = stat(&summary, "good_request_count", "avg");
    let exposition = scrape_when_idle(port);
    let (server_judged, server_good) =
        (judged(&exposition, None), judged(&exposition, Some("met")));
    let server_missed = judged(&exposition, Some(missed));
    println!("| {label} | `{slo}` | {requests} | {good} | {server_judged} | {server_good} | {server_missed} missed {missed} |");
    assert_eq!(requests, REQUESTS as f64, "aiperf's requests all succeeded");
    assert_eq!(
        server_judged, requests,
        "the server judged every request aiperf counted"
    );
    assert_eq!(
        server_good, good,
        "the server's good count is aiperf's good_request_count"
    );
    assert_eq!(
        server_good + server_missed,
        server_judged,
        "every other request missed {missed}"
    );
    // Every fourth request is slow: 50 of 200.
    assert_eq!(server_missed, (REQUESTS / 4) as f64);
    let _ = std::fs::remove_dir_all(&artifacts);
}

#[test]
#[ignore = "needs aiperf and the built example server; run scripts/e2e.sh"]
fn the_server_counts_aiperf_s_good_requests_on_time_to_first_token() {
    run(
        "goodput-ttft",
        "time_to_first_token:300 request_latency:3000",
        &[
            "--ttft-ms",
            "20",
            "--itl-ms",
            &ITL_MS.to_string(),
            "--slow-every",
            "4",
            "--slow-ttft-ms",
            "700",
        ],
        "ttft",
    );
}

#[test]
#[ignore = "needs aiperf and the built example server; run scripts/e2e.sh"]
fn the_server_counts_aiperf_s_good_requests_on_inter_token_latency() {
    run(
        "goodput-itl",
        "inter_token_latency:20 request_latency:3000",
        &[
            "--ttft-ms",
            "20",
            "--itl-ms",
            "8",
            "--slow-every",
            "4",
            "--slow-itl-ms",
            "40",
        ],
        "itl",
    );
}

/// The metering proxy judges what it forwards: the same agreement, counted
/// on the proxy's `/metrics` in front of a server that judges nothing.
#[test]
#[ignore = "needs aiperf, the built example server and proxy; run scripts/e2e.sh"]
fn the_proxy_counts_aiperf_s_good_requests() {
    let (port, upstream) = (free_port(), free_port());
    let slo = "time_to_first_token:300 request_latency:3000";
    let flags = [
        "--ttft-ms",
        "20",
        "--itl-ms",
        "8",
        "--slow-every",
        "4",
        "--slow-ttft-ms",
        "700",
    ];
    let _stack = start_judging_proxy(port, upstream, slo, &flags);
    agree("goodput-proxy", port, slo, "ttft");
}
