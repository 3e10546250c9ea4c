//! NVIDIA's aiperf, a real benchmark client, drives the example OpenAI
//! server (streaming, more concurrent requests than it runs at once, a
//! quarter of them cancelled mid-stream), and what aiperf measured is held
//! against what the server exported on `/metrics`.
//!
//! Needs the built server, aiperf and a tokenizer directory; run by
//! `scripts/e2e.sh`, which installs aiperf from PyPI into a venv:
//!
//! ```text
//! E2E_OPENAI_SERVER_BIN=... E2E_AIPERF_BIN=... E2E_AIPERF_TOKENIZER=... \
//!     cargo test --test aiperf_e2e -- --ignored --nocapture
//! ```

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

mod support;

use support::servers::*;

const MODEL: &str = "tiny-model";
const TTFT_MS: u64 = 40;
const ITL_MS: u64 = 8;
const MAX_RUNNING: u64 = 4;
const CONCURRENCY: u64 = 10;
const REQUESTS: u64 = 48;
const OUTPUT_TOKENS: u64 = 24;
/// Percent of requests aiperf cancels, and after how long: every stream
/// takes at least 40 + 23 × 8 = 224 ms, so each one chosen is cut short.
const CANCEL_PERCENT: u64 = 25;
const CANCEL_AFTER_S: f64 = 0.15;

/// How close the server's timings must be to aiperf's: the client's clock
/// adds the connection, the request's transfer and the chunks' way back,
/// and aiperf's Python processes share two cores with the server.
const TTFT_TOLERANCE_MS: f64 = 15.0;
const TTFT_TOLERANCE: f64 = 0.15;
const TPOT_TOLERANCE_MS: f64 = 1.5;
const TPOT_TOLERANCE: f64 = 0.15;

/// A path the test is given. Not named `AIPERF_*`: aiperf reads every
/// such variable as one of its own settings.
fn env_path(name: &str) -> PathBuf {
    PathBuf::from(
        std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set; run scripts/e2e.sh")),
    )
}

/// The server, started and answering.
fn start_server(port: u16) -> Reaped {
    let mut server = Reaped(
        Command::new(env_path("E2E_OPENAI_SERVER_BIN"))
            .args(["--port", &port.to_string(), "--model", MODEL])
            .args([
                "--ttft-ms",
                &TTFT_MS.to_string(),
                "--itl-ms",
                &ITL_MS.to_string(),
            ])
            .args(["--max-running", &MAX_RUNNING.to_string()])
            .env("NEMO_LENS_RUN_ID", "aiperf-e2e")
            .env_remove("NEMO_LENS_EXPORTER")
            .env_remove("OTEL_SEMCONV_STABILITY_OPT_IN")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the server"),
    );
    let stdout = server.0.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let first = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the server's first line");
    assert!(first.contains(&format!("127.0.0.1:{port}")), "{first}");
    server
}

/// The body of `GET /metrics`.
fn scrape(port: u16) -> String {
    http_get(port, "/metrics").expect("a response from /metrics")
}

/// One sample of a text exposition: its name, labels and value.
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

fn samples(exposition: &str) -> Vec<Sample> {
    exposition
        .lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .filter_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            let (name, labels) = match series.split_once('{') {
                Some((name, rest)) => (name, rest.trim_end_matches('}')),
                None => (series, ""),
            };
            // Label values here hold no commas or quotes.
            let labels = labels
                .split(',')
                .filter_map(|pair| {
                    let (k, v) = pair.split_once('=')?;
                    Some((k.to_owned(), v.trim_matches('"').to_owned()))
                })
                .collect();
            Some(Sample {
                name: name.to_owned(),
                labels,
                value: value.parse().ok()?,
            })
        })
        .collect()
}

/// The sum of `name` over the samples whose labels satisfy `keep`.
fn total(samples: &[Sample], name: &str, keep: impl Fn(&BTreeMap<String, String>) -> bool) -> f64 {
    samples
        .iter()
        .filter(|s| s.name == name && keep(&s.labels))
        .map(|s| s.value)
        .sum()
}

fn error_type(labels: &BTreeMap<String, String>) -> Option<&str> {
    labels.get("error_type").map(String::as_str)
}

