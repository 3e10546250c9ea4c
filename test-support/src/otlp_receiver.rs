//! OTLP receivers for tests, built on the official protobuf definitions
//! (`opentelemetry-proto`'s generated tonic service and prost messages).
//!
//! Each receiver owns everything it runs on, so `stop` really takes it off
//! the network: the gRPC one drops its whole runtime (listener and open
//! HTTP/2 connections), the HTTP one closes every connection per request.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::metrics::v1::metrics_service_server::{
    MetricsService, MetricsServiceServer,
};
use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsServiceRequest, ExportMetricsServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value;
use opentelemetry_proto::tonic::metrics::v1::{metric, number_data_point, Metric};
use prost::Message;

/// Every request a receiver decoded, shared across restarts.
#[derive(Clone, Default)]
pub struct Received(
    Arc<Mutex<Vec<ExportMetricsServiceRequest>>>,
    /// Header (or metadata) names and values of the latest request.
    Arc<Mutex<Vec<(String, String)>>>,
    /// When set, requests are refused: this HTTP status, or over gRPC
    /// `UNAUTHENTICATED`.
    Arc<Mutex<Option<u16>>>,
);

impl Received {
    /// Stores a request and the headers (or gRPC metadata) it came with.
    fn push(&self, request: ExportMetricsServiceRequest, headers: Vec<(String, String)>) {
        self.0.lock().unwrap().push(request);
        *self.1.lock().unwrap() = headers;
    }

    /// `(lower-case name, value)` of every header of the latest request.
    pub fn headers(&self) -> Vec<(String, String)> {
        self.1.lock().unwrap().clone()
    }

    /// Refuses every request from now on (`Some(status)`) or accepts again.
    pub fn reject_with(&self, status: Option<u16>) {
        *self.2.lock().unwrap() = status;
    }

    fn rejecting(&self) -> Option<u16> {
        *self.2.lock().unwrap()
    }

    /// The `x-team` header of the latest request.
    pub fn team_header(&self) -> Option<String> {
        self.headers()
            .into_iter()
            .find(|(name, _)| name == "x-team")
            .map(|(_, value)| value)
    }

    pub fn count(&self) -> usize {
        self.0.lock().unwrap().len()
    }

    /// Every request so far, oldest first.
    pub fn all(&self) -> Vec<ExportMetricsServiceRequest> {
        self.0.lock().unwrap().clone()
    }

    pub fn last(&self) -> Option<ExportMetricsServiceRequest> {
        self.0.lock().unwrap().last().cloned()
    }

    /// Polls (every 50 ms, at most `timeout`) until `done` holds for the
    /// latest request.
    pub fn wait_for(
        &self,
        timeout: Duration,
        done: impl Fn(&ExportMetricsServiceRequest) -> bool,
    ) -> Option<ExportMetricsServiceRequest> {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Some(last) = self.last().filter(|r| done(r)) {
                return Some(last);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }
}

/// Stops a receiver's runtime. Outside any runtime it waits for the
/// request being handled, so nothing is received after `stop` returns;
/// inside one (where waiting is not allowed) it stops in the background.
fn stop_runtime(runtime: tokio::runtime::Runtime) {
    if tokio::runtime::Handle::try_current().is_ok() {
        runtime.shutdown_background();
    } else {
        runtime.shutdown_timeout(Duration::from_secs(1));
    }
}

/// A free loopback port (bound and released; fine for tests).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

struct Sink(Received);

#[tonic::async_trait]
impl MetricsService for Sink {
    async fn export(
        &self,
        request: tonic::Request<ExportMetricsServiceRequest>,
    ) -> Result<tonic::Response<ExportMetricsServiceResponse>, tonic::Status> {
        if self.0.rejecting().is_some() {
            return Err(tonic::Status::unauthenticated(
                "rejected by the test receiver",
            ));
        }
        let headers = request
            .metadata()
            .clone()
            .into_headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_owned(),
                    v.to_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
        self.0.push(request.into_inner(), headers);
        Ok(tonic::Response::new(ExportMetricsServiceResponse::default()))
    }
}

/// An OTLP/gRPC receiver on 127.0.0.1.
pub struct GrpcReceiver {
    runtime: Option<tokio::runtime::Runtime>,
}

impl GrpcReceiver {
    pub fn start(port: u16, received: Received) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        // Bind before returning so the caller knows the receiver is up.
        let listener = runtime.block_on(async {
            let deadline = Instant::now() + Duration::from_secs(5);
            loop {
                match tokio::net::TcpListener::bind(addr).await {
                    Ok(l) => break l,
                    Err(e) if Instant::now() > deadline => panic!("bind {addr}: {e}"),
                    Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
                }
            }
        });
        runtime.spawn(async move {
            let incoming = TcpIncoming(listener);
            let _ = tonic::transport::Server::builder()
                .add_service(
                    MetricsServiceServer::new(Sink(received))
                        // Collectors forward gzip by default (rotel does).
                        .accept_compressed(tonic::codec::CompressionEncoding::Gzip),
                )
                .serve_with_incoming(incoming)
                .await;
        });
        GrpcReceiver {
            runtime: Some(runtime),
        }
    }

