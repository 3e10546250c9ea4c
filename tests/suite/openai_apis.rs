//! The OpenAI layer on the Responses, Messages and Embeddings APIs around a
//! real axum router: what each exchange records, asserted on exported
//! values and their attributes.

use std::convert::Infallible;
use std::time::Duration;

use crate::support::openai::*;
use crate::support::{Harness, Point};
use axum::body::{Body, Bytes};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use nemo_lens::openai::OpenAiLayer;

/// Words streamed per response, and the time between them.
const WORDS: usize = 4;
const GAP: Duration = Duration::from_millis(20);

/// `events` as SSE, each named (`event:` line) by its JSON's `type`; the
/// events from `paced_from` on come `GAP` apart.
fn typed_stream(events: Vec<String>, paced_from: usize) -> Response {
    let frames = events.into_iter().enumerate().map(|(i, data)| {
        let kind = serde_json::from_str::<serde_json::Value>(&data)
            .ok()
            .and_then(|v| v["type"].as_str().map(str::to_owned))
            .unwrap_or_default();
        (
            i >= paced_from,
            Bytes::from(format!("event: {kind}\ndata: {data}\n\n")),
        )
    });
    let frames: Vec<(bool, Bytes)> = frames.collect();
    let stream = futures_util::stream::unfold(frames.into_iter(), |mut frames| async move {
        let (pace, frame) = frames.next()?;
        if pace {
            tokio::time::sleep(GAP).await;
        }
        Some((Ok::<_, Infallible>(frame), frames))
    });
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .body(Body::from_stream(stream))
        .unwrap()
}

