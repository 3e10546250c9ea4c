//! The exporter pipeline of a configuration: each exporter gets its own
//! settings, mapped here from the configuration, and its own error.

use std::net::SocketAddr;
use std::sync::Arc;

use opentelemetry_sdk::metrics::MeterProviderBuilder;
#[cfg(any(feature = "otlp", feature = "console"))]
use opentelemetry_sdk::metrics::PeriodicReader;

use super::config::{ExporterKind, NemoLensConfig};
use super::error::SetupError;
use super::handle::Stopper;
use crate::report::ExportReport;
#[allow(unused_imports)] // without exporter features only the type is named
use nemo_lens_core::__internal::Feed;
use nemo_lens_core::owned::Registry;

/// A provider builder with its readers, and what must outlive them.
pub(super) struct Pipeline {
    pub builder: MeterProviderBuilder,
    /// Run after the provider shuts down, in order.
    pub stoppers: Vec<Stopper>,
    pub prometheus_addr: Option<SocketAddr>,
    /// Whether the endpoint speaks TLS.
    pub prometheus_tls: bool,
    /// Export outcomes, for push exporters.
    pub report: Option<Arc<ExportReport>>,
    /// A push exporter sends owned series: every export must come, even
    /// when the SDK collected nothing ([`KEEPALIVE_SCOPE`](nemo_lens_core::owned::KEEPALIVE_SCOPE)).
    pub keep_exports_coming: bool,
}

impl Pipeline {
    /// A pipeline the caller assembled (`SetupOptions::metric_reader`).
    pub(super) fn custom(builder: MeterProviderBuilder) -> Self {
        Pipeline {
            builder,
            stoppers: Vec::new(),
            prometheus_addr: None,
            prometheus_tls: false,
            report: None,
            keep_exports_coming: false,
        }
    }
}

/// Adds the configured exporter to `builder`.
pub(super) fn install(
    config: &NemoLensConfig,
    builder: MeterProviderBuilder,
    #[allow(unused_variables)] // read by the exporters, each behind its feature
    registry: Arc<Registry>,
) -> Result<Pipeline, SetupError> {
    #[allow(unused_mut, unused_variables)] // without exporter features it is unused
    let mut pipeline = Pipeline::custom(builder);
    match config.exporter {
        ExporterKind::Otlp => {
            #[cfg(feature = "otlp")]
            {
                let settings = otlp_settings(config);
                let (feed, pending) = Feed::new(registry, settings.temporality);
                let report = ExportReport::new(settings.endpoint.clone());
                let built = nemo_lens_otlp::build(&settings, pending, report.clone())
                    .map_err(crate::ExporterError::from)?;
                if let Some(mut runtime) = built.runtime {
                    pipeline
                        .stoppers
                        .push(Box::new(move |timeout| runtime.stop(timeout)));
                }
                let exporter =
                    crate::report::ReportingExporter::new(built.exporter, report.clone())
                        .with_feed(feed);
                let reader = PeriodicReader::builder(exporter)
                    .with_interval(config.export_interval)
                    .build();
                pipeline.builder = pipeline.builder.with_reader(reader);
                pipeline.report = Some(report);
                pipeline.keep_exports_coming = true;
                Ok(pipeline)
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
                use nemo_lens_prometheus::PrometheusError;
                // The error is non-exhaustive across the crate boundary: a
                // variant added later is still an exporter error.
                let web = super::web_config::load(config)?;
                pipeline.prometheus_tls = super::web_config::tls(&web);
                let (reader, mut server) = super::web_config::serve(
                    config.prometheus_addr,
                    &config.prometheus_resource_labels,
                    registry,
                    web,
                )
                .map_err(|e| match e {
                    PrometheusError::Bind { addr, source, .. } => SetupError::Bind {
                        addr,
                        error: source,
                    },
                    other => SetupError::Exporter(other.into()),
                })?;
                pipeline.prometheus_addr = Some(server.local_addr());
                pipeline.stoppers.push(Box::new(move |_| server.stop()));
                pipeline.builder = pipeline.builder.with_reader(reader);
                Ok(pipeline)
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
                use crate::report::ReportingExporter;
                let report = ExportReport::new("stdout");
                let (feed, pending) = Feed::new(
                    registry,
                    opentelemetry_sdk::metrics::Temporality::Cumulative,
                );
                let exporter = ReportingExporter::new(
                    crate::console::ConsoleExporter::stdout().with_owned(pending),
                    report.clone(),
                )
                .with_feed(feed);
                let reader = PeriodicReader::builder(exporter)
                    .with_interval(config.export_interval)
                    .build();
                pipeline.builder = pipeline.builder.with_reader(reader);
                pipeline.report = Some(report);
                pipeline.keep_exports_coming = true;
                Ok(pipeline)
            }
            #[cfg(not(feature = "console"))]
            Err(SetupError::FeatureDisabled {
                exporter: "console",
                feature: "console",
            })
        }
    }
}

/// The OTLP exporter's settings: the metrics endpoint as-is, else the base
/// endpoint (with `/v1/metrics` for HTTP), else the OTLP default.
#[cfg(feature = "otlp")]
fn otlp_settings(config: &NemoLensConfig) -> nemo_lens_otlp::OtlpSettings {
    use nemo_lens_core::OtlpProtocol;
    use nemo_lens_otlp::{OtlpSettings, TlsFiles};
    let endpoint = match (
        &config.otlp_metrics_endpoint,
        &config.otlp_endpoint,
        config.otlp_protocol,
    ) {
        (Some(full), _, _) => full.clone(),
        (None, Some(base), OtlpProtocol::Grpc) => base.clone(),
        (None, Some(base), OtlpProtocol::HttpProtobuf) => {
            format!("{}/v1/metrics", base.trim_end_matches('/'))
        }
        (None, None, OtlpProtocol::Grpc) => "http://localhost:4317".to_owned(),
        (None, None, OtlpProtocol::HttpProtobuf) => "http://localhost:4318/v1/metrics".to_owned(),
    };
    let named = |file: &Option<super::env::NamedFile>| {
        file.as_ref().map(|f| (f.variable.clone(), f.path.clone()))
    };
    OtlpSettings {
        endpoint,
        protocol: config.otlp_protocol,
        headers: config.otlp_headers.clone(),
        timeout: config.otlp_timeout.unwrap_or(config.export_timeout),
        temporality: config.otlp_temporality,
        tls: TlsFiles {
            ca: named(&config.otlp_certificate),
            client_certificate: named(&config.otlp_client_certificate),
            client_key: named(&config.otlp_client_key),
        },
    }
}
