//! The OpenAI layer's exemplars whatever the order of the layers: a span
//! layer (entering the request's span in `call` and in every poll, as
//! tower-http's `TraceLayer` and `tracing`'s `Instrument` do) inside or
//! outside the OpenAI layer, and the TTFT and request-duration histograms
//! both carry the request's trace id.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::http::{header, Request};
use axum::response::IntoResponse;
use axum::routing::post;
use axum::Router;
use nemo_lens::exemplar::{self, SpanIds};
use nemo_lens::openai::OpenAiLayer;
use nemo_lens::opentelemetry::trace::{SpanId, TraceId};
use nemo_lens::testing::Capture;

use crate::support::openai::{exchange, DURATION, TTFT};

/// Enters `span` for the inner service's `call` and every poll of its
/// future.
#[derive(Clone)]
struct InSpan<S> {
    inner: S,
    span: SpanIds,
}

#[derive(Clone)]
struct InSpanLayer(SpanIds);

impl<S> tower::Layer<S> for InSpanLayer {
    type Service = InSpan<S>;
    fn layer(&self, inner: S) -> InSpan<S> {
        InSpan {
            inner,
            span: self.0,
        }
    }
}

impl<S, B> tower::Service<Request<B>> for InSpan<S>
where
    S: tower::Service<Request<B>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let span = self.span;
        let mut future = Box::pin(exemplar::in_span(Some(span), || self.inner.call(request)));
        Box::pin(std::future::poll_fn(move |cx| {
            exemplar::in_span(Some(span), || future.as_mut().poll(cx))
        }))
    }
}

const STREAM: &str = "data: {\"object\":\"chat.completion.chunk\",\"model\":\"llama\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\n\
data: {\"object\":\"chat.completion.chunk\",\"model\":\"llama\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" there\"},\"finish_reason\":\"stop\"}]}\n\n\
data: [DONE]\n\n";

/// A chat route whose handler reads its body, as every OpenAI handler does.
fn routes() -> Router {
    Router::new().route(
        "/v1/chat/completions",
        post(|body: Bytes| async move {
            assert!(!body.is_empty());
            (
                [(header::CONTENT_TYPE, "text/event-stream")],
                Body::from(STREAM),
            )
                .into_response()
        }),
    )
}

async fn trace_ids_recorded(app: Router, capture: &Capture, span: SpanIds) {
    let (status, _) = exchange(
        app,
        "/v1/chat/completions",
        r#"{"model":"llama","stream":true,"messages":[]}"#,
    )
    .await;
    assert_eq!(status, 200);
    let want = format!("{:032x}", span.trace_id());
    for name in [TTFT, DURATION] {
        let exemplars = capture.exemplars(name, &[]);
        assert_eq!(exemplars.len(), 1, "{name}: {exemplars:?}");
        assert_eq!(
            exemplars[0].trace_id_hex().as_deref(),
            Some(want.as_str()),
            "{name}"
        );
        assert_eq!(exemplars[0].span, Some(span), "{name}");
    }
}

fn request_span() -> SpanIds {
    SpanIds::new(
        TraceId::from(0x4bf92f3577b34da6a3ce929d0e0e4736_u128),
        SpanId::from(0x00f067aa0ba902b7_u64),
    )
}

#[tokio::test]
async fn a_span_layer_outside_the_openai_layer_links_its_exemplars() {
    let capture = Capture::new();
    let app = routes()
        .layer(OpenAiLayer::new(capture.meter()).models(["llama"]))
        .layer(InSpanLayer(request_span()));
    trace_ids_recorded(app, &capture, request_span()).await;
}

#[tokio::test]
async fn a_span_layer_inside_the_openai_layer_links_its_exemplars_too() {
    let capture = Capture::new();
    let app = routes()
        .layer(InSpanLayer(request_span()))
        .layer(OpenAiLayer::new(capture.meter()).models(["llama"]));
    trace_ids_recorded(app, &capture, request_span()).await;
}

#[tokio::test]
async fn a_request_whose_client_leaves_while_its_handler_runs_links_its_exemplar() {
    let capture = Capture::new();
    // The handler reads the body in the request's span, then never answers:
    // the client gives up before the response's head.
    let app = Router::new()
        .route(
            "/v1/chat/completions",
            post(|body: Bytes| async move {
                assert!(!body.is_empty());
                std::future::pending::<()>().await;
            }),
        )
        .layer(InSpanLayer(request_span()))
        .layer(OpenAiLayer::new(capture.meter()).models(["llama"]));
    let request = Request::post("/v1/chat/completions")
        .body(Body::from(r#"{"model":"llama","stream":true}"#))
        .unwrap();
    let gave_up = tokio::time::timeout(
        std::time::Duration::from_millis(50),
        tower::ServiceExt::oneshot(app, request),
    )
    .await;
    assert!(gave_up.is_err(), "the handler answered");
    let exemplars = capture.exemplars(DURATION, &[("error.type", "cancelled")]);
    assert_eq!(exemplars.len(), 1, "{exemplars:?}");
    assert_eq!(exemplars[0].span, Some(request_span()));
}
