//! A metering reverse proxy for any OpenAI-compatible server (vLLM,
//! SGLang, llama.cpp, TGI...): every request is forwarded to the upstream
//! unchanged and recorded by `OpenAiLayer` on its way, so an engine that
//! cannot host a tower layer gets the GenAI server metrics and the routing
//! gauges, served on the proxy's own port at `/metrics`.
//!
//! ```text
//! cargo build --release --example openai_proxy --all-features
//! target/release/examples/openai_proxy --listen 127.0.0.1:9000 \
//!     --upstream http://127.0.0.1:8000 --model meta-llama/Llama-3.1-8B-Instruct
//! ```
//!
//! - Every path and method goes to the upstream as it came (hop-by-hop
//!   headers aside), its body streamed; the answer comes back the same way,
//!   each chunk written as it arrives, with no buffering added. `/metrics`
//!   is the proxy's own and is not forwarded.
//! - `--model` (repeatable) declares the models the upstream serves: only
//!   those become `gen_ai.request.model` values, any other is `_OTHER`.
//! - An upstream that cannot be reached (refused, reset before answering)
//!   is a `502`, one that has not answered within `--upstream-timeout-s`
//!   (default 300) a `504`, each with an OpenAI-style error body; the layer
//!   records them with `error.type` `502` or `504`. A response whose
//!   upstream fails mid-stream is cut and recorded as `body_error`.
//! - A client that goes away drops its upstream request: the connection to
//!   the upstream is closed, which is how engines learn to abort.
//! - `nemo_inference_requests_waiting` and `nemo_inference_requests_running`
//!   count what the proxy holds in flight, not the engine's queue: waiting
//!   from a request's arrival until the upstream's response head, running
//!   from then until the response ends (or the client leaves). Finished
//!   requests are counted by finish reason, as a gateway's are.
//!
//! Telemetry is on by default (`NEMO_LENS_ENABLED=0` turns it off); every
//! nemo-lens and OpenTelemetry variable applies. Only `http://` upstreams.

use std::error::Error;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::http::{HeaderMap, Uri};
use axum::routing::get;
use axum::Router;
use nemo_lens::instruments::serving::SchedulingMetrics;
use nemo_lens::openai::OpenAiLayer;
use nemo_lens::Instruments;

#[path = "openai_proxy/forward.rs"]
mod forward;
#[path = "openai_server/telemetry.rs"]
mod telemetry;

use forward::{forward, Proxy};

/// How long the upstream may take to answer with its response head.
const DEFAULT_UPSTREAM_TIMEOUT: Duration = Duration::from_secs(300);

struct Args {
    listen: SocketAddr,
    upstream: Uri,
    models: Vec<String>,
    timeout: Duration,
}

fn parse_args() -> Result<Args, String> {
    let usage = "usage: openai_proxy --listen 127.0.0.1:PORT --upstream http://HOST:PORT \
                 --model NAME [--model NAME ...] [--upstream-timeout-s SECONDS]";
    let (mut listen, mut upstream, mut models) = (None, None, Vec::new());
    let mut timeout = DEFAULT_UPSTREAM_TIMEOUT;
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "-h" || flag == "--help" {
            println!("{usage}");
            std::process::exit(0);
        }
        let value = it.next().ok_or(format!("{flag} needs a value; {usage}"))?;
        match flag.as_str() {
            "--listen" => {
                listen = Some(value.parse().map_err(|_| {
                    format!("--listen expects an address such as 127.0.0.1:9000, got {value:?}")
                })?)
            }
            "--upstream" => upstream = Some(upstream_uri(&value)?),
            "--model" if value.is_empty() => {
                return Err(format!(
                    "--model expects a model name, got an empty one; {usage}"
                ))
            }
            "--model" => models.push(value),
            "--upstream-timeout-s" => match value.parse::<u64>() {
                Ok(seconds) if seconds > 0 => timeout = Duration::from_secs(seconds),
                _ => {
                    return Err(format!(
                        "--upstream-timeout-s expects a positive number of seconds, got {value:?}"
                    ))
                }
            },
            _ => return Err(format!("unknown argument {flag:?}; {usage}")),
        }
    }
    let missing = |name: &str| format!("{name} is required; {usage}");
    if models.is_empty() {
        return Err(missing("--model"));
    }
    Ok(Args {
        listen: listen.ok_or_else(|| missing("--listen"))?,
        upstream: upstream.ok_or_else(|| missing("--upstream"))?,
        models,
        timeout,
    })
}

/// The upstream's base: `http://HOST:PORT`, with no path beyond `/`.
fn upstream_uri(value: &str) -> Result<Uri, String> {
    let uri: Uri = value
        .parse()
        .map_err(|e| format!("--upstream {value:?} is not a URL: {e}"))?;
    if uri.scheme_str() != Some("http") || uri.authority().is_none() {
        return Err(format!(
            "--upstream expects http://HOST:PORT (https is not supported), got {value:?}"
        ));
    }
    if !matches!(uri.path(), "" | "/") || uri.query().is_some() {
        return Err(format!(
            "--upstream expects no path (requests keep theirs), got {value:?}"
        ));
    }
    Ok(uri)
}

fn main() {
    if let Err(e) = run() {
        eprintln!("openai_proxy: {e}");
        std::process::exit(1);
    }
}

#[tokio::main]
async fn run() -> Result<(), Box<dyn Error>> {
    let args = parse_args()?;
    let (telemetry, renderer) = telemetry::setup("nemo-lens-openai-proxy")?;
    let meter = telemetry.meter.clone();
    // The routing gauges exist from the start, at zero: a router reads an
    // absent series as an unknown server.
    SchedulingMetrics::default()
        .requests_waiting(0)
        .requests_running(0)
        .record(&meter);
    let proxy = Arc::new(Proxy::new(args.upstream.clone(), args.timeout, &meter));
    let renderer = Arc::new(renderer);
    let metrics = get(move |headers: HeaderMap| async move {
        telemetry::metrics(renderer.as_ref().as_ref(), &headers)
    });
    let app = Router::new()
        .route("/metrics", metrics)
        .fallback(forward)
        .layer(
            OpenAiLayer::new(&meter)
                .models(args.models.iter().cloned())
                .server_port(args.listen.port())
                .count_finish_reasons(true),
        )
        .with_state(proxy);

    let listener = tokio::net::TcpListener::bind(args.listen).await?;
    println!(
        "proxying http://{} to {} for {}",
        listener.local_addr()?,
        args.upstream,
        args.models.join(", ")
    );
    telemetry::serve(listener, app, telemetry).await
}
