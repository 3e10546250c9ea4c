//! Real-server test of exponential histograms: 20,000 time-to-first-token
//! samples from a known log-normal distribution, recorded with
//! `OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION` set to
//! exponential, scraped by Debian's Prometheus 2.42 with
//! `--enable-feature=native-histograms` (so over the protobuf exposition).
//!
//! - `histogram_quantile` on the native histogram is within 5 % of the exact
//!   quantile of the samples at p50, p90 and p99;
//! - the same samples in the GenAI conventions' advised explicit buckets
//!   (pinned with `aggregation = "explicit_bucket_histogram"`) give the
//!   error the README shows beside it;
//! - `promtool check metrics` accepts the text exposition served to scrapers
//!   that do not ask for protobuf.
//!
//! Ignored by default because it needs `prometheus` and `promtool`; run it
//! with `scripts/e2e.sh`.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use nemo_lens::instruments::InferenceMetrics;
use nemo_lens::{EnvLookup, Instruments, NemoLensConfig, SetupOptions};

use crate::support::servers::*;

const SAMPLES: usize = 20_000;

/// The same samples in the advised buckets of
/// `gen_ai.server.time_to_first_token`, whatever the process default is.
#[derive(Instruments, Default)]
struct ExplicitTtft {
    /// Time to first token, in the GenAI conventions' advised buckets.
    #[histogram(
        "e2e.time_to_first_token.explicit",
        unit = "s",
        buckets = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0],
        aggregation = "explicit_bucket_histogram"
    )]
    ttft_s: Option<f64>,
}

/// Log-normal time to first token: median 0.5 s, sigma 0.85 (p99 near
/// 3.6 s, between two advised buckets far apart). A fixed seed, so every run
/// sees the same samples.
fn ttft_samples() -> Vec<f64> {
    let mut state: u64 = 0x5eed_1e75;
    let mut uniform = move || {
        // splitmix64
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..SAMPLES)
        .map(|_| {
            let (u1, u2) = (1.0 - uniform(), uniform());
            let normal = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            0.5 * (0.85 * normal).exp()
        })
        .collect()
}

/// The exact `q` quantile of `sorted`: the smallest sample with at least
/// `q` of the samples at or below it.
fn exact_quantile(sorted: &[f64], q: f64) -> f64 {
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.max(1) - 1]
}

fn scalar(prom_port: u16, promql: &str) -> f64 {
    value(&wait_for(prom_port, promql, Duration::from_secs(30))[0])
}

#[test]
#[ignore = "needs prometheus and promtool; run scripts/e2e.sh"]
fn native_histograms_give_the_p99_within_five_percent() {
    // Sets up telemetry without `allow_reinit`: first in its process.
    crate::support::own_process!(native_histograms_give_the_p99_within_five_percent);
    let metrics_port = free_port();
    let port_text = metrics_port.to_string();
    let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs([
        ("NEMO_LENS_ENABLED", "true"),
        ("NEMO_LENS_EXPORTER", "prometheus"),
        ("OTEL_EXPORTER_PROMETHEUS_HOST", "127.0.0.1"),
        ("OTEL_EXPORTER_PROMETHEUS_PORT", port_text.as_str()),
        ("OTEL_SERVICE_NAME", "native-e2e"),
        (
            "OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION",
            "base2_exponential_bucket_histogram",
        ),
    ]))
    .unwrap();
    let handle = SetupOptions::new()
        .env(EnvLookup::from_pairs::<&str, &str>([]))
        .probe_gpus(false)
        .setup(&config, 0, 1)
        .unwrap();
    let mut samples = ttft_samples();
    for &ttft in &samples {
        InferenceMetrics::default()
            .time_to_first_token_s(ttft)
            .record(&handle.meter);
        ExplicitTtft::default().ttft_s(ttft).record(&handle.meter);
    }
    samples.sort_by(f64::total_cmp);

    // Scrapers that do not ask for protobuf get classic buckets, and a
    // text exposition promtool accepts.
    let text = http_get(metrics_port, "/metrics").expect("a text scrape");
    assert!(
        text.contains("# TYPE gen_ai_server_time_to_first_token_seconds histogram"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "gen_ai_server_time_to_first_token_seconds_bucket{{le=\"+Inf\"}} {SAMPLES}"
        )) || text.contains(&format!("le=\"+Inf\"}} {SAMPLES}")),
        "{text}"
    );
    let mut promtool = Command::new(std::env::var("PROMTOOL_BIN").unwrap_or("promtool".into()))
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start promtool (set PROMTOOL_BIN or install it)");
    promtool
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let checked = promtool.wait_with_output().unwrap();
    assert!(
        checked.status.success(),
        "promtool check metrics: {}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );

    let (_prometheus, prom_port) = prometheus_scraping("native", metrics_port);
    // The series as Prometheus stored it: a native histogram holding every
    // sample (histogram_count reads only native histograms).
    let native = "sum(gen_ai_server_time_to_first_token_seconds)";
    let count = scalar(prom_port, &format!("histogram_count({native})"));
    assert_eq!(count, SAMPLES as f64, "the native histogram's count");
    let classic = "sum by (le) (e2e_time_to_first_token_explicit_seconds_bucket)";
    wait_for(
        prom_port,
        &format!("{classic} == {SAMPLES}"),
        Duration::from_secs(30),
    );

    println!("| quantile | exact | native (exponential) | error | explicit buckets | error |");
    println!("|---|---|---|---|---|---|");
    for q in [0.5, 0.9, 0.99] {
        let exact = exact_quantile(&samples, q);
        let from_native = scalar(prom_port, &format!("histogram_quantile({q}, {native})"));
        let from_classic = scalar(prom_port, &format!("histogram_quantile({q}, {classic})"));
        let native_error = (from_native - exact) / exact;
        let classic_error = (from_classic - exact) / exact;
        println!(
            "| p{} | {exact:.4} s | {from_native:.4} s | {:+.2} % | {from_classic:.4} s | {:+.2} % |",
            q * 100.0,
            native_error * 100.0,
            classic_error * 100.0
        );
        assert!(
            native_error.abs() < 0.05,
            "p{}: native {from_native} vs exact {exact}",
            q * 100.0
        );
        assert!(from_classic.is_finite(), "p{}: {from_classic}", q * 100.0);
    }
    handle.shutdown().unwrap();
}
