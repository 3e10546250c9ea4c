//! [`SetupOptions`]: what `setup_telemetry` takes beyond the configuration.

use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::metrics::reader::MetricReader;
use opentelemetry_sdk::metrics::{MeterProviderBuilder, PeriodicReader};

use nemo_lens_core::__internal::BucketOverride;
use nemo_lens_core::{HistogramAggregation, PrometheusResourceLabels, SemconvOptIn};

use super::env::EnvLookup;

/// Adds a caller-supplied reader; gets the configured export interval.
pub(super) type Install =
    Box<dyn FnOnce(MeterProviderBuilder, Duration) -> MeterProviderBuilder + Send>;

/// Options of [`setup_telemetry`](super::setup_telemetry) beyond the configuration, as a builder.
///
/// ```no_run
/// use nemo_lens::telemetry::{NemoLensConfig, SetupOptions};
/// let config = NemoLensConfig::from_env()?;
/// let telemetry = SetupOptions::new()
///     .service_version("2.1.0")
///     .resource_attribute(nemo_lens::opentelemetry::KeyValue::new("team", "rl"))
///     .setup(&config, 0, 1)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct SetupOptions {
    pub(super) env: EnvLookup,
    pub(super) service_version: Option<String>,
    pub(super) resource_attributes: Vec<KeyValue>,
    pub(super) install: Option<Install>,
    /// A Prometheus reader given to `metric_reader`: it reads the owned
    /// series, so setup makes a registry and hands it over.
    #[cfg(feature = "prometheus")]
    pub(super) owned_reader: Option<nemo_lens_prometheus::RegistrySlot>,
    pub(super) allow_reinit: bool,
    pub(super) shutdown_timeout: Duration,
    pub(super) probe_gpus: bool,
    pub(super) set_global: bool,
    pub(super) buckets: Vec<BucketOverride>,
    pub(super) prometheus_resource_labels: Option<PrometheusResourceLabels>,
    pub(super) semconv_opt_in: Option<SemconvOptIn>,
    pub(super) objectives: Option<nemo_lens_core::slo::Objectives>,
    pub(super) histogram_aggregation: Option<HistogramAggregation>,
    pub(super) cardinality_limit: Option<usize>,
    pub(super) series_expiry: Option<nemo_lens_core::SeriesExpiry>,
    pub(super) exemplar_filter: Option<nemo_lens_core::ExemplarFilter>,
    pub(super) series_clock: Option<std::sync::Arc<dyn nemo_lens_core::owned::expiry::Clock>>,
    pub(super) port_per_local_rank: Option<bool>,
    pub(super) prometheus_web_config: Option<std::path::PathBuf>,
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
            .field("semconv_opt_in", &self.semconv_opt_in)
            .field("objectives", &self.objectives)
            .finish_non_exhaustive()
    }
}

impl SetupOptions {
    /// Defaults: process environment, no `service.version`, a 5 s shutdown
    /// timeout, GPUs probed with `nvidia-smi` (unless `CUDA_VISIBLE_DEVICES`
    /// is set but empty), the global meter provider set.
    pub fn new() -> Self {
        SetupOptions {
            env: EnvLookup::process(),
            service_version: None,
            resource_attributes: Vec::new(),
            install: None,
            #[cfg(feature = "prometheus")]
            owned_reader: None,
            allow_reinit: false,
            shutdown_timeout: Duration::from_secs(5),
            probe_gpus: true,
            set_global: true,
            buckets: Vec::new(),
            prometheus_resource_labels: None,
            semconv_opt_in: None,
            objectives: None,
            histogram_aggregation: None,
            cardinality_limit: None,
            series_expiry: None,
            exemplar_filter: None,
            series_clock: None,
            port_per_local_rank: None,
            prometheus_web_config: None,
        }
    }

    /// Where the launcher's variables (`RANK`, `LOCAL_RANK`, `SLURM_*`, ...),
    /// `K8S_*`, `CUDA_VISIBLE_DEVICES` and friends are read from (default:
    /// the process environment).
    pub fn env(mut self, env: EnvLookup) -> Self {
        self.env = env;
        self
    }

