//! Real-server test of exemplars: the example OpenAI server under load,
//! half its requests sampled (their `traceparent` says so), its spans sent
//! over OTLP/HTTP to a receiver on the official protobuf definitions, and
//! Debian's Prometheus 2.42 with `--enable-feature=exemplar-storage` scraping
//! it every second, twice: once as it asks by default (OpenMetrics text),
//! once with `native-histograms` too (protobuf).
//!
//! - every target stays up with no scrape error, and Prometheus rejects no
//!   exemplar as out of order;
//! - `/api/v1/query_exemplars` has exemplars on the TTFT and request-duration
//!   buckets, each a span the receiver got from the server, of a sampled
//!   request, its value inside its bucket; an unsampled request leaves none,
//!   and a server run with `OTEL_METRICS_EXEMPLAR_FILTER=always_off` none;
//! - a third server pushing its metrics over OTLP sends exemplars of the same
//!   spans, none of them twice.
//!
//! Ignored by default: it needs the `prometheus` binary and the example
//! server. `scripts/e2e.sh` builds the server and runs it:
//!
//! ```text
//! E2E_OPENAI_SERVER_BIN=target/release/examples/openai_server \
//!     cargo test --test exemplars_e2e -- --ignored --nocapture
//! ```

use std::collections::{BTreeSet, HashMap, HashSet};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use opentelemetry_proto::tonic::metrics::v1::metric::Data;
use serde_json::Value;

use crate::support::otlp_http::{hex, OtlpHttpReceiver};
use crate::support::servers::*;

const LATENCIES: [&str; 2] = [
    "gen_ai_server_time_to_first_token_seconds",
    "gen_ai_server_request_duration_seconds",
];
/// Requests per server: bounded, spread over several scrapes.
const REQUESTS: u64 = 40;

/// The trace ids a server's load marked sampled and unsampled.
#[derive(Default)]
struct Sent {
    sampled: HashSet<String>,
    unsampled: HashSet<String>,
}

