//! The HTTP/1.1 server for one read-only endpoint, `GET /metrics`, on hyper.
//!
//! hyper (already in the tree for the `otlp` feature's tonic) parses every
//! request form RFC 9112 asks a server to accept (bare-LF line endings,
//! absolute-form targets, pipelined requests), keeps a header-read timeout
//! and answers malformed or oversized heads with 400/431. Around it:
//!
//! - a private current-thread tokio runtime on one thread, so the server
//!   needs nothing from the program and sleeps in `epoll` when idle (no
//!   polling loop: stopping is a message, not a flag checked on a timer);
//! - a listen backlog large enough for a burst of scrapers;
//! - a cap on connections served at once; past it, a second, equally
//!   bounded pool reads the request and answers `503` with
//!   `Connection: close`, so a busy server says so instead of resetting;
//! - a deadline on each connection, and a "lingering close" (send FIN,
//!   drain what the client still sends for a moment) so a response is never
//!   destroyed by a TCP reset caused by unread request bytes.

#[cfg(feature = "web-config")]
mod access;
mod connection;
mod counted;
mod respond;

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::{oneshot, Semaphore};

use connection::{reject_busy, serve};

/// Connections served at once. Each costs a few kilobytes, so the cap is
/// set well above what slow or idle clients can plausibly hold open while
/// still bounding memory.
pub(crate) const MAX_CONNECTIONS: usize = 256;
/// Connections past the cap that are read and answered 503; beyond both
/// pools a connection is closed unanswered.
const MAX_REJECTING: usize = 256;
/// Pending connections the kernel queues before `accept`.
const BACKLOG: u32 = 1024;
/// How long `stop` lets open connections wind down.
const STOP_TIMEOUT: Duration = Duration::from_millis(500);

