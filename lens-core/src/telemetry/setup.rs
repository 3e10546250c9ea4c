//! `setup_telemetry`: from a configuration to a running pipeline, holding
//! the process-wide slot so only one pipeline is live at a time.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::InstrumentationScope;
use opentelemetry_sdk::metrics::SdkMeterProvider;

use super::buckets::Streams;
use super::config::NemoLensConfig;
use super::error::SetupError;
use super::handle::{Active, TelemetryHandle};
use super::options::SetupOptions;
use super::pipeline::{self, Pipeline};
use super::rank::rank_context;
use super::resource::{self, ResourceInputs};
use crate::Meter;

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

pub(super) fn setup(
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
        return Ok(TelemetryHandle::idle(inactive_reason(config)));
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
        return Ok(TelemetryHandle::idle(format!(
            "nemo-lens telemetry is not exported from rank {rank} of {world_size}: \
             NEMO_LENS_EXPORT_STRATEGY={} selects other ranks (set \
             NEMO_LENS_EXPORT_STRATEGY=all_ranks, or NEMO_LENS_EXPORT_RANK={rank} with \
             single_rank, to export from this one)",
            config.export_strategy.name()
        )));
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
    let streams = Streams {
        buckets: options.buckets,
        histogram_aggregation: options
            .histogram_aggregation
            .unwrap_or(config.histogram_aggregation),
        cardinality_limit: options.cardinality_limit.or(config.cardinality_limit),
    };
    crate::export::overflow::set_limit(streams.cardinality_limit);
    let builder = SdkMeterProvider::builder()
        .with_resource(resource)
        .with_view(streams.view());
    let pipeline = match options.install {
        Some(install) => Pipeline::custom(install(builder, config.export_interval)),
        None => {
            // The option wins over the configuration it overrides.
            let overridden = options
                .prometheus_resource_labels
                .map(|labels| NemoLensConfig {
                    prometheus_resource_labels: labels,
                    ..config.clone()
                });
            pipeline::install(overridden.as_ref().unwrap_or(config), builder)?
        }
    };
    let provider = pipeline.builder.build();
    let semconv = options
        .semconv_opt_in
        .unwrap_or_else(|| config.semconv_opt_in.clone());
    if options.set_global {
        opentelemetry::global::set_meter_provider(provider.clone());
        crate::global::set_semconv_opt_in(semconv.clone());
    }
    let otel = provider.meter_with_scope(
        InstrumentationScope::builder("nemo.lens")
            .with_version(env!("CARGO_PKG_VERSION"))
            .build(),
    );
    let active = Arc::new(Active {
        provider,
        prometheus_addr: pipeline.prometheus_addr,
        report: pipeline.report,
        shutdown_timeout: options.shutdown_timeout,
        stoppers: Mutex::new(pipeline.stoppers),
        shut: AtomicBool::new(false),
    });
    *current = Some(Arc::downgrade(&active));
    Ok(TelemetryHandle {
        meter: Meter::new(otel).with_semconv_opt_in(semconv),
        is_exporting: true,
        active: Some(active),
        idle: None,
    })
}

/// Why a configuration records nothing, naming the variable to change.
fn inactive_reason(config: &NemoLensConfig) -> String {
    if config.sdk_disabled {
        "nemo-lens telemetry is off: OTEL_SDK_DISABLED=true disables every OpenTelemetry SDK; \
         unset it to export"
            .to_owned()
    } else if !config.metrics_enabled {
        "nemo-lens metrics are off: NEMO_LENS_METRICS_ENABLED=false; set it to true to export"
            .to_owned()
    } else {
        "nemo-lens telemetry is off until NEMO_LENS_ENABLED=true (or 1) is set; nothing is \
         recorded or exported"
            .to_owned()
    }
}
