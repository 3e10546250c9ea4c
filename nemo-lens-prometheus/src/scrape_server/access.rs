//! The endpoint under a web configuration: TLS on each connection, and on
//! each request the rate limit, basic auth and the configured headers.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{HeaderName, HeaderValue, AUTHORIZATION, WWW_AUTHENTICATE};
use hyper::{Request, Response, StatusCode};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;

use super::connection::linger_close;
use super::respond::{closing, scrape, text};
use super::Render;
use crate::web_config::WebConfig;

/// How long a client has to finish the TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// The first byte of a TLS record carrying a handshake.
const TLS_HANDSHAKE: u8 = 0x16;

/// What Go's server answers a plain HTTP request on a TLS port.
const PLAIN_ON_TLS: &[u8] = b"HTTP/1.0 400 Bad Request\r\nconnection: close\r\n\r\n\
Client sent an HTTP request to an HTTPS server.\n";

/// The TLS side of a new connection, under the configuration as it is
/// now; `None` when the handshake fails or the client speaks plain HTTP
/// (answered with a 400 that says so, then closed).
pub(super) async fn accept_tls(stream: TcpStream, web: &WebConfig) -> Option<TlsStream<TcpStream>> {
    let mut first = [0u8; 1];
    match tokio::time::timeout(HANDSHAKE_TIMEOUT, stream.peek(&mut first)).await {
        Ok(Ok(1)) if first[0] == TLS_HANDSHAKE => {}
        Ok(Ok(1)) => {
            let mut stream = stream;
            let _ = tokio::time::timeout(HANDSHAKE_TIMEOUT, stream.write_all(PLAIN_ON_TLS)).await;
            linger_close(stream).await;
            return None;
        }
        _ => return None,
    }
    let loaded = match web.current() {
        Ok(loaded) => loaded,
        // Refused: the handshake is not even started.
        Err(_) => return None,
    };
    let config = Arc::clone(loaded.tls.as_ref()?);
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
        Ok(Ok(tls)) => Some(tls),
        Ok(Err(error)) => {
            tracing::debug!(target: "nemo_lens", %error, "TLS handshake refused");
            None
        }
        Err(_) => None,
    }
}

/// The response to `request` under `web`.
pub(super) async fn respond_under(
    web: &WebConfig,
    request: &Request<Incoming>,
    render: &Render,
) -> Response<Full<Bytes>> {
    let loaded = match web.current() {
        Ok(loaded) => loaded,
        Err(_) => {
            return closing(text(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Internal Server Error\n",
            ))
        }
    };
    let authorization = request
        .headers()
        .get(AUTHORIZATION)
        .map(HeaderValue::as_bytes);
    let mut response = match web.admit(&loaded, authorization).await {
        Ok(()) => scrape(request, render),
        Err(429) => text(StatusCode::TOO_MANY_REQUESTS, "Too Many Requests\n"),
        Err(_) => {
            let mut response = text(StatusCode::UNAUTHORIZED, "Unauthorized\n");
            response
                .headers_mut()
                .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Basic"));
            response
        }
    };
    for (name, value) in &loaded.settings.headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}
