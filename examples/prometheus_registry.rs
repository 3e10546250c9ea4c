//! A service written against the `prometheus` crate, shaped like NVIDIA
//! Dynamo's frontend (its `dynamo_frontend_*` names and labels), exporting
//! its registry through nemo-lens: the same families on nemo-lens's
//! Prometheus endpoint, or over OTLP, with nemo-lens's resource labels.
//!
//! ```text
//! cargo run --example prometheus_registry --features prometheus,prometheus-crate-bridge
//! curl -s 127.0.0.1:9464/metrics | grep dynamo_frontend_requests_total
//! ```
//!
//! It simulates a request every 20 ms until interrupted (or for
//! `--seconds N`). Telemetry is on and served on 127.0.0.1:9464 unless the
//! environment says otherwise: every nemo-lens and OpenTelemetry variable
//! applies (`OTEL_EXPORTER_PROMETHEUS_PORT`, `NEMO_LENS_EXPORTER=otlp`).

use std::collections::BTreeMap;
use std::error::Error;
use std::time::{Duration, Instant};

use nemo_lens::registry_bridge::RegistryBridge;
use nemo_lens::{EnvLookup, NemoLensConfig, SetupOptions};
use prometheus::{
    Gauge, GaugeVec, HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry,
};

/// The frontend's metrics, registered as Dynamo registers them.
struct Frontend {
    requests: IntCounterVec,
    inflight: IntGaugeVec,
    queued: IntGaugeVec,
    duration: HistogramVec,
    ttft: HistogramVec,
    itl: HistogramVec,
    output_tokens: IntCounterVec,
    kv_hit_rate: GaugeVec,
    build: Gauge,
}

const LATENCY_BUCKETS: [f64; 10] = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5];

impl Frontend {
    fn register(registry: &Registry) -> Result<Self, prometheus::Error> {
        let model = &["model"];
        let histogram = |name: &str, help: &str| {
            HistogramVec::new(
                HistogramOpts::new(name, help).buckets(LATENCY_BUCKETS.to_vec()),
                model,
            )
        };
        let frontend = Frontend {
            requests: IntCounterVec::new(
                Opts::new(
                    "dynamo_frontend_requests_total",
                    "Total number of LLM requests processed",
                ),
                &["model", "endpoint", "request_type", "status"],
            )?,
            inflight: IntGaugeVec::new(
                Opts::new(
                    "dynamo_frontend_inflight_requests",
                    "Number of inflight requests",
                ),
                model,
            )?,
            queued: IntGaugeVec::new(
                Opts::new(
                    "dynamo_frontend_queued_requests",
                    "Number of requests in HTTP processing queue",
                ),
                model,
            )?,
            duration: histogram(
                "dynamo_frontend_request_duration_seconds",
                "Duration of LLM requests",
            )?,
            ttft: histogram(
                "dynamo_frontend_time_to_first_token_seconds",
                "Time to first token in seconds",
            )?,
            itl: histogram(
                "dynamo_frontend_inter_token_latency_seconds",
                "Inter-token latency in seconds",
            )?,
            output_tokens: IntCounterVec::new(
                Opts::new(
                    "dynamo_frontend_output_tokens_total",
                    "Output tokens generated",
                ),
                model,
            )?,
            kv_hit_rate: GaugeVec::new(
                Opts::new("dynamo_frontend_kv_hit_rate", "KV cache hit rate"),
                model,
            )?,
            build: Gauge::with_opts(
                Opts::new("dynamo_frontend_build_info", "Build information")
                    .const_label("version", env!("CARGO_PKG_VERSION")),
            )?,
        };
        registry.register(Box::new(frontend.requests.clone()))?;
        registry.register(Box::new(frontend.inflight.clone()))?;
        registry.register(Box::new(frontend.queued.clone()))?;
        registry.register(Box::new(frontend.duration.clone()))?;
        registry.register(Box::new(frontend.ttft.clone()))?;
        registry.register(Box::new(frontend.itl.clone()))?;
        registry.register(Box::new(frontend.output_tokens.clone()))?;
        registry.register(Box::new(frontend.kv_hit_rate.clone()))?;
        registry.register(Box::new(frontend.build.clone()))?;
        frontend.build.set(1.0);
        Ok(frontend)
    }

    /// One simulated request: the figures vary with `i` so every bucket
    /// and label fills over a few seconds.
    fn serve(&self, i: u64) {
        let model = ["llama-3-8b", "qwen-2.5-7b"][(i % 2) as usize];
        let stream = if i.is_multiple_of(3) {
            "unary"
        } else {
            "stream"
        };
        let status = if i.is_multiple_of(17) {
            "error"
        } else {
            "success"
        };
        let tokens = 16 + i % 48;
        let ttft = 0.002 * (1 + i % 40) as f64;
        let itl = 0.0005 * (1 + i % 25) as f64;
        self.inflight
            .with_label_values(&[model])
            .set((i % 5) as i64);
        self.queued.with_label_values(&[model]).set((i % 3) as i64);
        self.ttft.with_label_values(&[model]).observe(ttft);
        for _ in 1..tokens {
            self.itl.with_label_values(&[model]).observe(itl);
        }
        self.duration
            .with_label_values(&[model])
            .observe(ttft + itl * (tokens - 1) as f64);
        self.output_tokens
            .with_label_values(&[model])
            .inc_by(tokens);
        self.requests
            .with_label_values(&[model, "chat_completions", stream, status])
            .inc();
        self.kv_hit_rate
            .with_label_values(&[model])
            .set((i % 10) as f64 / 10.0);
    }
}

fn seconds() -> Result<Option<u64>, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => Ok(None),
        [flag, n] if flag == "--seconds" => n
            .parse()
            .map(Some)
            .map_err(|_| format!("--seconds takes a whole number, not {n:?}")),
        _ => Err(format!(
            "usage: prometheus_registry [--seconds N], not {args:?}"
        )),
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let seconds = seconds()?;
    // The process environment, with telemetry on and served by default.
    let mut env: BTreeMap<String, String> = std::env::vars().collect();
    env.entry("NEMO_LENS_ENABLED".into())
        .or_insert_with(|| "true".into());
    env.entry("NEMO_LENS_EXPORTER".into())
        .or_insert_with(|| "prometheus".into());
    env.entry("OTEL_SERVICE_NAME".into())
        .or_insert_with(|| "dynamo-frontend".into());
    let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs(env))?;
    let telemetry = SetupOptions::new().setup(&config, 0, 1)?;

    let registry = Registry::new();
    let frontend = Frontend::register(&registry)?;
    RegistryBridge::new()
        .prometheus(registry)
        .install(&telemetry)?;
    match telemetry.prometheus_url() {
        Some(url) => println!("serving {url}"),
        None => println!("exporting with {:?}", config.exporter),
    }

    let started = Instant::now();
    let mut i = 0;
    while seconds.is_none_or(|s| started.elapsed() < Duration::from_secs(s)) {
        frontend.serve(i);
        i += 1;
        std::thread::sleep(Duration::from_millis(20));
    }
    telemetry.shutdown()?;
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("prometheus_registry: {e}");
        std::process::exit(1);
    }
}
