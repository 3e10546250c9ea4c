//! `setup_telemetry` and its options.

use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::metrics::reader::MetricReader;
use opentelemetry_sdk::metrics::PeriodicReader;
use opentelemetry_sdk::metrics::{MeterProviderBuilder, SdkMeterProvider};

use super::buckets::BucketOverride;
use super::config::{ExporterKind, NemoLensConfig};
use super::env::{parse_number, ConfigError, EnvLookup};
use super::handle::{Active, Stopper, TelemetryHandle};
use super::resource::{self, ResourceInputs};
use super::resource_labels::PrometheusResourceLabels;
use super::strategy::{ExportStrategy, RankContext};
use crate::Meter;

/// Why telemetry could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// A configuration value was invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Telemetry was already set up in this process.
    #[error(
        "nemo-lens telemetry is already set up in this process; call \
         SetupOptions::allow_reinit(true) to replace it"
    )]
    AlreadyInitialized,
    /// `rank` is not below `world_size`, or `world_size` is 0.
    #[error("rank {rank} is not valid for world size {world_size}")]
    InvalidRank {
        /// The rank given.
        rank: u32,
        /// The world size given.
        world_size: u32,
    },
    /// The configured exporter was compiled out.
    #[error(
        "exporter {exporter:?} (NEMO_LENS_EXPORTER) needs the `{feature}` cargo feature of nemo-lens"
    )]
    FeatureDisabled {
        /// The exporter asked for.
        exporter: &'static str,
        /// The feature that provides it.
        feature: &'static str,
    },
    /// The Prometheus endpoint could not be bound.
    #[error("cannot serve Prometheus metrics on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The exporter could not be built.
    #[error("{0}")]
    Exporter(String),
    /// Boundaries given to [`SetupOptions::histogram_boundaries`] are unusable.
    #[error("invalid bucket boundaries for histogram `{instrument}`: {reason}")]
    InvalidBoundaries {
        /// The instrument whose boundaries were given.
        instrument: String,
        /// What is wrong with them.
        reason: String,
    },
}

/// Adds a caller-supplied reader; gets the configured export interval.
type Install = Box<dyn FnOnce(MeterProviderBuilder, Duration) -> MeterProviderBuilder + Send>;

/// Options of [`setup_telemetry`] beyond the configuration, as a builder.
///
/// ```no_run
/// use lens_core::telemetry::{NemoLensConfig, SetupOptions};
/// let config = NemoLensConfig::from_env()?;
/// let telemetry = SetupOptions::new()
///     .service_version("2.1.0")
///     .resource_attribute(opentelemetry::KeyValue::new("team", "rl"))
///     .setup(&config, 0, 1)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct SetupOptions {
    env: EnvLookup,
    service_version: String,
    resource_attributes: Vec<KeyValue>,
    install: Option<Install>,
    allow_reinit: bool,
    shutdown_timeout: Duration,
    probe_gpus: bool,
    set_global: bool,
    buckets: Vec<BucketOverride>,
    prometheus_resource_labels: Option<PrometheusResourceLabels>,
}

impl Default for SetupOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for SetupOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SetupOptions")
            .field("service_version", &self.service_version)
            .field("resource_attributes", &self.resource_attributes)
            .field("custom_reader", &self.install.is_some())
            .field("allow_reinit", &self.allow_reinit)
            .field("shutdown_timeout", &self.shutdown_timeout)
            .finish_non_exhaustive()
    }
}

impl SetupOptions {
    /// Defaults: process environment, this crate's version, a 5 s shutdown
    /// timeout, GPUs probed with `nvidia-smi` when `CUDA_VISIBLE_DEVICES` is
    /// unset, the global meter provider set.
    pub fn new() -> Self {
        SetupOptions {
            env: EnvLookup::process(),
            service_version: env!("CARGO_PKG_VERSION").to_owned(),
            resource_attributes: Vec::new(),
            install: None,
            allow_reinit: false,
            shutdown_timeout: Duration::from_secs(5),
            probe_gpus: true,
            set_global: true,
            buckets: Vec::new(),
            prometheus_resource_labels: None,
        }
    }

    /// Replaces the bucket boundaries of the histogram `instrument` (for
    /// example `gen_ai.server.time_to_first_token`, whose advised buckets
    /// stop at 10 s while a long-context server's first token can take
    /// minutes). Applies to built-in and custom sets alike, through an SDK
    /// view; boundaries must be finite and strictly increasing, checked by
    /// [`setup`](Self::setup). A later call for the same name replaces an
    /// earlier one.
    ///
    /// ```
    /// use nemo_lens::SetupOptions;
    ///
    /// let options = SetupOptions::new().histogram_boundaries(
    ///     "gen_ai.server.time_to_first_token",
    ///     [0.01, 0.1, 1.0, 10.0, 60.0, 300.0, 1200.0, 2560.0],
    /// );
    /// ```
    pub fn histogram_boundaries(
        mut self,
        instrument: impl Into<String>,
        boundaries: impl IntoIterator<Item = f64>,
    ) -> Self {
        let instrument = instrument.into();
        // The SDK applies the first matching view only: a later call for the
        // same histogram replaces the earlier one, as builders do.
        self.buckets
            .retain(|b| !b.instrument.eq_ignore_ascii_case(&instrument));
        self.buckets.push(BucketOverride {
            instrument,
            boundaries: boundaries.into_iter().collect(),
        });
        self
    }