/// Renders a scrape for a request's `Accept` header: its content type and
/// body, or a message for a 500.
pub(crate) type Render =
    Arc<dyn Fn(Option<&str>) -> Result<(&'static str, Vec<u8>), String> + Send + Sync>;

/// The web configuration the server answers under, if any.
#[cfg(feature = "web-config")]
pub(crate) type Web = Option<Arc<crate::web_config::WebConfig>>;
/// Without the `web-config` feature there is none.
#[cfg(not(feature = "web-config"))]
pub(crate) type Web = Option<NoWebConfig>;

/// What a build without the `web-config` feature serves under: nothing.
#[cfg(not(feature = "web-config"))]
#[derive(Clone)]
pub(crate) enum NoWebConfig {}

/// The running server; [`stop`](ScrapeServer::stop) or drop ends it.
pub struct ScrapeServer {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl ScrapeServer {
    /// Binds `addr` and serves `render` at `/metrics`, under `web` when
    /// given.
    pub(crate) fn start(addr: SocketAddr, render: Render, web: Web) -> io::Result<Self> {
        let (bound_tx, bound_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = oneshot::channel();
        let guarded = authenticates(&web);
        let web_for_loop = web;
        // Everything async happens on the server's own thread: the caller
        // may itself be inside a runtime, where `block_on` would panic.
        let thread = std::thread::Builder::new()
            .name("nemo-lens-prometheus".into())
            .spawn(move || {
                let started = tokio::runtime::Builder::new_current_thread()
                    .enable_io()
                    .enable_time()
                    .build()
                    .and_then(|runtime| {
                        let listener = runtime.block_on(async { listen(addr) })?;
                        Ok((runtime, listener))
                    });
                let (runtime, listener) = match started {
                    Ok(started) => started,
                    Err(e) => {
                        let _ = bound_tx.send(Err(e));
                        return;
                    }
                };
                let _ = bound_tx.send(listener.local_addr());
                runtime.block_on(accept_loop(listener, render, web_for_loop, stop_rx));
                // Open connections are cut off rather than waited for.
                runtime.shutdown_timeout(STOP_TIMEOUT);
            })?;
        let addr = match bound_rx.recv() {
            Ok(bound) => bound?,
            Err(_) => return Err(io::Error::other("the Prometheus server thread exited")),
        };
        if !addr.ip().is_loopback() && !guarded {
            nemo_lens_core::__internal::warnings::emit(
                nemo_lens_core::__internal::warnings::Warning::Exposure,
                || {
                    tracing::warn!(
                        target: "nemo_lens",
                        %addr,
                        "the Prometheus endpoint is bound to a non-loopback address \
                         (OTEL_EXPORTER_PROMETHEUS_HOST) and has no authentication: anyone who \
                         can reach it can read every metric; set NEMO_LENS_PROMETHEUS_WEB_CONFIG \
                         to a web configuration file with basic_auth_users or client \
                         certificates (feature prometheus-tls), or bind 127.0.0.1"
                    );
                },
            );
        }
        Ok(ScrapeServer {
            addr,
            stop: Some(stop_tx),
            thread: Some(thread),
        })
    }

    /// The bound address (with the real port when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting, closes the listener and open connections.
    pub fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for ScrapeServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn listen(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    // As std's bind does on Unix: a restarted process can rebind at once.
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(BACKLOG)
}

/// Whether `web` keeps strangers out (basic auth, or required client
/// certificates).
fn authenticates(web: &Web) -> bool {
    #[cfg(feature = "web-config")]
    return web.as_ref().is_some_and(|web| web.authenticates());
    #[cfg(not(feature = "web-config"))]
    {
        let _ = web;
        false
    }
}

async fn accept_loop(
    listener: TcpListener,
    render: Render,
    web: Web,
    mut stop: oneshot::Receiver<()>,
) {
    let serving = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let rejecting = Arc::new(Semaphore::new(MAX_REJECTING));
    loop {
        let stream = tokio::select! {
            _ = &mut stop => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => {
                    // Out of descriptors, or a connection reset before
                    // accept: back off briefly instead of spinning.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        if let Ok(permit) = serving.clone().try_acquire_owned() {
            let (render, web) = (render.clone(), web.clone());
            tokio::spawn(async move {
                #[cfg(feature = "web-config")]
                if let Some(config) = web.as_ref().filter(|web| web.tls()) {
                    if let Some(tls) = access::accept_tls(stream, config).await {
                        serve(tls, render, web).await;
                    }
                    drop(permit);
                    return;
                }
                serve(stream, render, web).await;
                drop(permit);
            });
        } else if let Ok(permit) = rejecting.clone().try_acquire_owned() {
            #[cfg(feature = "web-config")]
            let web = web.clone();
            tokio::spawn(async move {
                // On a TLS port the 503 goes over TLS too, or no client
                // could read it.
                #[cfg(feature = "web-config")]
                if let Some(config) = web.as_ref().filter(|web| web.tls()) {
                    if let Some(tls) = access::accept_tls(stream, config).await {
                        reject_busy(tls).await;
                    }
                    drop(permit);
                    return;
                }
                reject_busy(stream).await;
                drop(permit);
            });
        }
        // Past both pools the stream is dropped: the only unanswered case,
        // and only with hundreds of connections already open.
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::time::Instant;

    fn server() -> ScrapeServer {
        let render: Render = Arc::new(|_| Ok(("text/plain; version=0.0.4", b"up 1\n".to_vec())));
        ScrapeServer::start(SocketAddr::from(([127, 0, 0, 1], 0)), render, None).unwrap()
    }

    /// Sends `request` and reads until the server closes.
    fn exchange(addr: SocketAddr, request: &[u8]) -> String {
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let _ = stream.write_all(request);
        let mut response = Vec::new();
        let _ = stream.read_to_end(&mut response);
        String::from_utf8_lossy(&response).into_owned()
    }

    fn status(response: &str) -> &str {
        response.split(' ').nth(1).unwrap_or("")
    }

    #[test]
    fn serves_metrics_and_refuses_everything_else() {
        let server = server();
        let addr = server.local_addr();
        let ok = exchange(
            addr,
            b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        );
        assert_eq!(status(&ok), "200");
        assert!(ok.ends_with("\r\n\r\nup 1\n"), "{ok}");
        assert!(
            ok.contains("content-type: text/plain; version=0.0.4"),
            "{ok}"
        );
        let head = exchange(addr, b"HEAD /metrics?x=1 HTTP/1.0\r\n\r\n");
        assert_eq!(status(&head), "200");
        assert!(head.ends_with("\r\n\r\n"), "{head}");
        assert_eq!(status(&exchange(addr, b"GET / HTTP/1.0\r\n\r\n")), "404");
        assert_eq!(
            status(&exchange(addr, b"GET /metricsx HTTP/1.0\r\n\r\n")),
            "404"
        );
        let post = exchange(
            addr,
            b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        );
        assert_eq!(status(&post), "405");
        assert!(post.contains("allow: GET, HEAD"), "{post}");
    }

    #[test]
    fn bare_lf_and_absolute_form_requests_are_served() {
        let server = server();
        let addr = server.local_addr();
        let bare_lf = exchange(
            addr,
            b"GET /metrics HTTP/1.1\nHost: x\nConnection: close\n\n",
        );
        assert_eq!(status(&bare_lf), "200", "{bare_lf}");
        let absolute = exchange(
            addr,
            b"GET http://127.0.0.1/metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        );
        assert_eq!(status(&absolute), "200", "{absolute}");
    }

    #[test]
    fn malformed_and_oversized_requests_are_answered_and_survived() {
        let server = server();
        let addr = server.local_addr();
        assert_eq!(status(&exchange(addr, b"garbage\r\n\r\n")), "400");
        assert_eq!(
            status(&exchange(addr, b"GET metrics HTTP/1.1\r\n\r\n")),
            "400"
        );
        assert_eq!(
            status(&exchange(addr, b"\xff\xfe /metrics HTTP/1.1\r\n\r\n")),
            "400"
        );
        let mut huge = b"GET /metrics HTTP/1.1\r\nX: ".to_vec();
        huge.extend(std::iter::repeat_n(b'a', 64 * 1024));
        assert_eq!(status(&exchange(addr, &huge)), "431");
        // A client that connects and says nothing, then one that hangs up.
        let silent = std::net::TcpStream::connect(addr).unwrap();
        drop(std::net::TcpStream::connect(addr).unwrap());
        let ok = exchange(addr, b"GET /metrics HTTP/1.0\r\n\r\n");
        assert_eq!(status(&ok), "200");
        drop(silent);
    }

    #[test]
    fn connections_beyond_the_cap_get_a_readable_503() {
        let server = server();
        let addr = server.local_addr();
        // Clients that connect and never send hold every slot.
        let silent: Vec<std::net::TcpStream> = (0..MAX_CONNECTIONS)
            .map(|_| std::net::TcpStream::connect(addr).unwrap())
            .collect();
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut busy = String::new();
        while Instant::now() < deadline {
            busy = exchange(addr, b"GET /metrics HTTP/1.1\r\n\r\n");
            if status(&busy) == "503" {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(status(&busy), "503", "{busy}");
        assert!(busy.contains("connection: close"), "{busy}");
        assert!(busy.ends_with("busy, retry later\n"), "{busy}");
        drop(silent);
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let ok = exchange(addr, b"GET /metrics HTTP/1.0\r\n\r\n");
            if status(&ok) == "200" {
                break;
            }
            assert!(Instant::now() < deadline, "slots never freed: {ok}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn stop_releases_the_port() {
        let mut server = server();
        let addr = server.local_addr();
        server.stop();
        assert!(std::net::TcpListener::bind(addr).is_ok());
    }
}
