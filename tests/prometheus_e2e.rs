//! Real-server test: Debian's `prometheus` scrapes the demo every second and
//! every built-in instrument the demo records (all but the GPU gauges, which
//! need a GPU) must be queryable with the right labels. Ignored by default because it needs the `prometheus` binary and
//! the demo; run it with `scripts/e2e.sh`, which installs Prometheus when
//! missing, builds the demo and sets `NEMO_LENS_DEMO_BIN`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

/// Kills and reaps the child on drop, so a failed assertion leaves nothing
/// running.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn encode(query: &str) -> String {
    query
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// `data.result` of an instant query, or `None` if Prometheus is not
/// answering yet.
fn query(port: u16, promql: &str) -> Option<Vec<Value>> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    // HTTP/1.0 so the body is neither chunked nor kept alive.
    let request = format!(
        "GET /api/v1/query?query={} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n",
        encode(promql)
    );
    stream.write_all(request.as_bytes()).ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let body = response.split_once("\r\n\r\n")?.1;
    let json: Value = serde_json::from_str(body).ok()?;
    if json["status"] != "success" {
        return None;
    }
    json["data"]["result"].as_array().cloned()
}

/// `data.result` of an instant query that Prometheus must answer.
fn query_result(port: u16, promql: &str) -> Vec<Value> {
    query(port, promql).unwrap_or_else(|| panic!("Prometheus did not answer {promql}"))
}

/// Polls `promql` every 500 ms until it has a result, at most `timeout`.
fn wait_for(port: u16, promql: &str, timeout: Duration) -> Vec<Value> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(result) = query(port, promql).filter(|r| !r.is_empty()) {
            return result;
        }
        assert!(
            Instant::now() < deadline,
            "no result for {promql} within {timeout:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn label<'a>(series: &'a Value, name: &str) -> &'a str {
    series["metric"][name].as_str().unwrap_or("")
}

fn value(series: &Value) -> f64 {
    series["value"][1]
        .as_str()
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN)
}

