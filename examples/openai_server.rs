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
//! It serves `GET /v1/models`, `POST /v1/chat/completions`,
//! `POST /v1/completions`, `POST /v1/responses` (OpenAI's Responses API)
//! and `POST /v1/messages` (Anthropic's Messages API), streamed with
//! `"stream": true`, else one JSON reply (`max_completion_tokens`,
//! `max_tokens` or `max_output_tokens` words, 16 by default, each a token,
//! the first after `--ttft-ms` and the others `--itl-ms` apart; `usage` at
//! the end, in each API's shape); `POST /v1/embeddings` (one toy vector per
//! input after `--ttft-ms`, `usage.prompt_tokens` its words); and
//! `GET /metrics`, on 127.0.0.1. At most `--max-running` requests run at
//! once; the others wait in a queue.
//!
//! To try latency objectives (`NEMO_LENS_SLO`), `--slow-every N` makes every
//! Nth request by arrival slow: it waits `--slow-ttft-ms` before its first
//! token instead of `--ttft-ms`, and `--slow-itl-ms` between its tokens
//! instead of `--itl-ms` (each defaults to the usual value).
//! Telemetry is on by default (`NEMO_LENS_ENABLED=0` turns it off); every
//! nemo-lens and OpenTelemetry variable applies, and
//! `NEMO_LENS_EXPORTER=otlp` or `console` sends the metrics there instead
//! of serving them.
//!
//! With `OTEL_TRACES_EXPORTER=otlp`, each generating request runs in a server
//! span (its parent from `traceparent`), sampled as `OTEL_TRACES_SAMPLER` /
//! `OTEL_TRACES_SAMPLER_ARG` say and exported over OTLP (endpoint and
//! protocol from the `OTEL_EXPORTER_OTLP_*` variables): the TTFT and
//! request-duration buckets on `/metrics` carry the sampled requests' trace
//! ids as exemplars. Without a trace exporter no span is made (they would
//! cost every request and reach no backend); a request's sampled
//! `traceparent` still gives its exemplars the caller's trace id.

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
use axum::{Json, Router};
use futures_util::stream::{self, Stream, StreamExt};
use nemo_lens::instruments::serving::{FinishReason, ScheduledRequest, SchedulingMetrics};
use nemo_lens::openai::OpenAiLayer;
use nemo_lens::prometheus::PrometheusRenderer;
use nemo_lens::{Instruments, Meter};
use serde_json::{json, Value};
use tokio::sync::Semaphore;

// Each API's shapes, in a file of its own (an example's modules are found
// by path from the crate root).
#[path = "openai_server/completions.rs"]
mod completions;
#[path = "openai_server/embeddings.rs"]
mod embeddings;
#[path = "openai_server/messages.rs"]
mod messages;
#[path = "openai_server/reply.rs"]
mod reply;
#[path = "openai_server/responses.rs"]
mod responses;
#[path = "openai_server/telemetry.rs"]
mod telemetry;
#[path = "openai_server/traces.rs"]
mod traces;

use completions::Completions;
use messages::Messages;
use reply::{Format, Reply};
use responses::Responses;

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
    slow: Slow,
}

/// Every `every`th request by arrival (none when 0) is slow: `ttft` and
/// `itl` instead of the usual.
#[derive(Clone, Copy)]
struct Slow {
    every: u64,
    ttft: Option<Duration>,
    itl: Option<Duration>,
}

