//! Running NVIDIA's aiperf against a server, and reading what it measured
//! and what the server exported on `/metrics`: shared by the e2e tests of
//! the example server (`aiperf_e2e.rs`) and of the metering proxy
//! (`proxy_e2e.rs`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::servers::{first_line, http_get, Reaped};

pub const MODEL: &str = "tiny-model";
pub const TTFT_MS: u64 = 40;
pub const ITL_MS: u64 = 8;
pub const MAX_RUNNING: u64 = 4;

/// How close the server's timings must be to aiperf's: the client's clock
/// adds the connection, the request's transfer and the chunks' way back,
/// and aiperf's Python processes share two cores with the server.
pub const TTFT_TOLERANCE_MS: f64 = 15.0;
pub const TTFT_TOLERANCE: f64 = 0.15;
pub const TPOT_TOLERANCE_MS: f64 = 1.5;
pub const TPOT_TOLERANCE: f64 = 0.15;

/// A path the test is given. Not named `AIPERF_*`: aiperf reads every
/// such variable as one of its own settings.
pub fn env_path(name: &str) -> PathBuf {
    PathBuf::from(
        std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set; run scripts/e2e.sh")),
    )
}

/// Starts `command` and waits for its first line, which names the
/// 127.0.0.1 address it serves.
pub fn start_serving(mut command: Command, port: u16) -> Reaped {
    let mut child = Reaped(
        command
            .env("NEMO_LENS_RUN_ID", "aiperf-e2e")
            .env_remove("NEMO_LENS_EXPORTER")
            .env_remove("OTEL_SEMCONV_STABILITY_OPT_IN")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the server"),
    );
    let first = first_line(&mut child.0, Duration::from_secs(30));
    assert!(first.contains(&format!("127.0.0.1:{port}")), "{first}");
    child
}

/// The example server on `port`, with the tests' timing model.
pub fn start_server(port: u16) -> Reaped {
    let mut command = Command::new(env_path("E2E_OPENAI_SERVER_BIN"));
    command
        .args(["--port", &port.to_string(), "--model", MODEL])
        .args(["--ttft-ms", &TTFT_MS.to_string()])
        .args(["--itl-ms", &ITL_MS.to_string()])
        .args(["--max-running", &MAX_RUNNING.to_string()]);
    start_serving(command, port)
}

/// The body of `GET /metrics`.
pub fn scrape(port: u16) -> String {
    http_get(port, "/metrics").expect("a response from /metrics")
}

/// One sample of a text exposition: its name, labels and value.
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

pub fn samples(exposition: &str) -> Vec<Sample> {
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
pub fn total(
    samples: &[Sample],
    name: &str,
    keep: impl Fn(&BTreeMap<String, String>) -> bool,
) -> f64 {
    samples
        .iter()
        .filter(|s| s.name == name && keep(&s.labels))
        .map(|s| s.value)
        .sum()
}

pub fn error_type(labels: &BTreeMap<String, String>) -> Option<&str> {
    labels.get("error_type").map(String::as_str)
}

/// One aiperf run: the endpoint and its load.
pub struct Profile<'a> {
    pub endpoint_type: &'a str,
    pub streaming: bool,
    pub requests: u64,
    pub concurrency: u64,
    /// Tokens each request asks for; `None` for an endpoint that
    /// generates none (embeddings).
    pub output_tokens: Option<u64>,
    /// Percent of requests cancelled, and after how many seconds.
    pub cancel: Option<(u64, f64)>,
    /// Latency objectives for aiperf's `--goodput`.
    pub goodput: Option<&'a str>,
}

