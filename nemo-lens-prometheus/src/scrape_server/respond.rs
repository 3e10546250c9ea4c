//! The response to one request: the scrape, or why not.

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, ACCEPT, ALLOW, CONNECTION, CONTENT_TYPE, VARY};
use hyper::{Method, Request, Response, StatusCode};

use super::{Render, Web};

/// The response to `request`: under a web configuration, refused unless it
/// is admitted (rate limit, basic auth), with the configured headers on
/// every answer.
pub(super) async fn respond(
    request: &Request<Incoming>,
    render: &Render,
    web: &Web,
) -> Response<Full<Bytes>> {
    #[cfg(feature = "web-config")]
    if let Some(web) = web {
        return super::access::respond_under(web, request, render).await;
    }
    #[cfg(not(feature = "web-config"))]
    let _ = web;
    scrape(request, render)
}

/// The scrape, or why not, with nothing asked of the client.
pub(super) fn scrape(request: &Request<Incoming>, render: &Render) -> Response<Full<Bytes>> {
    let path = request.uri().path();
    // Origin form (`/metrics`) or absolute form (`http://host/metrics`);
    // authority and asterisk forms are for CONNECT and OPTIONS only.
    if !path.starts_with('/') {
        // The connection may be out of step with the client: end it.
        return closing(text(StatusCode::BAD_REQUEST, "bad request target\n"));
    }
    if path != "/metrics" {
        return text(StatusCode::NOT_FOUND, "not found\n");
    }
    if request.method() != Method::GET && request.method() != Method::HEAD {
        let mut response = text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n");
        response
            .headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    // Several Accept headers are one list, as HTTP says.
    let accept: Vec<&str> = request
        .headers()
        .get_all(ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .collect();
    let accept = (!accept.is_empty()).then(|| accept.join(","));
    // A collection that panics must cost one scrape, not the server.
    let rendered =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| render(accept.as_deref())))
            .unwrap_or_else(|_| Err("metric collection panicked".into()));
    match rendered {
        Ok((content_type, body)) => {
            let mut response = Response::new(Full::new(Bytes::from(body)));
            let headers = response.headers_mut();
            headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
            // The body depends on Accept: caches must not mix the formats.
            headers.insert(VARY, HeaderValue::from_static("accept"));
            response
        }
        Err(message) => text(StatusCode::INTERNAL_SERVER_ERROR, &format!("{message}\n")),
    }
}

pub(super) fn closing(mut response: Response<Full<Bytes>>) -> Response<Full<Bytes>> {
    response
        .headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    response
}

pub(super) fn text(status: StatusCode, body: &str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_owned())));
    *response.status_mut() = status;
    response
}