#[test]
#[ignore = "needs the prometheus binary and the demo; run scripts/e2e.sh"]
fn prometheus_scrapes_every_builtin_instrument_from_the_demo() {
    let demo = PathBuf::from(
        std::env::var("NEMO_LENS_DEMO_BIN").expect("NEMO_LENS_DEMO_BIN: path of the built demo"),
    );
    let prometheus = std::env::var("PROMETHEUS_BIN").unwrap_or_else(|_| "prometheus".into());
    let demo_port = free_port();
    let prom_port = free_port();
    let dir = std::env::temp_dir().join(format!("nemo-lens-e2e-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    let mut demo = Reaped(
        Command::new(&demo)
            .args(["--seconds", "180", "--step-ms", "100"])
            .env("NEMO_LENS_ENABLED", "1")
            .env("NEMO_LENS_EXPORTER", "prometheus")
            .env("OTEL_EXPORTER_PROMETHEUS_HOST", "127.0.0.1")
            .env("OTEL_EXPORTER_PROMETHEUS_PORT", demo_port.to_string())
            .env("NEMO_LENS_RUN_ID", "e2e-run")
            .env("OTEL_SERVICE_NAME", "nemo-lens-demo")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the demo"),
    );
    // The first line names the endpoint; read it off-thread so a silent demo
    // cannot hang the test.
    let stdout = demo.0.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let first = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("demo output");
    assert_eq!(
        first.trim(),
        format!("serving Prometheus metrics at http://127.0.0.1:{demo_port}/metrics")
    );

    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: nemo-lens-demo\n    static_configs:\n\
             \x20     - targets: ['127.0.0.1:{demo_port}']\n"
        ),
    )
    .unwrap();
    let log = std::fs::File::create(dir.join("prometheus.log")).unwrap();
    let _prometheus = Reaped(
        Command::new(&prometheus)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{prom_port}"))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start prometheus (set PROMETHEUS_BIN or install it)"),
    );

    // The first scrape takes about 6 s on this machine.
    let up = wait_for(
        prom_port,
        "up{job=\"nemo-lens-demo\"} == 1",
        Duration::from_secs(60),
    );
    assert_eq!(label(&up[0], "instance"), format!("127.0.0.1:{demo_port}"));

    let model = [
        ("gen_ai_operation_name", "text_completion"),
        ("gen_ai_provider_name", "nemo"),
        ("gen_ai_request_model", "llama-3-8b"),
        ("gen_ai_response_model", "llama-3-8b-instruct"),
        ("server_address", "127.0.0.1"),
        ("server_port", "8000"),
    ];
    let successful = [
        ("gen_ai_operation_name", "text_completion"),
        ("gen_ai_request_model", "llama-3-8b"),
        ("server_port", "8000"),
        ("error_type", ""),
    ];
    let client = [
        ("gen_ai_operation_name", "chat"),
        ("gen_ai_provider_name", "nemo"),
        ("gen_ai_request_model", "policy"),
        ("server_address", "127.0.0.1"),
        ("server_port", "8000"),
    ];
    let scope = [("otel_scope_name", "nemo.lens")];
    let gym_model = [
        ("nemo_gym_model_dialect", "openai_chat"),
        ("nemo_gym_server_name", "policy"),
    ];
    // (series to query, labels every series must carry)
    let expected: Vec<(&str, &[(&str, &str)])> = vec![
        ("gen_ai_server_request_duration_seconds_count", &model),
        (
            "gen_ai_client_token_usage_count{gen_ai_token_type=\"input\",gen_ai_operation_name=\"text_completion\"}",
            &model,
        ),
        (
            "gen_ai_client_token_usage_count{gen_ai_token_type=\"output\",gen_ai_operation_name=\"text_completion\"}",
            &model,
        ),
        ("gen_ai_server_time_to_first_token_seconds_count", &successful),
        ("gen_ai_server_time_per_output_token_seconds_count", &successful),
        ("gen_ai_client_operation_duration_seconds_count", &client),
        (
            "gen_ai_client_operation_time_to_first_chunk_seconds_count",
            &client,
        ),
        (
            "gen_ai_client_operation_time_per_output_chunk_seconds_count",
            &client,
        ),
        ("rl_reward_mean", &scope),
        ("rl_kl_divergence", &scope),
        ("rl_policy_loss", &scope),
        ("rl_value_loss", &scope),
        ("rl_entropy", &scope),
        ("rl_response_length_mean", &scope),
        ("rl_grad_norm", &scope),
        ("rl_learning_rate", &scope),
        ("rl_throughput_tokens_per_sec_per_second", &scope),
        ("rl_generation_duration_ms_milliseconds_count", &scope),
        ("rl_rollout_duration_ms_milliseconds_count", &scope),
        ("gym_server_request_duration_ms_milliseconds_count", &scope),
        ("gym_rollout_duration_ms_milliseconds_count", &scope),
        ("gym_verify_duration_ms_milliseconds_count", &scope),
        ("gym_verify_success_rate", &scope),
        ("gym_servers_active", &scope),
        // NeMo-Gym's attributed instruments.
        (
            "gym_concurrency_queue_wait_duration_ms_milliseconds_count{nemo_gym_concurrency_site=\"judge\"}",
            &scope,
        ),
        (
            "gym_rollout_completed_total_ratio_total{nemo_gym_rollout_outcome=\"failure\"}",
            &scope,
        ),
        (
            "gym_sandbox_startup_duration_ms_milliseconds_count",
            &[("nemo_gym_sandbox_provider", "docker")],
        ),
        (
            "gym_sandbox_create_retry_total_ratio_total",
            &[("nemo_gym_sandbox_provider", "docker")],
        ),
        ("gym_model_call_duration_ms_milliseconds_count", &gym_model),
        ("gym_model_time_to_first_byte_ms_milliseconds_count", &gym_model),
        (
            "gym_http_timeout_total_ratio_total",
            &[("nemo_gym_http_internal", "true")],
        ),
        (
            "gym_http_retry_total_ratio_total",
            &[("nemo_gym_http_retry_reason", "server_disconnected")],
        ),
        ("gym_process_cpu_percent_percent", &scope),
    ];
    let mut instruments = std::collections::BTreeSet::new();
    for (series, labels) in &expected {
        let result = wait_for(prom_port, series, Duration::from_secs(30));
        for s in &result {
            assert_eq!(label(s, "job"), "nemo-lens-demo", "{series}");
            for (name, want) in labels.iter() {
                assert_eq!(label(s, name), *want, "{series}: label {name} in {s}");
            }
        }
        let name = series.split('{').next().unwrap_or(series);
        instruments.insert(name.trim_end_matches("_count").to_owned());
    }
    // The two token-usage queries are one instrument: 23 built-in sets'
    // instruments, plus NeMo-Gym's 9 that the demo records without a GPU
    // (the three GPU gauges need one).
    assert_eq!(instruments.len(), 32, "{instruments:?}");

    // error.type: on the durations of failed, cancelled and dropped work
    // only, never on TTFT/TPOT.
    for (series, error_type) in [
        ("gen_ai_server_request_duration_seconds_count", "timeout"),
        ("gen_ai_server_request_duration_seconds_count", "_OTHER"),
        (
            "gen_ai_client_operation_duration_seconds_count",
            "rate_limited",
        ),
    ] {
        let query = format!("{series}{{error_type=\"{error_type}\"}}");
        wait_for(prom_port, &query, Duration::from_secs(30));
    }
    for series in [
        "gen_ai_server_time_to_first_token_seconds_count",
        "gen_ai_server_time_per_output_token_seconds_count",
        "gen_ai_client_token_usage_count",
        "gen_ai_client_operation_time_to_first_chunk_seconds_count",
    ] {
        let query = format!("{series}{{error_type!=\"\"}}");
        assert_eq!(
            query_result(prom_port, &query),
            Vec::<Value>::new(),
            "{query}"
        );
    }
    // One TTFT per successful request, and every one streamed enough tokens
    // for a TPOT.
    let ttft_per_success = wait_for(
        prom_port,
        "sum(gen_ai_server_time_to_first_token_seconds_count) \
         - sum(gen_ai_server_request_duration_seconds_count{error_type=\"\"})",
        Duration::from_secs(5),
    );
    assert_eq!(value(&ttft_per_success[0]), 0.0);
    let tpot_per_ttft = wait_for(
        prom_port,
        "sum(gen_ai_server_time_per_output_token_seconds_count) \
         - sum(gen_ai_server_time_to_first_token_seconds_count)",
        Duration::from_secs(5),
    );
    assert_eq!(value(&tpot_per_ttft[0]), 0.0);

    let active = wait_for(prom_port, "gym_servers_active", Duration::from_secs(5));
    assert_eq!(value(&active[0]), 4.0);
    let lr = wait_for(prom_port, "rl_learning_rate", Duration::from_secs(5));
    assert_eq!(value(&lr[0]), 1e-6);
    let per_request = wait_for(
        prom_port,
        "sum(gen_ai_client_token_usage_count{gen_ai_token_type=\"input\",gen_ai_operation_name=\"text_completion\"}) \
         - sum(gen_ai_server_request_duration_seconds_count)",
        Duration::from_secs(5),
    );
    assert_eq!(
        value(&per_request[0]),
        0.0,
        "one input-token point per request, whatever its outcome"
    );

    let target = wait_for(prom_port, "target_info", Duration::from_secs(5));
    for (name, want) in [
        ("service_name", "nemo-lens-demo"),
        ("nemo_run_id", "e2e-run"),
        ("service_instance_id", "e2e-run-rank0"),
        ("dl_rank", "0"),
        ("dl_world_size", "1"),
    ] {
        assert_eq!(label(&target[0], name), want, "target_info {name}");
    }

    // Request latencies are uniform in [0.05, 0.5] s over the semconv
    // buckets, so the interpolated p99 lies in the (0.32, 0.64] bucket.
    let p99 = wait_for(
        prom_port,
        "histogram_quantile(0.99, sum by (le) (gen_ai_server_request_duration_seconds_bucket))",
        Duration::from_secs(5),
    );
    let p99 = value(&p99[0]);
    assert!(p99 > 0.32 && p99 <= 0.64, "p99 request duration {p99}");

    let _ = std::fs::remove_dir_all(&dir);
}
