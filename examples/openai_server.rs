//! An OpenAI-compatible inference server with a toy token generator,
//! instrumented by `OpenAiLayer` (the GenAI server metrics, without the
//! handlers' help) and `ScheduledRequest` (the gauges routers and
//! autoscalers read), with `/metrics` on the same port.
//!
//! ```text
//! cargo build --release --example openai_server --all-features
//! target/release/examples/openai_server --port 8000 --model llama-3-8b \
//!     --ttft-ms 40 --itl-ms 8 --max-running 4
//! ```
//!
//! It serves `GET /v1/models`, `POST /v1/chat/completions` and
//! `POST /v1/completions` (streamed with `"stream": true`, else one JSON
//! reply; `max_completion_tokens` or `max_tokens` words, 16 by default, each
//! a token, the first after `--ttft-ms` and the others `--itl-ms` apart;
//! `usage` in the final chunk) and `GET /metrics`, on 127.0.0.1. At most
//! `--max-running` requests generate at once; the others wait in a queue.
//! Telemetry is on by default (`NEMO_LENS_ENABLED=0` turns it off); every
//! nemo-lens and OpenTelemetry variable applies, and
//! `NEMO_LENS_EXPORTER=otlp` or `console` sends the metrics there instead
//! of serving them.

use std::convert::Infallible;
use std::error::Error;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::serve::ListenerExt;
use axum::{Json, Router};
use futures_util::stream::{self, Stream, StreamExt};
use nemo_lens::instruments::serving::{FinishReason, ScheduledRequest, SchedulingMetrics};
use nemo_lens::openai::OpenAiLayer;
use nemo_lens::prometheus::PrometheusRenderer;
use nemo_lens::{EnvLookup, ExporterKind, Instruments, Meter, NemoLensConfig, SetupOptions};
use serde_json::{json, Value};
use tokio::sync::Semaphore;

/// The words the toy model generates, one token each.
const WORDS: &[&str] = &[
    "the", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog", "and", "then", "it",
    "rests", "under", "a", "tree",
];
/// Tokens generated when a request sets no limit.
const DEFAULT_MAX_TOKENS: u64 = 16;
/// The largest generation a request may ask for.
const MAX_TOKENS_LIMIT: u64 = 65_536;
/// Tokens per KV-cache block, and the KV cache each running request may fill.
const BLOCK_SIZE: u64 = 16;
const TOKENS_PER_SLOT: u64 = 4096;
/// Prompt tokens every request shares with the ones before it: the toy
/// prefix cache's hits.
const SHARED_PREFIX_TOKENS: u64 = 8;

struct Args {
    port: u16,
    model: String,
    ttft: Duration,
    itl: Duration,
    max_running: usize,
}

fn parse_args() -> Result<Args, String> {
    let usage = "usage: openai_server --port P --model NAME --ttft-ms X --itl-ms Y --max-running N";
    let (mut port, mut model, mut ttft, mut itl, mut max_running) = (None, None, None, None, None);
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "-h" || flag == "--help" {
            println!("{usage}");
            std::process::exit(0);
        }
        let value = it.next().ok_or(format!("{flag} needs a value; {usage}"))?;
        let number = |what: &str| -> Result<u64, String> {
            value
                .parse()
                .map_err(|_| format!("{flag} expects {what}, got {value:?}"))
        };
        match flag.as_str() {
            "--port" => {
                port = Some(
                    value
                        .parse()
                        .map_err(|_| format!("--port expects a TCP port, got {value:?}"))?,
                )
            }
            "--model" if !value.is_empty() => model = Some(value.clone()),
            "--ttft-ms" => ttft = Some(Duration::from_millis(number("milliseconds")?)),
            "--itl-ms" => itl = Some(Duration::from_millis(number("milliseconds")?)),
            "--max-running" => match number("a positive number of requests")? {
                0 => return Err("--max-running must be at least 1".into()),
                n => max_running = Some(n as usize),
            },
            _ => return Err(format!("unknown argument {flag:?}; {usage}")),
        }
    }
    let missing = |name: &str| format!("{name} is required; {usage}");
    Ok(Args {
        port: port.ok_or_else(|| missing("--port"))?,
        model: model.ok_or_else(|| missing("--model"))?,
        ttft: ttft.ok_or_else(|| missing("--ttft-ms"))?,
        itl: itl.ok_or_else(|| missing("--itl-ms"))?,
        max_running: max_running.ok_or_else(|| missing("--max-running"))?,
    })
}

