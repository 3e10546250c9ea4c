//! NVIDIA's aiperf drives the metering proxy (`examples/openai_proxy.rs`)
//! in front of the example OpenAI server: the proxy's `/metrics` is held
//! against aiperf's figures (chat, streamed with a quarter cancelled, and
//! not streamed), its added time to first token is measured against the
//! server driven directly, and the upstream stopped mid-run gives 502s
//! recorded with `error.type` while the proxy keeps serving; bad command
//! lines are refused with a message naming the flag.
//!
//! Needs the built server and proxy, aiperf and a tokenizer directory; run
//! by `scripts/e2e.sh`, one test at a time:
//!
//! ```text
//! E2E_OPENAI_SERVER_BIN=... E2E_OPENAI_PROXY_BIN=... E2E_AIPERF_BIN=... \
//!     E2E_AIPERF_TOKENIZER=... cargo test --test proxy_e2e -- --ignored --nocapture --test-threads=1
//! ```

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::aiperf::*;
use crate::support::servers::{free_port, Reaped};

const CONCURRENCY: u64 = 10;
const REQUESTS: u64 = 48;
const OUTPUT_TOKENS: u64 = 24;
const CANCEL_PERCENT: u64 = 25;
const CANCEL_AFTER_S: f64 = 0.15;

/// The proxy on `port` in front of `127.0.0.1:upstream`.
fn start_proxy(port: u16, upstream: u16) -> Reaped {
    let mut command = Command::new(env_path("E2E_OPENAI_PROXY_BIN"));
    command
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .args(["--upstream", &format!("http://127.0.0.1:{upstream}")])
        .args(["--model", MODEL, "--model", "another-model"]);
    start_serving(command, port)
}

fn chat(streaming: bool, cancel: bool) -> Profile<'static> {
    Profile {
        endpoint_type: "chat",
        streaming,
        requests: REQUESTS,
        concurrency: CONCURRENCY,
        output_tokens: Some(OUTPUT_TOKENS),
        cancel: cancel.then_some((CANCEL_PERCENT, CANCEL_AFTER_S)),
        goodput: None,
    }
}

