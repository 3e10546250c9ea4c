//! `NemoLensConfig`: everything nemo-lens reads from the environment.

use std::net::SocketAddr;

use std::time::Duration;

use opentelemetry_sdk::metrics::Temporality;

use nemo_lens_core::exemplar::{ExemplarFilter, OTEL_METRICS_EXEMPLAR_FILTER};
pub use nemo_lens_core::OtlpProtocol;
use nemo_lens_core::{
    HistogramAggregation, PrometheusResourceLabels, SemconvOptIn, SeriesExpiry,
    DEFAULT_HISTOGRAM_AGGREGATION, SEMCONV_STABILITY_OPT_IN,
};

use super::env::{
    parse_bool, parse_duration, parse_idle_keys, parse_key_values, parse_millis, parse_number,
    parse_rate, ConfigError, EnvLookup, NamedFile, Reader,
};
use super::strategy::ExportStrategy;

/// Where metrics go (`NEMO_LENS_EXPORTER`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExporterKind {
    /// OTLP push over gRPC or HTTP/protobuf (`otlp`, the default).
    Otlp,
    /// A Prometheus scrape endpoint (`prometheus`).
    Prometheus,
    /// One JSON line per export on stdout (`console`).
    Console,
}

impl ExporterKind {
    /// The value of `NEMO_LENS_EXPORTER` that selects this exporter.
    pub fn as_str(self) -> &'static str {
        match self {
            ExporterKind::Otlp => "otlp",
            ExporterKind::Prometheus => "prometheus",
            ExporterKind::Console => "console",
        }
    }

    fn parse(variable: &str, value: &str) -> Result<Self, ConfigError> {
        match value.to_ascii_lowercase().as_str() {
            "otlp" => Ok(ExporterKind::Otlp),
            "prometheus" => Ok(ExporterKind::Prometheus),
            "console" => Ok(ExporterKind::Console),
            _ => Err(ConfigError::new(
                variable,
                value,
                "one of otlp, prometheus, console",
            )),
        }
    }
}