    /// Where `LOCAL_RANK`, `SLURM_*`, `K8S_*`, `CUDA_VISIBLE_DEVICES` and
    /// friends are read from (default: the process environment).
    pub fn env(mut self, env: EnvLookup) -> Self {
        self.env = env;
        self
    }

    /// The `service.version` resource attribute.
    pub fn service_version(mut self, version: impl Into<String>) -> Self {
        self.service_version = version.into();
        self
    }

    /// Adds a resource attribute; these win over every other source.
    pub fn resource_attribute(mut self, attribute: KeyValue) -> Self {
        self.resource_attributes.push(attribute);
        self
    }

    /// Adds resource attributes; these win over every other source.
    pub fn resource_attributes(mut self, attributes: impl IntoIterator<Item = KeyValue>) -> Self {
        self.resource_attributes.extend(attributes);
        self
    }

    /// Uses `reader` instead of the configured exporter (nemo-lens's
    /// `metric_reader=`), for tests and custom pipelines.
    pub fn metric_reader(mut self, reader: impl MetricReader) -> Self {
        self.install = Some(Box::new(move |b, _| b.with_reader(reader)));
        self
    }

    /// Pushes to `exporter` every `OTEL_METRIC_EXPORT_INTERVAL` instead of
    /// the configured exporter.
    pub fn push_exporter(mut self, exporter: impl PushMetricExporter) -> Self {
        self.install = Some(Box::new(move |b, interval| {
            b.with_reader(
                PeriodicReader::builder(exporter)
                    .with_interval(interval)
                    .build(),
            )
        }));
        self
    }

    /// Replaces telemetry set up earlier in this process (shutting the old
    /// pipeline down) instead of failing.
    pub fn allow_reinit(mut self, allow: bool) -> Self {
        self.allow_reinit = allow;
        self
    }

    /// The longest [`TelemetryHandle::shutdown`] and
    /// [`TelemetryHandle::force_flush`] wait.
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = timeout;
        self
    }

    /// Whether to run `nvidia-smi` for `host.gpu.count` when
    /// `CUDA_VISIBLE_DEVICES` is unset.
    pub fn probe_gpus(mut self, probe: bool) -> Self {
        self.probe_gpus = probe;
        self
    }

    /// Whether to install the provider as the global OpenTelemetry meter
    /// provider (default true).
    pub fn set_global(mut self, set: bool) -> Self {
        self.set_global = set;
        self
    }

    /// The resource attributes the Prometheus endpoint puts on every series,
    /// instead of `NEMO_LENS_PROMETHEUS_RESOURCE_LABELS`
    /// ([`NemoLensConfig::prometheus_resource_labels`]).
    pub fn prometheus_resource_labels(mut self, labels: PrometheusResourceLabels) -> Self {
        self.prometheus_resource_labels = Some(labels);
        self
    }

    /// Sets up telemetry for `rank` of `world_size`; see [`setup_telemetry`].
    pub fn setup(
        self,
        config: &NemoLensConfig,
        rank: u32,
        world_size: u32,
    ) -> Result<TelemetryHandle, SetupError> {
        setup(config, rank, world_size, self)
    }
}

/// Sets up metrics for `rank` of `world_size` with default options; see
/// [`SetupOptions`] for the rest.
///
/// Disabled telemetry, or a rank the export strategy does not pick, gets a
/// [`Meter::noop`] that costs one branch per `record`. An exporting rank gets
/// a meter provider with the configured exporter and the resource described
/// in the module docs, installed as the global provider. Calling this twice
/// with telemetry enabled is an error unless
/// [`SetupOptions::allow_reinit`] is set.
pub fn setup_telemetry(
    config: &NemoLensConfig,
    rank: u32,
    world_size: u32,
) -> Result<TelemetryHandle, SetupError> {
    SetupOptions::new().setup(config, rank, world_size)
}

/// The pipeline of the last enabled setup; `Some` once one has happened.
static CURRENT: Mutex<Option<Weak<Active>>> = Mutex::new(None);