    /// A receiver serving TLS with `cert` and `key` (PEM), accepted with
    /// tokio-rustls on each connection; with `client_ca`, clients must
    /// present a certificate it signed.
    pub fn start_tls(
        port: u16,
        received: Received,
        cert: &str,
        key: &str,
        client_ca: Option<&str>,
    ) -> Self {
        let acceptor =
            tokio_rustls::TlsAcceptor::from(crate::tls::server_config(cert, key, client_ca));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind(addr))
            .unwrap();
        runtime.spawn(async move {
            let (tx, rx) = tokio::sync::mpsc::channel(16);
            tokio::spawn(async move {
                while let Ok((tcp, _)) = listener.accept().await {
                    let acceptor = acceptor.clone();
                    let tx = tx.clone();
                    tokio::spawn(async move {
                        // A failed handshake (a client that distrusts our
                        // certificate) just drops the connection.
                        if let Ok(tls) = acceptor.accept(tcp).await {
                            let _ = tx.send(Ok::<_, std::io::Error>(TlsIo(tls))).await;
                        }
                    });
                }
            });
            let incoming = tonic::codegen::tokio_stream::wrappers::ReceiverStream::new(rx);
            let _ = tonic::transport::Server::builder()
                .add_service(
                    MetricsServiceServer::new(Sink(received))
                        // Collectors forward gzip by default (rotel does).
                        .accept_compressed(tonic::codec::CompressionEncoding::Gzip),
                )
                .serve_with_incoming(incoming)
                .await;
        });
        GrpcReceiver {
            runtime: Some(runtime),
        }
    }

    /// Takes the receiver off the network at once, open connections too.
    pub fn stop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            stop_runtime(runtime);
        }
    }
}

impl Drop for GrpcReceiver {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A server-side TLS stream tonic can serve.
struct TlsIo(tokio_rustls::server::TlsStream<tokio::net::TcpStream>);

impl tonic::transport::server::Connected for TlsIo {
    type ConnectInfo = ();
    fn connect_info(&self) -> Self::ConnectInfo {}
}

impl tokio::io::AsyncRead for TlsIo {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl tokio::io::AsyncWrite for TlsIo {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.0).poll_write(cx, buf)
    }
    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.0).poll_flush(cx)
    }
    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

/// Accepted connections as the `Stream` tonic serves from.
struct TcpIncoming(tokio::net::TcpListener);

impl tonic::codegen::tokio_stream::Stream for TcpIncoming {
    type Item = std::io::Result<tokio::net::TcpStream>;
    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        self.0
            .poll_accept(cx)
            .map(|r| Some(r.map(|(stream, _)| stream)))
    }
}

/// An OTLP/HTTP (protobuf) receiver on 127.0.0.1, answering `POST /v1/metrics`.
pub struct HttpReceiver {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl HttpReceiver {
    pub fn start(port: u16, received: Received) -> Self {
        Self::start_with(port, received, None)
    }

    /// A receiver serving TLS with `cert` and `key` (PEM); with
    /// `client_ca`, clients must present a certificate it signed.
    pub fn start_tls(
        port: u16,
        received: Received,
        cert: &str,
        key: &str,
        client_ca: Option<&str>,
    ) -> Self {
        let config = crate::tls::server_config(cert, key, client_ca);
        Self::start_with(port, received, Some(config))
    }

    fn start_with(port: u16, received: Received, tls: Option<ServerTls>) -> Self {
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let deadline = Instant::now() + Duration::from_secs(5);
        let listener = loop {
            match TcpListener::bind(addr) {
                Ok(l) => break l,
                Err(e) if Instant::now() > deadline => panic!("bind {addr}: {e}"),
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        };
        listener.set_nonblocking(true).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let _ = serve_http(stream, &received, tls.as_ref());
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        });
        HttpReceiver {
            stop,
            thread: Some(thread),
        }
    }

    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for HttpReceiver {
    fn drop(&mut self) {
        self.stop();
    }
}

type ServerTls = Arc<rustls::ServerConfig>;

fn serve_http(
    stream: TcpStream,
    received: &Received,
    tls: Option<&ServerTls>,
) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    match tls {
        Some(config) => {
            let connection =
                rustls::ServerConnection::new(config.clone()).map_err(std::io::Error::other)?;
            handle_http(rustls::StreamOwned::new(connection, stream), received)
        }
        None => handle_http(stream, received),
    }
}

