//! A minimal HTTP/1.1 server for one read-only endpoint, `GET /metrics`.
//!
//! It is deliberately small instead of pulling in an async HTTP stack: one
//! accept thread, one short-lived thread per connection up to a cap, every
//! read and write under a timeout and a size limit, and `Connection: close`
//! on every response. Nothing a client sends can make it panic or grow
//! without bound.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Longest request head accepted; scrapers send a few hundred bytes.
const MAX_HEAD: usize = 8 * 1024;
/// Connections served at once; more are answered 503 and closed.
const MAX_CONNECTIONS: usize = 16;
/// Time a client gets to send its request, and to read the response.
const IO_TIMEOUT: Duration = Duration::from_secs(5);
/// How often the accept loop checks for a stop request.
const POLL: Duration = Duration::from_millis(25);

/// Renders the body of a scrape, or a message for a 500.
pub(crate) type Render = Arc<dyn Fn() -> Result<Vec<u8>, String> + Send + Sync>;

/// The running server; [`stop`](ScrapeServer::stop) or drop ends it.
pub(crate) struct ScrapeServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl ScrapeServer {
    /// Binds `addr` and serves `render` at `/metrics`.
    pub(crate) fn start(addr: SocketAddr, render: Render) -> io::Result<Self> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::thread::Builder::new()
            .name("nemo-lens-prometheus".into())
            .spawn({
                let stop = stop.clone();
                move || accept_loop(listener, render, stop)
            })?;
        Ok(ScrapeServer {
            addr,
            stop,
            thread: Some(thread),
        })
    }

    /// The bound address (with the real port when 0 was asked for).
    pub(crate) fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting; connections being served finish on their own.
    pub(crate) fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            // The loop checks the flag every POLL, so this join is short.
            let _ = thread.join();
        }
    }
}

impl Drop for ScrapeServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept_loop(listener: TcpListener, render: Render, stop: Arc<AtomicBool>) {
    let active = Arc::new(AtomicUsize::new(0));
    while !stop.load(Ordering::Relaxed) {
        let stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(POLL);
                continue;
            }
            Err(_) => {
                // Out of descriptors or a reset before accept: back off
                // rather than spin, and keep serving.
                std::thread::sleep(POLL);
                continue;
            }
        };
        if active.load(Ordering::Relaxed) >= MAX_CONNECTIONS {
            let _ = reject_busy(stream);
            continue;
        }
        active.fetch_add(1, Ordering::Relaxed);
        let guard = ActiveGuard(active.clone());
        let render = render.clone();
        let spawned = std::thread::Builder::new()
            .name("nemo-lens-scrape".into())
            .spawn(move || {
                let _guard = guard;
                let _ = serve(stream, &render);
            });
        // A failed spawn drops the closure, its guard and the stream.
        drop(spawned);
    }
}

struct ActiveGuard(Arc<AtomicUsize>);

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

fn reject_busy(mut stream: TcpStream) -> io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_write_timeout(Some(Duration::from_millis(200)))?;
    respond(
        &mut stream,
        503,
        "Service Unavailable",
        &[],
        b"busy\n",
        true,
    )
}

fn serve(mut stream: TcpStream, render: &Render) -> io::Result<()> {
    // Accepted sockets may inherit the listener's non-blocking mode.
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let head = match read_head(&mut stream)? {
        Head::Complete(head) => head,
        Head::TooLarge => {
            return respond(
                &mut stream,
                431,
                "Request Header Fields Too Large",
                &[],
                b"",
                false,
            )
        }
        Head::Incomplete => return respond(&mut stream, 400, "Bad Request", &[], b"", false),
    };
    let Some((method, path)) = parse_request_line(&head) else {
        return respond(&mut stream, 400, "Bad Request", &[], b"", false);
    };
    let path = path.split('?').next().unwrap_or_default();
    if path != "/metrics" {
        return respond(
            &mut stream,
            404,
            "Not Found",
            &[],
            b"not found\n",
            method != "HEAD",
        );
    }
    match method {
        "GET" | "HEAD" => {
            // A collection that panics must cost one scrape, not the server.
            let body = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| render()))
                .unwrap_or_else(|_| Err("metric collection panicked".into()));
            match body {
                Ok(body) => respond(
                    &mut stream,
                    200,
                    "OK",
                    &[("Content-Type", "text/plain; version=0.0.4; charset=utf-8")],
                    &body,
                    method == "GET",
                ),
                Err(message) => respond(
                    &mut stream,
                    500,
                    "Internal Server Error",
                    &[],
                    message.as_bytes(),
                    method == "GET",
                ),
            }
        }
        _ => respond(
            &mut stream,
            405,
            "Method Not Allowed",
            &[("Allow", "GET, HEAD")],
            b"method not allowed\n",
            true,
        ),
    }
}