/// The status of one non-streamed chat completion through `port`.
fn post_chat(port: u16) -> Option<u16> {
    let body = format!(
        r#"{{"model":"{MODEL}","max_tokens":2,"messages":[{{"role":"user","content":"hi"}}]}}"#
    );
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    let request = format!(
        "POST /v1/chat/completions HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    response.split(' ').nth(1)?.parse().ok()
}

/// Streamed chat, a quarter cancelled, through the proxy: its figures
/// agree with aiperf's, and its cancellations reached the upstream.
#[test]
#[ignore = "needs aiperf and the built example server and proxy; run scripts/e2e.sh"]
fn aiperf_and_the_proxy_agree_streamed() {
    let (server_port, proxy_port) = (free_port(), free_port());
    let _server = start_server(server_port);
    let _proxy = start_proxy(proxy_port, server_port);
    let artifacts = artifacts("proxy-streamed");
    run_aiperf(proxy_port, &artifacts, &chat(true, true));
    let client = Client::read(&artifacts, true, true);
    assert_eq!(client.succeeded + client.failed, REQUESTS as f64);
    assert!(client.failed > 0.0, "aiperf cancelled some requests");
    let proxied = Server::read(&scrape_when_idle(proxy_port), "chat");
    let upstream = Server::read(&scrape_when_idle(server_port), "chat");

    println!("aiperf --endpoint-type chat --streaming through the proxy, against the proxy's /metrics ({REQUESTS} requests, {CONCURRENCY} concurrent, {CANCEL_PERCENT} % cancelled after {CANCEL_AFTER_S} s):");
    println!("| endpoint | measure | aiperf | proxy |");
    println!("|---|---|---|---|");
    assert_streamed_agree("chat via proxy", &client, &proxied, OUTPUT_TOKENS);
    println!(
        "| chat via proxy | upstream's successful / cancelled | | {} / {} (the upstream's own /metrics) |",
        upstream.succeeded, upstream.cancelled
    );
    assert_eq!(
        upstream.succeeded, proxied.succeeded,
        "the upstream served what the proxy did"
    );
    assert_eq!(
        upstream.cancelled, proxied.cancelled,
        "every client that went away cancelled its upstream request"
    );
    assert_eq!(upstream.output_tokens, proxied.output_tokens);
    // The proxy's gauges, as aiperf scraped them during the run: what it
    // held in flight, at most aiperf's concurrency.
    let scraped = read_json(&artifacts.join("server_metrics_export.json"));
    let running_max = scraped["metrics"]["nemo_inference_requests_running"]["series"][0]["stats"]
        ["max"]
        .as_f64()
        .unwrap_or_else(|| panic!("aiperf scraped no nemo_inference_requests_running"));
    println!("| chat via proxy | requests running (held by the proxy), max while scraped | | {running_max} |");
    assert!(
        running_max > 0.0 && running_max <= CONCURRENCY as f64,
        "running {running_max}"
    );
    let _ = std::fs::remove_dir_all(&artifacts);
}

/// The proxy's added latency: the same streamed load, no more requests
/// than the server runs at once (no queue to blur it) and none
/// cancelled, directly and through the proxy; aiperf's TTFT and ITL
/// compared.
#[test]
#[ignore = "needs aiperf and the built example server and proxy; run scripts/e2e.sh"]
fn the_proxy_adds_little_to_the_time_to_first_token() {
    let profile = Profile {
        concurrency: MAX_RUNNING,
        ..chat(true, false)
    };
    let direct = {
        let port = free_port();
        let _server = start_server(port);
        let artifacts = artifacts("proxy-direct");
        run_aiperf(port, &artifacts, &profile);
        let client = Client::read(&artifacts, true, true);
        let _ = std::fs::remove_dir_all(&artifacts);
        client
    };
    let (server_port, proxy_port) = (free_port(), free_port());
    let _server = start_server(server_port);
    let _proxy = start_proxy(proxy_port, server_port);
    let artifacts = artifacts("proxy-latency");
    run_aiperf(proxy_port, &artifacts, &profile);
    let proxied = Client::read(&artifacts, true, true);
    let _ = std::fs::remove_dir_all(&artifacts);
    let mean = |c: &Client| (c.ttft_ms.unwrap_or(f64::NAN), c.itl_ms.unwrap_or(f64::NAN));
    let ((ttft, itl), (direct_ttft, direct_itl)) = (mean(&proxied), mean(&direct));
    println!("aiperf --endpoint-type chat --streaming, {REQUESTS} requests, {MAX_RUNNING} concurrent (= --max-running), directly and through the proxy:");
    println!("| measure | through the proxy | direct | added by the proxy |");
    println!("|---|---|---|---|");
    println!(
        "| aiperf time to first token, mean | {ttft:.2} ms | {direct_ttft:.2} ms | {:+.2} ms |",
        ttft - direct_ttft
    );
    println!(
        "| aiperf inter-token latency, mean | {itl:.3} ms | {direct_itl:.3} ms | {:+.3} ms |",
        itl - direct_itl
    );
    assert_eq!(
        (proxied.succeeded, direct.succeeded),
        (REQUESTS as f64, REQUESTS as f64)
    );
    // Within the tolerance the server's own figures are held to.
    assert!(
        within(ttft, direct_ttft, TTFT_TOLERANCE_MS, TTFT_TOLERANCE),
        "TTFT through the proxy {ttft:.2} ms, direct {direct_ttft:.2} ms"
    );
    assert!(
        within(itl, direct_itl, TPOT_TOLERANCE_MS, TPOT_TOLERANCE),
        "ITL through the proxy {itl:.3} ms, direct {direct_itl:.3} ms"
    );
}

#[test]
#[ignore = "needs aiperf and the built example server and proxy; run scripts/e2e.sh"]
fn aiperf_and_the_proxy_agree_not_streamed() {
    let (server_port, proxy_port) = (free_port(), free_port());
    let _server = start_server(server_port);
    let _proxy = start_proxy(proxy_port, server_port);
    let artifacts = artifacts("proxy-unstreamed");
    run_aiperf(proxy_port, &artifacts, &chat(false, false));
    let client = Client::read(&artifacts, false, true);
    let proxied = Server::read(&scrape_when_idle(proxy_port), "chat");
    let client_tokens = client.output_tokens.unwrap_or(0.0);
    println!("aiperf --endpoint-type chat (not streamed) through the proxy, against the proxy's /metrics ({REQUESTS} requests, {CONCURRENCY} concurrent):");
    println!("| endpoint | measure | aiperf | proxy |");
    println!("|---|---|---|---|");
    println!(
        "| chat via proxy, not streamed | successful requests | {} | {} |",
        client.succeeded, proxied.succeeded
    );
    println!(
        "| chat via proxy, not streamed | output tokens | {client_tokens} | {} |",
        proxied.output_tokens
    );
    println!(
        "| chat via proxy, not streamed | request latency / duration, mean | {:.2} ms | {:.2} ms |",
        client.latency_ms, proxied.duration_ms
    );
    assert_eq!(client.succeeded, REQUESTS as f64);
    assert_eq!(proxied.succeeded, client.succeeded);
    assert!(proxied.errors.is_empty(), "{:?}", proxied.errors);
    // Any other path and method reaches the upstream too.
    let models = crate::support::servers::http_get(proxy_port, "/v1/models").unwrap_or_default();
    assert!(
        models.contains(MODEL),
        "GET /v1/models through the proxy: {models}"
    );
    assert_eq!(proxied.output_tokens, client_tokens, "output tokens");
    assert_eq!(proxied.ttft_n, 0.0, "no TTFT without a stream");
    assert!(
        within(
            proxied.duration_ms,
            client.latency_ms,
            TTFT_TOLERANCE_MS,
            TTFT_TOLERANCE
        ),
        "duration: proxy {:.2} ms, aiperf {:.2} ms",
        proxied.duration_ms,
        client.latency_ms
    );
    let _ = std::fs::remove_dir_all(&artifacts);
}

/// The upstream stopped mid-run (after 20 successes): what aiperf saw fail, the proxy recorded
/// as failed (502s with `error.type`, streams cut), and once the upstream
/// is back the proxy serves again.
#[test]
#[ignore = "needs aiperf and the built example server and proxy; run scripts/e2e.sh"]
fn the_upstream_stopped_mid_run_is_502s_and_the_proxy_keeps_serving() {
    let (server_port, proxy_port) = (free_port(), free_port());
    let server = start_server(server_port);
    let _proxy = start_proxy(proxy_port, server_port);
    let artifacts = artifacts("proxy-outage");
    let profile = Profile {
        requests: 160,
        concurrency: 4,
        ..chat(false, false)
    };
    // Four at a time, each 40 + 23 × 8 ms: about 10 s of load; the
    // upstream is stopped once the proxy has seen 20 succeed (at most 120 s
    // on: aiperf takes a few seconds to start).
    let stopper = std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline {
            let seen = crate::support::servers::http_get(proxy_port, "/metrics")
                .map_or(0.0, |e| Server::read(&e, "chat").succeeded);
            if seen >= 20.0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        drop(server);
    });
    run_aiperf(proxy_port, &artifacts, &profile);
    stopper.join().unwrap();
    let client = Client::read(&artifacts, false, true);
    let proxied = Server::read(&scrape_when_idle(proxy_port), "chat");
    let failed: f64 = proxied.errors.values().sum();
    println!("aiperf --endpoint-type chat through the proxy, upstream stopped after 20 successes (160 requests, 4 concurrent):");
    println!("| measure | aiperf | proxy |");
    println!("|---|---|---|");
    println!(
        "| successful requests | {} | {} |",
        client.succeeded, proxied.succeeded
    );
    println!(
        "| failed requests | {} | {failed} {:?} |",
        client.failed, proxied.errors
    );
    assert!(client.succeeded > 0.0 && client.failed > 0.0, "{client:?}");
    assert_eq!(proxied.succeeded, client.succeeded, "successful requests");
    assert_eq!(
        failed, client.failed,
        "failed requests, each with an error.type"
    );
    assert!(
        proxied.errors.get("502").copied().unwrap_or(0.0) > 0.0,
        "the upstream down is a 502: {:?}",
        proxied.errors
    );

    // The upstream back on its port: the proxy serves again.
    let _server = start_server(server_port);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let status = post_chat(proxy_port);
        if status == Some(200) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the proxy does not serve again: {status:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let after = Server::read(&scrape(proxy_port), "chat");
    assert_eq!(after.succeeded, proxied.succeeded + 1.0);
    let _ = std::fs::remove_dir_all(&artifacts);
}

/// An upstream that takes the connection and never answers: after
/// `--upstream-timeout-s` the client gets a 504, recorded with its
/// `error.type`, and the request leaves the gauges.
#[test]
#[ignore = "needs the built proxy; run scripts/e2e.sh"]
fn an_upstream_that_does_not_answer_is_a_504() {
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let upstream = silent.local_addr().unwrap().port();
    // Holds what it accepts, unanswered, until the test ends (at most 30 s).
    std::thread::spawn(move || {
        let mut held = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        silent.set_nonblocking(true).unwrap();
        while Instant::now() < deadline {
            if let Ok((stream, _)) = silent.accept() {
                held.push(stream);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    let proxy_port = free_port();
    let mut command = Command::new(env_path("E2E_OPENAI_PROXY_BIN"));
    command
        .args(["--listen", &format!("127.0.0.1:{proxy_port}")])
        .args(["--upstream", &format!("http://127.0.0.1:{upstream}")])
        .args(["--model", MODEL, "--upstream-timeout-s", "1"]);
    let _proxy = start_serving(command, proxy_port);
    let started = Instant::now();
    assert_eq!(post_chat(proxy_port), Some(504));
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(1) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
    let proxied = Server::read(&scrape_when_idle(proxy_port), "chat");
    println!("| silent upstream, --upstream-timeout-s 1 | status 504 after {waited:?} | proxy errors {:?} |", proxied.errors);
    assert_eq!(
        proxied.errors.get("504"),
        Some(&1.0),
        "{:?}",
        proxied.errors
    );
    assert_eq!(proxied.succeeded, 0.0);
}

/// Command lines the proxy refuses, each with a message naming the flag
/// and the value, before it binds anything.
#[test]
#[ignore = "needs the built proxy; run scripts/e2e.sh"]
fn bad_command_lines_are_refused_naming_the_flag() {
    let listen = format!("127.0.0.1:{}", free_port());
    let listen = listen.as_str();
    // Each case beside an upstream that is never reached.
    for (args, message) in [
        (
            &["--listen", listen, "--model", ""][..],
            "--model expects a model name, got an empty one",
        ),
        (&["--listen", listen], "--model is required"),
        (
            &["--listen", "nowhere", "--model", MODEL],
            "--listen expects an address such as 127.0.0.1:9000, got \"nowhere\"",
        ),
        (
            &[
                "--listen",
                listen,
                "--model",
                MODEL,
                "--upstream-timeout-s",
                "0",
            ],
            "--upstream-timeout-s expects a positive number of seconds, got \"0\"",
        ),
    ] {
        let output = Command::new(env_path("E2E_OPENAI_PROXY_BIN"))
            .args(["--upstream", "http://127.0.0.1:1"])
            .args(args)
            .output()
            .expect("run the proxy");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?} was accepted");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}