fn parse_args() -> Result<Args, String> {
    let usage =
        "usage: openai_server --port P --model NAME --ttft-ms X --itl-ms Y --max-running N \
                 [--slow-every N [--slow-ttft-ms X] [--slow-itl-ms Y]]";
    let (mut port, mut model, mut ttft, mut itl, mut max_running) = (None, None, None, None, None);
    let mut slow = Slow {
        every: 0,
        ttft: None,
        itl: None,
    };
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
            "--slow-every" => slow.every = number("a number of requests")?,
            "--slow-ttft-ms" => slow.ttft = Some(Duration::from_millis(number("milliseconds")?)),
            "--slow-itl-ms" => slow.itl = Some(Duration::from_millis(number("milliseconds")?)),
            "--max-running" => match number("a positive number of requests")? {
                0 => return Err("--max-running must be at least 1".into()),
                n => max_running = Some(n as usize),
            },
            _ => return Err(format!("unknown argument {flag:?}; {usage}")),
        }
    }
    let missing = |name: &str| format!("{name} is required; {usage}");
    if slow.every == 0 && (slow.ttft.is_some() || slow.itl.is_some()) {
        return Err(format!(
            "--slow-ttft-ms and --slow-itl-ms need --slow-every N (N > 0); {usage}"
        ));
    }
    Ok(Args {
        port: port.ok_or_else(|| missing("--port"))?,
        model: model.ok_or_else(|| missing("--model"))?,
        ttft: ttft.ok_or_else(|| missing("--ttft-ms"))?,
        itl: itl.ok_or_else(|| missing("--itl-ms"))?,
        max_running: max_running.ok_or_else(|| missing("--max-running"))?,
        slow,
    })
}

/// The toy engine: a queue in front of `max_running` generation slots.
struct Engine {
    meter: Meter,
    model: String,
    ttft: Duration,
    itl: Duration,
    slow: Slow,
    /// Requests arrived so far, to pick the slow ones.
    arrived: AtomicU64,
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

/// The API a request came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Api {
    Chat,
    Completions,
    Responses,
    Messages,
    Embeddings,
}

impl Api {
    /// The format of its generated replies.
    fn format(self) -> Box<dyn Format> {
        match self {
            Api::Chat | Api::Embeddings => Box::new(Completions { chat: true }),
            Api::Completions => Box::new(Completions { chat: false }),
            Api::Responses => Box::<Responses>::default(),
            Api::Messages => Box::new(Messages),
        }
    }

    /// The request fields that hold the prompt.
    fn prompt_fields(self) -> &'static [&'static str] {
        match self {
            Api::Chat => &["messages"],
            Api::Completions => &["prompt"],
            Api::Responses => &["instructions", "input"],
            Api::Messages => &["system", "messages"],
            Api::Embeddings => &["input"],
        }
    }

    /// The request fields that limit the generation, first found wins.
    fn limit_fields(self) -> &'static [&'static str] {
        match self {
            Api::Chat => &["max_completion_tokens", "max_tokens"],
            Api::Completions | Api::Messages => &["max_tokens"],
            Api::Responses => &["max_output_tokens"],
            Api::Embeddings => &[],
        }
    }

    fn id_prefix(self) -> &'static str {
        match self {
            Api::Chat => "chatcmpl-",
            Api::Completions => "cmpl-",
            Api::Responses => "resp_",
            Api::Messages => "msg_",
            Api::Embeddings => "emb-",
        }
    }
}

/// What a request asks for.
struct Ask {
    api: Api,
    stream: bool,
    /// Tokens to generate; none for an embedding.
    max_tokens: u64,
    prompt_tokens: u64,
    /// An embedding's inputs.
    inputs: Vec<String>,
}

fn words_in(value: &Value) -> u64 {
    match value {
        Value::String(text) => text.split_whitespace().count() as u64,
        Value::Array(items) => items.iter().map(words_in).sum(),
        Value::Object(part) => part.get("text").or(part.get("content")).map_or(0, words_in),
        _ => 0,
    }
}