    /// The `service.version` resource attribute: your application's
    /// version, for example `env!("CARGO_PKG_VERSION")` in your binary.
    /// Wins over a `service.version` in `OTEL_RESOURCE_ATTRIBUTES`; without
    /// either the attribute is left out, as Python nemo-lens leaves it.
    pub fn service_version(mut self, version: impl Into<String>) -> Self {
        self.service_version = Some(version.into());
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

    /// The resource attributes a NeMo-Gym server sets for itself, as
    /// NeMo-Gym 0.7.0 does: `nemo.gym.server.name` and
    /// `nemo.gym.server.type` (`resources_servers`, `responses_api_models`,
    /// ...), and its rank as `nv.dl.rank` and `nv.dl.world_size` (Lens's
    /// `NV_DL_RANK` and `NV_DL_WORLD_SIZE`, which 0.7.0 sets to 0 and 1),
    /// beside the `dl.rank` and `dl.world_size` every process writes. With
    /// [`gym_service_group`](Self::gym_service_group) and
    /// [`gym_version`](Self::gym_version) for the rest.
    ///
    /// ```
    /// use nemo_lens::telemetry::SetupOptions;
    ///
    /// let options = SetupOptions::new()
    ///     .gym_server("math_env", "resources_servers")
    ///     .gym_service_group("rollouts")
    ///     .gym_version("0.7.0");
    /// # drop(options);
    /// ```
    pub fn gym_server(
        self,
        name: impl Into<opentelemetry::StringValue>,
        server_type: impl Into<opentelemetry::StringValue>,
    ) -> Self {
        self.resource_attributes([
            KeyValue::new("nemo.gym.server.name", name.into()),
            KeyValue::new("nemo.gym.server.type", server_type.into()),
        ])
    }

    /// `nemo.gym.service_group`: the group of Gym servers this one belongs
    /// to.
    pub fn gym_service_group(self, group: impl Into<opentelemetry::StringValue>) -> Self {
        self.resource_attribute(KeyValue::new("nemo.gym.service_group", group.into()))
    }

    /// `nemo.gym.version`: the NeMo-Gym version the server speaks.
    pub fn gym_version(self, version: impl Into<opentelemetry::StringValue>) -> Self {
        self.resource_attribute(KeyValue::new("nemo.gym.version", version.into()))
    }

    /// Uses `reader` instead of the configured exporter (nemo-lens's
    /// `metric_reader=`), for tests and custom pipelines.
    ///
    /// A [`PrometheusReader`](nemo_lens_prometheus::PrometheusReader)
    /// (serving `/metrics` on your own router) reads the owned series too,
    /// as the built-in endpoint does: histograms with their exemplars, and
    /// the idle timeout.
    pub fn metric_reader(mut self, reader: impl MetricReader) -> Self {
        #[cfg(feature = "prometheus")]
        if let Some(prometheus) =
            (&reader as &dyn std::any::Any).downcast_ref::<nemo_lens_prometheus::PrometheusReader>()
        {
            self.owned_reader = Some(nemo_lens_prometheus::registry_slot(prometheus));
        }
        self.install = Some(Box::new(move |b, _| b.with_reader(reader)));
        self
    }

    /// Pushes to `exporter` every `OTEL_METRIC_EXPORT_INTERVAL` instead of
    /// the configured exporter.
    pub fn push_exporter(mut self, exporter: impl PushMetricExporter) -> Self {
        self.install = Some(Box::new(move |b, interval| {
            b.with_reader(
                PeriodicReader::builder(crate::report::OverflowWatching(exporter))
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

    /// The longest [`TelemetryHandle::shutdown`](super::TelemetryHandle::shutdown) and
    /// [`TelemetryHandle::force_flush`](super::TelemetryHandle::force_flush) wait.
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = timeout;
        self
    }

    /// Whether to run `nvidia-smi -L` for `host.gpu.count`: the GPUs it
    /// lists that `CUDA_VISIBLE_DEVICES` makes visible
    /// ([`visible_gpus`](super::visible_gpus)). Without it (or without a
    /// driver), the count is the entries of `CUDA_VISIBLE_DEVICES`, and
    /// absent when that is unset.
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

    /// The resource attributes the Prometheus endpoint puts on every series,
    /// instead of `NEMO_LENS_PROMETHEUS_RESOURCE_LABELS`
    /// ([`NemoLensConfig::prometheus_resource_labels`](super::NemoLensConfig::prometheus_resource_labels)).
    pub fn prometheus_resource_labels(mut self, labels: PrometheusResourceLabels) -> Self {
        self.prometheus_resource_labels = Some(labels);
        self
    }

    /// The semantic-convention names the returned meter records, instead of
    /// `OTEL_SEMCONV_STABILITY_OPT_IN` ([`NemoLensConfig::semconv_opt_in`](super::NemoLensConfig::semconv_opt_in)):
    /// for example the GenAI draft's token metrics without touching the
    /// environment.
    ///
    /// ```
    /// use nemo_lens::{SemconvOptIn, SetupOptions};
    ///
    /// let options = SetupOptions::new()
    ///     .semconv_opt_in(SemconvOptIn::parse("gen_ai_latest_experimental/dup"));
    /// ```
    pub fn semconv_opt_in(mut self, opt_in: SemconvOptIn) -> Self {
        self.semconv_opt_in = Some(opt_in);
        self
    }

    /// The latency objectives requests are judged against, instead of
    /// `NEMO_LENS_SLO` ([`NemoLensConfig::slo`](super::NemoLensConfig::slo)):
    /// one [`Slo`](nemo_lens_core::slo::Slo) for every model, and one per
    /// model where a server serves several. Empty objectives judge nothing.
    ///
    /// ```
    /// use std::time::Duration;
    /// use nemo_lens::slo::{Objectives, Slo};
    /// use nemo_lens::SetupOptions;
    ///
    /// let every_model = Slo::new()
    ///     .time_to_first_token(Duration::from_millis(300))
    ///     .inter_token_latency(Duration::from_millis(20));
    /// let options = SetupOptions::new().objectives(
    ///     Objectives::new(every_model).model("llama-70b", "time_to_first_token:800".parse().unwrap()),
    /// );
    /// ```
    pub fn objectives(mut self, objectives: nemo_lens_core::slo::Objectives) -> Self {
        self.objectives = Some(objectives);
        self
    }

    /// How every histogram aggregates, instead of
    /// `OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION`
    /// ([`NemoLensConfig::histogram_aggregation`](super::NemoLensConfig::histogram_aggregation)); a declaration that pins
    /// its own (`aggregation = ".."`) and
    /// [`histogram_boundaries`](Self::histogram_boundaries) still win.
    ///
    /// ```
    /// use nemo_lens::telemetry::HistogramAggregation;
    /// use nemo_lens::SetupOptions;
    ///
    /// let options = SetupOptions::new().histogram_aggregation(HistogramAggregation::Base2Exponential);
    /// ```
    pub fn histogram_aggregation(mut self, aggregation: HistogramAggregation) -> Self {
        self.histogram_aggregation = Some(aggregation);
        self
    }

    /// The series (attribute sets) every instrument keeps, instead of
    /// `NEMO_LENS_CARDINALITY_LIMIT` ([`NemoLensConfig::cardinality_limit`](super::NemoLensConfig::cardinality_limit));
    /// past it the SDK merges new ones into one overflow series, and setup's
    /// handle counts and warns about each instrument that overflows
    /// ([`TelemetryHandle::overflowing_instruments`](super::TelemetryHandle::overflowing_instruments)).
    /// Values below 1 are taken as 1.
    ///
    /// ```
    /// use nemo_lens::SetupOptions;
    ///
    /// let options = SetupOptions::new().cardinality_limit(500);
    /// ```
    pub fn cardinality_limit(mut self, limit: usize) -> Self {
        self.cardinality_limit = Some(limit.max(1));
        self
    }

    /// How long every series may go unrecorded before it ends, instead of
    /// `NEMO_LENS_SERIES_IDLE_TIMEOUT` and `NEMO_LENS_SERIES_IDLE_KEYS`
    /// ([`NemoLensConfig::series_expiry`](super::NemoLensConfig::series_expiry)); zero: never. An ended
    /// series leaves every exporter and frees its memory, and the same
    /// attributes recorded again start a new series; see
    /// [`Meter::forget`](nemo_lens_core::Meter::forget) for which series never end
    /// and for ending them on purpose. Short for
    /// `series_expiry(SeriesExpiry::after(timeout))`; the last of the two
    /// called wins.
    ///
    /// ```
    /// use std::time::Duration;
    /// use nemo_lens::SetupOptions;
    ///
    /// // A batch job whose series should all go when it goes quiet.
    /// let options = SetupOptions::new().series_idle_timeout(Duration::from_secs(15 * 60));
    /// ```
    pub fn series_idle_timeout(self, timeout: Duration) -> Self {
        self.series_expiry(nemo_lens_core::SeriesExpiry::after(timeout))
    }

    /// Which series end when idle, and after how long, instead of
    /// `NEMO_LENS_SERIES_IDLE_TIMEOUT` and `NEMO_LENS_SERIES_IDLE_KEYS`:
    /// scoped to attribute keys, instruments or sets, so that a gateway's
    /// per-backend series end when a backend leaves while its own request
    /// series stay (and read as a zero rate, not as absent, however quiet
    /// the service is).
    ///
    /// ```
    /// use std::time::Duration;
    /// use nemo_lens::instruments::ModelCallMetrics;
    /// use nemo_lens::{SeriesExpiry, SetupOptions};
    ///
    /// // The calls to each backend end two minutes after its last call.
    /// let options = SetupOptions::new().series_expiry(
    ///     SeriesExpiry::never()
    ///         .set::<ModelCallMetrics>(Duration::from_secs(120))
    ///         .carrying("server.address", Duration::from_secs(120)),
    /// );
    /// ```
    pub fn series_expiry(mut self, expiry: nemo_lens_core::SeriesExpiry) -> Self {
        self.series_expiry = Some(expiry);
        self
    }

    /// Which histogram records leave an exemplar, instead of
    /// `OTEL_METRICS_EXEMPLAR_FILTER`
    /// ([`NemoLensConfig::exemplar_filter`](super::NemoLensConfig::exemplar_filter)). `AlwaysOff` keeps no exemplar
    /// storage at all.
    ///
    /// ```
    /// use nemo_lens::{ExemplarFilter, SetupOptions};
    ///
    /// // Every record of a low-rate service, span or not.
    /// let options = SetupOptions::new().exemplar_filter(ExemplarFilter::AlwaysOn);
    /// ```
    pub fn exemplar_filter(mut self, filter: nemo_lens_core::ExemplarFilter) -> Self {
        self.exemplar_filter = Some(filter);
        self
    }

    /// Whether each rank serves Prometheus on the configured port plus its
    /// local rank, instead of `NEMO_LENS_PROMETHEUS_PORT_PER_LOCAL_RANK`
    /// ([`NemoLensConfig::prometheus_port_per_local_rank`](super::NemoLensConfig::prometheus_port_per_local_rank)):
    /// with `OTEL_EXPORTER_PROMETHEUS_PORT=9464` and four ranks per host,
    /// local ranks 0 to 3 serve on 9464 to 9467. Port 0 (any free port)
    /// stays 0.
    ///
    /// ```
    /// use nemo_lens::SetupOptions;
    ///
    /// // Every rank of every node exports (NEMO_LENS_EXPORT_STRATEGY=all_ranks).
    /// let options = SetupOptions::new().prometheus_port_per_local_rank(true);
    /// ```
    pub fn prometheus_port_per_local_rank(mut self, per_rank: bool) -> Self {
        self.port_per_local_rank = Some(per_rank);
        self
    }

    /// The scrape endpoint's web configuration file, instead of
    /// `NEMO_LENS_PROMETHEUS_WEB_CONFIG`
    /// ([`NemoLensConfig::prometheus_web_config`](super::NemoLensConfig::prometheus_web_config)):
    /// Prometheus's exporter-toolkit format, for TLS, client certificates
    /// and basic auth (feature `prometheus-tls`; see the exporters guide).
    ///
    /// ```
    /// use nemo_lens::SetupOptions;
    ///
    /// let options = SetupOptions::new().prometheus_web_config("/etc/nemo-lens/web.yml");
    /// ```
    pub fn prometheus_web_config(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.prometheus_web_config = Some(path.into());
        self
    }

    /// The clock idle timeouts are timed by, instead of the system's
    /// monotonic clock: a test advances a
    /// [`ManualClock`](nemo_lens_prometheus::testing::ManualClock) rather than sleeping.
    #[cfg(feature = "testing")]
    pub fn series_clock(
        mut self,
        clock: std::sync::Arc<dyn nemo_lens_core::owned::expiry::Clock>,
    ) -> Self {
        self.series_clock = Some(clock);
        self
    }
}