enum Head {
    Complete(Vec<u8>),
    TooLarge,
    Incomplete,
}

fn read_head(stream: &mut TcpStream) -> io::Result<Head> {
    let deadline = Instant::now() + IO_TIMEOUT;
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    loop {
        if Instant::now() >= deadline {
            // A client trickling bytes must not hold a slot forever.
            return Ok(Head::Incomplete);
        }
        let n = match stream.read(&mut buf) {
            Ok(0) => return Ok(Head::Incomplete),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Ok(Head::Incomplete)
            }
            Err(e) => return Err(e),
        };
        head.extend_from_slice(&buf[..n]);
        if let Some(end) = find_head_end(&head) {
            // Keep the CRLF that ends the last line.
            head.truncate(end + 2);
            return Ok(Head::Complete(head));
        }
        if head.len() > MAX_HEAD {
            return Ok(Head::TooLarge);
        }
    }
}

fn find_head_end(bytes: &[u8]) -> Option<usize> {
    bytes.windows(4).position(|w| w == b"\r\n\r\n")
}

/// `(method, target)` of a well-formed HTTP/1.x request line.
fn parse_request_line(head: &[u8]) -> Option<(&str, &str)> {
    let line_end = head.iter().position(|&b| b == b'\r')?;
    let line = std::str::from_utf8(&head[..line_end]).ok()?;
    let mut parts = line.split(' ');
    let (method, target, version) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some()
        || !version.starts_with("HTTP/1.")
        || method.is_empty()
        || !method.bytes().all(|b| b.is_ascii_uppercase())
        || !target.starts_with('/')
    {
        return None;
    }
    Some((method, target))
}

fn respond(
    stream: &mut TcpStream,
    status: u16,
    reason: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    send_body: bool,
) -> io::Result<()> {
    let mut out = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    let mut bytes = out.into_bytes();
    if send_body {
        bytes.extend_from_slice(body);
    }
    stream.write_all(&bytes)?;
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> ScrapeServer {
        let render: Render = Arc::new(|| Ok(b"up 1\n".to_vec()));
        ScrapeServer::start(SocketAddr::from(([127, 0, 0, 1], 0)), render).unwrap()
    }

    fn exchange(addr: SocketAddr, request: &[u8]) -> String {
        let mut stream = TcpStream::connect(addr).unwrap();
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
        let ok = exchange(addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(status(&ok), "200");
        assert!(ok.ends_with("\r\n\r\nup 1\n"), "{ok}");
        assert!(ok.contains("Content-Type: text/plain; version=0.0.4"));
        let head = exchange(addr, b"HEAD /metrics?x=1 HTTP/1.1\r\n\r\n");
        assert_eq!(status(&head), "200");
        assert!(head.ends_with("\r\n\r\n"), "{head}");
        assert_eq!(status(&exchange(addr, b"GET / HTTP/1.1\r\n\r\n")), "404");
        assert_eq!(
            status(&exchange(addr, b"GET /metricsx HTTP/1.0\r\n\r\n")),
            "404"
        );
        let post = exchange(addr, b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
        assert_eq!(status(&post), "405");
        assert!(post.contains("Allow: GET, HEAD"));
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
        let silent = TcpStream::connect(addr).unwrap();
        drop(TcpStream::connect(addr).unwrap());
        // The endpoint still answers.
        let ok = exchange(addr, b"GET /metrics HTTP/1.1\r\n\r\n");
        assert_eq!(status(&ok), "200");
        drop(silent);
    }

    #[test]
    fn connections_beyond_the_cap_get_503_until_slots_free_up() {
        let server = server();
        let addr = server.local_addr();
        // Clients that connect and never send hold every slot.
        let silent: Vec<TcpStream> = (0..MAX_CONNECTIONS)
            .map(|_| TcpStream::connect(addr).unwrap())
            .collect();
        // Give the accept loop time to take them all (bounded wait).
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut busy = String::new();
        while Instant::now() < deadline {
            busy = exchange(addr, b"GET /metrics HTTP/1.1\r\n\r\n");
            if status(&busy) == "503" {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(status(&busy), "503", "{busy}");
        drop(silent);
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let ok = exchange(addr, b"GET /metrics HTTP/1.1\r\n\r\n");
            if status(&ok) == "200" {
                break;
            }
            assert!(Instant::now() < deadline, "slots never freed: {ok}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    #[test]
    fn stop_releases_the_port() {
        let mut server = server();
        let addr = server.local_addr();
        server.stop();
        // Rebinding the same port proves the listener is closed.
        assert!(TcpListener::bind(addr).is_ok());
    }
}
