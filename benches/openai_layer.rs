//! The cost of `OpenAiLayer` on one streamed reply of 200 chunks, for each
//! streamed API it reads (chat completions, OpenAI's Responses, Anthropic's
//! Messages), and on one embeddings request: the same axum handler (each
//! event serialised with serde_json, as a server does) with the layer and
//! without it, in one run, request in and body drained.
//!
//! And the cost of the metering proxy (`examples/openai_proxy.rs`) on one
//! streamed chat completion over loopback TCP: the upstream directly, the
//! proxy's forwarding without metering (a plain hyper proxy of the same
//! shape, recording on a meter that records nothing), and the proxy as it
//! runs (the layer and the in-flight gauges on an SDK meter).
//! `scripts/bench.sh` prints the ratios.

use std::convert::Infallible;

use axum::body::{Body, Bytes};
use axum::http::{header, Request};
use axum::response::Response;
use axum::routing::post;
use axum::Router;
use divan::{black_box, Bencher};
use futures_util::stream::{self, StreamExt};
use http_body_util::BodyExt;
use nemo_lens::openai::OpenAiLayer;
use nemo_lens::opentelemetry::metrics::MeterProvider as _;
use nemo_lens::opentelemetry_sdk::metrics::SdkMeterProvider;
use nemo_lens::Meter;
use serde_json::{json, Value};
use tower::ServiceExt;

mod support;
// The proxy's forwarding, as the example runs it.
#[path = "../examples/openai_proxy/forward.rs"]
mod forward;

use support::provider;

/// Chunks streamed per request.
const CHUNKS: u64 = 200;
const REQUEST: &str = r#"{"model":"llama-3-8b","stream":true,"max_tokens":200,"messages":[{"role":"user","content":"Write a story about a fox."}]}"#;
const EMBEDDINGS_REQUEST: &str =
    r#"{"model":"llama-3-8b","input":["Write a story about a fox.","And one about a dog."]}"#;

fn main() {
    divan::main();
}

fn sse(value: Value) -> Result<Bytes, Infallible> {
    Ok(Bytes::from(format!("data: {value}\n\n")))
}

/// An event named by its `type`, as the Responses and Messages APIs write.
fn typed(value: Value) -> Result<Bytes, Infallible> {
    let kind = value["type"].as_str().unwrap_or_default().to_owned();
    Ok(Bytes::from(format!("event: {kind}\ndata: {value}\n\n")))
}

fn event_stream(
    events: impl futures_util::Stream<Item = Result<Bytes, Infallible>> + Send + 'static,
) -> Response {
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .body(Body::from_stream(events))
        .unwrap()
}

/// A streamed chat completion as an OpenAI-compatible server writes it.
async fn chat(_body: Bytes) -> Response {
    let chunks = stream::iter(0..CHUNKS).map(|i| {
        let finish = (i + 1 == CHUNKS).then_some("length");
        sse(json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1_700_000_000,
                   "model": "llama-3-8b",
                   "choices": [{"index": 0, "delta": {"content": " word"}, "finish_reason": finish}]}))
    });
    let usage = stream::iter([
        sse(
            json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1_700_000_000,
                   "model": "llama-3-8b", "choices": [],
                   "usage": {"prompt_tokens": 7, "completion_tokens": CHUNKS, "total_tokens": CHUNKS + 7}}),
        ),
        Ok(Bytes::from_static(b"data: [DONE]\n\n")),
    ]);
    event_stream(chunks.chain(usage))
}

/// A streamed response of OpenAI's Responses API: created, a delta per
/// word, completed with usage.
async fn responses(_body: Bytes) -> Response {
    let created = stream::iter([typed(
        json!({"type": "response.created", "sequence_number": 0,
               "response": {"id": "resp_1", "object": "response", "model": "llama-3-8b",
                            "status": "in_progress", "error": null, "output": [], "usage": null}}),
    )]);
    let deltas = stream::iter(0..CHUNKS).map(|i| {
        typed(json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0,
                     "content_index": 0, "delta": " word", "logprobs": [], "sequence_number": i + 1}))
    });
    let completed = stream::iter([typed(
        json!({"type": "response.completed", "sequence_number": CHUNKS + 1,
               "response": {"id": "resp_1", "object": "response", "model": "llama-3-8b",
                            "status": "completed", "error": null,
                            "output": [{"type": "message", "content": [{"type": "output_text", "text": "..."}]}],
                            "usage": {"input_tokens": 7, "input_tokens_details": {"cached_tokens": 0},
                                      "output_tokens": CHUNKS, "output_tokens_details": {"reasoning_tokens": 0},
                                      "total_tokens": CHUNKS + 7}}}),
    )]);
    event_stream(created.chain(deltas).chain(completed))
}

