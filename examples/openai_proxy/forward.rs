//! The proxy's forwarding: a request to the upstream and its answer back,
//! streamed, with the in-flight gauges; shared by the example and by
//! `benches/openai_layer.rs`, which measures it with and without metering.

use std::error::Error;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderName, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use nemo_lens::instruments::serving::SchedulingMetrics;
use nemo_lens::{Instruments, Meter};
use serde_json::json;

/// What every forwarded request shares.
pub struct Proxy {
    client: Client<HttpConnector, Body>,
    pub upstream: Uri,
    timeout: Duration,
    meter: Meter,
}

impl Proxy {
    /// Forwards to `upstream` (`http://HOST:PORT`), giving it `timeout` to
    /// answer; the gauges on `meter`.
    pub fn new(upstream: Uri, timeout: Duration, meter: &Meter) -> Self {
        let mut connector = HttpConnector::new();
        // Each token is its own small write: without TCP_NODELAY, Nagle's
        // algorithm holds one back until the previous is acknowledged.
        connector.set_nodelay(true);
        Proxy {
            // Engines behind uvicorn close a keep-alive connection idle
            // for 5 s; reusing one the upstream is closing fails the
            // request. Dropped sooner here, the pool never hands one out.
            client: Client::builder(TokioExecutor::new())
                .pool_idle_timeout(Duration::from_secs(4))
                .build(connector),
            upstream,
            timeout,
            meter: meter.clone(),
        }
    }
}

/// Headers that belong to one connection, not to the message: never
/// forwarded either way (RFC 9110, section 7.6.1).
const HOP_BY_HOP: &[HeaderName] = &[
    header::CONNECTION,
    header::PROXY_AUTHENTICATE,
    header::PROXY_AUTHORIZATION,
    header::TE,
    header::TRAILER,
    header::TRANSFER_ENCODING,
    header::UPGRADE,
];

fn strip_hop_by_hop(headers: &mut HeaderMap) {
    // Names listed in `Connection` are hop-by-hop too.
    let listed: Vec<HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|name| HeaderName::try_from(name.trim()).ok())
        .collect();
    for name in HOP_BY_HOP.iter().chain(&listed) {
        headers.remove(name);
    }
    headers.remove("keep-alive");
}

/// One request the proxy holds: waiting for the upstream's answer, then
/// running while its body streams; the gauges follow, and are given back
/// however it ends.
struct InFlight {
    meter: Meter,
    running: bool,
}

impl InFlight {
    fn waiting(meter: &Meter) -> Self {
        SchedulingMetrics::default()
            .requests_waiting(1)
            .record(meter);
        InFlight {
            meter: meter.clone(),
            running: false,
        }
    }

    fn run(&mut self) {
        if !self.running {
            self.running = true;
            SchedulingMetrics::default()
                .requests_waiting(-1)
                .requests_running(1)
                .record(&self.meter);
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let metrics = SchedulingMetrics::default();
        let metrics = if self.running {
            metrics.requests_running(-1)
        } else {
            metrics.requests_waiting(-1)
        };
        metrics.record(&self.meter);
    }
}

/// The upstream's response body, passed on frame by frame, holding its
/// request in flight until it ends or is dropped.
struct Upstream {
    body: Incoming,
    in_flight: Option<InFlight>,
}

impl hyper::body::Body for Upstream {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let frame = Pin::new(&mut self.body).poll_frame(cx);
        if matches!(frame, Poll::Ready(None | Some(Err(_)))) {
            self.in_flight = None;
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// An OpenAI-style error reply for what went wrong with the upstream.
fn upstream_error(status: StatusCode, message: String) -> Response {
    let code = match status {
        StatusCode::GATEWAY_TIMEOUT => "upstream_timeout",
        _ => "upstream_unreachable",
    };
    let body = json!({"error": {"message": message, "type": "upstream_error", "param": null, "code": code}});
    (status, Json(body)).into_response()
}

/// Every request but `/metrics`: to the upstream and back.
pub async fn forward(State(proxy): State<Arc<Proxy>>, request: Request) -> Response {
    let mut in_flight = InFlight::waiting(&proxy.meter);
    let (mut parts, body) = request.into_parts();
    let path = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    let mut target = proxy.upstream.clone().into_parts();
    target.path_and_query = match path.parse() {
        Ok(path) => Some(path),
        Err(e) => {
            return upstream_error(StatusCode::BAD_REQUEST, format!("bad path {path:?}: {e}"))
        }
    };
    parts.uri = match Uri::from_parts(target) {
        Ok(uri) => uri,
        Err(e) => {
            return upstream_error(StatusCode::BAD_REQUEST, format!("bad path {path:?}: {e}"))
        }
    };
    strip_hop_by_hop(&mut parts.headers);
    // The client sets the upstream's own.
    parts.headers.remove(header::HOST);
    let request = Request::from_parts(parts, body);
    let response = match tokio::time::timeout(proxy.timeout, proxy.client.request(request)).await {
        Err(_) => {
            return upstream_error(
                StatusCode::GATEWAY_TIMEOUT,
                format!(
                    "the upstream {} did not answer within {} s",
                    proxy.upstream,
                    proxy.timeout.as_secs()
                ),
            )
        }
        Ok(Err(e)) => {
            // The client's error says where it failed; its sources, why.
            let mut cause = String::new();
            let mut source = e.source();
            while let Some(s) = source {
                cause.push_str(&format!(": {s}"));
                source = s.source();
            }
            return upstream_error(
                StatusCode::BAD_GATEWAY,
                format!("the upstream {} failed: {e}{cause}", proxy.upstream),
            );
        }
        Ok(Ok(response)) => response,
    };
    in_flight.run();
    let (mut parts, body) = response.into_parts();
    strip_hop_by_hop(&mut parts.headers);
    Response::from_parts(
        parts,
        Body::new(Upstream {
            body,
            in_flight: Some(in_flight),
        }),
    )
}
