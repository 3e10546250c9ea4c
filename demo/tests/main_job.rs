//! The README's main job as a newcomer runs it: the demo starts with no
//! configuration, serves the built-in sets on a Prometheus endpoint while
//! it simulates its training job, and exits 0 when its time is up.
//!
//! Also why `cargo test` builds `target/debug/demo`, which the end-to-end
//! suites (`scripts/e2e.sh`) run.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nemo_lens_test_support::servers::{first_line, free_port, http_get, Reaped};

#[test]
fn the_demo_serves_every_built_in_set_and_ends_on_time() {
    let port = free_port();
    let mut demo = Reaped(
        Command::new(env!("CARGO_BIN_EXE_demo"))
            .args(["--seconds", "4", "--step-ms", "50"])
            .env("OTEL_EXPORTER_PROMETHEUS_HOST", "127.0.0.1")
            .env("OTEL_EXPORTER_PROMETHEUS_PORT", port.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the demo"),
    );
    let first = first_line(&mut demo.0, Duration::from_secs(20));
    assert_eq!(
        first.trim(),
        format!("serving Prometheus metrics at http://127.0.0.1:{port}/metrics"),
        "the first line gives the URL"
    );
    let families = [
        "rl_reward_mean",
        "gym_sandbox_active",
        "gen_ai_server_request_duration_seconds_count",
        "gen_ai_client_token_usage_sum",
    ];
    // Every set has recorded once the first steps are done.
    let deadline = Instant::now() + Duration::from_secs(10);
    let body = loop {
        let body = http_get(port, "/metrics").unwrap_or_default();
        if families.iter().all(|f| body.contains(f)) || Instant::now() > deadline {
            break body;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    for family in families {
        assert!(body.contains(family), "no {family} in:\n{body}");
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = demo.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the demo outlived its --seconds 4"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(status.success(), "{status}");
}
