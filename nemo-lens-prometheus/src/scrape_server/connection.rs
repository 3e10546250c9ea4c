//! One connection: served by hyper (or answered 503 when the server is
//! full), with the statuses hyper leaves unsent, then closed without a reset.

use std::convert::Infallible;
use std::time::Duration;

use hyper::body::Incoming;
use hyper::Request;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::counted::Counted;
use super::respond::{closing, respond, text};
use super::{Render, Web};

/// Longest request head accepted (hyper's smallest buffer); scrapers send a
/// few hundred bytes, anything longer gets 431.
const MAX_HEAD: usize = 8 * 1024;
/// Time a client gets to send a whole request head (also how long an idle
/// keep-alive connection is kept).
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(5);
/// Time a busy client gets to send its request before being dropped.
const REJECT_READ_TIMEOUT: Duration = Duration::from_secs(2);
/// Longest life of one connection, whatever the client does; requests in
/// flight then get `GRACE` to finish.
const CONNECTION_DEADLINE: Duration = Duration::from_secs(30);
const GRACE: Duration = Duration::from_secs(5);
/// How long, and how many bytes, a closing connection is drained for. The
/// bytes cover a client still sending a megabyte-sized head it was refused
/// with 431 (nginx drains by time alone); the time bounds what a hostile
/// client costs.
const LINGER: Duration = Duration::from_secs(1);
const LINGER_BYTES: usize = 4 * 1024 * 1024;

fn http1() -> hyper::server::conn::http1::Builder {
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .max_buf_size(MAX_HEAD)
        .pipeline_flush(true);
    builder
}

/// A connection's stream: plain TCP, or TLS over it.
pub(super) trait Stream: AsyncRead + AsyncWrite + Unpin + Send {}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> Stream for S {}

pub(super) async fn serve<S: Stream>(mut stream: S, render: Render, web: Web) {
    let mut io = Counted::new(&mut stream);
    let result = {
        let service = hyper::service::service_fn(move |request| {
            let (render, web) = (render.clone(), web.clone());
            async move { Ok::<_, Infallible>(respond(&request, &render, &web).await) }
        });
        let conn = http1()
            .keep_alive(true)
            .serve_connection(TokioIo::new(&mut io), service);
        tokio::pin!(conn);
        match tokio::time::timeout(CONNECTION_DEADLINE, conn.as_mut()).await {
            Ok(result) => result,
            Err(_) => {
                // Too long: finish the request in flight, take no more.
                conn.as_mut().graceful_shutdown();
                tokio::time::timeout(GRACE, conn).await.unwrap_or(Ok(()))
            }
        }
    };
    if let Err(error) = result {
        answer_unanswered(&mut io, &error).await;
    }
    linger_close(stream).await;
}

/// hyper closes a connection whose request head cannot be parsed, or does
/// not arrive in time, without a word; the client gets the status the RFC
/// asks for instead, unless a response already went out on it.
async fn answer_unanswered<S: Stream>(io: &mut Counted<'_, S>, error: &hyper::Error) {
    if io.written > 0 || io.read == 0 {
        return;
    }
    let status = if error.is_parse_too_large() {
        "431 Request Header Fields Too Large"
    } else if error.is_parse() {
        "400 Bad Request"
    } else if error.is_timeout() {
        "408 Request Timeout"
    } else {
        return;
    };
    let response = format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
    let _ = tokio::time::timeout(LINGER, io.stream.write_all(response.as_bytes())).await;
}

pub(super) async fn reject_busy<S: Stream>(mut stream: S) {
    let mut io = Counted::new(&mut stream);
    let result = {
        let service = hyper::service::service_fn(|_request: Request<Incoming>| async {
            Ok::<_, Infallible>(closing(text(
                hyper::StatusCode::SERVICE_UNAVAILABLE,
                "busy, retry later\n",
            )))
        });
        let mut builder = http1();
        builder
            .keep_alive(false)
            .header_read_timeout(REJECT_READ_TIMEOUT);
        let conn = builder.serve_connection(TokioIo::new(&mut io), service);
        tokio::time::timeout(REJECT_READ_TIMEOUT + GRACE, conn)
            .await
            .unwrap_or(Ok(()))
    };
    if let Err(error) = result {
        answer_unanswered(&mut io, &error).await;
    }
    linger_close(stream).await;
}

/// Closes the write side, then reads and discards what the client still
/// sends for a moment: closing a socket with unread bytes makes the kernel
/// send a reset, which can destroy the response before the client reads it.
pub(super) async fn linger_close<S: Stream>(mut stream: S) {
    let _ = stream.shutdown().await;
    let drain = async {
        let mut buf = [0u8; 4096];
        let mut drained = 0;
        while drained < LINGER_BYTES {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => drained += n,
            }
        }
    };
    let _ = tokio::time::timeout(LINGER, drain).await;
}
