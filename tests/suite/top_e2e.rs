//! `nemo-lens top --once --json` against the running demo: the request rate
//! and TTFT it reports are those the demo's own counters give over the
//! same window, within 10 %.
//!
//! Ignored by default: it needs the demo and the `nemo-lens` binary
//! (`scripts/e2e.sh` builds both and sets `NEMO_LENS_DEMO_BIN` and
//! `NEMO_LENS_BIN`).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::support::servers;

use servers::{free_port, http_get, Reaped};

/// `(requests, TTFT buckets (le, cumulative))` summed over the demo's
/// series, read straight off its exposition.
fn counters(port: u16) -> (f64, Vec<(f64, f64)>) {
    let body = http_get(port, "/metrics").expect("a scrape of the demo");
    let value = |line: &str| {
        line.rsplit_once(' ')
            .and_then(|(_, v)| v.parse::<f64>().ok())
    };
    let requests = body
        .lines()
        .filter(|l| l.starts_with("gen_ai_server_request_duration_seconds_count{"))
        .filter_map(value)
        .sum();
    let mut buckets: Vec<(f64, f64)> = Vec::new();
    for line in body
        .lines()
        .filter(|l| l.starts_with("gen_ai_server_time_to_first_token_seconds_bucket{"))
    {
        let le = line
            .split("le=\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .unwrap();
        let le = if le == "+Inf" {
            f64::INFINITY
        } else {
            le.parse().unwrap()
        };
        let count = value(line).unwrap();
        match buckets.iter_mut().find(|(b, _)| *b == le) {
            Some(bucket) => bucket.1 += count,
            None => buckets.push((le, count)),
        }
    }
    buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
    (requests, buckets)
}

/// The median of what the buckets gained, interpolated as Prometheus does.
fn median(before: &[(f64, f64)], after: &[(f64, f64)]) -> f64 {
    let gained: Vec<(f64, f64)> = after
        .iter()
        .map(|(le, c)| {
            let then = before.iter().find(|(b, _)| b == le).map_or(0.0, |b| b.1);
            (*le, c - then)
        })
        .collect();
    let total = gained.last().unwrap().1;
    let rank = total / 2.0;
    let mut lower = (0.0, 0.0);
    for &(le, cumulative) in &gained {
        if cumulative >= rank {
            return lower.0 + (le - lower.0) * (rank - lower.1) / (cumulative - lower.1);
        }
        lower = (le, cumulative);
    }
    unreachable!("the +Inf bucket holds everything")
}

#[test]
#[ignore = "needs the demo and the nemo-lens binary: scripts/e2e.sh"]
fn top_reports_the_demo_s_rate_and_ttft() {
    let demo = std::env::var("NEMO_LENS_DEMO_BIN").expect("NEMO_LENS_DEMO_BIN");
    let top = std::env::var("NEMO_LENS_BIN").expect("NEMO_LENS_BIN");
    let port = free_port();
    let mut demo = Reaped(
        Command::new(demo)
            .args(["--seconds", "120"])
            .env("NEMO_LENS_ENABLED", "1")
            .env("NEMO_LENS_EXPORTER", "prometheus")
            .env("OTEL_EXPORTER_PROMETHEUS_HOST", "127.0.0.1")
            .env("OTEL_EXPORTER_PROMETHEUS_PORT", port.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the demo"),
    );
    let stdout = demo.0.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        let first = lines.next().and_then(Result::ok).unwrap_or_default();
        let second = lines.next().and_then(Result::ok).unwrap_or_default();
        let _ = tx.send((first, second));
        // Keep draining, so the demo never blocks on a full pipe.
        for _ in lines {}
    });
    let (serving, watch) = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("demo output");
    let url = format!("http://127.0.0.1:{port}/metrics");
    assert_eq!(serving, format!("serving Prometheus metrics at {url}"));
    // The demo says how to watch it.
    assert!(
        watch.starts_with(&format!("watch it live: nemo-lens top {url}")),
        "{watch}"
    );
    std::thread::sleep(Duration::from_secs(3));
    let (requests_before, ttft_before) = counters(port);
    let started = Instant::now();
    let output = Command::new(top)
        .args(["top", "--once", "--json", "--interval", "8", &url])
        .output()
        .expect("run nemo-lens top");
    let seconds = started.elapsed().as_secs_f64();
    let (requests_after, ttft_after) = counters(port);
    assert!(output.status.success(), "{output:?}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let replica = &report["replicas"][0];
    assert_eq!(replica["status"], "up", "{report}");
    assert_eq!(replica["vocabulary"], "nemo-lens", "{report}");
    let rate = replica["requests_per_s"].as_f64().unwrap();
    let own_rate = (requests_after - requests_before) / seconds;
    assert!(
        (rate / own_rate - 1.0).abs() <= 0.10,
        "top {rate} req/s, the demo's counters {own_rate}"
    );
    let p50 = replica["ttft_s"]["p50"].as_f64().unwrap();
    let own_p50 = median(&ttft_before, &ttft_after);
    assert!(
        (p50 / own_p50 - 1.0).abs() <= 0.10,
        "top's TTFT p50 {p50} s, the demo's {own_p50} s"
    );
    eprintln!("top: {rate:.1} req/s, TTFT p50 {p50:.4} s; the demo's own: {own_rate:.1} req/s, {own_p50:.4} s");
    assert_eq!(report["all"]["requests_per_s"], replica["requests_per_s"]);
}