fn run_aiperf(port: u16, artifacts: &Path) {
    let scratch = artifacts.join("tmp");
    std::fs::create_dir_all(&scratch).unwrap();
    let mut aiperf = Reaped(
        Command::new(env_path("E2E_AIPERF_BIN"))
            .args([
                "profile",
                "--model",
                MODEL,
                "--url",
                &format!("http://127.0.0.1:{port}"),
            ])
            .args(["--endpoint-type", "chat", "--streaming"])
            .args([
                "--request-count",
                &REQUESTS.to_string(),
                "--concurrency",
                &CONCURRENCY.to_string(),
            ])
            .args([
                "--synthetic-input-tokens-mean",
                "32",
                "--synthetic-input-tokens-stddev",
                "0",
            ])
            .args([
                "--output-tokens-mean",
                &OUTPUT_TOKENS.to_string(),
                "--output-tokens-stddev",
                "0",
            ])
            .args(["--request-cancellation-rate", &CANCEL_PERCENT.to_string()])
            .args(["--request-cancellation-delay", &CANCEL_AFTER_S.to_string()])
            .arg("--tokenizer")
            .arg(env_path("E2E_AIPERF_TOKENIZER"))
            .args([
                "--random-seed",
                "42",
                "--ui-type",
                "none",
                "--no-gpu-telemetry",
            ])
            .arg("--artifact-dir")
            .arg(artifacts)
            // A tokenizer directory loads offline only without these.
            .env_remove("HF_HUB_OFFLINE")
            .env_remove("TRANSFORMERS_OFFLINE")
            .env("AIPERF_SERVER_METRICS_COLLECTION_FLUSH_PERIOD", "0")
            .env("AIPERF_DATASET_MMAP_BASE_PATH", &scratch)
            .stdout(std::fs::File::create(artifacts.join("aiperf.out")).unwrap())
            .stderr(Stdio::from(
                std::fs::File::create(artifacts.join("aiperf.err")).unwrap(),
            ))
            .spawn()
            .expect("start aiperf"),
    );
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        if let Some(status) = aiperf.0.try_wait().unwrap() {
            let output = ["aiperf.out", "aiperf.err"]
                .map(|f| std::fs::read_to_string(artifacts.join(f)).unwrap_or_default())
                .join("\n");
            assert!(status.success(), "aiperf failed ({status}):\n{output}");
            return;
        }
        assert!(
            Instant::now() < deadline,
            "aiperf did not finish within 300 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// `metric.stat` of aiperf's summary; a metric aiperf could not compute is
/// absent from it, which fails here rather than comparing against nothing.
fn stat(summary: &Value, metric: &str, stat: &str) -> f64 {
    summary[metric][stat]
        .as_f64()
        .unwrap_or_else(|| panic!("aiperf's export has no {metric}.{stat}"))
}

fn within(server: f64, client: f64, absolute: f64, relative: f64) -> bool {
    (server - client).abs() <= absolute.max(relative * client)
}

#[test]
#[ignore = "needs aiperf and the built example server; run scripts/e2e.sh"]
fn aiperf_and_the_server_agree() {
    let port = free_port();
    let _server = start_server(port);
    let artifacts = std::env::temp_dir().join(format!("nemo-lens-aiperf-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&artifacts);
    run_aiperf(port, &artifacts);

    let summary = read_json(&artifacts.join("profile_export_aiperf.json"));
    let succeeded = stat(&summary, "request_count", "avg");
    let cancelled = summary["error_request_count"]["avg"]
        .as_f64()
        .unwrap_or(0.0);
    let client_ttft_ms = stat(&summary, "time_to_first_token", "avg");
    let client_itl_ms = stat(&summary, "inter_token_latency", "avg");
    let client_tokens = stat(&summary, "output_sequence_length", "sum");
    assert_eq!(
        succeeded + cancelled,
        REQUESTS as f64,
        "every request ended one way or the other"
    );
    assert!(cancelled > 0.0, "aiperf cancelled some requests");

    // The server learns of a cancellation at its next write; a request
    // cancelled in the queue, once it gets a slot. Both gauges come back to
    // zero once every request has left.
    let deadline = Instant::now() + Duration::from_secs(20);
    let exposition = loop {
        let exposition = scrape(port);
        let all = samples(&exposition);
        let waiting = total(&all, "nemo_inference_requests_waiting", |_| true);
        let running = total(&all, "nemo_inference_requests_running", |_| true);
        if waiting == 0.0 && running == 0.0 {
            break exposition;
        }
        assert!(
            Instant::now() < deadline,
            "gauges did not return to 0 after the run: waiting {waiting}, running {running}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let all = samples(&exposition);
    let count =
        |name: &str, keep: &dyn Fn(&BTreeMap<String, String>) -> bool| total(&all, name, keep);
    let server_succeeded = count("gen_ai_server_request_duration_seconds_count", &|l| {
        error_type(l).is_none()
    });
    let server_cancelled = count("gen_ai_server_request_duration_seconds_count", &|l| {
        error_type(l) == Some("cancelled")
    });
    let output = |l: &BTreeMap<String, String>| {
        l.get("gen_ai_token_type").map(String::as_str) == Some("output")
    };
    let server_tokens = count("gen_ai_client_token_usage_sum", &output);
    let ttft_n = count("gen_ai_server_time_to_first_token_seconds_count", &|_| true);
    let server_ttft_ms =
        1000.0 * count("gen_ai_server_time_to_first_token_seconds_sum", &|_| true) / ttft_n;
    let tpot_n = count("gen_ai_server_time_per_output_token_seconds_count", &|_| {
        true
    });
    let server_tpot_ms =
        1000.0 * count("gen_ai_server_time_per_output_token_seconds_sum", &|_| true) / tpot_n;
    let finished = |reason: &'static str| {
        move |l: &BTreeMap<String, String>| {
            l.get("nemo_inference_finish_reason").map(String::as_str) == Some(reason)
        }
    };
    let server_aborted = count("nemo_inference_requests_finished_total", &finished("abort"));
    let server_length = count(
        "nemo_inference_requests_finished_total",
        &finished("length"),
    );

    // What aiperf saw of the gauges, scraping /metrics during the run.
    let scraped = read_json(&artifacts.join("server_metrics_export.json"));
    let gauge_max = |name: &str| {
        scraped["metrics"][name]["series"][0]["stats"]["max"]
            .as_f64()
            .unwrap_or_else(|| panic!("aiperf scraped no {name}"))
    };
    let waiting_max = gauge_max("nemo_inference_requests_waiting");
    let running_max = gauge_max("nemo_inference_requests_running");

    println!("aiperf against the server's /metrics ({REQUESTS} requests, {CONCURRENCY} concurrent, {MAX_RUNNING} running at most, {CANCEL_PERCENT} % cancelled after {CANCEL_AFTER_S} s):");
    println!("| measure | aiperf | server |");
    println!("|---|---|---|");
    println!("| successful requests | {succeeded} | {server_succeeded} |");
    println!("| cancelled requests | {cancelled} | {server_cancelled} (error.type=cancelled), {server_aborted} finished as abort |");
    println!("| output tokens | {client_tokens} | {server_tokens} |");
    println!("| time to first token, mean | {client_ttft_ms:.2} ms | {server_ttft_ms:.2} ms |");
    println!("| inter-token latency / time per output token, mean | {client_itl_ms:.3} ms | {server_tpot_ms:.3} ms |");
    println!("| requests waiting, max while scraped | | {waiting_max} |");
    println!(
        "| requests running, max while scraped | | {running_max} (--max-running {MAX_RUNNING}) |"
    );

    assert_eq!(server_succeeded, succeeded, "successful requests");
    assert_eq!(
        server_cancelled, cancelled,
        "cancelled requests, with error.type=cancelled"
    );
    assert_eq!(
        server_aborted, cancelled,
        "cancelled requests left the scheduler as aborted"
    );
    assert_eq!(
        server_length, succeeded,
        "finished requests, by their finish reason"
    );
    assert_eq!(server_tokens, client_tokens, "output tokens");
    assert_eq!(
        client_tokens,
        succeeded * OUTPUT_TOKENS as f64,
        "every stream had its tokens"
    );
    assert_eq!(ttft_n, succeeded, "one TTFT per successful request");
    assert!(
        within(
            server_ttft_ms,
            client_ttft_ms,
            TTFT_TOLERANCE_MS,
            TTFT_TOLERANCE
        ),
        "TTFT: server {server_ttft_ms:.2} ms, aiperf {client_ttft_ms:.2} ms"
    );
    assert!(
        within(
            server_tpot_ms,
            client_itl_ms,
            TPOT_TOLERANCE_MS,
            TPOT_TOLERANCE
        ),
        "time per output token: server {server_tpot_ms:.3} ms, aiperf ITL {client_itl_ms:.3} ms"
    );
    assert!(
        waiting_max > 0.0,
        "requests waited: concurrency {CONCURRENCY} above --max-running {MAX_RUNNING}"
    );
    assert!(
        running_max > 0.0 && running_max <= MAX_RUNNING as f64,
        "running {running_max}"
    );
    let _ = std::fs::remove_dir_all(&artifacts);
}
