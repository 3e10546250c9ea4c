//! Serving nemo-lens metrics from your own axum application: the
//! application's router gets a `GET /metrics` route that renders the
//! Prometheus exposition, instead of the separate port the built-in
//! endpoint binds.
//!
//! ```text
//! cargo run --example axum_metrics --features prometheus -- --port 3000
//! curl -s localhost:3000/generate; curl -s localhost:3000/metrics
//! ```
//!
//! Options: `--port N` (default 3000, 0 for any free port), `--seconds N`
//! (default 300) bounds the run. Every nemo-lens variable applies, e.g.
//! `NEMO_LENS_PROMETHEUS_RESOURCE_LABELS=all`.

use std::error::Error;
use std::time::Duration;

use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use nemo_lens::instruments::InferenceMetrics;
use nemo_lens::prometheus::PrometheusRenderer;
use nemo_lens::{EnvLookup, Instruments, Meter, NemoLensConfig, SetupOptions};

/// What the handlers share: where to record, and how to render.
#[derive(Clone)]
pub struct AppState {
    /// The meter requests are recorded on.
    pub meter: Meter,
    /// Renders `/metrics`.
    pub renderer: PrometheusRenderer,
}

/// The application's routes, `/metrics` among them.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/generate", get(generate))
        .route("/metrics", get(metrics))
        .with_state(state)
}

/// `GET /metrics`: the exposition the scraper's `Accept` asks for (the
/// protobuf one carries native histograms) with its content type; a 503
/// saying that telemetry is off, or a 500 naming what failed. Collecting is an in-memory pass over the instruments,
/// so it runs on the request task.
async fn metrics(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|value| value.to_str().ok());
    match state.renderer.render_for(accept) {
        Ok(exposition) => (
            [(header::CONTENT_TYPE, exposition.content_type)],
            exposition.body,
        )
            .into_response(),
        // Telemetry off (or this rank does not export): say so, not "500".
        Err(e) if e.is_telemetry_off() => {
            (StatusCode::SERVICE_UNAVAILABLE, e.to_string()).into_response()
        }
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

/// A stand-in for the application's real work, recorded as an inference
/// request.
async fn generate(State(state): State<AppState>) -> &'static str {
    InferenceMetrics::default()
        .request_duration_s(0.12)
        .model("llama-3-8b")
        .input_tokens(42)
        .output_tokens(7)
        .record(&state.meter);
    "generated\n"
}

struct Args {
    port: u16,
    seconds: u64,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        port: 3000,
        seconds: 300,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let bad = |_| format!("{flag} expects a whole number, got {value:?}");
        match flag.as_str() {
            "--port" => args.port = value.parse().map_err(bad)?,
            "--seconds" => args.seconds = value.parse().map_err(bad)?,
            other => {
                return Err(format!(
                    "unknown argument {other:?}; expected --port or --seconds"
                ))
            }
        }
    }
    Ok(args)
}

fn main() {
    if let Err(e) = run() {
        eprintln!("axum_metrics: {e}");
        std::process::exit(1);
    }
}

#[tokio::main(flavor = "current_thread")]
async fn run() -> Result<(), Box<dyn Error>> {
    let args = parse_args()?;
    // Telemetry on unless the environment says otherwise.
    let env = EnvLookup::from_fn(|key| {
        std::env::var(key)
            .ok()
            .or_else(|| (key == "NEMO_LENS_ENABLED").then(|| "1".into()))
    });
    let config = NemoLensConfig::from_lookup(env.clone())?;
    let (reader, renderer) = PrometheusRenderer::new(&config.prometheus_resource_labels)?;
    // The reader replaces the configured exporter; resource, rank selection
    // and shutdown stay those of setup_telemetry.
    let telemetry = SetupOptions::new()
        .env(env)
        .metric_reader(reader)
        .setup(&config, 0, 1)?;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.port)).await?;
    println!("serving http://{}/metrics", listener.local_addr()?);
    let app = router(AppState {
        meter: telemetry.meter.clone(),
        renderer,
    });
    let bounded = tokio::time::timeout(
        Duration::from_secs(args.seconds),
        axum::serve(listener, app),
    );
    if let Ok(served) = bounded.await {
        served?;
    }
    telemetry.shutdown()?;
    Ok(())
}