/// Runs aiperf against `127.0.0.1:port`, writing into `artifacts`;
/// bounded to 300 s.
pub fn run_aiperf(port: u16, artifacts: &Path, profile: &Profile) {
    let _ = std::fs::remove_dir_all(artifacts);
    let scratch = artifacts.join("tmp");
    std::fs::create_dir_all(&scratch).unwrap();
    let mut command = Command::new(env_path("E2E_AIPERF_BIN"));
    command
        .args(["profile", "--model", MODEL])
        .args(["--url", &format!("http://127.0.0.1:{port}")])
        .args(["--endpoint-type", profile.endpoint_type])
        .args(["--request-count", &profile.requests.to_string()])
        .args(["--concurrency", &profile.concurrency.to_string()])
        .args(["--synthetic-input-tokens-mean", "32"])
        .args(["--synthetic-input-tokens-stddev", "0"]);
    if profile.streaming {
        command.arg("--streaming");
    }
    if let Some(tokens) = profile.output_tokens {
        command
            .args(["--output-tokens-mean", &tokens.to_string()])
            .args(["--output-tokens-stddev", "0"]);
    }
    if let Some((percent, after_s)) = profile.cancel {
        command
            .args(["--request-cancellation-rate", &percent.to_string()])
            .args(["--request-cancellation-delay", &after_s.to_string()]);
    }
    if let Some(objectives) = profile.goodput {
        command.args(["--goodput", objectives]);
    }
    let mut aiperf = Reaped(
        command
            .arg("--tokenizer")
            .arg(env_path("E2E_AIPERF_TOKENIZER"))
            .args(["--random-seed", "42", "--ui-type", "none"])
            .arg("--no-gpu-telemetry")
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

pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// `metric.stat` of aiperf's summary; a metric aiperf could not compute is
/// absent from it, which fails here rather than comparing against nothing.
pub fn stat(summary: &Value, metric: &str, stat: &str) -> f64 {
    summary[metric][stat]
        .as_f64()
        .unwrap_or_else(|| panic!("aiperf's export has no {metric}.{stat}"))
}

pub fn within(server: f64, client: f64, absolute: f64, relative: f64) -> bool {
    (server - client).abs() <= absolute.max(relative * client)
}

/// What aiperf measured of one run.
#[derive(Debug)]
pub struct Client {
    pub succeeded: f64,
    pub failed: f64,
    pub ttft_ms: Option<f64>,
    pub itl_ms: Option<f64>,
    pub latency_ms: f64,
    pub output_tokens: Option<f64>,
}

impl Client {
    pub fn read(artifacts: &Path, streaming: bool, tokens: bool) -> Client {
        let summary = read_json(&artifacts.join("profile_export_aiperf.json"));
        Client {
            succeeded: stat(&summary, "request_count", "avg"),
            failed: summary["error_request_count"]["avg"]
                .as_f64()
                .unwrap_or(0.0),
            ttft_ms: streaming.then(|| stat(&summary, "time_to_first_token", "avg")),
            itl_ms: streaming.then(|| stat(&summary, "inter_token_latency", "avg")),
            latency_ms: stat(&summary, "request_latency", "avg"),
            output_tokens: tokens.then(|| stat(&summary, "output_sequence_length", "sum")),
        }
    }
}

/// What a server (or the proxy) exported on `/metrics` of one operation.
#[derive(Debug)]
pub struct Server {
    pub succeeded: f64,
    pub cancelled: f64,
    /// Failed requests by `error.type`.
    pub errors: BTreeMap<String, f64>,
    pub input_tokens: f64,
    pub output_tokens: f64,
    pub ttft_n: f64,
    pub ttft_ms: f64,
    pub tpot_ms: f64,
    pub duration_ms: f64,
}

impl Server {
    pub fn read(exposition: &str, operation: &str) -> Server {
        let all = samples(exposition);
        let of = |l: &BTreeMap<String, String>| {
            l.get("gen_ai_operation_name").map(String::as_str) == Some(operation)
        };
        let count = |name: &str, keep: &dyn Fn(&BTreeMap<String, String>) -> bool| {
            total(&all, name, |l| of(l) && keep(l))
        };
        let mean_ms = |name: &str, keep: &dyn Fn(&BTreeMap<String, String>) -> bool| {
            1000.0 * count(&format!("{name}_sum"), keep) / count(&format!("{name}_count"), keep)
        };
        let tokens = |kind: &'static str| {
            move |l: &BTreeMap<String, String>| {
                l.get("gen_ai_token_type").map(String::as_str) == Some(kind)
            }
        };
        let mut errors = BTreeMap::new();
        for sample in &all {
            if sample.name == "gen_ai_server_request_duration_seconds_count"
                && of(&sample.labels)
                && let Some(error) = error_type(&sample.labels)
            {
                *errors.entry(error.to_owned()).or_insert(0.0) += sample.value;
            }
        }
        let ok = |l: &BTreeMap<String, String>| error_type(l).is_none();
        Server {
            succeeded: count("gen_ai_server_request_duration_seconds_count", &ok),
            cancelled: errors.get("cancelled").copied().unwrap_or(0.0),
            errors,
            input_tokens: count("gen_ai_client_token_usage_sum", &tokens("input")),
            output_tokens: count("gen_ai_client_token_usage_sum", &tokens("output")),
            ttft_n: count("gen_ai_server_time_to_first_token_seconds_count", &|_| true),
            ttft_ms: mean_ms("gen_ai_server_time_to_first_token_seconds", &|_| true),
            tpot_ms: mean_ms("gen_ai_server_time_per_output_token_seconds", &|_| true),
            duration_ms: mean_ms("gen_ai_server_request_duration_seconds", &ok),
        }
    }
}

/// Scrapes `port` until no request is waiting or running there (every
/// request has left), at most 20 s.
pub fn scrape_when_idle(port: u16) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let exposition = scrape(port);
        let all = samples(&exposition);
        let waiting = total(&all, "nemo_inference_requests_waiting", |_| true);
        let running = total(&all, "nemo_inference_requests_running", |_| true);
        if waiting == 0.0 && running == 0.0 {
            return exposition;
        }
        assert!(
            Instant::now() < deadline,
            "gauges did not return to 0 after the run: waiting {waiting}, running {running}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Holds a streamed run's figures against each other: counts and tokens
/// exactly, timings within the tolerances; prints the table's rows.
pub fn assert_streamed_agree(label: &str, client: &Client, server: &Server, tokens_each: u64) {
    let client_ttft = client.ttft_ms.expect("a streamed run's TTFT");
    let client_itl = client.itl_ms.expect("a streamed run's ITL");
    let client_tokens = client.output_tokens.expect("a run's output tokens");
    println!(
        "| {label} | successful requests | {} | {} |",
        client.succeeded, server.succeeded
    );
    println!(
        "| {label} | cancelled requests | {} | {} |",
        client.failed, server.cancelled
    );
    println!(
        "| {label} | output tokens | {client_tokens} | {} |",
        server.output_tokens
    );
    println!(
        "| {label} | time to first token, mean | {client_ttft:.2} ms | {:.2} ms |",
        server.ttft_ms
    );
    println!("| {label} | inter-token latency / time per output token, mean | {client_itl:.3} ms | {:.3} ms |", server.tpot_ms);
    println!(
        "| {label} | request latency / duration, mean | {:.2} ms | {:.2} ms |",
        client.latency_ms, server.duration_ms
    );
    assert_eq!(
        server.succeeded, client.succeeded,
        "{label}: successful requests"
    );
    assert_eq!(
        server.cancelled, client.failed,
        "{label}: cancelled requests, error.type=cancelled"
    );
    assert_eq!(
        server.output_tokens, client_tokens,
        "{label}: output tokens"
    );
    assert_eq!(
        client_tokens,
        client.succeeded * tokens_each as f64,
        "{label}: every stream had its tokens"
    );
    assert_eq!(
        server.ttft_n, client.succeeded,
        "{label}: one TTFT per successful request"
    );
    assert!(
        within(
            server.ttft_ms,
            client_ttft,
            TTFT_TOLERANCE_MS,
            TTFT_TOLERANCE
        ),
        "{label}: TTFT: server {:.2} ms, aiperf {client_ttft:.2} ms",
        server.ttft_ms
    );
    assert!(
        within(
            server.tpot_ms,
            client_itl,
            TPOT_TOLERANCE_MS,
            TPOT_TOLERANCE
        ),
        "{label}: time per output token: server {:.3} ms, aiperf ITL {client_itl:.3} ms",
        server.tpot_ms
    );
}

/// A fresh artifact directory for one run.
pub fn artifacts(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("nemo-lens-{name}-{}", std::process::id()))
}