fn json_reply(status: StatusCode, body: &'static str) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// A Responses stream: created, `WORDS` deltas, done, completed with usage
/// (or failed, when `fail`).
fn responses_stream(fail: bool) -> Response {
    let mut events = vec![r#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","model":"llama","status":"in_progress","error":null,"output":[],"usage":null}}"#.to_owned()];
    for i in 0..WORDS {
        events.push(format!(r#"{{"type":"response.output_text.delta","sequence_number":{},"item_id":"msg_1","output_index":0,"content_index":0,"delta":" w{i}"}}"#, i + 1));
    }
    events.push(r#"{"type":"response.output_text.done","item_id":"msg_1","output_index":0,"content_index":0,"text":"w0 w1 w2 w3"}"#.to_owned());
    events.push(if fail {
        r#"{"type":"response.failed","response":{"id":"resp_1","model":"llama","status":"failed","error":{"code":"server_error","message":"the engine died"}}}"#.to_owned()
    } else {
        format!(r#"{{"type":"response.completed","response":{{"id":"resp_1","object":"response","model":"llama","status":"completed","error":null,"output":[{{"type":"message","content":[{{"type":"output_text","text":"w0 w1 w2 w3"}}]}}],"usage":{{"input_tokens":11,"input_tokens_details":{{"cached_tokens":4}},"output_tokens":{WORDS},"output_tokens_details":{{"reasoning_tokens":0}},"total_tokens":15}}}}}}"#)
    });
    typed_stream(events, 1)
}

/// An Anthropic Messages stream: message_start with the input usage,
/// `WORDS` text deltas, message_delta with the output usage, message_stop.
fn messages_stream() -> Response {
    let mut events = vec![
        r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"llama","content":[],"stop_reason":null,"usage":{"input_tokens":3,"cache_read_input_tokens":8,"cache_creation_input_tokens":1,"output_tokens":1}}}"#.to_owned(),
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#.to_owned(),
    ];
    for i in 0..WORDS {
        events.push(format!(r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":" w{i}"}}}}"#));
    }
    events.push(r#"{"type":"content_block_stop","index":0}"#.to_owned());
    events.push(format!(r#"{{"type":"message_delta","delta":{{"stop_reason":"max_tokens","stop_sequence":null}},"usage":{{"output_tokens":{WORDS}}}}}"#));
    events.push(r#"{"type":"message_stop"}"#.to_owned());
    typed_stream(events, 2)
}

fn app(harness: &Harness) -> Router {
    Router::new()
        .route(
            "/v1/responses",
            post(|body: Bytes| async move {
                let body = String::from_utf8_lossy(&body).into_owned();
                if body.contains("\"missing\"") {
                    return json_reply(StatusCode::NOT_FOUND, r#"{"error":{"message":"The model `missing` does not exist.","type":"invalid_request_error","code":"model_not_found"}}"#);
                }
                if !body.contains("\"stream\":true") {
                    return json_reply(StatusCode::OK, r#"{"id":"resp_2","object":"response","model":"llama","status":"incomplete","error":null,"output":[{"type":"message","content":[{"type":"output_text","text":"hi there"}]}],"usage":{"input_tokens":5,"input_tokens_details":{"cached_tokens":0},"output_tokens":2,"output_tokens_details":{"reasoning_tokens":1},"total_tokens":7}}"#);
                }
                responses_stream(body.contains("fail"))
            }),
        )
        .route(
            "/v1/messages",
            post(|body: Bytes| async move {
                let body = String::from_utf8_lossy(&body).into_owned();
                if body.contains("overloaded") {
                    return json_reply(StatusCode::from_u16(529).unwrap(), r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#);
                }
                if !body.contains("\"stream\":true") {
                    return json_reply(StatusCode::OK, r#"{"id":"msg_2","type":"message","role":"assistant","model":"llama","content":[{"type":"text","text":"hi there"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":6,"output_tokens":2}}"#);
                }
                messages_stream()
            }),
        )
        .route(
            "/v1/embeddings",
            // The model is read as the handler reads the body.
            post(|_body: Bytes| async {
                json_reply(StatusCode::OK, r#"{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.0123,-0.5,1e-3]},{"object":"embedding","index":1,"embedding":[0.25,0.5,-1.5E+2]}],"model":"llama","usage":{"prompt_tokens":12,"total_tokens":12}}"#)
            }),
        )
        .layer(OpenAiLayer::new(&harness.meter).models(["llama"]))
}

/// The attributes every point of a successful request carries.
fn assert_attributes(point: &Point, operation: &str) {
    assert_eq!(
        point.str_attr("gen_ai.operation.name"),
        Some(operation),
        "{point:?}"
    );
    assert_eq!(point.str_attr("gen_ai.provider.name"), Some("nemo"));
    assert_eq!(point.str_attr("gen_ai.request.model"), Some("llama"));
    assert_eq!(point.str_attr("gen_ai.response.model"), Some("llama"));
    assert_eq!(point.attr("error.type"), None);
}

/// Four words 20 ms apart: the first after 20 ms, three gaps after it.
fn assert_stream_timings(harness: &Harness) {
    let (_, duration_s) = histogram(&single(harness, DURATION));
    let (ttft_n, ttft_s) = histogram(&single(harness, TTFT));
    let (tpot_n, tpot_s) = histogram(&single(harness, TPOT));
    assert_eq!((ttft_n, tpot_n), (1, 1));
    assert!(ttft_s >= 0.020 && ttft_s < duration_s, "ttft {ttft_s}");
    assert!((0.019..0.060).contains(&tpot_s), "tpot {tpot_s}");
    assert!(duration_s >= 0.080, "duration {duration_s}");
    for name in [DURATION, TTFT, TPOT] {
        assert_attributes(&single(harness, name), "chat");
    }
}

#[tokio::test]
async fn a_streamed_response_records_its_timings_and_the_usage_of_response_completed() {
    let harness = Harness::new();
    let (status, body) = exchange(
        app(&harness),
        "/v1/responses",
        r#"{"model":"llama","stream":true,"input":"hi"}"#,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        body.contains("response.completed"),
        "the body passes unchanged"
    );
    assert_stream_timings(&harness);
    assert_eq!(tokens(&harness, "input"), Some((1, 11.0)));
    assert_eq!(tokens(&harness, "output"), Some((1, WORDS as f64)));
}

#[tokio::test]
async fn a_failed_response_or_an_error_status_is_the_error_type() {
    let harness = Harness::new();
    exchange(
        app(&harness),
        "/v1/responses",
        r#"{"model":"llama","stream":true,"input":"fail"}"#,
    )
    .await;
    exchange(
        app(&harness),
        "/v1/responses",
        r#"{"model":"missing","stream":true}"#,
    )
    .await;
    let mut errors: Vec<(String, String)> = harness
        .points_of(DURATION)
        .iter()
        .map(|p| {
            (
                p.str_attr("error.type").unwrap_or("none").to_owned(),
                p.str_attr("gen_ai.request.model")
                    .unwrap_or("none")
                    .to_owned(),
            )
        })
        .collect();
    errors.sort();
    assert_eq!(
        errors,
        [
            ("404".to_owned(), "_OTHER".to_owned()),
            ("error_event".to_owned(), "llama".to_owned())
        ]
    );
    assert!(harness.points_of(TTFT).is_empty(), "no TTFT for a failure");
}

#[tokio::test]
async fn a_non_streamed_response_records_its_usage_and_no_stream_timings() {
    let harness = Harness::new();
    exchange(
        app(&harness),
        "/v1/responses",
        r#"{"model":"llama","input":"hi"}"#,
    )
    .await;
    assert_attributes(&single(&harness, DURATION), "chat");
    assert!(harness.points_of(TTFT).is_empty() && harness.points_of(TPOT).is_empty());
    assert_eq!(tokens(&harness, "input"), Some((1, 5.0)));
    assert_eq!(tokens(&harness, "output"), Some((1, 2.0)));
}

#[tokio::test]
async fn a_client_that_leaves_a_response_stream_is_recorded_as_cancelled() {
    let harness = Harness::new();
    leave_after(
        app(&harness),
        "/v1/responses",
        r#"{"model":"llama","stream":true}"#,
        2,
    )
    .await;
    let duration = single(&harness, DURATION);
    assert_eq!(duration.str_attr("error.type"), Some("cancelled"));
    assert_eq!(duration.str_attr("gen_ai.operation.name"), Some("chat"));
    assert!(harness.points_of(TTFT).is_empty());
    assert_eq!(tokens(&harness, "output"), None);
}

#[tokio::test]
async fn a_streamed_message_counts_its_cached_input_and_the_final_output_usage() {
    let harness = Harness::new();
    let (status, body) = exchange(
        app(&harness),
        "/v1/messages",
        r#"{"model":"llama","stream":true,"max_tokens":4,"messages":[{"role":"user","content":"hi"}]}"#,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.ends_with("data: {\"type\":\"message_stop\"}\n\n"));
    assert_stream_timings(&harness);
    // Anthropic's input_tokens leave the cache out: 3 + 8 read + 1 written.
    assert_eq!(tokens(&harness, "input"), Some((1, 12.0)));
    assert_eq!(tokens(&harness, "output"), Some((1, WORDS as f64)));
}

#[tokio::test]
async fn a_non_streamed_message_and_an_overloaded_one() {
    let harness = Harness::new();
    exchange(
        app(&harness),
        "/v1/messages",
        r#"{"model":"llama","max_tokens":4}"#,
    )
    .await;
    let (status, _) = exchange(
        app(&harness),
        "/v1/messages",
        r#"{"model":"llama","max_tokens":4,"overloaded":1}"#,
    )
    .await;
    assert_eq!(status.as_u16(), 529);
    let points = harness.points_of(DURATION);
    assert_eq!(points.len(), 2, "{points:#?}");
    let ok = points
        .iter()
        .find(|p| p.attr("error.type").is_none())
        .unwrap();
    assert_attributes(ok, "chat");
    assert!(points
        .iter()
        .any(|p| p.str_attr("error.type") == Some("529")));
    assert!(harness.points_of(TTFT).is_empty());
    assert_eq!(tokens(&harness, "input"), Some((1, 6.0)));
    assert_eq!(tokens(&harness, "output"), Some((1, 2.0)));
}

#[tokio::test]
async fn an_embedding_records_its_duration_and_input_tokens_only() {
    let harness = Harness::new();
    let (status, _) = exchange(
        app(&harness),
        "/v1/embeddings",
        r#"{"model":"llama","input":["a b c","d e f"]}"#,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let duration = single(&harness, DURATION);
    assert_attributes(&duration, "embeddings");
    assert_eq!(histogram(&duration).0, 1);
    assert!(harness.points_of(TTFT).is_empty() && harness.points_of(TPOT).is_empty());
    assert_eq!(tokens(&harness, "input"), Some((1, 12.0)));
    assert_eq!(
        tokens(&harness, "output"),
        None,
        "an embedding outputs no tokens"
    );
    let input = harness
        .points_of(TOKENS)
        .into_iter()
        .find(|p| p.str_attr("gen_ai.token.type") == Some("input"))
        .unwrap();
    assert_eq!(input.str_attr("gen_ai.operation.name"), Some("embeddings"));
}

/// The same embedding under the draft conventions: its tokens on
/// `gen_ai.client.embeddings.operation.input_tokens`, none on the inference
/// token metrics; the server's request duration as before.
#[tokio::test]
async fn an_embedding_under_the_draft_records_on_the_embeddings_tokens() {
    let mut harness = Harness::new();
    harness.meter = harness
        .meter
        .with_semconv_opt_in(nemo_lens::SemconvOptIn::parse("gen_ai_latest_experimental"));
    let (status, _) = exchange(
        app(&harness),
        "/v1/embeddings",
        r#"{"model":"llama","input":["a b c","d e f"]}"#,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let names: Vec<String> = harness.points().into_iter().map(|p| p.name).collect();
    assert_eq!(
        names
            .iter()
            .filter(|n| n.contains("_tokens"))
            .collect::<Vec<_>>(),
        ["gen_ai.client.embeddings.operation.input_tokens"],
        "{names:?}"
    );
    let input = single(&harness, "gen_ai.client.embeddings.operation.input_tokens");
    assert_attributes(&input, "embeddings");
    assert_eq!(histogram(&input), (1, 12.0));
    assert_eq!(histogram(&single(&harness, DURATION)).0, 1);
}
