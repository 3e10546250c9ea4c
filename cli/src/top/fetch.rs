//! Reading endpoints: one HTTP/1.0 GET each, all at once, each bounded by a
//! timeout, so one slow or dead replica never holds up the refresh.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use super::exposition::{parse_protobuf, parse_text, Exposition};

/// What `top` asks for: protobuf first (the one format with native
/// histograms), text otherwise.
pub const ACCEPT: &str = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;\
                          encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3,*/*;q=0.1";

/// How one read ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The endpoint answered with an exposition.
    Read(Exposition),
    /// It did not: refused, timed out, an HTTP error, or a body that is not
    /// an exposition. Says which.
    Failed(String),
}

/// A `http://host:port/path` URL, split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    host: String,
    port: u16,
    path: String,
}

impl Target {
    /// `url` as given on the command line: `http://host:port/metrics`,
    /// `host:port` (then `/metrics`), or with a path of its own.
    pub fn parse(url: &str) -> Result<Target, String> {
        if url.starts_with("https://") {
            return Err(format!(
                "{url}: https is not supported; give the http:// address"
            ));
        }
        let rest = url.strip_prefix("http://").unwrap_or(url);
        let (authority, path) = match rest.find('/') {
            Some(slash) => (&rest[..slash], &rest[slash..]),
            None => (rest, "/metrics"),
        };
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) => (
                host,
                port.parse()
                    .map_err(|_| format!("{url}: the port {port:?} is not a number"))?,
            ),
            None => (authority, 80),
        };
        if host.is_empty() {
            return Err(format!("{url}: no host"));
        }
        Ok(Target {
            host: host.trim_matches(['[', ']']).to_owned(),
            port,
            path: path.to_owned(),
        })
    }
}

/// Reads every target at once; each answer or failure in the same order.
pub fn read_all(targets: &[Target], timeout: Duration) -> Vec<Outcome> {
    std::thread::scope(|scope| {
        let reads: Vec<_> = targets
            .iter()
            .map(|target| scope.spawn(move || read(target, timeout)))
            .collect();
        reads
            .into_iter()
            .map(|r| {
                r.join()
                    .unwrap_or_else(|_| Outcome::Failed("reader panicked".into()))
            })
            .collect()
    })
}

/// One GET of `target` within `timeout`.
pub fn read(target: &Target, timeout: Duration) -> Outcome {
    match get(target, timeout) {
        Ok((content_type, body)) => {
            let parsed = if content_type.contains("application/vnd.google.protobuf") {
                parse_protobuf(&body)
            } else {
                match std::str::from_utf8(&body) {
                    Ok(text) => parse_text(text),
                    Err(_) => return Outcome::Failed("the body is not UTF-8 text".into()),
                }
            };
            match parsed {
                Ok(exposition) => Outcome::Read(exposition),
                Err(e) => Outcome::Failed(e.to_string()),
            }
        }
        Err(e) => Outcome::Failed(e),
    }
}

fn get(target: &Target, timeout: Duration) -> Result<(String, Vec<u8>), String> {
    let deadline = Instant::now() + timeout;
    let address = (target.host.as_str(), target.port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {}: {e}", target.host))?
        .next()
        .ok_or_else(|| format!("cannot resolve {}", target.host))?;
    let mut stream = TcpStream::connect_timeout(&address, timeout).map_err(|e| e.to_string())?;
    stream.set_write_timeout(Some(timeout)).ok();
    let request = format!(
        "GET {} HTTP/1.0\r\nHost: {}:{}\r\nAccept: {ACCEPT}\r\nUser-Agent: nemo-lens-top\r\n\r\n",
        target.path, target.host, target.port
    );
    stream
        .write_all(request.as_bytes())
        .map_err(|e| e.to_string())?;
    let mut response = Vec::new();
    let mut chunk = [0_u8; 64 * 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!("timed out after {timeout:?}"));
        }
        stream.set_read_timeout(Some(left)).ok();
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => response.extend_from_slice(&chunk[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(format!("timed out after {timeout:?}"))
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    let split = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("no HTTP response")?;
    let head = String::from_utf8_lossy(&response[..split]).into_owned();
    let status = head.lines().next().unwrap_or_default();
    if status
        .split_whitespace()
        .nth(1)
        .is_none_or(|code| code != "200")
    {
        return Err(format!(
            "HTTP {}",
            status
                .split_whitespace()
                .skip(1)
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    let content_type = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-type")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_default();
    Ok((content_type, response[split + 4..].to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_take_the_usual_shapes() {
        let t = Target::parse("http://127.0.0.1:9464/metrics").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.path.as_str()),
            ("127.0.0.1", 9464, "/metrics")
        );
        let t = Target::parse("localhost:8000").unwrap();
        assert_eq!((t.port, t.path.as_str()), (8000, "/metrics"));
        assert!(Target::parse("https://x:1").unwrap_err().contains("https"));
        assert!(Target::parse("http://x:port")
            .unwrap_err()
            .contains("\"port\""));
    }

    #[test]
    fn a_refused_connection_is_a_failure_not_a_stop() {
        // Bound then released: nothing listens there now.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let target = Target::parse(&format!("127.0.0.1:{port}")).unwrap();
        let outcomes = read_all(&[target], Duration::from_secs(2));
        assert!(matches!(&outcomes[0], Outcome::Failed(_)), "{outcomes:?}");
    }
}
