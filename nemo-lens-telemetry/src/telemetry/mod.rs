//! Telemetry setup: configuration from the environment, rank selection,
//! the resource, and the exporter pipeline.
//!
//! ```no_run
//! use nemo_lens::telemetry::{setup_telemetry, NemoLensConfig};
//! let config = NemoLensConfig::from_env()?;
//! let telemetry = setup_telemetry(&config, 0, 1)?; // or setup_telemetry_from_launcher(&config)?
//! if let Some(url) = telemetry.prometheus_url() {
//!     println!("metrics at {url}");
//! }
//! // record on telemetry.meter ...
//! // A receiver that is down at the end costs the last export, not the job.
//! if let Err(e) = telemetry.shutdown() {
//!     eprintln!("{e}");
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Variables
//!
//! `NEMO_LENS_*` variables may be read under another prefix first with
//! [`NemoLensConfig::from_env_with_prefix`]. Booleans accept `1/0`,
//! `true/false`, `yes/no`, `on/off`; anything else is a [`ConfigError`]
//! naming the variable, the value and what it accepts.
//!
//! | variable | default | meaning |
//! |---|---|---|
//! | `NEMO_LENS_ENABLED` | off | master switch |
//! | `NEMO_LENS_METRICS_ENABLED` | on | metrics switch |
//! | `NEMO_LENS_EXPORTER` | `otlp` | `otlp`, `prometheus` or `console` |
//! | `NEMO_LENS_EXPORT_STRATEGY` | `single_rank` | `all_ranks`, `single_rank`, `sampled`, `first_rank_per_node`, or a [registered](register_export_strategy) name; headed for removal upstream (see below) |
//! | `NEMO_LENS_EXPORT_RANK` | -1 | the `single_rank` rank; negative counts from the last; headed for removal upstream |
//! | `NEMO_LENS_EXPORT_SAMPLE_RATE` | 0.1 | the `sampled` rate, `0..=1`; headed for removal upstream |
//! | `NEMO_LENS_RUN_ID` | the launcher's job ([`JOB_ID_VARIABLES`]: `TORCHELASTIC_RUN_ID` unless `none`, `SLURM_JOB_ID`, `PMIX_NAMESPACE`, `PBS_JOBID`, `LSB_JOBID`), else random (warned about once when the world size is above 1) | `nemo.run.id`, the same on every rank of a job |
//! | `NEMO_LENS_USER_ID` | none | `nemo.user.id` |
//! | `OTEL_SDK_DISABLED` | off | switches metrics off |
//! | `OTEL_SERVICE_NAME` | `nemo` | `service.name` |
//! | `OTEL_METRIC_EXPORT_INTERVAL` | 10000 | push interval, ms |
//! | `OTEL_METRIC_EXPORT_TIMEOUT` | 10000 | one OTLP export's timeout, ms |
//! | `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` | OTLP defaults | receiver URL: `http://` or `https://` (feature `otlp-tls`) with a host |
//! | `OTEL_EXPORTER_OTLP_METRICS_HEADERS`, else `OTEL_EXPORTER_OTLP_HEADERS` | none | `key=value,...` sent with each export; names must be HTTP tokens, values printable ASCII |
//! | `OTEL_EXPORTER_OTLP_METRICS_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL` | `grpc` | `grpc` or `http/protobuf` |
//! | `OTEL_EXPORTER_OTLP_METRICS_TIMEOUT`, else `OTEL_EXPORTER_OTLP_TIMEOUT` | `OTEL_METRIC_EXPORT_TIMEOUT` | one OTLP request's timeout, ms |
//! | `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE` | `cumulative` | `cumulative`, `delta` or `lowmemory` |
//! | `OTEL_EXPORTER_OTLP_METRICS_COMPRESSION`, else `OTEL_EXPORTER_OTLP_COMPRESSION` | `none` | only `none`: this build does not compress |
//! | `OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE`, else `OTEL_EXPORTER_OTLP_CERTIFICATE` | built-in roots | PEM CA file trusted for `https://` instead of Mozilla's roots |
//! | `OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE` / `_CLIENT_KEY`, else `OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE` / `_CLIENT_KEY` | none | PEM client certificate chain and key for mutual TLS, both or neither |
//! | `OTEL_RESOURCE_ATTRIBUTES` | none | extra resource attributes |
//! | `OTEL_EXPORTER_PROMETHEUS_HOST` / `_PORT` | `127.0.0.1` / `9464` | scrape endpoint address |
//! | `OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION` | `explicit_bucket_histogram` | `base2_exponential_bucket_histogram` for exponential histograms on every exporter (Prometheus native histograms); see [`HistogramAggregation`] |
//! | `NEMO_LENS_CARDINALITY_LIMIT` | the SDK's 2000 | attribute sets (series) each instrument keeps before the SDK merges new ones into one `otel.metric.overflow` series; a positive integer |
//! | `NEMO_LENS_SERIES_IDLE_TIMEOUT` | none (never) | a series not recorded for this long ends on every exporter and frees its memory: `30s`, `15m`, `2h`; `0` for never; see [`Meter::forget`](nemo_lens_core::Meter::forget) for which series never end |
//! | `NEMO_LENS_SERIES_IDLE_KEYS` | none (every series) | attribute keys, comma-separated (`server.address,gen_ai.request.model`): only the series carrying one of them end after `NEMO_LENS_SERIES_IDLE_TIMEOUT`, the rest never do (a gateway's per-backend series end, its own stay); finer rules in code: [`SeriesExpiry`](nemo_lens_core::SeriesExpiry) |
//! | `NEMO_LENS_SLO` | none (nothing judged) | latency objectives in aiperf's `--goodput` syntax (`time_to_first_token:300 inter_token_latency:20`, ms): every request the request guards, the OpenAI layer and the metering proxy end is judged against them and counted in `nemo.inference.requests.judged` by result (see `nemo_lens::guides::goodput`); per model in code: [`SetupOptions::objectives`] |
//! | `OTEL_SEMCONV_STABILITY_OPT_IN` | none | `gen_ai_latest_experimental` (or `/dup`) for the GenAI draft's names; see [`SemconvOptIn`](nemo_lens_core::SemconvOptIn) |
//! | `NEMO_LENS_PROMETHEUS_RESOURCE_LABELS` | `service.name,service.instance.id,nemo.run.id,dl.rank` | resource attributes on every Prometheus series: `all`, `none` or keys (see [`PrometheusResourceLabels`]) |
//! | `DEPLOYMENT_ENV`, else `ENVIRONMENT` | none | `deployment.environment` |
//! | `NEMO_LENS_PROMETHEUS_WEB_CONFIG` | none (plain HTTP) | Prometheus's web configuration file (exporter-toolkit's format): TLS, client certificates, basic auth, headers, a rate limit, re-read when it changes; feature `prometheus-tls` |
//! | `NEMO_LENS_PROMETHEUS_PORT_PER_LOCAL_RANK` | off | each rank serves on `OTEL_EXPORTER_PROMETHEUS_PORT` plus its local rank (one port per rank on a host) |
//! | `RANK` / `WORLD_SIZE`, `SLURM_PROCID` / `SLURM_NTASKS`, `OMPI_COMM_WORLD_RANK` / `_SIZE`, `PMI_RANK` / `PMI_SIZE` | none | the rank and world size, read by [`setup_telemetry_from_launcher`] and [`JobRank`] |
//! | `LOCAL_RANK`, else `SLURM_LOCALID`, `OMPI_COMM_WORLD_LOCAL_RANK`, `MPI_LOCALRANKID` | 0 | the rank within a node: `first_rank_per_node`, and the port per local rank |
//!
//! The three `NEMO_LENS_EXPORT_*` variables are headed for removal upstream:
//! Lens's PR #42 (open, not merged in its latest snapshot) removes them with
//! Lens's rank and world-size handling, so that a job sets up telemetry on
//! the ranks it wants. nemo-lens reads them as Python nemo-lens 0.1.0 and
//! 0.2.0 do while those are the releases jobs run; new code can call setup
//! only on the ranks that should export, with their [`JobRank`].
//!
//! A job that exports over OTLP checks every OTLP variable when its
//! configuration is read (URLs, header names and values, that certificate
//! files exist and hold PEM); any other job (Prometheus, console, disabled)
//! does not read them, so a stray one cannot stop it. Every value is passed
//! to the `opentelemetry-otlp` builders
//! explicitly, so that crate reads no variable of its own.
//! `OTEL_EXPORTER_OTLP_INSECURE` changes nothing (a warning says so when
//! it is set): it only applies to endpoints without a scheme, which are
//! rejected here; the scheme decides TLS. Errors about
//! headers list the header names only: values usually hold tokens. The
//! HTTP/protobuf client honours the usual `HTTP_PROXY`/`HTTPS_PROXY`/
//! `NO_PROXY` variables, as Python's `requests` does.
//!
//! Export failures are logged through `tracing` (target `nemo_lens`) while
//! they happen; see [`TelemetryHandle::failed_exports`].
//!
//! The resource attributes and their sources are listed in the [`resource`]
//! module.