/// A streamed message of Anthropic's Messages API.
async fn messages(_body: Bytes) -> Response {
    let start = stream::iter([
        typed(
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
                     "role": "assistant", "model": "llama-3-8b", "content": [], "stop_reason": null,
                     "usage": {"input_tokens": 7, "output_tokens": 1}}}),
        ),
        typed(json!({"type": "content_block_start", "index": 0,
                     "content_block": {"type": "text", "text": ""}})),
    ]);
    let deltas = stream::iter(0..CHUNKS).map(|_| {
        typed(json!({"type": "content_block_delta", "index": 0,
                     "delta": {"type": "text_delta", "text": " word"}}))
    });
    let stop = stream::iter([
        typed(json!({"type": "content_block_stop", "index": 0})),
        typed(
            json!({"type": "message_delta", "delta": {"stop_reason": "max_tokens", "stop_sequence": null},
                     "usage": {"output_tokens": CHUNKS}}),
        ),
        typed(json!({"type": "message_stop"})),
    ]);
    event_stream(start.chain(deltas).chain(stop))
}

/// Two 384-dimension embeddings, as an embedding server writes them.
async fn embeddings(_body: Bytes) -> Response {
    let vector: Vec<f64> = (0..384).map(|i| f64::from(i) / 384.0 - 0.5).collect();
    let body = json!({"object": "list", "model": "llama-3-8b",
                      "data": [{"object": "embedding", "index": 0, "embedding": vector},
                               {"object": "embedding", "index": 1, "embedding": vector}],
                      "usage": {"prompt_tokens": 12, "total_tokens": 12}});
    Response::builder()
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

async fn serve(app: &Router, path: &str, body: &'static str) -> usize {
    let request = Request::post(path)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body))
        .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    let mut body = response.into_body();
    let mut bytes = 0;
    while let Some(frame) = body.frame().await {
        bytes += frame.unwrap().data_ref().map_or(0, |d| d.len());
    }
    bytes
}

fn bench(
    bencher: Bencher,
    (app, _provider): (Router, Option<SdkMeterProvider>),
    path: &'static str,
    body: &'static str,
) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(serve(&app, path, body));
    bencher.bench_local(|| runtime.block_on(serve(black_box(&app), path, body)));
}

/// The handler's router, with the layer when `layered` (and the provider
/// it records on, kept alive for the run).
fn app<H, T>(path: &str, handler: H, layered: bool) -> (Router, Option<SdkMeterProvider>)
where
    H: axum::handler::Handler<T, ()>,
    T: 'static,
{
    let router = Router::new().route(path, post(handler));
    if !layered {
        return (router, None);
    }
    layered_on(router, |meter| meter)
}

/// `router` under the layer on a meter `adapt` makes of an SDK meter.
fn layered_on(
    router: Router,
    adapt: impl FnOnce(Meter) -> Meter,
) -> (Router, Option<SdkMeterProvider>) {
    let provider = provider();
    let meter = adapt(Meter::from(provider.meter("nemo.lens")));
    let router = router.layer(OpenAiLayer::new(&meter).models(["llama-3-8b"]));
    (router, Some(provider))
}

mod streamed_chat_200_chunks {
    use super::*;

    const PATH: &str = "/v1/chat/completions";

    #[divan::bench]
    fn baseline(bencher: Bencher) {
        bench(bencher, app(PATH, chat, false), PATH, REQUEST);
    }

    #[divan::bench]
    fn layer(bencher: Bencher) {
        bench(bencher, app(PATH, chat, true), PATH, REQUEST);
    }

    /// The layer judging every request against three objectives
    /// (`NEMO_LENS_SLO`) and counting it.
    #[divan::bench]
    fn layer_judged(bencher: Bencher) {
        let slo = "time_to_first_token:300 inter_token_latency:20 request_latency:3000";
        let objectives = nemo_lens::slo::Objectives::new(slo.parse().unwrap());
        let router = Router::new().route(PATH, post(chat));
        bench(
            bencher,
            layered_on(router, |meter| meter.with_objectives(objectives)),
            PATH,
            REQUEST,
        );
    }
}

mod streamed_responses_200_chunks {
    use super::*;

    const PATH: &str = "/v1/responses";

    #[divan::bench]
    fn baseline(bencher: Bencher) {
        bench(bencher, app(PATH, responses, false), PATH, REQUEST);
    }