/// Telemetry configuration, usually read with [`NemoLensConfig::from_env`].
///
/// Every field is public so programs can adjust what the environment said.
#[derive(Debug, Clone, PartialEq)]
pub struct NemoLensConfig {
    /// `NEMO_LENS_ENABLED` (default off).
    pub enabled: bool,
    /// `NEMO_LENS_METRICS_ENABLED` (default on): metrics may be switched off
    /// while telemetry as a whole stays enabled.
    pub metrics_enabled: bool,
    /// `OTEL_SDK_DISABLED` (default off): the OpenTelemetry-wide kill switch.
    pub sdk_disabled: bool,
    /// `NEMO_LENS_EXPORTER` (default `otlp`).
    pub exporter: ExporterKind,
    /// `NEMO_LENS_EXPORT_STRATEGY` (default `single_rank`).
    pub export_strategy: ExportStrategy,
    /// `NEMO_LENS_EXPORT_RANK` (default -1, the last rank); negative values
    /// count from the end.
    pub export_rank: i64,
    /// The variable [`export_rank`](Self::export_rank) was read from (with
    /// the prefix actually used), so a rank that does not fit the world size
    /// is reported against it; `NEMO_LENS_EXPORT_RANK` when unset.
    pub export_rank_variable: String,
    /// `NEMO_LENS_EXPORT_SAMPLE_RATE` in `0..=1` (default 0.1).
    pub export_sample_rate: f64,
    /// `NEMO_LENS_RUN_ID`; when unset the run id is `SLURM_JOB_ID` or 12
    /// random hex digits.
    pub run_id: Option<String>,
    /// `NEMO_LENS_USER_ID`.
    pub user_id: Option<String>,
    /// `OTEL_SERVICE_NAME` (default `nemo`).
    pub service_name: String,
    /// `OTEL_METRIC_EXPORT_INTERVAL` in milliseconds (default 10000).
    pub export_interval: Duration,
    /// `OTEL_METRIC_EXPORT_TIMEOUT` in milliseconds (default 10000): how
    /// long one OTLP export may take.
    pub export_timeout: Duration,
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`: the base URL (`http://` or
    /// `https://`, with a host); HTTP export appends `/v1/metrics`. Unset
    /// (with no metrics endpoint either) means the OTLP default,
    /// `http://localhost:4317` or `http://localhost:4318/v1/metrics`.
    pub otlp_endpoint: Option<String>,
    /// `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`: used as-is, and wins over
    /// [`otlp_endpoint`](Self::otlp_endpoint).
    pub otlp_metrics_endpoint: Option<String>,
    /// `OTEL_EXPORTER_OTLP_METRICS_HEADERS`, else `OTEL_EXPORTER_OTLP_HEADERS`,
    /// as `key=value` pairs with valid header names and printable ASCII
    /// values.
    pub otlp_headers: Vec<(String, String)>,
    /// `OTEL_EXPORTER_OTLP_METRICS_TIMEOUT`, else `OTEL_EXPORTER_OTLP_TIMEOUT`,
    /// in milliseconds: one OTLP request's timeout. Unset means
    /// [`export_timeout`](Self::export_timeout).
    pub otlp_timeout: Option<Duration>,
    /// `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`: `cumulative`
    /// (the default), `delta` or `lowmemory`.
    pub otlp_temporality: Temporality,
    /// `OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE`, else
    /// `OTEL_EXPORTER_OTLP_CERTIFICATE`: PEM CA certificates trusted for an
    /// `https://` endpoint instead of the built-in roots (`otlp-tls`).
    pub otlp_certificate: Option<NamedFile>,
    /// `OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE`, else
    /// `OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE`: the PEM client certificate
    /// chain for mutual TLS; needs the key too.
    pub otlp_client_certificate: Option<NamedFile>,
    /// `OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY`, else
    /// `OTEL_EXPORTER_OTLP_CLIENT_KEY`: the client certificate's PEM private
    /// key.
    pub otlp_client_key: Option<NamedFile>,
    /// `OTEL_EXPORTER_OTLP_METRICS_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL`
    /// (default `grpc`).
    pub otlp_protocol: OtlpProtocol,
    /// `OTEL_RESOURCE_ATTRIBUTES` as `key=value` pairs.
    pub resource_attributes: Vec<(String, String)>,
    /// `DEPLOYMENT_ENV`, else `ENVIRONMENT`.
    pub deployment_environment: Option<String>,
    /// `OTEL_EXPORTER_PROMETHEUS_HOST` and `OTEL_EXPORTER_PROMETHEUS_PORT`
    /// (default `127.0.0.1:9464`: loopback unless a host is asked for).
    pub prometheus_addr: SocketAddr,
    /// `NEMO_LENS_PROMETHEUS_PORT_PER_LOCAL_RANK` (default off): each rank
    /// serves on the port plus its local rank (`LOCAL_RANK`,
    /// `SLURM_LOCALID`, ...), so the ranks of one host do not share a port.
    pub prometheus_port_per_local_rank: bool,
    /// `NEMO_LENS_PROMETHEUS_WEB_CONFIG`: Prometheus's web configuration
    /// file (exporter-toolkit's format: TLS, client certificates, basic
    /// auth, headers) for the scrape endpoint; needs the `prometheus-tls`
    /// feature. `None`: plain HTTP, no authentication.
    pub prometheus_web_config: Option<std::path::PathBuf>,
    /// `NEMO_LENS_PROMETHEUS_RESOURCE_LABELS`: `all`, `none` or a list of
    /// keys (default `service.name,service.instance.id,nemo.run.id,dl.rank`):
    /// the resource attributes the Prometheus endpoint puts on every series.
    pub prometheus_resource_labels: PrometheusResourceLabels,
    /// `OTEL_SEMCONV_STABILITY_OPT_IN` (default none): which
    /// semantic-convention names the meter's sets record, e.g.
    /// `gen_ai_latest_experimental` for the GenAI draft's token metrics.
    /// Values other libraries read are kept and change nothing here.
    pub semconv_opt_in: SemconvOptIn,
    /// `OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION`:
    /// `explicit_bucket_histogram` (the default) or
    /// `base2_exponential_bucket_histogram`, for every histogram on every
    /// exporter (a declaration may pin its own).
    pub histogram_aggregation: HistogramAggregation,
    /// `NEMO_LENS_CARDINALITY_LIMIT`: the attribute sets (series) each
    /// instrument keeps before the SDK merges the rest into one series
    /// marked `otel.metric.overflow`; `None` for the SDK's 2000.
    pub cardinality_limit: Option<usize>,
    /// `NEMO_LENS_SERIES_IDLE_TIMEOUT`: a series not recorded for this long
    /// ends (see [`Meter::forget`](nemo_lens_core::Meter::forget) for the rules); a
    /// duration such as `30s`, `15m` or `2h`. `None` (unset or `0`): series
    /// never end, as in Python nemo-lens.
    pub series_idle_timeout: Option<Duration>,
    /// `NEMO_LENS_SERIES_IDLE_KEYS`: attribute keys, comma-separated
    /// (`server.address,gen_ai.request.model`); when set, only the series
    /// carrying one of them end after `series_idle_timeout` (a gateway's
    /// per-backend series), and the rest never do. Empty: every series
    /// ends when idle. See [`series_expiry`](Self::series_expiry).
    pub series_idle_keys: Vec<String>,
    /// `NEMO_LENS_SLO`: latency objectives in NVIDIA aiperf's `--goodput`
    /// syntax (`time_to_first_token:300 inter_token_latency:20`, ms; see
    /// [`Slo::parse`](nemo_lens_core::slo::Slo::parse)): every request the
    /// meter's request guards, the OpenAI layer and the metering proxy see is
    /// judged against them and counted in `nemo.inference.requests.judged`.
    /// `None` (unset): nothing is judged, nothing is added.
    pub slo: Option<nemo_lens_core::slo::Slo>,
    /// `OTEL_METRICS_EXEMPLAR_FILTER`: which histogram records leave an
    /// exemplar (`trace_based`, the default: those made in a sampled span;
    /// `always_on`; `always_off`).
    pub exemplar_filter: ExemplarFilter,
    /// The prefix of nemo-lens's own variables as this configuration read
    /// them (`NEMO_LENS`, or the first prefix given to
    /// [`from_env_with_prefix`](Self::from_env_with_prefix)), so messages
    /// name the variable to set as the program's users spell it.
    pub prefix: String,
    /// Whether `NEMO_LENS_ENABLED` was set at all, to true or false: setup
    /// explains on stderr why telemetry left off by default exports nothing,
    /// and stays silent about telemetry switched off on purpose.
    pub enabled_set: bool,
    /// What in the environment asks for an exporter:
    /// `NEMO_LENS_EXPORTER=value`, else the name of the first of
    /// [`EXPORTER_VARIABLES`] that is set (without its value, which may hold
    /// credentials); `None` when nothing does. With telemetry off by
    /// default, [`setup_telemetry`](super::setup_telemetry) says so on
    /// stderr.
    pub exporter_requested_by: Option<String>,
}