fn handle_http(mut stream: impl Read + Write, received: &Received) -> std::io::Result<()> {
    let mut data = Vec::new();
    let mut buf = [0u8; 8192];
    let head_end = loop {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        data.extend_from_slice(&buf[..n]);
        if let Some(i) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if data.len() > 64 * 1024 {
            return Ok(());
        }
    };
    let head = String::from_utf8_lossy(&data[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while data.len() < head_end + length {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        data.extend_from_slice(&buf[..n]);
    }
    let ok = head.starts_with("post /v1/metrics ")
        && head.contains("content-type: application/x-protobuf");
    let rejected = received.rejecting().map(|code| format!("{code} Rejected"));
    let status = match ExportMetricsServiceRequest::decode(&data[head_end..head_end + length]) {
        _ if rejected.is_some() => rejected.as_deref().unwrap_or_default(),
        Ok(request) if ok => {
            let headers = head
                .lines()
                .skip(1)
                .filter_map(|l| l.split_once(':'))
                .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
                .collect();
            received.push(request, headers);
            "200 OK"
        }
        _ => "400 Bad Request",
    };
    let body = ExportMetricsServiceResponse::default().encode_to_vec();
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: application/x-protobuf\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    stream.write_all(&body)?;
    stream.flush()
}

// ----- reading decoded requests -----

/// The metric called `name` in `request`.
/// The OTLP transport a test exports over.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Proto {
    Grpc,
    Http,
}

impl Proto {
    /// The `OTEL_EXPORTER_OTLP_PROTOCOL` value.
    pub fn variable(self) -> &'static str {
        match self {
            Proto::Grpc => "grpc",
            Proto::Http => "http/protobuf",
        }
    }
}

/// The configuration of a job exporting over `proto` to `endpoint`, with
/// `extra` variables on top.
pub fn otlp_config(
    proto: Proto,
    endpoint: &str,
    extra: &[(&str, &str)],
) -> nemo_lens::telemetry::NemoLensConfig {
    let base = [
        ("NEMO_LENS_ENABLED", "true"),
        ("NEMO_LENS_EXPORTER", "otlp"),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", proto.variable()),
    ];
    nemo_lens::telemetry::NemoLensConfig::from_lookup(nemo_lens::telemetry::EnvLookup::from_pairs(
        base.iter().chain(extra).copied(),
    ))
    .unwrap()
}

/// Telemetry exporting over `proto` to a receiver on 127.0.0.1:`port`,
/// configured with `extra` and nothing from the process environment, beside
/// any other telemetry of the test process.
pub fn otlp_telemetry(
    proto: Proto,
    port: u16,
    extra: &[(&str, &str)],
) -> nemo_lens::TelemetryHandle {
    let config = otlp_config(proto, &format!("http://127.0.0.1:{port}"), extra);
    nemo_lens::telemetry::SetupOptions::new()
        .env(nemo_lens::telemetry::EnvLookup::from_pairs::<&str, &str>([]))
        .allow_reinit(true)
        .probe_gpus(false)
        .set_global(false)
        .setup(&config, 0, 1)
        .unwrap()
}

/// A receiver of either transport, started and stopped alike.
pub enum Receiver {
    Grpc(GrpcReceiver),
    Http(HttpReceiver),
}

impl Receiver {
    pub fn start(proto: Proto, port: u16, received: &Received) -> Self {
        match proto {
            Proto::Grpc => Receiver::Grpc(GrpcReceiver::start(port, received.clone())),
            Proto::Http => Receiver::Http(HttpReceiver::start(port, received.clone())),
        }
    }

    /// A TLS receiver with `cert` and `key` (PEM), requiring client
    /// certificates signed by `client_ca` when given.
    pub fn start_tls(
        proto: Proto,
        port: u16,
        received: &Received,
        (cert, key): (&str, &str),
        client_ca: Option<&str>,
    ) -> Self {
        match proto {
            Proto::Grpc => Receiver::Grpc(GrpcReceiver::start_tls(
                port,
                received.clone(),
                cert,
                key,
                client_ca,
            )),
            Proto::Http => Receiver::Http(HttpReceiver::start_tls(
                port,
                received.clone(),
                cert,
                key,
                client_ca,
            )),
        }
    }

    pub fn stop(&mut self) {
        match self {
            Receiver::Grpc(r) => r.stop(),
            Receiver::Http(r) => r.stop(),
        }
    }
}

pub fn metric<'a>(request: &'a ExportMetricsServiceRequest, name: &str) -> Option<&'a Metric> {
    request
        .resource_metrics
        .iter()
        .flat_map(|rm| &rm.scope_metrics)
        .flat_map(|sm| &sm.metrics)
        .find(|m| m.name == name)
}

