//! The cost of `OpenAiLayer` on one streamed chat completion of 200 chunks:
//! the same axum handler (each chunk serialised with serde_json, as a
//! server does) with the layer and without it, in one run, request in and
//! body drained. `scripts/bench.sh` prints the ratio.

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
use nemo_lens::Meter;
use serde_json::json;
use tower::ServiceExt;

mod support;

use support::provider;

/// Chunks streamed per request.
const CHUNKS: u64 = 200;
const REQUEST: &str = r#"{"model":"llama-3-8b","stream":true,"max_tokens":200,"messages":[{"role":"user","content":"Write a story about a fox."}]}"#;

fn main() {
    divan::main();
}

fn sse(value: serde_json::Value) -> Result<Bytes, Infallible> {
    Ok(Bytes::from(format!("data: {value}\n\n")))
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
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .body(Body::from_stream(chunks.chain(usage)))
        .unwrap()
}

async fn serve(app: &Router) -> usize {
    let request = Request::post("/v1/chat/completions")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(REQUEST))
        .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    let mut body = response.into_body();
    let mut bytes = 0;
    while let Some(frame) = body.frame().await {
        bytes += frame.unwrap().data_ref().map_or(0, |d| d.len());
    }
    bytes
}

fn bench(bencher: Bencher, app: Router) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(serve(&app));
    bencher.bench_local(|| runtime.block_on(serve(black_box(&app))));
}

mod streamed_chat_200_chunks {
    use super::*;

    #[divan::bench]
    fn baseline(bencher: Bencher) {
        bench(
            bencher,
            Router::new().route("/v1/chat/completions", post(chat)),
        );
    }

    #[divan::bench]
    fn layer(bencher: Bencher) {
        let provider = provider();
        let meter = Meter::from(provider.meter("nemo.lens"));
        let app = Router::new()
            .route("/v1/chat/completions", post(chat))
            .layer(OpenAiLayer::new(&meter).models(["llama-3-8b"]));
        bench(bencher, app);
    }
}