/// An error reply, in the shape of the API it answers (OpenAI's, or
/// Anthropic's for `/v1/messages`).
struct ApiError {
    api: Api,
    status: StatusCode,
    message: String,
    param: Option<&'static str>,
    code: &'static str,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = if self.api == Api::Messages {
            let kind = match self.status {
                StatusCode::NOT_FOUND => "not_found_error",
                _ => "invalid_request_error",
            };
            json!({"type": "error", "error": {"type": kind, "message": self.message}})
        } else {
            json!({"error": {"message": self.message, "type": "invalid_request_error",
                             "param": self.param, "code": self.code}})
        };
        (self.status, Json(body)).into_response()
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Engine {
    /// Reads a request body, or the error to answer it with.
    fn ask(&self, api: Api, body: &[u8]) -> Result<Ask, ApiError> {
        let error = |status, message, param, code| ApiError {
            api,
            status,
            message,
            param,
            code,
        };
        let request: Value = serde_json::from_slice(body).map_err(|e| {
            error(
                StatusCode::BAD_REQUEST,
                format!("the body is not valid JSON: {e}"),
                None,
                "invalid_json",
            )
        })?;
        let model = request
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if model != self.model {
            return Err(error(
                StatusCode::NOT_FOUND,
                format!("The model `{model}` does not exist."),
                Some("model"),
                "model_not_found",
            ));
        }
        let limit = api
            .limit_fields()
            .iter()
            .find_map(|key| request.get(*key).and_then(Value::as_u64));
        let max_tokens = match api {
            Api::Embeddings => 0,
            _ => limit.unwrap_or(DEFAULT_MAX_TOKENS),
        };
        if api != Api::Embeddings && (max_tokens == 0 || max_tokens > MAX_TOKENS_LIMIT) {
            return Err(error(
                StatusCode::BAD_REQUEST,
                format!("max_tokens must be between 1 and {MAX_TOKENS_LIMIT}, got {max_tokens}"),
                Some("max_tokens"),
                "invalid_value",
            ));
        }
        let prompt_tokens = api
            .prompt_fields()
            .iter()
            .filter_map(|key| request.get(*key))
            .map(words_in)
            .sum();
        let inputs = match api {
            Api::Embeddings => embeddings::inputs(request.get("input")),
            _ => Vec::new(),
        };
        if api == Api::Embeddings && inputs.is_empty() {
            return Err(error(
                StatusCode::BAD_REQUEST,
                "input must be a string or a non-empty list of strings".to_owned(),
                Some("input"),
                "invalid_value",
            ));
        }
        Ok(Ask {
            api,
            // An embedding is never streamed.
            stream: api != Api::Embeddings
                && request
                    .get("stream")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            max_tokens,
            prompt_tokens,
            inputs,
        })
    }

    /// One request through the scheduler: queued, then running once a slot
    /// is free; `--ttft-ms` of prefill (all of an embedding's work), then
    /// each generated word handed to `emit`, `--itl-ms` apart.
    async fn generate(&self, ask: &Ask, mut emit: impl FnMut(u64, &str)) {
        let arrival = self.arrived.fetch_add(1, Ordering::Relaxed) + 1;
        let slow = self.slow.every > 0 && arrival.is_multiple_of(self.slow.every);
        let (ttft, itl) = match slow {
            true => (
                self.slow.ttft.unwrap_or(self.ttft),
                self.slow.itl.unwrap_or(self.itl),
            ),
            false => (self.ttft, self.itl),
        };
        let mut scheduled = ScheduledRequest::queued(&self.meter);
        scheduled.prefix_cache(ask.prompt_tokens, cached_tokens(ask));
        let Ok(_slot) = self.slots.acquire().await else {
            return; // the semaphore is never closed
        };
        scheduled.start();
        let mut blocks = Blocks::new(&self.kv, ask.prompt_tokens);
        tokio::time::sleep(ttft).await;
        if ask.max_tokens == 0 {
            scheduled.finish(FinishReason::Stop);
            return;
        }
        scheduled.first_token();
        for i in 0..ask.max_tokens {
            if i > 0 {
                tokio::time::sleep(itl).await;
            }
            blocks.grow(1);
            emit(i, WORDS[i as usize % WORDS.len()]);
        }
        scheduled.finish(FinishReason::Length);
    }

    fn reply(&self, ask: &Ask) -> Reply {
        let n = self.ids.fetch_add(1, Ordering::Relaxed);
        Reply {
            id: format!("{}{n}", ask.api.id_prefix()),
            model: self.model.clone(),
            created: now_secs(),
            prompt_tokens: ask.prompt_tokens,
            cached_tokens: cached_tokens(ask),
            output_tokens: ask.max_tokens,
        }
    }
}