/// The scope name of the metric called `name`.
pub fn scope_of(request: &ExportMetricsServiceRequest, name: &str) -> Option<String> {
    request
        .resource_metrics
        .iter()
        .flat_map(|rm| &rm.scope_metrics)
        .find(|sm| sm.metrics.iter().any(|m| m.name == name))
        .and_then(|sm| sm.scope.as_ref().map(|s| s.name.clone()))
}

/// A resource attribute as a display string.
pub fn resource_attr(request: &ExportMetricsServiceRequest, key: &str) -> Option<String> {
    request
        .resource_metrics
        .first()?
        .resource
        .as_ref()?
        .attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref()?.value.as_ref().map(any_string))
}

pub fn any_string(value: &any_value::Value) -> String {
    match value {
        any_value::Value::StringValue(s) => s.clone(),
        any_value::Value::IntValue(i) => i.to_string(),
        any_value::Value::DoubleValue(d) => d.to_string(),
        any_value::Value::BoolValue(b) => b.to_string(),
        other => format!("{other:?}"),
    }
}

/// `(attributes, value)` of each point of an integer sum.
pub fn int_sum_points(m: &Metric) -> Vec<(Vec<(String, String)>, i64)> {
    match &m.data {
        Some(metric::Data::Sum(sum)) => sum
            .data_points
            .iter()
            .map(|p| {
                let v = match p.value {
                    Some(number_data_point::Value::AsInt(i)) => i,
                    _ => panic!("{} holds a non-integer point", m.name),
                };
                (attrs(&p.attributes), v)
            })
            .collect(),
        _ => panic!("{} is not a sum", m.name),
    }
}

/// The value of the first point of a double gauge.
pub fn double_gauge(m: &Metric) -> f64 {
    match &m.data {
        Some(metric::Data::Gauge(g)) => match g.data_points.first().and_then(|p| p.value) {
            Some(number_data_point::Value::AsDouble(d)) => d,
            other => panic!("{}: {other:?}", m.name),
        },
        _ => panic!("{} is not a gauge", m.name),
    }
}

/// `(count, sum, bucket_counts, bounds)` of the first point of a histogram.
pub fn histogram(m: &Metric) -> (u64, f64, Vec<u64>, Vec<f64>) {
    match &m.data {
        Some(metric::Data::Histogram(h)) => {
            let p = h.data_points.first().expect("a histogram point");
            (
                p.count,
                p.sum.unwrap_or_default(),
                p.bucket_counts.clone(),
                p.explicit_bounds.clone(),
            )
        }
        _ => panic!("{} is not a histogram", m.name),
    }
}

pub fn attrs(kvs: &[opentelemetry_proto::tonic::common::v1::KeyValue]) -> Vec<(String, String)> {
    kvs.iter()
        .map(|kv| {
            let v = kv
                .value
                .as_ref()
                .and_then(|v| v.value.as_ref())
                .map(any_string)
                .unwrap_or_default();
            (kv.key.clone(), v)
        })
        .collect()
}

/// The total of the integer sum called `name`, or `None` when absent.
pub fn int_total(request: &ExportMetricsServiceRequest, name: &str) -> Option<i64> {
    metric(request, name).map(|m| int_sum_points(m).iter().map(|(_, v)| v).sum())
}

/// Waits (10 s at most) for one more request than `received` has now.
pub fn next_export(received: &Received) {
    let before = received.count();
    received
        .wait_for(Duration::from_secs(10), |_| received.count() > before)
        .expect("an export within 10 s");
}

/// Over every request received: the sum of the delta points of counter
/// `counter` and the count of those of histogram `histogram`, each checked
/// to be delta and no point negative.
pub fn delta_totals(received: &Received, counter: &str, histogram: &str) -> (f64, u64) {
    let (mut counted, mut histogram_count) = (0.0, 0u64);
    for request in received.all() {
        if let Some(m) = metric(&request, counter) {
            let Some(metric::Data::Sum(sum)) = &m.data else {
                panic!("{m:?}");
            };
            assert_eq!(sum.aggregation_temporality, 1, "{counter}: delta");
            for point in &sum.data_points {
                let value = match point.value {
                    Some(number_data_point::Value::AsDouble(d)) => d,
                    Some(number_data_point::Value::AsInt(i)) => i as f64,
                    None => f64::NAN,
                };
                assert!(value >= 0.0, "{counter}: a negative delta {value}");
                assert!(point.start_time_unix_nano < point.time_unix_nano);
                counted += value;
            }
        }
        if let Some(m) = metric(&request, histogram) {
            let Some(metric::Data::Histogram(h)) = &m.data else {
                panic!("{m:?}");
            };
            assert_eq!(h.aggregation_temporality, 1, "{histogram}: delta");
            histogram_count += h.data_points.iter().map(|p| p.count).sum::<u64>();
        }
    }
    (counted, histogram_count)
}