/// The `OTEL_EXPORTER_*` variables that ask for metrics to be exported:
/// those nemo-lens reads. Trace- and log-only ones (`..._TRACES_ENDPOINT`)
/// are left out, since a program exporting traces alone sets them.
pub const EXPORTER_VARIABLES: [&str; 20] = [
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_PROMETHEUS_PORT",
    "OTEL_EXPORTER_PROMETHEUS_HOST",
    "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT",
    "OTEL_EXPORTER_OTLP_TIMEOUT",
    "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE",
    "OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION",
    "OTEL_EXPORTER_OTLP_METRICS_COMPRESSION",
    "OTEL_EXPORTER_OTLP_COMPRESSION",
    "OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE",
    "OTEL_EXPORTER_OTLP_CERTIFICATE",
    "OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE",
    "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE",
    "OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY",
    "OTEL_EXPORTER_OTLP_CLIENT_KEY",
];

impl Default for NemoLensConfig {
    fn default() -> Self {
        NemoLensConfig {
            enabled: false,
            metrics_enabled: true,
            sdk_disabled: false,
            exporter: ExporterKind::Otlp,
            export_strategy: ExportStrategy::SingleRank,
            export_rank: -1,
            export_rank_variable: format!("{DEFAULT_PREFIX}_EXPORT_RANK"),
            export_sample_rate: 0.1,
            run_id: None,
            user_id: None,
            service_name: "nemo".to_owned(),
            export_interval: Duration::from_millis(10_000),
            export_timeout: Duration::from_millis(10_000),
            otlp_endpoint: None,
            otlp_metrics_endpoint: None,
            otlp_headers: Vec::new(),
            otlp_timeout: None,
            otlp_temporality: Temporality::Cumulative,
            otlp_certificate: None,
            otlp_client_certificate: None,
            otlp_client_key: None,
            otlp_protocol: OtlpProtocol::Grpc,
            resource_attributes: Vec::new(),
            deployment_environment: None,
            prometheus_addr: SocketAddr::from(([127, 0, 0, 1], 9464)),
            prometheus_port_per_local_rank: false,
            prometheus_web_config: None,
            prometheus_resource_labels: PrometheusResourceLabels::default(),
            semconv_opt_in: SemconvOptIn::none(),
            histogram_aggregation: HistogramAggregation::ExplicitBucket,
            cardinality_limit: None,
            series_idle_timeout: None,
            series_idle_keys: Vec::new(),
            exemplar_filter: ExemplarFilter::TraceBased,
            slo: None,
            prefix: DEFAULT_PREFIX.to_owned(),
            enabled_set: false,
            exporter_requested_by: None,
        }
    }
}

/// The library prefix nemo-lens reads its own variables under.
pub const DEFAULT_PREFIX: &str = "NEMO_LENS";