/// The toy prefix cache's hits: the prompt tokens every request shares.
fn cached_tokens(ask: &Ask) -> u64 {
    ask.prompt_tokens.min(SHARED_PREFIX_TOKENS)
}

/// A generated word as the reply writes it.
fn spaced(i: u64, word: &str) -> String {
    if i == 0 {
        word.to_owned()
    } else {
        format!(" {word}")
    }
}

/// A streamed reply: the API's opening events at once, a word per event
/// while they are generated, then its closing events (usage, the end).
/// Dropping it (the client went away) drops the generation, which leaves
/// the scheduler's gauges as it goes.
fn stream_reply(engine: Arc<Engine>, ask: Ask) -> impl Stream<Item = Result<Bytes, Infallible>> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Bytes>();
    let generation = async move {
        let reply = engine.reply(&ask);
        let mut format = ask.api.format();
        for event in format.opening(&reply) {
            let _ = tx.send(event);
        }
        let last = ask.max_tokens - 1;
        let mut text = String::new();
        engine
            .generate(&ask, |i, word| {
                let word = spaced(i, word);
                let _ = tx.send(format.word(&reply, &word, i == last));
                text.push_str(&word);
            })
            .await;
        for event in format.closing(&reply, &text) {
            let _ = tx.send(event);
        }
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

/// Any request to a generating or embedding API.
async fn serve(engine: Arc<Engine>, api: Api, body: Bytes) -> Response {
    let ask = match engine.ask(api, &body) {
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
        .generate(&ask, |i, word| text.push_str(&spaced(i, word)))
        .await;
    let reply = engine.reply(&ask);
    let body = match ask.api {
        Api::Embeddings => embeddings::reply(&reply, &ask.inputs),
        api => api.format().whole(&reply, &text),
    };
    Json(body).into_response()
}

async fn models(State(engine): State<Arc<Engine>>) -> Json<Value> {
    Json(json!({"object": "list", "data": [
        {"id": engine.model, "object": "model", "created": 0, "owned_by": "nemo-lens"}]}))
}

async fn metrics(State(engine): State<Arc<Engine>>, headers: HeaderMap) -> Response {
    telemetry::metrics(engine.renderer.as_ref(), &headers)
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
    let (telemetry, renderer) = telemetry::setup("nemo-lens-openai-server")?;
    let tracer_provider = traces::setup()?;
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
        slow: args.slow,
        arrived: AtomicU64::new(0),
        slots: Semaphore::new(args.max_running),
        ids: AtomicU64::new(0),
        renderer,
    });

    let route = |api: Api| {
        let engine = Arc::clone(&engine);
        post(move |body: Bytes| serve(engine, api, body))
    };
    let app = Router::new()
        .route("/v1/chat/completions", route(Api::Chat))
        .route("/v1/completions", route(Api::Completions))
        .route("/v1/responses", route(Api::Responses))
        .route("/v1/messages", route(Api::Messages))
        .route("/v1/embeddings", route(Api::Embeddings))
        .layer(
            OpenAiLayer::new(&meter)
                .models([args.model.clone()])
                .server_port(args.port),
        )
        // Either side of the OpenAI layer works: outside, the request starts
        // in the span; inside, the layer notes it as the handler reads the
        // body.
        .layer(axum::middleware::from_fn(traces::per_request))
        .route("/v1/models", get(models))
        .route("/metrics", get(metrics))
        .with_state(engine);

    let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.port)).await?;
    println!(
        "serving {} on http://{}",
        args.model,
        listener.local_addr()?
    );
    let served = telemetry::serve(listener, app, telemetry).await;
    // Sends the spans still batched.
    if let Some(provider) = tracer_provider {
        let _ = provider.shutdown();
    }
    served
}
