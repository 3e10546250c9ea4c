//! With `OTEL_TRACES_EXPORTER=otlp`, each request in an OpenTelemetry span,
//! so that the latency histograms' exemplars link to it: the parent read
//! from the request's `traceparent`, the sampler from `OTEL_TRACES_SAMPLER` /
//! `OTEL_TRACES_SAMPLER_ARG` (the SDK reads them), and the spans sent to
//! `OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT` over
//! `OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL` (`grpc`, the default, or
//! `http/protobuf`).
//!
//! Without a trace exporter no span is made: a span nobody receives would
//! only give exemplars trace ids no backend has. A request that carries a
//! `traceparent` still runs in its caller's context, so its exemplars link
//! to the caller's trace; one without costs a header look-up.

use std::error::Error;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use opentelemetry::global;
use opentelemetry::trace::{FutureExt as _, SpanKind, TraceContextExt as _, Tracer as _};
use opentelemetry_http::HeaderExtractor;
use opentelemetry_otlp::SpanExporter;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;

/// Whether requests run in spans of their own: a tracer provider exports them.
static SPANS: AtomicBool = AtomicBool::new(false);

/// The tracer provider, installed globally, when `OTEL_TRACES_EXPORTER=otlp`
/// asks for spans; `None` when nothing would receive them. Call inside the
/// Tokio runtime: the gRPC exporter spawns its connection there.
pub fn setup() -> Result<Option<SdkTracerProvider>, Box<dyn Error>> {
    global::set_text_map_propagator(TraceContextPropagator::new());
    let mut builder = SdkTracerProvider::builder();
    let exporter = std::env::var("OTEL_TRACES_EXPORTER").unwrap_or_default();
    match exporter.trim() {
        "" | "none" => return Ok(None),
        "otlp" => {
            let protocol = std::env::var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
                .or_else(|_| std::env::var("OTEL_EXPORTER_OTLP_PROTOCOL"))
                .unwrap_or_else(|_| "grpc".to_owned());
            let exporter = match protocol.trim() {
                "grpc" => SpanExporter::builder().with_tonic().build()?,
                "http/protobuf" => {
                    install_tls_provider();
                    SpanExporter::builder().with_http().build()?
                }
                other => {
                    return Err(format!(
                        "OTEL_EXPORTER_OTLP_PROTOCOL={other:?}: use grpc or http/protobuf"
                    )
                    .into())
                }
            };
            builder = builder.with_batch_exporter(exporter);
        }
        other => {
            return Err(format!("OTEL_TRACES_EXPORTER={other:?}: use otlp or none").into());
        }
    }
    let provider = builder.build();
    global::set_tracer_provider(provider.clone());
    SPANS.store(true, Ordering::Relaxed);
    Ok(Some(provider))
}

/// With `otlp-tls` in the build, reqwest's rustls is built without a
/// crypto provider and its client takes the process default: install ring's
/// unless one is there (nemo-lens's own OTLP client names its provider).
// rustls deprecates ring for want of post-quantum key exchange; nemo-lens
// keeps it (aws-lc-rs needs a C and CMake build).
#[allow(deprecated)]
fn install_tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Middleware: [`in_span`] when spans are exported, else
/// [`in_caller_context`].
pub async fn per_request(request: Request, next: Next) -> Response {
    if SPANS.load(Ordering::Relaxed) {
        in_span(request, next).await
    } else {
        in_caller_context(request, next).await
    }
}

/// Runs the request in a server span (child of its `traceparent`, if any),
/// current on every poll of the handler, so what the OpenAI layer records
/// links to it.
async fn in_span(request: Request, next: Next) -> Response {
    let parent = global::get_text_map_propagator(|propagator| {
        propagator.extract(&HeaderExtractor(request.headers()))
    });
    let tracer = global::tracer("nemo-lens-openai-server");
    let span = tracer
        .span_builder(format!("{} {}", request.method(), request.uri().path()))
        .with_kind(SpanKind::Server)
        .start_with_context(&tracer, &parent);
    let cx = parent.with_span(span);
    next.run(request).with_context(cx).await
}

/// Without a trace exporter: a request with a `traceparent` runs
/// in its caller's context (no span of its own), so what the OpenAI layer
/// records links to the caller's trace; others run as they came.
async fn in_caller_context(request: Request, next: Next) -> Response {
    if !request.headers().contains_key("traceparent") {
        return next.run(request).await;
    }
    let parent = global::get_text_map_propagator(|propagator| {
        propagator.extract(&HeaderExtractor(request.headers()))
    });
    next.run(request).with_context(parent).await
}