    #[divan::bench]
    fn layer(bencher: Bencher) {
        bench(bencher, app(PATH, responses, true), PATH, REQUEST);
    }
}

mod streamed_messages_200_chunks {
    use super::*;

    const PATH: &str = "/v1/messages";

    #[divan::bench]
    fn baseline(bencher: Bencher) {
        bench(bencher, app(PATH, messages, false), PATH, REQUEST);
    }

    #[divan::bench]
    fn layer(bencher: Bencher) {
        bench(bencher, app(PATH, messages, true), PATH, REQUEST);
    }
}

mod embeddings_2_inputs {
    use super::*;

    const PATH: &str = "/v1/embeddings";

    #[divan::bench]
    fn baseline(bencher: Bencher) {
        bench(
            bencher,
            app(PATH, embeddings, false),
            PATH,
            EMBEDDINGS_REQUEST,
        );
    }

    #[divan::bench]
    fn layer(bencher: Bencher) {
        bench(
            bencher,
            app(PATH, embeddings, true),
            PATH,
            EMBEDDINGS_REQUEST,
        );
    }
}

/// The upstream, a proxy in front of it and a client, all on one
/// current-thread runtime and loopback TCP.
struct ProxyRig {
    runtime: tokio::runtime::Runtime,
    client: hyper_util::client::legacy::Client<
        hyper_util::client::legacy::connect::HttpConnector,
        http_body_util::Full<Bytes>,
    >,
    target: axum::http::Uri,
    _provider: Option<SdkMeterProvider>,
}

/// What `app` is served on: a fresh loopback port.
async fn listen(app: Router) -> std::net::SocketAddr {
    use axum::serve::ListenerExt;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // Small writes go out at once, as the example's do.
    let listener = listener.tap_io(|stream| stream.set_nodelay(true).unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

impl ProxyRig {
    /// `proxy`: none (the upstream directly), or metering or not.
    fn new(proxy: Option<bool>) -> Self {
        use hyper_util::client::legacy::{connect::HttpConnector, Client};

        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let provider = proxy.filter(|metering| *metering).map(|_| provider());
        let target = runtime.block_on(async {
            let upstream = listen(Router::new().route("/v1/chat/completions", post(chat))).await;
            let Some(metering) = proxy else {
                return upstream;
            };
            let meter = match &provider {
                Some(provider) => Meter::from(provider.meter("nemo.lens")),
                None => Meter::noop(),
            };
            let forwarding = std::sync::Arc::new(forward::Proxy::new(
                format!("http://{upstream}").parse().unwrap(),
                std::time::Duration::from_secs(60),
                &meter,
            ));
            let app = Router::new().fallback(forward::forward);
            let app = if metering {
                app.layer(
                    OpenAiLayer::new(&meter)
                        .models(["llama-3-8b"])
                        .count_finish_reasons(true),
                )
            } else {
                app
            };
            listen(app.with_state(forwarding)).await
        });
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        let client = {
            let _entered = runtime.enter();
            Client::builder(hyper_util::rt::TokioExecutor::new()).build(connector)
        };
        ProxyRig {
            runtime,
            client,
            target: format!("http://{target}/v1/chat/completions")
                .parse()
                .unwrap(),
            _provider: provider,
        }
    }

    /// One request through, its body drained.
    fn request(&self) -> usize {
        self.runtime.block_on(async {
            let request = Request::post(self.target.clone())
                .header(header::CONTENT_TYPE, "application/json")
                .body(http_body_util::Full::new(Bytes::from_static(
                    REQUEST.as_bytes(),
                )))
                .unwrap();
            let mut body = self.client.request(request).await.unwrap().into_body();
            let mut bytes = 0;
            while let Some(frame) = body.frame().await {
                bytes += frame.unwrap().data_ref().map_or(0, |d| d.len());
            }
            bytes
        })
    }
}

fn bench_proxy(bencher: Bencher, proxy: Option<bool>) {
    let rig = ProxyRig::new(proxy);
    rig.request();
    bencher.bench_local(|| black_box(rig.request()));
}

mod proxied_chat_200_chunks {
    use super::*;

    #[divan::bench]
    fn direct(bencher: Bencher) {
        bench_proxy(bencher, None);
    }

    #[divan::bench]
    fn plain_proxy(bencher: Bencher) {
        bench_proxy(bencher, Some(false));
    }

    #[divan::bench]
    fn metering_proxy(bencher: Bencher) {
        bench_proxy(bencher, Some(true));
    }
}