mod config;
mod env;
mod error;
mod handle;
mod launcher;
mod options;
mod otlp_env;
mod pem;
mod pipeline;
mod rank;
pub mod resource;
mod resource_labels;
mod run_id;
mod setup;
mod strategy;
#[cfg(feature = "prometheus")]
mod web_config;

pub use crate::ExporterError;
pub use config::{ExporterKind, NemoLensConfig, OtlpProtocol, DEFAULT_PREFIX, EXPORTER_VARIABLES};
pub use env::{ConfigError, EnvLookup, NamedFile};
pub use error::SetupError;
pub use handle::{ShutdownError, TelemetryHandle};
pub use launcher::{JobRank, Launcher, LauncherError};
pub use nemo_lens_core::{
    histogram_view, HistogramAggregation, EXPONENTIAL_MAX_SCALE, EXPONENTIAL_MAX_SIZE,
};
pub use nemo_lens_core::{
    visible_gpus, GpuId, PrometheusResourceLabels, DEFAULT_RESOURCE_LABEL_KEYS,
};
#[cfg(feature = "otlp")]
#[cfg_attr(docsrs, doc(cfg(feature = "otlp")))]
pub use nemo_lens_otlp::OtlpError;
#[cfg(feature = "prometheus")]
#[cfg_attr(docsrs, doc(cfg(feature = "prometheus")))]
pub use nemo_lens_prometheus::PrometheusError;
pub use options::SetupOptions;
pub use resource::{K8S_ATTRIBUTES, SLURM_ATTRIBUTES};
pub use run_id::JOB_ID_VARIABLES;
pub use setup::{setup_telemetry, setup_telemetry_from_launcher};
pub use strategy::{
    register_export_strategy, sampled_rank_selected, ExportStrategy, RankContext, StrategyFn,
};
