//! NVIDIA's aiperf, a real benchmark client, drives the example OpenAI
//! server on each API it serves, and what aiperf measured is held against
//! what the server exported on `/metrics`: chat completions, OpenAI's
//! Responses and Anthropic's Messages (streaming, more concurrent requests
//! than the server runs at once, a quarter of them cancelled mid-stream),
//! and embeddings.
//!
//! Needs the built server, aiperf and a tokenizer directory; run by
//! `scripts/e2e.sh`, which installs aiperf from PyPI into a venv. One test
//! at a time: each runs aiperf against its own server, and their timings
//! hold only on a machine they do not share.
//!
//! ```text
//! E2E_OPENAI_SERVER_BIN=... E2E_AIPERF_BIN=... E2E_AIPERF_TOKENIZER=... \
//!     cargo test --test aiperf_e2e -- --ignored --nocapture --test-threads=1
//! ```

use crate::support::aiperf::*;
use crate::support::servers::free_port;

const CONCURRENCY: u64 = 10;
const REQUESTS: u64 = 48;
const OUTPUT_TOKENS: u64 = 24;
/// Percent of requests aiperf cancels, and after how long: every stream
/// takes at least 40 + 23 × 8 = 224 ms, so each one chosen is cut short.
const CANCEL_PERCENT: u64 = 25;
const CANCEL_AFTER_S: f64 = 0.15;

fn streamed(endpoint_type: &str) -> Profile<'_> {
    Profile {
        endpoint_type,
        streaming: true,
        requests: REQUESTS,
        concurrency: CONCURRENCY,
        output_tokens: Some(OUTPUT_TOKENS),
        cancel: Some((CANCEL_PERCENT, CANCEL_AFTER_S)),
        goodput: None,
    }
}

/// aiperf streams `endpoint_type` at a fresh server; the figures agree.
/// Returns the server's exposition once every request has left.
fn streamed_run_agrees(endpoint_type: &str) -> String {
    let port = free_port();
    let _server = start_server(port);
    let artifacts = artifacts(&format!("aiperf-{endpoint_type}"));
    run_aiperf(port, &artifacts, &streamed(endpoint_type));
    let client = Client::read(&artifacts, true, true);
    assert_eq!(
        client.succeeded + client.failed,
        REQUESTS as f64,
        "every request ended one way or the other"
    );
    assert!(client.failed > 0.0, "aiperf cancelled some requests");
    // The server learns of a cancellation at its next write; a request
    // cancelled in the queue, once it gets a slot.
    let exposition = scrape_when_idle(port);
    let server = Server::read(&exposition, "chat");
    println!("aiperf --endpoint-type {endpoint_type} --streaming against the server's /metrics ({REQUESTS} requests, {CONCURRENCY} concurrent, {MAX_RUNNING} running at most, {CANCEL_PERCENT} % cancelled after {CANCEL_AFTER_S} s):");
    println!("| endpoint | measure | aiperf | server |");
    println!("|---|---|---|---|");
    assert_streamed_agree(endpoint_type, &client, &server, OUTPUT_TOKENS);
    assert_finished(&exposition, &client);
    let _ = std::fs::remove_dir_all(&artifacts);
    exposition
}

/// The scheduler's finish reasons: every success stopped at its length,
/// every cancellation left as aborted.
fn assert_finished(exposition: &str, client: &Client) {
    let all = samples(exposition);
    let finished = |reason: &'static str| {
        total(&all, "nemo_inference_requests_finished_total", |l| {
            l.get("nemo_inference_finish_reason").map(String::as_str) == Some(reason)
        })
    };
    assert_eq!(
        finished("abort"),
        client.failed,
        "cancelled requests left the scheduler as aborted"
    );
    assert_eq!(
        finished("length"),
        client.succeeded,
        "finished requests, by their finish reason"
    );
}

