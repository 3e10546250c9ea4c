//! OTLP push export over gRPC (tonic) or HTTP/protobuf (blocking reqwest).
//!
//! The gRPC channel needs a tokio reactor. Rather than asking the user for
//! a runtime (or borrowing theirs, which a blocking `shutdown` on a
//! current-thread runtime would deadlock), the exporter gets a private
//! current-thread runtime on its own thread. The SDK's periodic reader
//! drives exports from its own thread, so `record` never waits on the
//! network.

use std::collections::HashMap;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use opentelemetry_otlp::{
    MetricExporter, RetryPolicy, WithExportConfig, WithHttpConfig, WithTonicConfig,
};

use crate::telemetry::{NemoLensConfig, OtlpProtocol, SetupError};

/// How long the private runtime may take to wind down its tasks.
const RUNTIME_SHUTDOWN: Duration = Duration::from_secs(1);

/// A tokio runtime on a dedicated thread, kept for the exporter's lifetime.
pub(crate) struct OtlpRuntime {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl OtlpRuntime {
    fn start() -> Result<(Self, tokio::runtime::Handle), SetupError> {
        let (handle_tx, handle_rx) = mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("nemo-lens-otlp".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = handle_tx.send(Err(e.to_string()));
                        return;
                    }
                };
                let _ = handle_tx.send(Ok(runtime.handle().clone()));
                runtime.block_on(async {
                    let _ = stop_rx.await;
                });
                runtime.shutdown_timeout(RUNTIME_SHUTDOWN);
            })
            .map_err(|e| SetupError::Exporter(format!("cannot start the OTLP thread: {e}")))?;
        let handle = handle_rx
            .recv()
            .map_err(|_| SetupError::Exporter("the OTLP runtime thread exited".into()))?
            .map_err(|e| SetupError::Exporter(format!("cannot build the OTLP runtime: {e}")))?;
        Ok((
            OtlpRuntime {
                stop: Some(stop_tx),
                thread: Some(thread),
            },
            handle,
        ))
    }

    /// Stops the runtime, waiting at most `timeout` for its thread.
    pub(crate) fn stop(&mut self, timeout: Duration) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            join_bounded(thread, timeout);
        }
    }
}

impl Drop for OtlpRuntime {
    fn drop(&mut self) {
        self.stop(RUNTIME_SHUTDOWN * 2);
    }
}

/// Joins `thread` unless that takes longer than `timeout`, in which case the
/// thread is left to finish on its own.
fn join_bounded(thread: JoinHandle<()>, timeout: Duration) {
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let waiter = std::thread::spawn(move || {
        let _ = thread.join();
        let _ = done_tx.send(());
    });
    if done_rx.recv_timeout(timeout).is_ok() {
        let _ = waiter.join();
    }
}

/// The exporter for `config`, plus the runtime it needs (gRPC only).
pub(crate) fn build(
    config: &NemoLensConfig,
) -> Result<(MetricExporter, Option<OtlpRuntime>), SetupError> {
    // Retries are kept short: a later export carries the same cumulative
    // totals, so a lost export costs nothing but freshness.
    let retry = RetryPolicy::recommended()
        .with_max_retries(2)
        .with_max_delay(Duration::from_millis(500));
    match config.otlp_protocol {
        OtlpProtocol::Grpc => {
            let (runtime, handle) = OtlpRuntime::start()?;
            let mut metadata = tonic::metadata::MetadataMap::new();
            for (k, v) in &config.otlp_headers {
                let key = tonic::metadata::MetadataKey::from_bytes(k.as_bytes())
                    .map_err(|_| header_error(config, "lower-case ASCII header names"))?;
                let value = v
                    .parse()
                    .map_err(|_| header_error(config, "printable ASCII header values"))?;
                metadata.insert(key, value);
            }
            let mut builder = MetricExporter::builder()
                .with_tonic()
                .with_timeout(config.export_timeout)
                .with_metadata(metadata)
                .with_retry_policy(retry);
            if let Some(endpoint) = config
                .otlp_metrics_endpoint
                .clone()
                .or_else(|| config.otlp_endpoint.clone())
            {
                builder = builder.with_endpoint(endpoint);
            }
            // The lazily connected channel spawns its worker on the runtime
            // that is current while it is built.
            let exporter = {
                let _entered = handle.enter();
                builder.build()
            }
            .map_err(|e| SetupError::Exporter(format!("OTLP gRPC exporter: {e}")))?;
            Ok((exporter, Some(runtime)))
        }
        OtlpProtocol::HttpProtobuf => {
            let endpoint = match (&config.otlp_metrics_endpoint, &config.otlp_endpoint) {
                (Some(full), _) => Some(full.clone()),
                (None, Some(base)) => Some(format!("{}/v1/metrics", base.trim_end_matches('/'))),
                (None, None) => None,
            };
            let headers: HashMap<String, String> = config.otlp_headers.iter().cloned().collect();
            let timeout = config.export_timeout;
            // The blocking client owns a runtime of its own and refuses to be
            // built inside another, so build it on a plain thread in case the
            // caller is async.
            std::thread::spawn(move || {
                let mut builder = MetricExporter::builder()
                    .with_http()
                    .with_timeout(timeout)
                    .with_headers(headers)
                    .with_retry_policy(retry);
                if let Some(endpoint) = endpoint {
                    builder = builder.with_endpoint(endpoint);
                }
                builder.build()
            })
            .join()
            .map_err(|_| SetupError::Exporter("OTLP HTTP exporter build panicked".into()))?
            .map(|exporter| (exporter, None))
            .map_err(|e| SetupError::Exporter(format!("OTLP HTTP exporter: {e}")))
        }
    }
}

fn header_error(config: &NemoLensConfig, expected: &str) -> SetupError {
    let value = config
        .otlp_headers
        .iter()
        .map(|(k, _)| format!("{k}=<redacted>"))
        .collect::<Vec<_>>()
        .join(",");
    SetupError::Config(crate::telemetry::ConfigError::new(
        "OTEL_EXPORTER_OTLP_HEADERS",
        value,
        format!("headers valid for gRPC metadata: {expected}"),
    ))
}