impl NemoLensConfig {
    /// Reads the process environment with the `NEMO_LENS_` prefix.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(EnvLookup::process())
    }

    /// Reads the process environment with a library prefix: `PREFIX_ENABLED`
    /// first, then `FALLBACK_ENABLED`, for example
    /// `from_env_with_prefix("MEGATRON_OTEL", Some("NEMO_LENS"))`. The
    /// `OTEL_*` and deployment variables are never prefixed.
    pub fn from_env_with_prefix(prefix: &str, fallback: Option<&str>) -> Result<Self, ConfigError> {
        Self::from_lookup_with_prefix(EnvLookup::process(), prefix, fallback)
    }

    /// Reads variables from `env` with the `NEMO_LENS_` prefix, without
    /// touching the process environment.
    ///
    /// ```
    /// use nemo_lens::telemetry::{EnvLookup, NemoLensConfig};
    /// let env = EnvLookup::from_pairs([("NEMO_LENS_ENABLED", "yes")]);
    /// let config = NemoLensConfig::from_lookup(env).unwrap();
    /// assert!(config.enabled);
    /// assert_eq!(config.service_name, "nemo");
    /// ```
    pub fn from_lookup(env: EnvLookup) -> Result<Self, ConfigError> {
        Self::from_lookup_with_prefix(env, DEFAULT_PREFIX, None)
    }

    /// [`from_env_with_prefix`](Self::from_env_with_prefix) over `env`.
    pub fn from_lookup_with_prefix(
        env: EnvLookup,
        prefix: &str,
        fallback: Option<&str>,
    ) -> Result<Self, ConfigError> {
        let reader = Reader {
            env: &env,
            prefix,
            fallback,
        };
        let mut config = NemoLensConfig {
            prefix: prefix.to_owned(),
            ..NemoLensConfig::default()
        };

        if let Some((var, v)) = reader.prefixed("ENABLED") {
            config.enabled = parse_bool(&var, &v)?;
            config.enabled_set = true;
        }
        if let Some((var, v)) = reader.prefixed("METRICS_ENABLED") {
            config.metrics_enabled = parse_bool(&var, &v)?;
        }
        if let Some((var, v)) = reader.plain(&["OTEL_SDK_DISABLED"]) {
            config.sdk_disabled = parse_bool(&var, &v)?;
        }
        if let Some((var, v)) = reader.prefixed("EXPORTER") {
            config.exporter = ExporterKind::parse(&var, &v)?;
            config.exporter_requested_by = Some(format!("{var}={v}"));
        }
        config.exporter_requested_by = config
            .exporter_requested_by
            .or_else(|| reader.plain(&EXPORTER_VARIABLES).map(|(var, _)| var));
        if let Some((var, v)) = reader.prefixed("EXPORT_STRATEGY") {
            config.export_strategy = ExportStrategy::by_name(&v)
                .ok_or_else(|| ConfigError::new(&var, &v, ExportStrategy::accepted_names()))?;
        }
        if let Some((var, v)) = reader.prefixed("EXPORT_RANK") {
            config.export_rank =
                parse_number(&var, &v, "an integer rank, negative counts from the last")?;
            config.export_rank_variable = var;
        }
        if let Some((var, v)) = reader.prefixed("EXPORT_SAMPLE_RATE") {
            config.export_sample_rate = parse_rate(&var, &v)?;
        }
        config.run_id = reader.prefixed("RUN_ID").map(|(_, v)| v);
        config.user_id = reader.prefixed("USER_ID").map(|(_, v)| v);
        if let Some((_, v)) = reader.plain(&["OTEL_SERVICE_NAME"]) {
            config.service_name = v;
        }
        if let Some((var, v)) = reader.plain(&["OTEL_METRIC_EXPORT_INTERVAL"]) {
            config.export_interval = parse_millis(&var, &v)?;
        }
        if let Some((var, v)) = reader.plain(&["OTEL_METRIC_EXPORT_TIMEOUT"]) {
            config.export_timeout = parse_millis(&var, &v)?;
        }
        // Only a job that exports over OTLP reads (and so checks) the OTLP
        // variables: a stray one must not stop a Prometheus-only or a
        // disabled job.
        if config.exporter == ExporterKind::Otlp && config.metrics_active() {
            let otlp = super::otlp_env::read(&reader)?;
            config.otlp_protocol = otlp.protocol;
            config.otlp_endpoint = otlp.endpoint;
            config.otlp_metrics_endpoint = otlp.metrics_endpoint;
            config.otlp_headers = otlp.headers;
            config.otlp_timeout = otlp.timeout;
            config.otlp_temporality = otlp.temporality;
            config.otlp_certificate = otlp.certificate;
            config.otlp_client_certificate = otlp.client_certificate;
            config.otlp_client_key = otlp.client_key;
        }
        if let Some((var, v)) = reader.plain(&["OTEL_RESOURCE_ATTRIBUTES"]) {
            config.resource_attributes = parse_key_values(&var, &v)?;
            // As the OTel SDKs do: `OTEL_SERVICE_NAME` wins, else the
            // resource attributes' `service.name`, and only then the default.
            let named = reader.plain(&["OTEL_SERVICE_NAME"]).is_some();
            let given = config
                .resource_attributes
                .iter()
                .rev()
                .find(|(key, _)| key == "service.name");
            if let (false, Some((_, name))) = (named, given) {
                config.service_name = name.clone();
            }
        }
        config.deployment_environment = reader
            .plain(&["DEPLOYMENT_ENV", "ENVIRONMENT"])
            .map(|(_, v)| v);

        let host = reader.plain(&["OTEL_EXPORTER_PROMETHEUS_HOST"]);
        let port = reader.plain(&["OTEL_EXPORTER_PROMETHEUS_PORT"]);
        if let Some((var, v)) = port {
            let port: u16 = parse_number(&var, &v, "a TCP port number 0..=65535")?;
            config.prometheus_addr.set_port(port);
        }
        if let Some((var, v)) = host {
            // A non-loopback address is warned about when it is bound.
            let ip: std::net::IpAddr = match v.as_str() {
                "localhost" => [127, 0, 0, 1].into(),
                _ => parse_number(&var, &v, "an IP address such as 127.0.0.1 or localhost")?,
            };
            config.prometheus_addr.set_ip(ip);
        }
        if let Some((var, v)) = reader.prefixed("PROMETHEUS_PORT_PER_LOCAL_RANK") {
            config.prometheus_port_per_local_rank = parse_bool(&var, &v)?;
        }
        config.prometheus_web_config = reader
            .prefixed("PROMETHEUS_WEB_CONFIG")
            .map(|(_, v)| std::path::PathBuf::from(v));
        if let Some((var, v)) = reader.prefixed("PROMETHEUS_RESOURCE_LABELS") {
            config.prometheus_resource_labels = PrometheusResourceLabels::parse(&var, &v)?;
        }
        if let Some((_, v)) = reader.plain(&[SEMCONV_STABILITY_OPT_IN]) {
            config.semconv_opt_in = SemconvOptIn::parse(&v);
            warn_misspelt_opt_in(&v);
        }
        if let Some((var, v)) = reader.prefixed("CARDINALITY_LIMIT") {
            let limit: usize = parse_number(&var, &v, "a positive whole number of series")?;
            if limit == 0 {
                return Err(ConfigError::new(
                    &var,
                    &v,
                    "a positive whole number of series",
                ));
            }
            config.cardinality_limit = Some(limit);
        }
        if let Some((var, v)) = reader.prefixed("SERIES_IDLE_TIMEOUT") {
            let timeout = parse_duration(&var, &v)?;
            config.series_idle_timeout = (!timeout.is_zero()).then_some(timeout);
        }
        if let Some((var, v)) = reader.prefixed("SERIES_IDLE_KEYS") {
            config.series_idle_keys = parse_idle_keys(&var, &v, config.series_idle_timeout)?;
        }
        if let Some((var, v)) = reader.prefixed("SLO") {
            let slo = nemo_lens_core::slo::Slo::parse(&v).map_err(|error| {
                ConfigError::new(
                    &var,
                    &v,
                    format!(
                        "latency objectives in aiperf's --goodput syntax, such as \
                         `time_to_first_token:300 inter_token_latency:20` (ms); {error}"
                    ),
                )
            })?;
            config.slo = Some(slo);
        }
        if let Some((var, v)) = reader
            .plain(&[OTEL_METRICS_EXEMPLAR_FILTER])
            .filter(|(_, v)| !v.trim().is_empty())
        {
            config.exemplar_filter = v.parse().map_err(|_| {
                ConfigError::new(
                    &var,
                    &v,
                    "trace_based (the default), always_on or always_off",
                )
            })?;
        }
        if let Some((var, v)) = reader.plain(&[DEFAULT_HISTOGRAM_AGGREGATION]) {
            config.histogram_aggregation =
                HistogramAggregation::from_name(&v).ok_or_else(|| {
                    ConfigError::new(
                        &var,
                        &v,
                        "explicit_bucket_histogram or base2_exponential_bucket_histogram",
                    )
                })?;
        }
        Ok(config)
    }

    /// Which series end when idle, from `NEMO_LENS_SERIES_IDLE_TIMEOUT` and
    /// `NEMO_LENS_SERIES_IDLE_KEYS`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use nemo_lens::opentelemetry::KeyValue;
    /// use nemo_lens::telemetry::{EnvLookup, NemoLensConfig};
    ///
    /// let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs([
    ///     ("NEMO_LENS_SERIES_IDLE_TIMEOUT", "2m"),
    ///     ("NEMO_LENS_SERIES_IDLE_KEYS", "server.address"),
    /// ]))
    /// .unwrap();
    /// let expiry = config.series_expiry();
    /// let backend = [KeyValue::new("server.address", "10.0.0.7:8000")];
    /// assert_eq!(
    ///     expiry.timeout_of("gen_ai.client.operation.duration", &backend),
    ///     Some(Duration::from_secs(120))
    /// );
    /// assert_eq!(expiry.timeout_of("gen_ai.server.request.duration", &[]), None);
    /// ```
    pub fn series_expiry(&self) -> SeriesExpiry {
        let Some(timeout) = self.series_idle_timeout else {
            return SeriesExpiry::never();
        };
        if self.series_idle_keys.is_empty() {
            return SeriesExpiry::after(timeout);
        }
        self.series_idle_keys
            .iter()
            .fold(SeriesExpiry::never(), |expiry, key| {
                expiry.carrying(key.clone(), timeout)
            })
    }

    /// Whether telemetry is switched on at all: `NEMO_LENS_ENABLED`,
    /// `NEMO_LENS_METRICS_ENABLED` and not `OTEL_SDK_DISABLED`.
    pub fn metrics_active(&self) -> bool {
        self.enabled && self.metrics_enabled && !self.sdk_disabled
    }
}

