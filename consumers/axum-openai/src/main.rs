//! An OpenAI-compatible server on axum 0.8 and tokio, with the OpenAI
//! layer: one chat completion, and the GenAI server metrics it recorded.

use axum::body::{to_bytes, Body};
use axum::http::Request;
use axum::routing::post;
use axum::{Json, Router};
use nemo_lens::openai::OpenAiLayer;
use nemo_lens::testing::Capture;
use serde_json::{json, Value};
use tower::ServiceExt as _;

async fn chat(Json(request): Json<Value>) -> Json<Value> {
    Json(json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": request["model"],
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "hi"}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}
    }))
}

#[tokio::main]
pub async fn main() {
    let capture = Capture::new();
    let app: Router = Router::new()
        .route("/v1/chat/completions", post(chat))
        .layer(OpenAiLayer::new(capture.meter()).models(["llama-3-8b"]));
    let request = Request::post("/v1/chat/completions")
        .header("content-type", "application/json")
        .body(Body::from(
            r#"{"model":"llama-3-8b","messages":[{"role":"user","content":"hello"}]}"#,
        ))
        .unwrap();
    let response = app.oneshot(request).await.unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    let body = to_bytes(response.into_body(), usize::MAX).await.unwrap();
    assert!(!body.is_empty());

    let model = [("gen_ai.request.model", "llama-3-8b")];
    assert_eq!(
        capture.count("gen_ai.server.request.duration", &model),
        Some(1),
        "{}",
        capture.exposition()
    );
    assert_eq!(
        capture.sum(
            "gen_ai.client.token.usage",
            &[("gen_ai.token.type", "input"), model[0]]
        ),
        Some(12.0),
        "{}",
        capture.exposition()
    );
    println!("axum-openai: one request, its duration and tokens recorded");
}