/// The toy engine: a queue in front of `max_running` generation slots.
struct Engine {
    meter: Meter,
    model: String,
    ttft: Duration,
    itl: Duration,
    slots: Semaphore,
    kv: KvCache,
    ids: AtomicU64,
    renderer: Option<PrometheusRenderer>,
}

/// The KV cache as blocks: every running request holds the blocks its
/// prompt and generated tokens fill, and the usage gauge follows.
struct KvCache {
    meter: Meter,
    blocks: u64,
    used: AtomicU64,
}

impl KvCache {
    fn new(meter: &Meter, blocks: u64) -> Self {
        // The routing gauges exist from the start, at zero: a router reads
        // an absent series as an unknown server.
        SchedulingMetrics::default()
            .kv_cache_block_size(BLOCK_SIZE)
            .kv_cache_blocks(blocks)
            .kv_cache_usage(0.0)
            .requests_waiting(0)
            .requests_running(0)
            .record(meter);
        KvCache {
            meter: meter.clone(),
            blocks,
            used: AtomicU64::new(0),
        }
    }

    fn add(&self, blocks: i64) {
        let used = if blocks >= 0 {
            self.used.fetch_add(blocks as u64, Ordering::Relaxed) + blocks as u64
        } else {
            self.used
                .fetch_sub(blocks.unsigned_abs(), Ordering::Relaxed)
                - blocks.unsigned_abs()
        };
        SchedulingMetrics::default()
            .kv_cache_usage((used as f64 / self.blocks as f64).min(1.0))
            .record(&self.meter);
    }
}

/// The blocks one request holds, given back when it ends however it ends.
struct Blocks<'a> {
    kv: &'a KvCache,
    tokens: u64,
    held: u64,
}

impl<'a> Blocks<'a> {
    fn new(kv: &'a KvCache, prompt_tokens: u64) -> Self {
        let mut blocks = Blocks {
            kv,
            tokens: 0,
            held: 0,
        };
        blocks.grow(prompt_tokens);
        blocks
    }

    fn grow(&mut self, tokens: u64) {
        self.tokens += tokens;
        let needed = self.tokens.div_ceil(BLOCK_SIZE);
        if needed > self.held {
            self.kv.add((needed - self.held) as i64);
            self.held = needed;
        }
    }
}

impl Drop for Blocks<'_> {
    fn drop(&mut self) {
        self.kv.add(-(self.held as i64));
    }
}

/// What a completion request asks for.
struct Ask {
    chat: bool,
    stream: bool,
    max_tokens: u64,
    prompt_tokens: u64,
}

fn words_in(value: &Value) -> u64 {
    match value {
        Value::String(text) => text.split_whitespace().count() as u64,
        Value::Array(items) => items.iter().map(words_in).sum(),
        Value::Object(part) => part.get("text").or(part.get("content")).map_or(0, words_in),
        _ => 0,
    }
}