/// The variable is shared with every instrumentation library (`http`,
/// `database`, ...), so an entry nemo-lens does not read is not an error;
/// but one that looks like the value it does read is a typo that would
/// silently keep the old names.
fn warn_misspelt_opt_in(value: &str) {
    for entry in value.split(',').map(str::trim) {
        let area = entry.strip_suffix("/dup").unwrap_or(entry);
        if let Some(meant) = misspelt_opt_in(area) {
            nemo_lens_core::__internal::warnings::emit(
                nemo_lens_core::__internal::warnings::Warning::Setting,
                || {
                    tracing::warn!(
                    "{SEMCONV_STABILITY_OPT_IN} has `{entry}`, which no instrument reads: did you \
                     mean `{meant}`? Until then the GenAI instruments keep their default names"
                );
                },
            );
        }
    }
}

/// The value nemo-lens reads that `area` is a misspelling of, if any.
fn misspelt_opt_in(area: &str) -> Option<&'static str> {
    const KNOWN: &str = nemo_lens_core::GEN_AI_LATEST_EXPERIMENTAL;
    let folded = area.to_ascii_lowercase().replace(['-', '.', ' '], "_");
    let close = folded.starts_with("gen_ai") || folded.starts_with("genai");
    (area != KNOWN && close).then_some(KNOWN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelt_gen_ai_opt_in_is_named_and_other_areas_are_not() {
        for typo in [
            "gen_ai_latest_experimentl",
            "gen_ai",
            "GEN_AI_LATEST_EXPERIMENTAL",
            "genai_latest_experimental",
            "gen-ai-latest-experimental",
        ] {
            assert_eq!(
                misspelt_opt_in(typo),
                Some("gen_ai_latest_experimental"),
                "{typo}"
            );
        }
        for fine in ["gen_ai_latest_experimental", "http", "database", "k8s", ""] {
            assert_eq!(misspelt_opt_in(fine), None, "{fine}");
        }
    }

    #[test]
    fn service_name_comes_from_the_resource_attributes_unless_named() {
        let c = config(&[("OTEL_RESOURCE_ATTRIBUTES", "service.name=trainer,team=rl")]).unwrap();
        assert_eq!(c.service_name, "trainer");
        let c = config(&[
            ("OTEL_RESOURCE_ATTRIBUTES", "service.name=trainer"),
            ("OTEL_SERVICE_NAME", "judge"),
        ])
        .unwrap();
        assert_eq!(c.service_name, "judge", "OTEL_SERVICE_NAME wins");
        assert_eq!(config(&[]).unwrap().service_name, "nemo");
    }

    fn config(pairs: &[(&str, &str)]) -> Result<NemoLensConfig, ConfigError> {
        NemoLensConfig::from_lookup(EnvLookup::from_pairs(pairs.iter().copied()))
    }

    #[test]
    fn defaults_match_nemo_lens() {
        let c = config(&[]).unwrap();
        assert_eq!(c, NemoLensConfig::default());
        assert!(!c.enabled && !c.metrics_active());
        assert_eq!(c.export_strategy, ExportStrategy::SingleRank);
        assert_eq!(c.export_rank, -1);
        assert_eq!(c.service_name, "nemo");
        assert_eq!(c.export_interval, Duration::from_millis(10_000));
        assert_eq!(c.otlp_protocol, OtlpProtocol::Grpc);
        assert_eq!(c.prometheus_addr.to_string(), "127.0.0.1:9464");
        assert_eq!(
            c.prometheus_resource_labels,
            PrometheusResourceLabels::keys([
                "service.name",
                "service.instance.id",
                "nemo.run.id",
                "dl.rank"
            ])
        );
    }

    #[test]
    fn otlp_variables_are_read_only_by_a_job_exporting_over_otlp() {
        let stray = [("OTEL_EXPORTER_OTLP_ENDPOINT", "ftp://x")];
        // Disabled, or exporting to Prometheus: the stray variable is not read.
        assert!(config(&stray).is_ok());
        let prometheus = config(&[
            ("NEMO_LENS_ENABLED", "1"),
            ("NEMO_LENS_EXPORTER", "prometheus"),
            stray[0],
        ])
        .unwrap();
        assert_eq!(prometheus.otlp_endpoint, None);
        // Exporting over OTLP: an error naming it.
        let err = config(&[("NEMO_LENS_ENABLED", "1"), stray[0]]).unwrap_err();
        assert_eq!(err.variable, "OTEL_EXPORTER_OTLP_ENDPOINT");
        assert_eq!(err.value, "ftp://x");
    }

    #[test]
    fn idle_timeouts_read_as_durations() {
        let read = |v: &str| {
            config(&[
                ("NEMO_LENS_ENABLED", "1"),
                ("NEMO_LENS_SERIES_IDLE_TIMEOUT", v),
            ])
            .unwrap()
            .series_idle_timeout
        };
        assert_eq!(read("30s"), Some(Duration::from_secs(30)));
        assert_eq!(read("2h"), Some(Duration::from_secs(7200)));
        assert_eq!(read("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(read("0"), None);
        assert_eq!(read("0s"), None);
        let unset = config(&[("NEMO_LENS_ENABLED", "1")]).unwrap();
        assert_eq!(unset.series_idle_timeout, None);
    }

    #[test]
    fn idle_keys_scope_the_timeout_and_need_one() {
        let scoped = config(&[
            ("NEMO_LENS_SERIES_IDLE_TIMEOUT", "90s"),
            (
                "NEMO_LENS_SERIES_IDLE_KEYS",
                " server.address, gen_ai.request.model ,",
            ),
        ])
        .unwrap();
        assert_eq!(
            scoped.series_idle_keys,
            ["server.address", "gen_ai.request.model"]
        );
        let expiry = scoped.series_expiry();
        let model = [opentelemetry::KeyValue::new("gen_ai.request.model", "m")];
        assert_eq!(
            expiry.timeout_of("gen_ai.server.request.duration", &model),
            Some(Duration::from_secs(90))
        );
        assert_eq!(
            expiry.timeout_of("gen_ai.server.request.duration", &[]),
            None
        );
        let everything = config(&[("NEMO_LENS_SERIES_IDLE_TIMEOUT", "90s")]).unwrap();
        assert_eq!(
            everything.series_expiry().timeout_of("x", &[]),
            Some(Duration::from_secs(90))
        );
        for timeout in [None, Some("0")] {
            let mut pairs = vec![("NEMO_LENS_SERIES_IDLE_KEYS", "server.address")];
            pairs.extend(timeout.map(|t| ("NEMO_LENS_SERIES_IDLE_TIMEOUT", t)));
            let err = config(&pairs).unwrap_err();
            assert_eq!(err.variable, "NEMO_LENS_SERIES_IDLE_KEYS");
            assert!(
                err.to_string()
                    .contains("NEMO_LENS_SERIES_IDLE_TIMEOUT set to how long"),
                "{err}"
            );
        }
        let err = config(&[
            ("NEMO_LENS_SERIES_IDLE_TIMEOUT", "1m"),
            ("NEMO_LENS_SERIES_IDLE_KEYS", "server address"),
        ])
        .unwrap_err();
        assert!(
            err.to_string().contains("`server address` holds a space"),
            "{err}"
        );
    }

    #[test]
    fn latency_objectives_are_read_in_aiperf_s_syntax_and_refused_naming_the_key() {
        // Blank is unset, as for every variable.
        for unset in [config(&[]), config(&[("NEMO_LENS_SLO", " ")])] {
            assert_eq!(unset.unwrap().slo, None);
        }
        let set = config(&[(
            "NEMO_LENS_SLO",
            "time_to_first_token:300 request_latency:3000",
        )])
        .unwrap();
        assert_eq!(
            set.slo.unwrap().to_string(),
            "time_to_first_token:300 request_latency:3000"
        );
        for (value, names) in [
            (
                "time_to_first_token:300 ttft:200",
                "`ttft` is not an objective",
            ),
            ("request_latency:3s", "`3s` is not a number of ms"),
            (
                "inter_token_latency:0",
                "`inter_token_latency:0`: the target must be",
            ),
        ] {
            let err = config(&[("NEMO_LENS_SLO", value)]).unwrap_err();
            assert_eq!(err.variable, "NEMO_LENS_SLO");
            let message = err.to_string();
            assert!(
                message.starts_with(&format!("invalid value \"{value}\" for NEMO_LENS_SLO")),
                "{message}"
            );
            assert!(message.contains(names), "{message}");
        }
    }

    #[test]
    fn every_variable_is_read() {
        let c = config(&[
            ("NEMO_LENS_ENABLED", "on"),
            ("NEMO_LENS_METRICS_ENABLED", "yes"),
            ("NEMO_LENS_EXPORTER", "otlp"),
            ("NEMO_LENS_EXPORT_STRATEGY", "sampled"),
            ("NEMO_LENS_EXPORT_RANK", "3"),
            ("NEMO_LENS_EXPORT_SAMPLE_RATE", "0.25"),
            ("NEMO_LENS_RUN_ID", "run-7"),
            ("NEMO_LENS_USER_ID", "alice"),
            ("OTEL_SERVICE_NAME", "trainer"),
            ("OTEL_METRIC_EXPORT_INTERVAL", "500"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "authorization=Bearer%20x,team=rl",
            ),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/protobuf"),
            ("OTEL_RESOURCE_ATTRIBUTES", "cluster=eos,team=rl"),
            ("ENVIRONMENT", "staging"),
            ("OTEL_EXPORTER_PROMETHEUS_PORT", "9999"),
            ("NEMO_LENS_PROMETHEUS_RESOURCE_LABELS", "service.name,team"),
            (
                "OTEL_SEMCONV_STABILITY_OPT_IN",
                "http,gen_ai_latest_experimental",
            ),
            (
                "OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION",
                "BASE2_EXPONENTIAL_BUCKET_HISTOGRAM",
            ),
            ("NEMO_LENS_SERIES_IDLE_TIMEOUT", "15m"),
        ])
        .unwrap();
        assert!(c.metrics_active());
        assert_eq!(c.series_idle_timeout, Some(Duration::from_secs(900)));
        assert_eq!(c.exporter, ExporterKind::Otlp);
        assert_eq!(c.export_strategy, ExportStrategy::Sampled);
        assert_eq!((c.export_rank, c.export_sample_rate), (3, 0.25));
        assert_eq!(c.run_id.as_deref(), Some("run-7"));
        assert_eq!(c.user_id.as_deref(), Some("alice"));
        assert_eq!(c.service_name, "trainer");
        assert_eq!(c.export_interval, Duration::from_millis(500));
        assert_eq!(c.otlp_endpoint.as_deref(), Some("http://127.0.0.1:4317"));
        assert_eq!(
            c.otlp_headers[0],
            ("authorization".into(), "Bearer x".into())
        );
        // The metrics-specific protocol wins over the general one.
        assert_eq!(c.otlp_protocol, OtlpProtocol::HttpProtobuf);
        assert_eq!(c.resource_attributes.len(), 2);
        assert_eq!(c.deployment_environment.as_deref(), Some("staging"));
        assert_eq!(c.prometheus_addr.to_string(), "127.0.0.1:9999");
        assert_eq!(
            c.prometheus_resource_labels,
            PrometheusResourceLabels::keys(["service.name", "team"])
        );
        assert!(c.semconv_opt_in.records_new("gen_ai_latest_experimental"));
        assert!(!c.semconv_opt_in.records_old("gen_ai_latest_experimental"));
        assert_eq!(
            c.histogram_aggregation,
            HistogramAggregation::Base2Exponential
        );
    }

    #[test]
    fn deployment_env_wins_over_environment() {
        let c = config(&[("DEPLOYMENT_ENV", "prod"), ("ENVIRONMENT", "dev")]).unwrap();
        assert_eq!(c.deployment_environment.as_deref(), Some("prod"));
    }

    #[test]
    fn prefix_wins_and_falls_back() {
        let env = EnvLookup::from_pairs([
            ("MEGATRON_OTEL_ENABLED", "1"),
            ("NEMO_LENS_ENABLED", "0"),
            ("NEMO_LENS_EXPORTER", "console"),
        ]);
        let c = NemoLensConfig::from_lookup_with_prefix(env, "MEGATRON_OTEL", Some("NEMO_LENS"))
            .unwrap();
        assert!(c.enabled);
        assert_eq!(c.exporter, ExporterKind::Console);

        let env = EnvLookup::from_pairs([("MEGATRON_OTEL_EXPORTER", "bogus")]);
        let err = NemoLensConfig::from_lookup_with_prefix(env, "MEGATRON_OTEL", Some("NEMO_LENS"))
            .unwrap_err();
        assert_eq!(err.variable, "MEGATRON_OTEL_EXPORTER");
    }

    #[test]
    fn bad_values_name_variable_value_and_accepted_set() {
        let cases: &[(&str, &str, &str)] = &[
            ("NEMO_LENS_ENABLED", "maybe", "yes, no"),
            ("NEMO_LENS_EXPORTER", "jaeger", "otlp, prometheus, console"),
            (
                "NEMO_LENS_EXPORT_STRATEGY",
                "everyone",
                "first_rank_per_node",
            ),
            ("NEMO_LENS_EXPORT_RANK", "last", "integer"),
            ("NEMO_LENS_EXPORT_SAMPLE_RATE", "2", "between 0 and 1"),
            ("OTEL_METRIC_EXPORT_INTERVAL", "10s", "milliseconds"),
            ("OTEL_METRIC_EXPORT_INTERVAL", "0", "positive"),
            ("OTEL_METRIC_EXPORT_TIMEOUT", "-5", "milliseconds"),
            (
                "OTEL_EXPORTER_OTLP_PROTOCOL",
                "http/json",
                "grpc or http/protobuf",
            ),
            ("OTEL_SDK_DISABLED", "nah", "true, false"),
            ("OTEL_EXPORTER_PROMETHEUS_PORT", "70000", "port"),
            ("OTEL_EXPORTER_PROMETHEUS_HOST", "my host", "IP address"),
            ("OTEL_RESOURCE_ATTRIBUTES", "novalue", "key=value"),
            (
                "NEMO_LENS_PROMETHEUS_RESOURCE_LABELS",
                "service.name,,dl.rank",
                "all, none, or a comma-separated list",
            ),
            (
                "OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION",
                "exponential",
                "explicit_bucket_histogram or base2_exponential_bucket_histogram",
            ),
            ("NEMO_LENS_CARDINALITY_LIMIT", "0", "positive whole number"),
            (
                "NEMO_LENS_SERIES_IDLE_TIMEOUT",
                "15",
                "duration such as 30s",
            ),
            (
                "NEMO_LENS_SERIES_IDLE_TIMEOUT",
                "5 min",
                "duration such as 30s",
            ),
            (
                "NEMO_LENS_SERIES_IDLE_TIMEOUT",
                "-1s",
                "duration such as 30s",
            ),
            (
                "NEMO_LENS_CARDINALITY_LIMIT",
                "lots",
                "positive whole number",
            ),
        ];
        for (var, value, expected) in cases {
            let err = config(&[("NEMO_LENS_ENABLED", "1"), (var, value)]).unwrap_err();
            assert_eq!(err.variable, *var);
            assert_eq!(err.value, *value);
            let message = err.to_string();
            assert!(
                message.contains(var) && message.contains(value),
                "{message}"
            );
            assert!(message.contains(expected), "{message}");
        }
    }

    #[test]
    fn sdk_disabled_switches_metrics_off() {
        let c = config(&[("NEMO_LENS_ENABLED", "1"), ("OTEL_SDK_DISABLED", "true")]).unwrap();
        assert!(c.enabled && !c.metrics_active());
        let c = config(&[
            ("NEMO_LENS_ENABLED", "1"),
            ("NEMO_LENS_METRICS_ENABLED", "0"),
        ])
        .unwrap();
        assert!(!c.metrics_active());
    }
}