fn start_server(receiver: &OtlpHttpReceiver, env: &[(&str, &str)]) -> (Reaped, u16) {
    let port = free_port();
    let log = std::env::temp_dir().join(format!("nemo-lens-exemplars-server-{port}.log"));
    let bin = std::env::var("E2E_OPENAI_SERVER_BIN")
        .expect("E2E_OPENAI_SERVER_BIN: the example openai_server binary");
    let mut command = Command::new(bin);
    command
        .args(["--port", &port.to_string(), "--model", "m"])
        .args(["--ttft-ms", "15", "--itl-ms", "2", "--max-running", "8"])
        .env("OTEL_TRACES_EXPORTER", "otlp")
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env("OTEL_TRACES_SAMPLER", "parentbased_always_on")
        .env("OTEL_BSP_SCHEDULE_DELAY", "200")
        .env("NEMO_LENS_PROBE_GPUS", "0")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap());
    for (key, value) in env {
        command.env(key, value);
    }
    let server = Reaped(command.spawn().expect("start the example server"));
    let deadline = Instant::now() + Duration::from_secs(20);
    while http_get(port, "/v1/models").is_none() {
        assert!(
            Instant::now() < deadline,
            "the example server did not start: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // Started: the log was for a server that does not start, and the
    // server keeps writing to it unlinked.
    let _ = std::fs::remove_file(&log);
    (server, port)
}

/// `REQUESTS` streamed chat completions, one every 100 ms, each with a
/// `traceparent` of a fresh trace: even ones sampled, odd ones not.
fn load(port: u16, seed: u64) -> Sent {
    let mut sent = Sent::default();
    for i in 0..REQUESTS {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let trace = format!("{:016x}{:016x}", seed << 32 | i, nanos as u64);
        let sampled = i % 2 == 0;
        let flags = if sampled { "01" } else { "00" };
        // Lengths that spread the durations over several buckets.
        let tokens = 2 + (i / 2 % 5) * 10;
        let body = format!(
            r#"{{"model":"m","stream":true,"max_tokens":{tokens},"messages":[{{"role":"user","content":"say something"}}]}}"#
        );
        let request = format!(
            "POST /v1/chat/completions HTTP/1.0\r\nHost: 127.0.0.1\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\
             traceparent: 00-{trace}-00f067aa0ba902b7-{flags}\r\n\r\n{body}",
            body.len()
        );
        let response = http_exchange(port, &request, Duration::from_secs(10))
            .expect("the example server answers");
        assert!(response.starts_with("HTTP/1.0 200") || response.starts_with("HTTP/1.1 200"));
        assert!(response.contains("[DONE]"), "a whole stream: {response}");
        if sampled {
            sent.sampled.insert(trace);
        } else {
            sent.unsampled.insert(trace);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    sent
}

fn prometheus(dir_name: &str, features: &[&str], traced: u16, off: u16) -> (Prometheus, u16) {
    let dir = std::env::temp_dir().join(format!("{dir_name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let port = free_port();
    let config = format!(
        "global:\n  scrape_interval: 1s\n\
         scrape_configs:\n\
         \x20 - job_name: traced\n    static_configs:\n      - targets: ['127.0.0.1:{traced}']\n\
         \x20 - job_name: off\n    static_configs:\n      - targets: ['127.0.0.1:{off}']\n"
    );
    (start_prometheus(&dir, port, &config, features), port)
}

/// `/api/v1/query_exemplars` of `query` since `start`.
fn exemplars(port: u16, query: &str, start: f64) -> Vec<Value> {
    let end = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        + 5.0;
    let path = format!(
        "/api/v1/query_exemplars?query={}&start={start:.3}&end={end:.3}",
        encode(query)
    );
    let json = get_json(port, &path).expect("Prometheus answers");
    assert_eq!(json["status"], "success", "{json}");
    json["data"].as_array().cloned().unwrap_or_default()
}

/// The value of a sample of Prometheus's own `/metrics`.
fn own_metric(port: u16, name: &str) -> f64 {
    let body = http_get(port, "/metrics").expect("Prometheus's /metrics");
    body.lines()
        .find(|line| line.starts_with(name) && !line.starts_with('#'))
        .and_then(|line| line.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{name} on Prometheus's /metrics"))
}

/// The `le` bounds of `family`'s buckets, ascending, from the server.
fn bounds(server: u16, family: &str) -> Vec<f64> {
    let body = http_get(server, "/metrics").unwrap();
    let mut bounds: Vec<f64> = body
        .lines()
        .filter(|l| l.starts_with(&format!("{family}_bucket{{")))
        .filter_map(|l| l.split("le=\"").nth(1)?.split('"').next()?.parse().ok())
        .collect::<BTreeSet<u64>>()
        .into_iter()
        .map(f64::from_bits)
        .collect();
    bounds.sort_by(f64::total_cmp);
    bounds
}

#[test]
#[ignore = "needs the prometheus binary and the example server; run scripts/e2e.sh"]
fn latency_buckets_link_sampled_requests_to_their_spans() {
    let started = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        - 1.0;
    let receiver = OtlpHttpReceiver::start();
    let (_traced, traced) = start_server(&receiver, &[]);
    let (_off, off) = start_server(&receiver, &[("OTEL_METRICS_EXEMPLAR_FILTER", "always_off")]);
    let (_pushing, pushing) = start_server(
        &receiver,
        &[
            ("NEMO_LENS_EXPORTER", "otlp"),
            ("OTEL_METRIC_EXPORT_INTERVAL", "1000"),
        ],
    );
    let (_classic, classic) = prometheus("nemo-lens-exemplars", &["exemplar-storage"], traced, off);
    let (_native, native) = prometheus(
        "nemo-lens-exemplars-native",
        &["exemplar-storage", "native-histograms"],
        traced,
        off,
    );
    for port in [classic, native] {
        for job in ["traced", "off"] {
            wait_for(
                port,
                &format!("up{{job=\"{job}\"}} == 1"),
                Duration::from_secs(30),
            );
        }
    }

    let loads = [(traced, 1), (off, 2), (pushing, 3)]
        .map(|(port, seed)| std::thread::spawn(move || load(port, seed)));
    let [sent_traced, sent_off, sent_pushed] = loads.map(|l| l.join().unwrap());
    // Two more scrapes and span batches, and the last metrics export.
    std::thread::sleep(Duration::from_secs(4));

    let spans: HashMap<String, HashSet<String>> =
        receiver
            .spans()
            .into_iter()
            .fold(HashMap::new(), |mut by_trace, (trace, span)| {
                by_trace.entry(trace).or_default().insert(span);
                by_trace
            });
    for sent in [&sent_traced, &sent_off, &sent_pushed] {
        for trace in &sent.sampled {
            assert!(
                spans.contains_key(trace),
                "the receiver got no span of sampled {trace}"
            );
        }
        for trace in &sent.unsampled {
            assert!(
                !spans.contains_key(trace),
                "an unsampled trace was exported: {trace}"
            );
        }
    }

    for (port, label) in [(classic, "OpenMetrics"), (native, "protobuf")] {
        // Up at every scrape, and no scrape error now.
        for job in ["traced", "off"] {
            let up = wait_for(
                port,
                &format!("min_over_time(up{{job=\"{job}\"}}[1m])"),
                Duration::from_secs(5),
            );
            assert_eq!(value(&up[0]), 1.0, "{label}: {job} was down at a scrape");
        }
        let targets = get_json(port, "/api/v1/targets").unwrap();
        for target in targets["data"]["activeTargets"].as_array().unwrap() {
            assert_eq!(target["health"], "up", "{label}: {target}");
            assert_eq!(target["lastError"], "", "{label}: {target}");
        }
        for family in LATENCIES {
            let bounds = bounds(traced, family);
            let found = exemplars(port, &format!("{family}_bucket{{job=\"traced\"}}"), started);
            let mut count = 0;
            for series in &found {
                let le: f64 = series["seriesLabels"]["le"]
                    .as_str()
                    .unwrap()
                    .parse()
                    .unwrap();
                let below = bounds
                    .iter()
                    .copied()
                    .filter(|b| *b < le)
                    .fold(f64::NEG_INFINITY, f64::max);
                for exemplar in series["exemplars"].as_array().unwrap() {
                    count += 1;
                    let trace = exemplar["labels"]["trace_id"].as_str().unwrap();
                    let span = exemplar["labels"]["span_id"].as_str().unwrap();
                    let value: f64 = exemplar["value"].as_str().unwrap().parse().unwrap();
                    assert!(
                        sent_traced.sampled.contains(trace),
                        "{label}: {trace} is not a sampled request"
                    );
                    assert!(
                        spans.get(trace).is_some_and(|s| s.contains(span)),
                        "{label}: {trace}/{span} is not a span the server sent"
                    );
                    assert!(
                        below < value && value <= le,
                        "{label}: {value} outside ({below}, {le}]"
                    );
                }
            }
            assert!(count > 0, "{label}: no exemplar on {family}");
            println!(
                "{label}: {count} exemplars on {family} across {} buckets",
                found.len()
            );
        }
        let none = exemplars(port, "{job=\"off\"}", started);
        assert!(
            none.is_empty(),
            "{label}: always_off left exemplars: {none:?}"
        );
        assert_eq!(
            own_metric(
                port,
                "prometheus_tsdb_exemplar_out_of_order_exemplars_total"
            ),
            0.0,
            "{label}"
        );
    }
    assert!(sent_off.sampled.len() as u64 == REQUESTS / 2);

    // OTLP: the pushing server's exemplars, each once.
    let received = receiver.received.lock().unwrap();
    let mut seen = HashSet::new();
    // The exports that carried an exemplar of each latency.
    let mut on_latencies: HashMap<String, usize> = HashMap::new();
    for export in &received.metrics {
        let mut carried = HashSet::new();
        for metric in export
            .resource_metrics
            .iter()
            .flat_map(|r| &r.scope_metrics)
            .flat_map(|s| &s.metrics)
        {
            let Some(Data::Histogram(histogram)) = &metric.data else {
                continue;
            };
            for point in &histogram.data_points {
                for exemplar in &point.exemplars {
                    let (trace, span) = (hex(&exemplar.trace_id), hex(&exemplar.span_id));
                    assert!(
                        sent_pushed.sampled.contains(&trace),
                        "OTLP: {trace} is not a sampled request"
                    );
                    assert!(
                        spans.get(&trace).is_some_and(|s| s.contains(&span)),
                        "OTLP: {trace}/{span}"
                    );
                    let key = (
                        metric.name.clone(),
                        format!("{:?}", point.attributes),
                        trace,
                        exemplar.time_unix_nano,
                    );
                    assert!(seen.insert(key.clone()), "OTLP: sent twice: {key:?}");
                    carried.insert(metric.name.clone());
                }
            }
        }
        for name in carried {
            *on_latencies.entry(name).or_default() += 1;
        }
    }
    // The load runs over about four export intervals, a sampled request
    // in each: every one of them exports new exemplars.
    for name in [
        "gen_ai.server.time_to_first_token",
        "gen_ai.server.request.duration",
    ] {
        let exports = on_latencies.get(name).copied().unwrap_or(0);
        assert!(
            exports >= 3,
            "OTLP: {name} had exemplars in {exports} exports"
        );
    }
    println!(
        "OTLP: {} exemplars in {} exports; exports with latency exemplars: {on_latencies:?}",
        seen.len(),
        received.metrics.len()
    );
}