/// An OpenAI-style error reply.
struct ApiError {
    status: StatusCode,
    message: String,
    param: Option<&'static str>,
    code: &'static str,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error": {"message": self.message, "type": "invalid_request_error",
                                    "param": self.param, "code": self.code}});
        (self.status, Json(body)).into_response()
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Engine {
    /// Reads a request body, or the OpenAI-style error to answer it with.
    fn ask(&self, chat: bool, body: &[u8]) -> Result<Ask, ApiError> {
        let request: Value = serde_json::from_slice(body).map_err(|e| ApiError {
            status: StatusCode::BAD_REQUEST,
            message: format!("the body is not valid JSON: {e}"),
            param: None,
            code: "invalid_json",
        })?;
        let model = request
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if model != self.model {
            return Err(ApiError {
                status: StatusCode::NOT_FOUND,
                message: format!("The model `{model}` does not exist."),
                param: Some("model"),
                code: "model_not_found",
            });
        }
        let limit = ["max_completion_tokens", "max_tokens"]
            .iter()
            .find_map(|key| request.get(*key).and_then(Value::as_u64));
        let max_tokens = limit.unwrap_or(DEFAULT_MAX_TOKENS);
        if max_tokens == 0 || max_tokens > MAX_TOKENS_LIMIT {
            return Err(ApiError {
                status: StatusCode::BAD_REQUEST,
                message: format!(
                    "max_tokens must be between 1 and {MAX_TOKENS_LIMIT}, got {max_tokens}"
                ),
                param: Some("max_tokens"),
                code: "invalid_value",
            });
        }
        let prompt = if chat {
            request.get("messages")
        } else {
            request.get("prompt")
        };
        Ok(Ask {
            chat,
            stream: request
                .get("stream")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            max_tokens,
            prompt_tokens: prompt.map_or(0, words_in),
        })
    }

    /// One request through the scheduler: queued, then generating once a
    /// slot is free; each generated word is handed to `emit`.
    async fn generate(&self, ask: &Ask, mut emit: impl FnMut(u64, &str)) {
        let mut scheduled = ScheduledRequest::queued(&self.meter);
        scheduled.prefix_cache(
            ask.prompt_tokens,
            ask.prompt_tokens.min(SHARED_PREFIX_TOKENS),
        );
        let Ok(_slot) = self.slots.acquire().await else {
            return; // the semaphore is never closed
        };
        scheduled.start();
        let mut blocks = Blocks::new(&self.kv, ask.prompt_tokens);
        tokio::time::sleep(self.ttft).await;
        scheduled.first_token();
        for i in 0..ask.max_tokens {
            if i > 0 {
                tokio::time::sleep(self.itl).await;
            }
            blocks.grow(1);
            emit(i, WORDS[i as usize % WORDS.len()]);
        }
        scheduled.finish(FinishReason::Length);
    }

    fn chunk(&self, ask: &Ask, id: &str, text: &str, finish: Option<&str>) -> Value {
        if ask.chat {
            json!({"id": id, "object": "chat.completion.chunk", "created": now_secs(), "model": self.model,
                   "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish}]})
        } else {
            json!({"id": id, "object": "text_completion", "created": now_secs(), "model": self.model,
                   "choices": [{"index": 0, "text": text, "logprobs": null, "finish_reason": finish}]})
        }
    }

    fn usage(ask: &Ask) -> Value {
        json!({"prompt_tokens": ask.prompt_tokens, "completion_tokens": ask.max_tokens,
               "total_tokens": ask.prompt_tokens + ask.max_tokens,
               "prompt_tokens_details": {"cached_tokens": ask.prompt_tokens.min(SHARED_PREFIX_TOKENS)}})
    }

    fn id(&self, ask: &Ask) -> String {
        let n = self.ids.fetch_add(1, Ordering::Relaxed);
        if ask.chat {
            format!("chatcmpl-{n}")
        } else {
            format!("cmpl-{n}")
        }
    }
}

/// A streamed reply: the words as SSE chunks while they are generated, then
/// a chunk with `usage`, then `[DONE]`. Dropping it (the client went away)
/// drops the generation, which leaves the scheduler's gauges as it goes.
fn stream_reply(engine: Arc<Engine>, ask: Ask) -> impl Stream<Item = Result<Bytes, Infallible>> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Bytes>();
    let generation = async move {
        let id = engine.id(&ask);
        let last = ask.max_tokens - 1;
        engine
            .generate(&ask, |i, word| {
                let text = if i == 0 {
                    word.to_owned()
                } else {
                    format!(" {word}")
                };
                let finish = (i == last).then_some("length");
                let _ = tx.send(sse(&engine.chunk(&ask, &id, &text, finish)));
            })
            .await;
        let mut usage = engine.chunk(&ask, &id, "", None);
        usage["choices"] = json!([]);
        usage["usage"] = Engine::usage(&ask);
        let _ = tx.send(sse(&usage));
        let _ = tx.send(Bytes::from_static(b"data: [DONE]\n\n"));
    };
    // The generation runs as the body is polled, and stops with it.
    let generation = stream::once(generation).filter_map(|()| async { None });
    let frames = tokio_stream_from(rx);
    stream::select(generation, frames).map(Ok)
}

/// The receiving end of a channel as a stream that ends when the sender is
/// gone.
fn tokio_stream_from(rx: tokio::sync::mpsc::UnboundedReceiver<Bytes>) -> impl Stream<Item = Bytes> {
    stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|frame| (frame, rx))
    })
}

fn sse(value: &Value) -> Bytes {
    Bytes::from(format!("data: {value}\n\n"))
}

