//! The OpenAI layer around a real axum router: what each kind of exchange
//! records, asserted on exported values.

use std::convert::Infallible;
use std::time::Duration;

use crate::support::openai::*;
use crate::support::{AttrValue, Harness};
use axum::body::{Body, Bytes};
use axum::http::{header, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use http_body_util::BodyExt;
use nemo_lens::openai::OpenAiLayer;
use tower::ServiceExt;

/// A stream of `words` chat chunks `gap` apart, then (when `usage`) a
/// usage chunk, then `[DONE]`; each event in a frame of its own, or split
/// across two when `split`.
fn chat_stream(words: usize, gap: Duration, usage: bool, split: bool) -> Response {
    let stream = async_stream(words, gap, usage, split);
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .body(Body::from_stream(stream))
        .unwrap()
}

fn async_stream(
    words: usize,
    gap: Duration,
    usage: bool,
    split: bool,
) -> impl futures_util::Stream<Item = Result<Bytes, Infallible>> {
    let mut events: Vec<String> = Vec::new();
    events.push(r#"{"object":"chat.completion.chunk","model":"llama","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#.to_owned());
    for i in 0..words {
        let finish = if i + 1 == words {
            r#""length""#
        } else {
            "null"
        };
        events.push(format!(
            r#"{{"object":"chat.completion.chunk","model":"llama","choices":[{{"index":0,"delta":{{"content":" w{i}"}},"finish_reason":{finish}}}]}}"#
        ));
    }
    if usage {
        events.push(format!(
            r#"{{"object":"chat.completion.chunk","model":"llama","choices":[],"usage":{{"prompt_tokens":7,"completion_tokens":{words},"prompt_tokens_details":{{"cached_tokens":3}}}}}}"#
        ));
    }
    events.push("[DONE]".to_owned());
    let frames: Vec<(bool, Bytes)> = events
        .into_iter()
        .enumerate()
        .flat_map(|(i, event)| {
            let bytes = format!("data: {event}\n\n").into_bytes();
            // The first event (the role) comes at once; content is paced.
            let pace = i > 0;
            if split {
                let (a, b) = bytes.split_at(bytes.len() / 2);
                vec![
                    (pace, Bytes::copy_from_slice(a)),
                    (false, Bytes::copy_from_slice(b)),
                ]
            } else {
                vec![(pace, Bytes::from(bytes))]
            }
        })
        .collect();
    futures_util::stream::unfold(frames.into_iter(), move |mut frames| async move {
        let (pace, frame) = frames.next()?;
        if pace {
            tokio::time::sleep(gap).await;
        }
        Some((Ok(frame), frames))
    })
}

fn app(harness: &Harness) -> Router {
    Router::new()
        .route(
            "/v1/chat/completions",
            post(|body: Bytes| async move {
                let body = String::from_utf8_lossy(&body).into_owned();
                if body.contains("\"missing\"") {
                    let error = r#"{"error":{"message":"The model `missing` does not exist.","type":"invalid_request_error","code":"model_not_found"}}"#;
                    return (StatusCode::NOT_FOUND, [(header::CONTENT_TYPE, "application/json")], error)
                        .into_response();
                }
                if body.contains("\"stream\":false") {
                    let reply = r#"{"object":"chat.completion","model":"llama","choices":[{"index":0,"message":{"role":"assistant","content":"hi there"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"completion_tokens_details":{"reasoning_tokens":1}}}"#;
                    return ([(header::CONTENT_TYPE, "application/json")], reply).into_response();
                }
                let usage = !body.contains("no_usage");
                let split = body.contains("split");
                chat_stream(5, Duration::from_millis(20), usage, split)
            }),
        )
        .route(
            "/v1/completions",
            post(|| async {
                let stream = r#"data: {"object":"text_completion","model":"llama","choices":[{"text":"a","index":0,"finish_reason":null}]}

data: {"object":"text_completion","model":"llama","choices":[{"text":" b","index":0,"finish_reason":"stop"}]}

data: [DONE]

"#;
                ([(header::CONTENT_TYPE, "text/event-stream")], stream)
            }),
        )
        .route("/v1/models", get(|| async { "{}" }))
        .layer(OpenAiLayer::new(&harness.meter).models(["llama"]))
}

#[tokio::test]
async fn a_streamed_chat_records_its_timings_tokens_and_models() {
    let harness = Harness::new();
    let (status, body) = exchange(
        app(&harness),
        "/v1/chat/completions",
        r#"{"model":"llama","stream":true,"messages":[{"role":"user","content":"hi"}]}"#,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        body.ends_with("data: [DONE]\n\n"),
        "the body passes unchanged"
    );

    let duration = single(&harness, DURATION);
    let ttft = single(&harness, TTFT);
    let tpot = single(&harness, TPOT);
    let (_, duration_s) = histogram(&duration);
    let (_, ttft_s) = histogram(&ttft);
    let (_, tpot_s) = histogram(&tpot);
    // Five words 20 ms apart: the first content after 20 ms (the role chunk
    // before it carries none), four gaps after it.
    assert!(ttft_s >= 0.020 && ttft_s < duration_s, "ttft {ttft_s}");
    assert!((0.019..0.060).contains(&tpot_s), "tpot {tpot_s}");
    assert!(duration_s >= 0.100, "duration {duration_s}");
    for point in [&duration, &ttft, &tpot] {
        assert_eq!(point.str_attr("gen_ai.operation.name"), Some("chat"));
        assert_eq!(point.str_attr("gen_ai.provider.name"), Some("nemo"));
        assert_eq!(point.str_attr("gen_ai.request.model"), Some("llama"));
        assert_eq!(point.str_attr("gen_ai.response.model"), Some("llama"));
        assert_eq!(point.attr("error.type"), None);
    }
    // From usage: 7 prompt tokens, 5 completion tokens.
    assert_eq!(tokens(&harness, "input"), Some((1, 7.0)));
    assert_eq!(tokens(&harness, "output"), Some((1, 5.0)));
}

#[tokio::test]
async fn without_usage_the_content_chunks_are_the_output_tokens_even_split_across_frames() {
    let harness = Harness::new();
    exchange(
        app(&harness),
        "/v1/chat/completions",
        r#"{"model":"llama","stream":true,"no_usage":1,"split":1}"#,
    )
    .await;
    assert_eq!(tokens(&harness, "output"), Some((1, 5.0)));
    assert!(harness
        .points_of(TOKENS)
        .iter()
        .all(|p| p.str_attr("gen_ai.token.type") != Some("input")));
    assert_eq!(histogram(&single(&harness, TTFT)).0, 1);
}

#[tokio::test]
async fn an_undeclared_model_is_recorded_under_one_fixed_value() {
    let harness = Harness::new();
    for model in ["llama-evil-1", "llama-evil-2", "x\\\"y"] {
        exchange(
            app(&harness),
            "/v1/chat/completions",
            &format!(r#"{{"model":"{model}","stream":true}}"#),
        )
        .await;
    }
    let duration = single(&harness, DURATION);
    assert_eq!(duration.str_attr("gen_ai.request.model"), Some("_OTHER"));
    assert_eq!(histogram(&duration).0, 3, "three requests, one series");
}

#[tokio::test]
async fn an_error_status_is_the_error_type_and_no_timing_is_recorded() {
    let harness = Harness::new();
    let (status, body) = exchange(
        app(&harness),
        "/v1/chat/completions",
        r#"{"model":"missing","stream":true}"#,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body.contains("model_not_found"));
    let duration = single(&harness, DURATION);
    assert_eq!(duration.str_attr("error.type"), Some("404"));
    assert_eq!(duration.str_attr("gen_ai.request.model"), Some("_OTHER"));
    assert!(harness.points_of(TTFT).is_empty());
}

#[tokio::test]
async fn a_client_that_goes_away_mid_stream_is_recorded_as_cancelled() {
    let harness = Harness::new();
    // Two frames (the role and the first word), then the client is gone.
    leave_after(
        app(&harness),
        "/v1/chat/completions",
        r#"{"model":"llama","stream":true}"#,
        2,
    )
    .await;
    let duration = single(&harness, DURATION);
    assert_eq!(duration.str_attr("error.type"), Some("cancelled"));
    assert_eq!(duration.str_attr("gen_ai.request.model"), Some("llama"));
    assert!(
        harness.points_of(TTFT).is_empty(),
        "no TTFT for a failed request"
    );
    assert!(harness
        .points_of(TOKENS)
        .iter()
        .all(|p| p.str_attr("gen_ai.token.type") != Some("output")));
}

#[tokio::test]
async fn a_non_streamed_chat_records_its_duration_and_usage_but_no_stream_timings() {
    let harness = Harness::new();
    exchange(
        app(&harness),
        "/v1/chat/completions",
        r#"{"model":"llama","stream":false}"#,
    )
    .await;
    assert_eq!(histogram(&single(&harness, DURATION)).0, 1);
    assert!(harness.points_of(TTFT).is_empty() && harness.points_of(TPOT).is_empty());
    assert_eq!(tokens(&harness, "input"), Some((1, 5.0)));
    assert_eq!(tokens(&harness, "output"), Some((1, 2.0)));
}

#[tokio::test]
async fn completions_are_text_completion_and_other_paths_pass_untouched() {
    let harness = Harness::new();
    let (_, body) = exchange(
        app(&harness),
        "/v1/completions",
        r#"{"model":"llama","prompt":"x","stream":true}"#,
    )
    .await;
    assert!(body.contains("text_completion"));
    let duration = single(&harness, DURATION);
    assert_eq!(
        duration.str_attr("gen_ai.operation.name"),
        Some("text_completion")
    );
    assert_eq!(
        tokens(&harness, "output"),
        Some((1, 2.0)),
        "two text chunks"
    );

    let models = app(&harness)
        .oneshot(Request::get("/v1/models").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(models.status(), StatusCode::OK);
    assert_eq!(
        histogram(&single(&harness, DURATION)).0,
        1,
        "GET /v1/models is not measured"
    );
}

#[tokio::test]
async fn a_router_counts_finish_reasons_when_asked() {
    let harness = Harness::new();
    let app = Router::new()
        .route(
            "/v1/chat/completions",
            post(|| async { chat_stream(2, Duration::from_millis(1), true, false) }),
        )
        .layer(
            OpenAiLayer::new(&harness.meter)
                .models(["llama"])
                .count_finish_reasons(true),
        );
    exchange(
        app,
        "/v1/chat/completions",
        r#"{"model":"llama","stream":true}"#,
    )
    .await;
    let finished = single(&harness, "nemo.inference.requests.finished");
    assert_eq!(finished.number(), 1.0);
    assert_eq!(
        finished.attr("nemo.inference.finish_reason"),
        Some(&AttrValue::from("length"))
    );
}

/// A stream that ends in an `error` event, and a body that fails while
/// being produced.
#[tokio::test]
async fn an_error_event_or_a_failing_body_is_the_error_type() {
    let harness = Harness::new();
    let app = Router::new()
        .route(
            "/v1/chat/completions",
            post(|body: Bytes| async move {
                let frames: Vec<Result<Bytes, std::io::Error>> = if body.starts_with(b"{\"event\"") {
                    vec![
                        Ok(Bytes::from_static(b"data: {\"choices\":[{\"delta\":{\"content\":\"x\"},\"finish_reason\":null}]}\n\n")),
                        Ok(Bytes::from_static(b"data: {\"error\":{\"message\":\"engine died\"}}\n\n")),
                    ]
                } else {
                    vec![
                        Ok(Bytes::from_static(b"data: {\"choices\":[{\"delta\":{\"content\":\"x\"},\"finish_reason\":null}]}\n\n")),
                        Err(std::io::Error::other("the generator crashed")),
                    ]
                };
                Response::builder()
                    .header(header::CONTENT_TYPE, "text/event-stream")
                    .body(Body::from_stream(futures_util::stream::iter(frames)))
                    .unwrap()
            }),
        )
        .layer(OpenAiLayer::new(&harness.meter).models(["llama"]));
    exchange(
        app.clone(),
        "/v1/chat/completions",
        r#"{"event":1,"model":"llama","stream":true}"#,
    )
    .await;
    let request = Request::post("/v1/chat/completions")
        .body(Body::from(r#"{"model":"llama","stream":true}"#))
        .unwrap();
    let response = app.oneshot(request).await.unwrap();
    assert!(
        response.into_body().collect().await.is_err(),
        "the body failed"
    );
    let errors: Vec<Option<String>> = harness
        .points_of(DURATION)
        .iter()
        .map(|p| p.str_attr("error.type").map(str::to_owned))
        .collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors.contains(&Some("error_event".to_owned())),
        "{errors:?}"
    );
    assert!(
        errors.contains(&Some("body_error".to_owned())),
        "{errors:?}"
    );
}

/// With the GenAI draft's names, the cached tokens of `usage` are counted,
/// with the modality the server declares.
#[tokio::test]
async fn the_drafts_counters_get_cached_tokens_and_the_declared_modality() {
    let harness = Harness::new();
    let meter = harness
        .meter
        .with_semconv_opt_in(nemo_lens::SemconvOptIn::parse("gen_ai_latest_experimental"));
    let app = Router::new()
        .route(
            "/v1/chat/completions",
            post(|| async { chat_stream(3, Duration::from_millis(1), true, false) }),
        )
        .layer(
            OpenAiLayer::new(&meter)
                .models(["llama"])
                .token_modality(nemo_lens::instruments::TokenModality::Unknown),
        );
    exchange(
        app,
        "/v1/chat/completions",
        r#"{"model":"llama","stream":true}"#,
    )
    .await;
    let cached = single(
        &harness,
        "gen_ai.client.inference.usage.cache_read.input_tokens",
    );
    assert_eq!(cached.number(), 3.0);
    assert_eq!(cached.str_attr("gen_ai.token.modality"), Some("unknown"));
    assert_eq!(
        single(&harness, "gen_ai.client.inference.usage.output_tokens").number(),
        3.0
    );
    assert!(
        harness.points_of(TOKENS).is_empty(),
        "no gen_ai.client.token.usage"
    );
}

/// Through a real HTTP server: a streamed response that declares its
/// length is done once that many bytes went out, even though the server
/// stops polling the body there.
#[tokio::test]
async fn a_response_with_a_declared_length_ends_when_its_bytes_are_sent() {
    use futures_util::StreamExt;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let harness = Harness::new();
    const BODY: &str = "data: {\"choices\":[{\"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}],\"usage\":{\"completion_tokens\":1}}\n\n";
    let app = Router::new()
        .route(
            "/v1/chat/completions",
            post(|| async {
                let frames = futures_util::stream::iter([Ok::<_, Infallible>(Bytes::from_static(
                    BODY.as_bytes(),
                ))])
                .chain(futures_util::stream::pending());
                Response::builder()
                    .header(header::CONTENT_TYPE, "text/event-stream")
                    .header(header::CONTENT_LENGTH, BODY.len())
                    .body(Body::from_stream(frames))
                    .unwrap()
            }),
        )
        .layer(OpenAiLayer::new(&harness.meter).models(["llama"]));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move { axum::serve(listener, app).await });

    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let body = r#"{"model":"llama","stream":true}"#;
    let request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), async {
        let mut buf = [0u8; 4096];
        while !String::from_utf8_lossy(&response).ends_with(BODY) {
            let n = stream.read(&mut buf).await.unwrap();
            assert!(n > 0, "the server closed early");
            response.extend_from_slice(&buf[..n]);
        }
    })
    .await;
    assert!(read.is_ok(), "{}", String::from_utf8_lossy(&response));
    // The server drops the body once its declared length is out.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while harness.points_of(DURATION).is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let duration = single(&harness, DURATION);
    assert_eq!(duration.attr("error.type"), None, "{duration:?}");
    assert_eq!(tokens(&harness, "output"), Some((1, 1.0)));
    server.abort();
}

/// A backend that sends its usage chunk and `[DONE]` 300 ms after the
/// last word (as servers that hold them until accounting is done do):
/// time per output token ends at the last content chunk, and the request's
/// duration at the end of the body.
#[tokio::test]
async fn time_per_output_token_ends_at_the_last_content_chunk() {
    let harness = Harness::new();
    let app = Router::new()
        .route(
            "/v1/chat/completions",
            post(|| async {
                let mut frames: Vec<(Duration, String)> = Vec::new();
                for i in 0..5 {
                    frames.push((
                        Duration::from_millis(10),
                        format!(r#"{{"object":"chat.completion.chunk","model":"llama","choices":[{{"index":0,"delta":{{"content":" w{i}"}},"finish_reason":null}}]}}"#),
                    ));
                }
                frames.push((
                    Duration::from_millis(300),
                    r#"{"object":"chat.completion.chunk","model":"llama","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":5}}"#.to_owned(),
                ));
                frames.push((Duration::from_millis(300), "[DONE]".to_owned()));
                let stream = futures_util::stream::unfold(frames.into_iter(), |mut frames| async move {
                    let (wait, event) = frames.next()?;
                    tokio::time::sleep(wait).await;
                    Some((Ok::<_, Infallible>(Bytes::from(format!("data: {event}\n\n"))), frames))
                });
                Response::builder()
                    .header(header::CONTENT_TYPE, "text/event-stream")
                    .body(Body::from_stream(stream))
                    .unwrap()
            }),
        )
        .layer(OpenAiLayer::new(&harness.meter).models(["llama"]));
    let (status, _) = exchange(
        app,
        "/v1/chat/completions",
        r#"{"model":"llama","stream":true,"messages":[{"role":"user","content":"hi"}]}"#,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (_, duration_s) = histogram(&single(&harness, DURATION));
    let (_, tpot_s) = histogram(&single(&harness, TPOT));
    assert!(duration_s >= 0.650, "duration {duration_s}");
    // Four gaps of 10 ms; to the end of the body it would be 160 ms each.
    assert!((0.009..0.060).contains(&tpot_s), "tpot {tpot_s}");
    assert_eq!(tokens(&harness, "output"), Some((1, 5.0)));
}