#[test]
#[ignore = "needs aiperf and the built example server; run scripts/e2e.sh"]
fn aiperf_and_the_server_agree_on_chat() {
    let port = free_port();
    let _server = start_server(port);
    let artifacts = artifacts("aiperf-chat");
    run_aiperf(port, &artifacts, &streamed("chat"));
    let client = Client::read(&artifacts, true, true);
    assert_eq!(client.succeeded + client.failed, REQUESTS as f64);
    assert!(client.failed > 0.0, "aiperf cancelled some requests");
    let exposition = scrape_when_idle(port);
    let server = Server::read(&exposition, "chat");

    // What aiperf saw of the gauges, scraping /metrics during the run.
    let scraped = read_json(&artifacts.join("server_metrics_export.json"));
    let gauge_max = |name: &str| {
        scraped["metrics"][name]["series"][0]["stats"]["max"]
            .as_f64()
            .unwrap_or_else(|| panic!("aiperf scraped no {name}"))
    };
    let waiting_max = gauge_max("nemo_inference_requests_waiting");
    let running_max = gauge_max("nemo_inference_requests_running");

    println!("aiperf --endpoint-type chat --streaming against the server's /metrics ({REQUESTS} requests, {CONCURRENCY} concurrent, {MAX_RUNNING} running at most, {CANCEL_PERCENT} % cancelled after {CANCEL_AFTER_S} s):");
    println!("| endpoint | measure | aiperf | server |");
    println!("|---|---|---|---|");
    assert_streamed_agree("chat", &client, &server, OUTPUT_TOKENS);
    println!("| chat | requests waiting, max while scraped | | {waiting_max} |");
    println!(
        "| chat | requests running, max while scraped | | {running_max} (--max-running {MAX_RUNNING}) |"
    );
    assert_finished(&exposition, &client);
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

#[test]
#[ignore = "needs aiperf and the built example server; run scripts/e2e.sh"]
fn aiperf_and_the_server_agree_on_responses() {
    let exposition = streamed_run_agrees("responses");
    // The Responses API's usage reaches the token histogram: 32 prompt
    // words per successful request.
    let server = Server::read(&exposition, "chat");
    assert!(
        server.input_tokens > 0.0,
        "input tokens from response usage"
    );
}

#[test]
#[ignore = "needs aiperf and the built example server; run scripts/e2e.sh"]
fn aiperf_and_the_server_agree_on_messages() {
    let exposition = streamed_run_agrees("messages");
    let server = Server::read(&exposition, "chat");
    assert!(server.input_tokens > 0.0, "input tokens from message_start");
}

/// Embeddings: not streamed, nothing generated, so no cancellation lands
/// mid-stream; the requests, their duration and their input tokens.
#[test]
#[ignore = "needs aiperf and the built example server; run scripts/e2e.sh"]
fn aiperf_and_the_server_agree_on_embeddings() {
    let port = free_port();
    let _server = start_server(port);
    let artifacts = artifacts("aiperf-embeddings");
    let profile = Profile {
        endpoint_type: "embeddings",
        streaming: false,
        requests: REQUESTS,
        concurrency: CONCURRENCY,
        output_tokens: None,
        cancel: None,
        goodput: None,
    };
    run_aiperf(port, &artifacts, &profile);
    let summary = read_json(&artifacts.join("profile_export_aiperf.json"));
    let client = Client::read(&artifacts, false, false);
    let client_input = summary["input_sequence_length"]["sum"].as_f64();
    let exposition = scrape_when_idle(port);
    let server = Server::read(&exposition, "embeddings");
    let chat = Server::read(&exposition, "chat");
    println!("aiperf --endpoint-type embeddings against the server's /metrics ({REQUESTS} requests, {CONCURRENCY} concurrent, {MAX_RUNNING} running at most):");
    println!("| endpoint | measure | aiperf | server |");
    println!("|---|---|---|---|");
    println!(
        "| embeddings | successful requests | {} | {} |",
        client.succeeded, server.succeeded
    );
    println!(
        "| embeddings | failed requests | {} | {} |",
        client.failed,
        server.errors.values().fold(0.0, |all, n| all + n)
    );
    println!(
        "| embeddings | request latency / duration, mean | {:.2} ms | {:.2} ms |",
        client.latency_ms, server.duration_ms
    );
    println!(
        "| embeddings | input tokens | {} | {} |",
        client_input.map_or_else(|| "none".to_owned(), |tokens| format!("{tokens:.0}")),
        server.input_tokens
    );
    println!(
        "| embeddings | output tokens, TTFT count | | {:.0}, {:.0} |",
        server.output_tokens.abs(),
        server.ttft_n.abs()
    );
    assert_eq!(client.succeeded, REQUESTS as f64);
    assert_eq!(server.succeeded, client.succeeded, "successful requests");
    assert!(server.errors.is_empty(), "{:?}", server.errors);
    assert!(
        within(
            server.duration_ms,
            client.latency_ms,
            TTFT_TOLERANCE_MS,
            TTFT_TOLERANCE
        ),
        "duration: server {:.2} ms, aiperf {:.2} ms",
        server.duration_ms,
        client.latency_ms
    );
    assert_eq!(
        Some(server.input_tokens),
        client_input,
        "input tokens: the server's usage against aiperf's tokenizer (one word, one token)"
    );
    assert_eq!(
        (server.output_tokens, server.ttft_n),
        (0.0, 0.0),
        "an embedding has no output tokens and no TTFT"
    );
    assert_eq!(chat.succeeded, 0.0, "recorded as embeddings only");
    let _ = std::fs::remove_dir_all(&artifacts);
}