async fn completions(engine: Arc<Engine>, chat: bool, body: Bytes) -> Response {
    let ask = match engine.ask(chat, &body) {
        Ok(ask) => ask,
        Err(error) => return error.into_response(),
    };
    if ask.stream {
        return Response::builder()
            .header(header::CONTENT_TYPE, "text/event-stream")
            .header(header::CACHE_CONTROL, "no-cache")
            .body(Body::from_stream(stream_reply(engine, ask)))
            .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response());
    }
    let mut text = String::new();
    engine
        .generate(&ask, |i, word| {
            if i > 0 {
                text.push(' ');
            }
            text.push_str(word);
        })
        .await;
    let id = engine.id(&ask);
    let (object, choice) = if chat {
        (
            "chat.completion",
            json!({"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "length"}),
        )
    } else {
        (
            "text_completion",
            json!({"index": 0, "text": text, "logprobs": null, "finish_reason": "length"}),
        )
    };
    Json(
        json!({"id": id, "object": object, "created": now_secs(), "model": engine.model,
                "choices": [choice], "usage": Engine::usage(&ask)}),
    )
    .into_response()
}

async fn models(State(engine): State<Arc<Engine>>) -> Json<Value> {
    Json(json!({"object": "list", "data": [
        {"id": engine.model, "object": "model", "created": 0, "owned_by": "nemo-lens"}]}))
}

async fn metrics(State(engine): State<Arc<Engine>>, headers: HeaderMap) -> Response {
    let Some(renderer) = &engine.renderer else {
        return (
            StatusCode::NOT_FOUND,
            "metrics are pushed to the configured exporter\n",
        )
            .into_response();
    };
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|value| value.to_str().ok());
    match renderer.render_for(accept) {
        Ok(exposition) => (
            [(header::CONTENT_TYPE, exposition.content_type)],
            exposition.body,
        )
            .into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

fn main() {
    if let Err(e) = run() {
        eprintln!("openai_server: {e}");
        std::process::exit(1);
    }
}

#[tokio::main]
async fn run() -> Result<(), Box<dyn Error>> {
    let args = parse_args()?;
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    let env = EnvLookup::process().with_defaults([
        ("NEMO_LENS_ENABLED", "1"),
        ("NEMO_LENS_EXPORTER", "prometheus"),
        ("OTEL_SERVICE_NAME", "nemo-lens-openai-server"),
    ]);
    let config = NemoLensConfig::from_lookup(env.clone())?;
    let options = SetupOptions::new()
        .env(env)
        .service_version(env!("CARGO_PKG_VERSION"));
    // Prometheus is served on the API's own port rather than a second one.
    let (telemetry, renderer) = if config.exporter == ExporterKind::Prometheus {
        let (reader, renderer) = PrometheusRenderer::new(&config.prometheus_resource_labels)?;
        (
            options.metric_reader(reader).setup(&config, 0, 1)?,
            Some(renderer),
        )
    } else {
        (options.setup(&config, 0, 1)?, None)
    };
    let meter = telemetry.meter.clone();
    let engine = Arc::new(Engine {
        kv: KvCache::new(
            &meter,
            args.max_running as u64 * TOKENS_PER_SLOT / BLOCK_SIZE,
        ),
        meter: meter.clone(),
        model: args.model.clone(),
        ttft: args.ttft,
        itl: args.itl,
        slots: Semaphore::new(args.max_running),
        ids: AtomicU64::new(0),
        renderer,
    });

    let chat = Arc::clone(&engine);
    let text = Arc::clone(&engine);
    let app = Router::new()
        .route(
            "/v1/chat/completions",
            post(move |body: Bytes| completions(chat, true, body)),
        )
        .route(
            "/v1/completions",
            post(move |body: Bytes| completions(text, false, body)),
        )
        .layer(
            OpenAiLayer::new(&meter)
                .models([args.model.clone()])
                .server_port(args.port),
        )
        .route("/v1/models", get(models))
        .route("/metrics", get(metrics))
        .with_state(engine);

    let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.port)).await?;
    println!(
        "serving {} on http://{}",
        args.model,
        listener.local_addr()?
    );
    // Each token is its own small write: without TCP_NODELAY, Nagle's
    // algorithm holds one back until the previous is acknowledged.
    let listener = listener.tap_io(|stream| {
        if let Err(e) = stream.set_nodelay(true) {
            tracing::warn!("cannot set TCP_NODELAY: {e}");
        }
    });
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
        .await?;
    if let Err(e) = telemetry.shutdown() {
        eprintln!("openai_server: {e}");
    }
    Ok(())
}

/// Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminate => {}
    }
}
