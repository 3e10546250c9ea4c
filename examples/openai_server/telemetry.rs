//! What the example OpenAI server and the metering proxy share: logs and
//! telemetry set up from the environment with Prometheus served on the
//! API's own port, the `/metrics` handler, and serving until Ctrl-C or
//! SIGTERM.

use std::error::Error;

use tokio::net::TcpListener;

use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;
use axum::Router;
use nemo_lens::prometheus::PrometheusRenderer;
use nemo_lens::{EnvLookup, ExporterKind, NemoLensConfig, SetupOptions, TelemetryHandle};

/// Logs to stderr, and telemetry from the environment (on by default,
/// Prometheus unless `NEMO_LENS_EXPORTER` says otherwise), with the
/// renderer of `/metrics` when Prometheus is the exporter.
pub fn setup(
    service_name: &'static str,
) -> Result<(TelemetryHandle, Option<PrometheusRenderer>), Box<dyn Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    let env = EnvLookup::process().with_defaults([
        ("NEMO_LENS_ENABLED", "1"),
        ("NEMO_LENS_EXPORTER", "prometheus"),
        ("OTEL_SERVICE_NAME", service_name),
    ]);
    let config = NemoLensConfig::from_lookup(env.clone())?;
    let options = SetupOptions::new()
        .env(env)
        .service_version(env!("CARGO_PKG_VERSION"));
    // Prometheus is served on the API's own port rather than a second one.
    Ok(if config.exporter == ExporterKind::Prometheus {
        let (reader, renderer) = PrometheusRenderer::new(&config.prometheus_resource_labels)?;
        (
            options.metric_reader(reader).setup(&config, 0, 1)?,
            Some(renderer),
        )
    } else {
        (options.setup(&config, 0, 1)?, None)
    })
}

/// `GET /metrics`: the exposition the client accepts, or 404 when the
/// metrics are pushed elsewhere.
pub fn metrics(renderer: Option<&PrometheusRenderer>, headers: &HeaderMap) -> Response {
    let Some(renderer) = renderer else {
        return (
            StatusCode::NOT_FOUND,
            "metrics are pushed to the configured exporter\n",
        )
            .into_response();
    };
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|value| value.to_str().ok());
    match renderer.render_for(accept) {
        Ok(exposition) => (
            [(header::CONTENT_TYPE, exposition.content_type)],
            exposition.body,
        )
            .into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

/// Serves `app` on `listener` until Ctrl-C or SIGTERM, then flushes the
/// telemetry.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    telemetry: TelemetryHandle,
) -> Result<(), Box<dyn Error>> {
    // Each token is its own small write: without TCP_NODELAY, Nagle's
    // algorithm holds one back until the previous is acknowledged.
    let listener = listener.tap_io(|stream| {
        if let Err(e) = stream.set_nodelay(true) {
            tracing::warn!("cannot set TCP_NODELAY: {e}");
        }
    });
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
        .await?;
    telemetry.shutdown()?;
    Ok(())
}

/// Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminate => {}
    }
}
