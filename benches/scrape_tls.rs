//! What TLS and basic auth add to one scrape of the built-in endpoint: the
//! same endpoint (500 series) scraped plain, and under a web configuration
//! with TLS and a bcrypt user (cost 10), each on a kept-alive connection (as
//! Prometheus scrapes) and on a new connection per scrape (a handshake
//! each). Ratios are of medians measured in one run.
//!
//! `cargo bench --bench scrape_tls --features prometheus-tls [-- SCRAPES]`

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nemo_lens::opentelemetry::KeyValue;
use nemo_lens::telemetry::{EnvLookup, NemoLensConfig, SetupOptions, TelemetryHandle};
use rustls::pki_types::ServerName;

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let scrapes: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(300);
    let pki = nemo_lens_test_support::tls::TestPki::generate("bench-scrape-tls");
    let dir = nemo_lens_test_support::tls::ScratchDir::new("bench-scrape-tls-web");
    std::fs::write(dir.0.join("server.crt"), &pki.server_cert).unwrap();
    std::fs::write(dir.0.join("server.key"), &pki.server_key).unwrap();
    let web = dir.0.join("web.yml");
    std::fs::write(
        &web,
        format!(
            "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n\
             basic_auth_users:\n  prometheus: {}\n",
            bcrypt::hash("s3cret", 10).unwrap()
        ),
    )
    .unwrap();
    let authorization = format!(
        "Authorization: Basic {}\r\n",
        nemo_lens_test_support::tls::base64_encode(b"prometheus:s3cret")
    );

    // One pipeline per process: the plain endpoint, then the secured one.
    let plain = endpoint(None);
    let plain_port = plain.prometheus_addr().unwrap().port();
    let plain_kept = measure(scrapes, || Box::new(plain_stream(plain_port)), true, "");
    let plain_new = measure(scrapes, || Box::new(plain_stream(plain_port)), false, "");
    plain.shutdown().unwrap();
    let secured = endpoint(Some(&web));
    let tls_port = secured.prometheus_addr().unwrap().port();
    let client = nemo_lens_test_support::tls::client_config(&pki.ca_cert, None).unwrap();
    let tls = || Box::new(tls_stream(tls_port, &client)) as Box<dyn Stream>;
    let secured_kept = measure(scrapes, tls, true, &authorization);
    let secured_new = measure(scrapes, tls, false, &authorization);
    secured.shutdown().unwrap();
    let rows = [
        ("plain, kept-alive", plain_kept),
        ("TLS + basic auth, kept-alive", secured_kept),
        ("plain, new connection each", plain_new),
        ("TLS + basic auth, new connection each", secured_new),
    ];
    for (name, median) in &rows {
        println!("scrape_tls: {name:<40} median {median:>10.1?} per scrape ({scrapes} scrapes)");
    }
    println!(
        "scrape_tls: TLS + basic auth / plain: {:.2}x kept-alive, {:.2}x with a new connection each",
        rows[1].1.as_secs_f64() / rows[0].1.as_secs_f64(),
        rows[3].1.as_secs_f64() / rows[2].1.as_secs_f64()
    );
}

trait Stream: Read + Write {}
impl<S: Read + Write> Stream for S {}

/// Telemetry serving 500 series on a free port, under `web` if given.
fn endpoint(web: Option<&std::path::Path>) -> TelemetryHandle {
    let mut pairs = vec![
        ("NEMO_LENS_ENABLED", "1".to_owned()),
        ("NEMO_LENS_EXPORTER", "prometheus".to_owned()),
        ("OTEL_EXPORTER_PROMETHEUS_PORT", "0".to_owned()),
    ];
    if let Some(web) = web {
        pairs.push(("NEMO_LENS_PROMETHEUS_WEB_CONFIG", web.display().to_string()));
    }
    let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs(pairs)).unwrap();
    let handle = SetupOptions::new()
        .env(EnvLookup::from_pairs([("X", "1")]))
        .allow_reinit(true)
        .set_global(false)
        .probe_gpus(false)
        .setup(&config, 0, 1)
        .unwrap();
    let requests = handle.meter.u64_counter("bench.requests").build();
    for i in 0..500 {
        requests.add(1, &[KeyValue::new("model", format!("model-{i:03}"))]);
    }
    handle
}

fn plain_stream(port: u16) -> TcpStream {
    let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_nodelay(true).unwrap();
    stream
}

fn tls_stream(
    port: u16,
    config: &Arc<rustls::ClientConfig>,
) -> rustls::StreamOwned<rustls::ClientConnection, TcpStream> {
    let name = ServerName::try_from("127.0.0.1").unwrap();
    let connection = rustls::ClientConnection::new(config.clone(), name).unwrap();
    rustls::StreamOwned::new(connection, plain_stream(port))
}

/// The median time of one scrape over `scrapes`, on one kept-alive
/// connection or a new one each time.
fn measure(
    scrapes: usize,
    connect: impl Fn() -> Box<dyn Stream>,
    keep_alive: bool,
    authorization: &str,
) -> Duration {
    let request = format!(
        "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n{authorization}{}\r\n",
        if keep_alive {
            ""
        } else {
            "Connection: close\r\n"
        }
    );
    let mut kept: Option<BufReader<Box<dyn Stream>>> = None;
    // The first scrape pays bcrypt once (then cached): not measured.
    let mut times: Vec<Duration> = Vec::with_capacity(scrapes);
    for i in 0..=scrapes {
        let begun = Instant::now();
        let mut reader = match kept.take() {
            Some(reader) => reader,
            None => BufReader::new(connect()),
        };
        reader.get_mut().write_all(request.as_bytes()).unwrap();
        let body = read_response(&mut reader);
        assert!(body > 1000, "a scrape of {body} bytes");
        if i > 0 {
            times.push(begun.elapsed());
        }
        if keep_alive {
            kept = Some(reader);
        }
    }
    times.sort();
    times[times.len() / 2]
}

/// Reads one response (status 200, a content length) and returns the body's
/// length.
fn read_response(reader: &mut BufReader<Box<dyn Stream>>) -> usize {
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    assert!(line.starts_with("HTTP/1.1 200"), "{line}");
    let mut length = 0;
    loop {
        line.clear();
        reader.read_line(&mut line).unwrap();
        if line == "\r\n" {
            break;
        }
        if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = value.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    length
}