fn setup(
    config: &NemoLensConfig,
    rank: u32,
    world_size: u32,
    options: SetupOptions,
) -> Result<TelemetryHandle, SetupError> {
    if world_size == 0 || rank >= world_size {
        return Err(SetupError::InvalidRank { rank, world_size });
    }
    for buckets in &options.buckets {
        buckets.validate()?;
    }
    if !config.metrics_active() {
        return Ok(TelemetryHandle::noop());
    }
    let ctx = rank_context(config, &options.env, rank, world_size)?;

    // Hold the process-wide slot while building, so two racing setups cannot
    // both succeed; it is only marked taken once setup succeeds, so a failed
    // setup (say, a busy port) can be retried.
    let mut current = CURRENT.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(previous) = current.as_ref() {
        if !options.allow_reinit {
            return Err(SetupError::AlreadyInitialized);
        }
        if let Some(previous) = previous.upgrade() {
            let _ = previous.shutdown();
        }
    }

    if !config.export_strategy.should_export(&ctx) {
        // A non-exporting rank still counts as set up, as on exporting ranks.
        *current = Some(Weak::new());
        return Ok(TelemetryHandle::noop());
    }

    let resource = resource::build(&ResourceInputs {
        config,
        env: &options.env,
        rank,
        world_size,
        service_version: &options.service_version,
        extra: &options.resource_attributes,
        probe_gpus: options.probe_gpus,
    });
    let mut builder = SdkMeterProvider::builder().with_resource(resource);
    for buckets in options.buckets {
        builder = builder.with_view(buckets.view());
    }
    let mut stoppers: Vec<Stopper> = Vec::new();
    let mut prometheus_addr = None;
    match options.install {
        Some(install) => builder = install(builder, config.export_interval),
        None => {
            // The option wins over the configuration it overrides.
            let overridden = options
                .prometheus_resource_labels
                .map(|labels| NemoLensConfig {
                    prometheus_resource_labels: labels,
                    ..config.clone()
                });
            let config = overridden.as_ref().unwrap_or(config);
            builder = install_exporter(config, builder, &mut stoppers, &mut prometheus_addr)?;
        }
    }
    let provider = builder.build();
    if options.set_global {
        opentelemetry::global::set_meter_provider(provider.clone());
    }
    let otel = provider.meter_with_scope(
        InstrumentationScope::builder("nemo.lens")
            .with_version(env!("CARGO_PKG_VERSION"))
            .build(),
    );
    let active = Arc::new(Active {
        provider,
        prometheus_addr,
        shutdown_timeout: options.shutdown_timeout,
        stoppers: Mutex::new(stoppers),
        shut: AtomicBool::new(false),
    });
    *current = Some(Arc::downgrade(&active));
    Ok(TelemetryHandle {
        meter: Meter::new(otel),
        is_exporting: true,
        active: Some(active),
    })
}

fn rank_context(
    config: &NemoLensConfig,
    env: &EnvLookup,
    rank: u32,
    world_size: u32,
) -> Result<RankContext, SetupError> {
    let local_rank = match env.get("LOCAL_RANK") {
        Some(v) => parse_number("LOCAL_RANK", &v, "a non-negative integer")?,
        None => 0,
    };
    let resolved = if config.export_rank < 0 {
        i64::from(world_size) + config.export_rank
    } else {
        config.export_rank
    };
    let export_rank = match u32::try_from(resolved) {
        Ok(r) if r < world_size => r,
        _ if config.export_strategy != ExportStrategy::SingleRank => 0,
        _ => {
            return Err(ConfigError::new(
                "NEMO_LENS_EXPORT_RANK",
                config.export_rank.to_string(),
                format!("a rank in -{world_size}..{world_size} for world size {world_size}"),
            )
            .into())
        }
    };
    Ok(RankContext {
        rank,
        world_size,
        local_rank,
        export_rank,
        sample_rate: config.export_sample_rate,
    })
}

fn install_exporter(
    config: &NemoLensConfig,
    builder: MeterProviderBuilder,
    stoppers: &mut Vec<Stopper>,
    prometheus_addr: &mut Option<SocketAddr>,
) -> Result<MeterProviderBuilder, SetupError> {
    // Unused without some exporter features.
    let _ = (&stoppers, &prometheus_addr, &builder);
    match config.exporter {
        ExporterKind::Otlp => {
            #[cfg(feature = "otlp")]
            {
                let (exporter, runtime) = crate::export::otlp::build(config)?;
                if let Some(mut runtime) = runtime {
                    stoppers.push(Box::new(move |timeout| runtime.stop(timeout)));
                }
                let reader = PeriodicReader::builder(exporter)
                    .with_interval(config.export_interval)
                    .build();
                Ok(builder.with_reader(reader))
            }
            #[cfg(not(feature = "otlp"))]
            Err(SetupError::FeatureDisabled {
                exporter: "otlp",
                feature: "otlp",
            })
        }
        ExporterKind::Prometheus => {
            #[cfg(feature = "prometheus")]
            {
                let (reader, mut server) = crate::export::prometheus::build(
                    config.prometheus_addr,
                    &config.prometheus_resource_labels,
                )?;
                *prometheus_addr = Some(server.local_addr());
                stoppers.push(Box::new(move |_| server.stop()));
                Ok(builder.with_reader(reader))
            }
            #[cfg(not(feature = "prometheus"))]
            Err(SetupError::FeatureDisabled {
                exporter: "prometheus",
                feature: "prometheus",
            })
        }
        ExporterKind::Console => {
            #[cfg(feature = "console")]
            {
                let reader =
                    PeriodicReader::builder(crate::export::console::ConsoleExporter::stdout())
                        .with_interval(config.export_interval)
                        .build();
                Ok(builder.with_reader(reader))
            }
            #[cfg(not(feature = "console"))]
            Err(SetupError::FeatureDisabled {
                exporter: "console",
                feature: "console",
            })
        }
    }
}
