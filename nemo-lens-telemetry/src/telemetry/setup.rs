//! `setup_telemetry`: from a configuration to a running pipeline, holding
//! the process-wide slot so only one pipeline is live at a time.

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::InstrumentationScope;
use opentelemetry_sdk::metrics::SdkMeterProvider;

use super::config::NemoLensConfig;
use super::error::SetupError;
use super::handle::{Active, TelemetryHandle};
use super::launcher::{self, JobRank};
use super::options::SetupOptions;
use super::pipeline::{self, Pipeline};
use super::rank::{not_exported, rank_context, with_local_port};
use super::resource::{self, ResourceInputs};
use super::resource_labels::check_keys;
use super::run_id;
use nemo_lens_core::__internal::{meter_with_owned, registry_with, OwnedContext, Streams};
use nemo_lens_core::owned::Registry;
use nemo_lens_core::slo::Objectives;
use nemo_lens_core::Meter;

/// Sets up metrics for `rank` of `world_size` with default options; see
/// [`SetupOptions`] for the rest.
///
/// Disabled telemetry, or a rank the export strategy does not pick, gets a
/// [`Meter::noop`] that costs one branch per `record`. An exporting rank gets
/// a meter provider with the configured exporter and the resource described
/// in the module docs, installed as the global provider. Calling this twice
/// with telemetry enabled is an error unless
/// [`SetupOptions::allow_reinit`] is set.
///
/// A handle that exports nothing says why on
/// [`TelemetryHandle::why_not_exporting`] and once through `tracing`. When
/// the environment asks for an exporter (`NEMO_LENS_EXPORTER`, or one of
/// the [`EXPORTER_VARIABLES`](super::EXPORTER_VARIABLES) such as
/// `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_PROMETHEUS_PORT`) but
/// `NEMO_LENS_ENABLED` is unset, it also writes one line to stderr, once per
/// process, so a first run explains itself without a `tracing` subscriber:
///
/// ```text
/// nemo-lens: NEMO_LENS_EXPORTER=prometheus is set but telemetry is off: set NEMO_LENS_ENABLED=true (or 1) to export; nothing is recorded or exported
/// ```
///
/// Variables are named with the configuration's
/// [`prefix`](NemoLensConfig::prefix). A program whose environment asks for
/// no exporter, or that switches telemetry off explicitly
/// (`NEMO_LENS_ENABLED=false`, `NEMO_LENS_METRICS_ENABLED=false`,
/// `OTEL_SDK_DISABLED=true`), writes nothing.
pub fn setup_telemetry(
    config: &NemoLensConfig,
    rank: u32,
    world_size: u32,
) -> Result<TelemetryHandle, SetupError> {
    SetupOptions::new().setup(config, rank, world_size)
}

/// Sets up metrics for the rank the process's launcher (torchrun, Slurm,
/// Open MPI, a PMI launcher) gave it, with default options: see
/// [`JobRank`] for the variables read and [`SetupOptions::setup_from_launcher`].
///
/// ```no_run
/// use nemo_lens::telemetry::{setup_telemetry_from_launcher, NemoLensConfig};
///
/// // torchrun --nproc-per-node 4 trainer: each worker finds its own rank.
/// let telemetry = setup_telemetry_from_launcher(&NemoLensConfig::from_env()?)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn setup_telemetry_from_launcher(
    config: &NemoLensConfig,
) -> Result<TelemetryHandle, SetupError> {
    SetupOptions::new().setup_from_launcher(config)
}

impl SetupOptions {
    /// Sets up telemetry for `rank` of `world_size`; see [`setup_telemetry`].
    /// The rank within the node, which `first_rank_per_node` decides on and
    /// [`prometheus_port_per_local_rank`](Self::prometheus_port_per_local_rank)
    /// adds to the port, is the first set of `LOCAL_RANK`, `SLURM_LOCALID`,
    /// `OMPI_COMM_WORLD_LOCAL_RANK`, `MPI_LOCALRANKID` (else 0).
    pub fn setup(
        self,
        config: &NemoLensConfig,
        rank: u32,
        world_size: u32,
    ) -> Result<TelemetryHandle, SetupError> {
        self.setup_job(config, JobRank::new(rank, world_size))
    }

    /// Sets up telemetry for `job`: read from the launcher with
    /// [`JobRank::from_env`], or [`JobRank::SINGLE`] for a process started by
    /// hand. A job without a [`launcher`](JobRank::launcher) takes its local
    /// rank from the environment, as [`setup`](Self::setup) does.
    ///
    /// ```no_run
    /// use nemo_lens::telemetry::{EnvLookup, JobRank, NemoLensConfig, SetupOptions};
    ///
    /// // Under torchrun, srun or mpirun its rank; run by hand, rank 0 of 1.
    /// let job = JobRank::detect(&EnvLookup::process())?.unwrap_or(JobRank::SINGLE);
    /// let telemetry = SetupOptions::new().setup_job(&NemoLensConfig::from_env()?, job)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn setup_job(
        self,
        config: &NemoLensConfig,
        job: JobRank,
    ) -> Result<TelemetryHandle, SetupError> {
        setup(config, job, self)
    }

    /// Sets up telemetry for the rank the launcher gave this process, read
    /// from this builder's [`env`](Self::env) with [`JobRank::from_lookup`]:
    /// an error naming the variables when no launcher set them.
    pub fn setup_from_launcher(
        self,
        config: &NemoLensConfig,
    ) -> Result<TelemetryHandle, SetupError> {
        let job = JobRank::from_lookup(&self.env)?;
        self.setup_job(config, job)
    }
}

/// The pipeline of the last enabled setup; `Some` once one has happened.
static CURRENT: Mutex<Option<Weak<Active>>> = Mutex::new(None);

fn setup(
    config: &NemoLensConfig,
    job: JobRank,
    options: SetupOptions,
) -> Result<TelemetryHandle, SetupError> {
    let JobRank {
        rank, world_size, ..
    } = job;
    if world_size == 0 || rank >= world_size {
        return Err(SetupError::InvalidRank { rank, world_size });
    }
    for buckets in &options.buckets {
        buckets
            .validate()
            .map_err(|reason| SetupError::InvalidBoundaries {
                instrument: buckets.instrument.clone(),
                reason,
            })?;
    }
    if !config.metrics_active() {
        if let Some(line) = off_by_default_notice(config) {
            say_once_on_stderr(&line);
        }
        return Ok(TelemetryHandle::idle(inactive_reason(config)));
    }
    let (local_rank, local_rank_variable) = match job.launcher {
        Some(launcher) => (job.local_rank, Some(launcher.local_rank_variable())),
        None => launcher::local_rank(&options.env)?,
    };
    let ctx = rank_context(config, local_rank, rank, world_size)?;

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
        return Ok(TelemetryHandle::idle(not_exported(
            config,
            &ctx,
            local_rank_variable,
        )));
    }
    let run_id = run_id::resolve(config, &options.env);
    run_id::warn_if_alone(config, &run_id, rank, world_size);
    let moved = with_local_port(config, options.port_per_local_rank, local_rank)?;
    let config: &NemoLensConfig = &moved;

    let resource = resource::build(&ResourceInputs {
        config,
        run_id: &run_id.id,
        env: &options.env,
        rank,
        world_size,
        service_version: options.service_version.as_deref(),
        extra: &options.resource_attributes,
        probe_gpus: options.probe_gpus,
    });
    match &options.prometheus_resource_labels {
        Some(labels) => check_keys(
            labels,
            "SetupOptions::prometheus_resource_labels",
            &resource,
        ),
        None => check_keys(
            &config.prometheus_resource_labels,
            &format!("{}_PROMETHEUS_RESOURCE_LABELS", config.prefix),
            &resource,
        ),
    }?;
    let streams = Streams {
        buckets: options.buckets,
        histogram_aggregation: options
            .histogram_aggregation
            .unwrap_or(config.histogram_aggregation),
        cardinality_limit: options.cardinality_limit.or(config.cardinality_limit),
    };
    nemo_lens_core::__internal::overflow::set_limit(streams.cardinality_limit);
    let owned_streams = Arc::new(streams.clone());
    let builder = SdkMeterProvider::builder()
        .with_resource(resource)
        .with_view(streams.view());
    // Owned series reach only the exporters nemo-lens builds; a pipeline
    // the caller assembled reads the SDK's.
    let (pipeline, registry) = match options.install {
        Some(_) if options.prometheus_resource_labels.is_some() => {
            return Err(SetupError::UnusedOption {
                option: "prometheus_resource_labels",
                with: "metric_reader or push_exporter",
                reason: "the reader you give is not nemo-lens's Prometheus endpoint; \
                         configure resource labels on your own exporter",
            });
        }
        Some(install) => {
            let pipeline = Pipeline::custom(install(builder, config.export_interval));
            #[cfg(feature = "prometheus")]
            if let Some(slot) = &options.owned_reader {
                let registry = new_registry(
                    options.series_expiry.clone(),
                    options.series_clock.clone(),
                    options.exemplar_filter,
                    config,
                );
                let _ = slot.set(Arc::clone(&registry));
                (pipeline, Some(registry))
            } else {
                (pipeline, None)
            }
            #[cfg(not(feature = "prometheus"))]
            (pipeline, None)
        }
        None => {
            let registry = new_registry(
                options.series_expiry.clone(),
                options.series_clock.clone(),
                options.exemplar_filter,
                config,
            );
            // The options win over the configuration they override.
            let overridden = (options.prometheus_resource_labels.is_some()
                || options.prometheus_web_config.is_some())
            .then(|| NemoLensConfig {
                prometheus_resource_labels: options
                    .prometheus_resource_labels
                    .unwrap_or_else(|| config.prometheus_resource_labels.clone()),
                prometheus_web_config: options
                    .prometheus_web_config
                    .or_else(|| config.prometheus_web_config.clone()),
                ..config.clone()
            });
            let config = overridden.as_ref().unwrap_or(config);
            let pipeline = pipeline::install(config, builder, Arc::clone(&registry))?;
            (pipeline, Some(registry))
        }
    };
    let provider = pipeline.builder.build();
    if let (true, Some(registry)) = (pipeline.keep_exports_coming, &registry) {
        nemo_lens_core::__internal::keep_exports_coming(&provider, registry);
    }
    let semconv = options
        .semconv_opt_in
        .unwrap_or_else(|| config.semconv_opt_in.clone());
    let objectives = options
        .objectives
        .or_else(|| config.slo.clone().map(Objectives::new))
        .filter(|objectives| !objectives.is_empty());
    if options.set_global {
        opentelemetry::global::set_meter_provider(provider.clone());
        nemo_lens_core::__internal::set_installed(semconv.clone(), objectives.clone());
    }
    let scope = InstrumentationScope::builder("nemo.lens")
        .with_version(env!("CARGO_PKG_VERSION"))
        .build();
    let otel = provider.meter_with_scope(scope.clone());
    let active = Arc::new(Active {
        provider,
        prometheus_addr: pipeline.prometheus_addr,
        prometheus_tls: pipeline.prometheus_tls,
        report: pipeline.report,
        shutdown_timeout: options.shutdown_timeout,
        stoppers: Mutex::new(pipeline.stoppers),
        shut: AtomicBool::new(false),
    });
    *current = Some(Arc::downgrade(&active));
    let meter = match registry {
        Some(registry) => meter_with_owned(
            otel,
            semconv,
            OwnedContext {
                registry,
                scope,
                streams: owned_streams,
            },
        ),
        None => Meter::new(otel).with_semconv_opt_in(semconv),
    };
    Ok(TelemetryHandle {
        meter: match objectives {
            Some(objectives) => meter.with_objectives(objectives),
            None => meter,
        },
        is_exporting: true,
        active: Some(active),
        idle: None,
    })
}

/// The registry of owned series: expiry and exemplar filter from the
/// options, else the configuration.
fn new_registry(
    expiry: Option<nemo_lens_core::SeriesExpiry>,
    clock: Option<Arc<dyn nemo_lens_core::owned::expiry::Clock>>,
    exemplar_filter: Option<nemo_lens_core::ExemplarFilter>,
    config: &NemoLensConfig,
) -> Arc<Registry> {
    registry_with(
        expiry.unwrap_or_else(|| config.series_expiry()),
        clock,
        exemplar_filter.unwrap_or(config.exemplar_filter),
    )
}

/// Why a configuration records nothing, naming the variable to change.
fn inactive_reason(config: &NemoLensConfig) -> String {
    let prefix = &config.prefix;
    if config.sdk_disabled {
        "nemo-lens telemetry is off: OTEL_SDK_DISABLED=true disables every OpenTelemetry SDK; \
         unset it to export"
            .to_owned()
    } else if !config.metrics_enabled {
        format!(
            "nemo-lens metrics are off: {prefix}_METRICS_ENABLED=false; set it to true to export"
        )
    } else {
        format!(
            "nemo-lens telemetry is off until {prefix}_ENABLED=true (or 1) is set; nothing is \
             recorded or exported"
        )
    }
}

/// The stderr line for a run whose environment asks for an exporter while
/// telemetry is off only because nothing switched it on: the first run of
/// a program written from the README, whose author has no `tracing`
/// subscriber to show [`inactive_reason`]. `None` when nothing asked, or
/// when telemetry was switched off on purpose.
pub(super) fn off_by_default_notice(config: &NemoLensConfig) -> Option<String> {
    let off_on_purpose = config.enabled_set || !config.metrics_enabled || config.sdk_disabled;
    if config.metrics_active() || off_on_purpose {
        return None;
    }
    let requested_by = config.exporter_requested_by.as_deref()?;
    Some(format!(
        "nemo-lens: {requested_by} is set but telemetry is off: set {}_ENABLED=true (or 1) to \
         export; nothing is recorded or exported",
        config.prefix
    ))
}

/// Whether the off-by-default notice has been written by this process.
static NOTICE_WRITTEN: AtomicBool = AtomicBool::new(false);

fn say_once_on_stderr(line: &str) {
    // A program calling setup per rank or per retry hears it once.
    if NOTICE_WRITTEN.swap(true, Ordering::Relaxed) {
        return;
    }
    // A closed stderr must not fail or panic setup, as `eprintln!` would.
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::EnvLookup;

    fn notice(pairs: &[(&str, &str)]) -> Option<String> {
        let env = EnvLookup::from_pairs(pairs.iter().copied());
        off_by_default_notice(&NemoLensConfig::from_lookup(env).unwrap())
    }

    fn notice_with_prefix(pairs: &[(&str, &str)]) -> Option<String> {
        let env = EnvLookup::from_pairs(pairs.iter().copied());
        let config =
            NemoLensConfig::from_lookup_with_prefix(env, "MEGATRON_OTEL", Some("NEMO_LENS"))
                .unwrap();
        off_by_default_notice(&config)
    }

    const SWITCH_ON: &str = "set NEMO_LENS_ENABLED=true (or 1) to export; nothing is recorded or \
                             exported";

    #[test]
    fn an_exporter_asked_for_while_off_by_default_is_explained() {
        assert_eq!(
            notice(&[("NEMO_LENS_EXPORTER", "prometheus")]).as_deref(),
            Some(
                "nemo-lens: NEMO_LENS_EXPORTER=prometheus is set but telemetry is off: set \
                 NEMO_LENS_ENABLED=true (or 1) to export; nothing is recorded or exported"
            )
        );
        // As the user spelled it.
        assert_eq!(
            notice(&[("NEMO_LENS_EXPORTER", "Console")]),
            Some(format!(
                "nemo-lens: NEMO_LENS_EXPORTER=Console is set but telemetry is off: {SWITCH_ON}"
            ))
        );
        for var in [
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "OTEL_EXPORTER_PROMETHEUS_PORT",
        ] {
            assert_eq!(
                notice(&[(var, "9000")]),
                Some(format!(
                    "nemo-lens: {var} is set but telemetry is off: {SWITCH_ON}"
                )),
                "{var}"
            );
        }
        // Names only: header and endpoint values may hold credentials.
        let headers =
            notice(&[("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer s3cret")]).unwrap();
        assert!(
            headers.starts_with("nemo-lens: OTEL_EXPORTER_OTLP_HEADERS is set but")
                && !headers.contains("s3cret"),
            "{headers}"
        );
        // The exporter variable is named first, whatever else is set.
        assert_eq!(
            notice(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4317"),
                ("NEMO_LENS_EXPORTER", "otlp"),
            ]),
            Some(format!(
                "nemo-lens: NEMO_LENS_EXPORTER=otlp is set but telemetry is off: {SWITCH_ON}"
            ))
        );
        for var in super::super::EXPORTER_VARIABLES {
            // Values every job reads and checks, disabled or not.
            let value = match var {
                "OTEL_EXPORTER_PROMETHEUS_PORT" => "9464",
                "OTEL_EXPORTER_PROMETHEUS_HOST" => "127.0.0.1",
                nemo_lens_core::DEFAULT_HISTOGRAM_AGGREGATION => "explicit_bucket_histogram",
                _ => "x",
            };
            assert!(notice(&[(var, value)]).is_some(), "{var}");
        }
    }

    #[test]
    fn the_notice_names_variables_as_the_prefix_spells_them() {
        // The fallback prefix's exporter is named as set; the switch as the
        // first prefix spells it, which wins over the fallback.
        assert_eq!(
            notice_with_prefix(&[("NEMO_LENS_EXPORTER", "prometheus")]).as_deref(),
            Some(
                "nemo-lens: NEMO_LENS_EXPORTER=prometheus is set but telemetry is off: set \
                 MEGATRON_OTEL_ENABLED=true (or 1) to export; nothing is recorded or exported"
            )
        );
        assert_eq!(
            notice_with_prefix(&[("MEGATRON_OTEL_EXPORTER", "console")]).as_deref(),
            Some(
                "nemo-lens: MEGATRON_OTEL_EXPORTER=console is set but telemetry is off: set \
                 MEGATRON_OTEL_ENABLED=true (or 1) to export; nothing is recorded or exported"
            )
        );
        // Switched off under either prefix: on purpose.
        assert_eq!(
            notice_with_prefix(&[
                ("NEMO_LENS_EXPORTER", "prometheus"),
                ("NEMO_LENS_ENABLED", "0")
            ]),
            None
        );
        let config = NemoLensConfig::from_lookup_with_prefix(
            EnvLookup::from_pairs([("X", "1")]),
            "MEGATRON_OTEL",
            None,
        )
        .unwrap();
        assert_eq!(
            inactive_reason(&config),
            "nemo-lens telemetry is off until MEGATRON_OTEL_ENABLED=true (or 1) is set; nothing \
             is recorded or exported"
        );
    }

    #[test]
    fn silent_when_nothing_asked_or_telemetry_was_switched_off() {
        assert_eq!(notice(&[]), None);
        // Variables that configure but do not ask for an exporter.
        assert_eq!(
            notice(&[
                ("OTEL_SERVICE_NAME", "trainer"),
                ("OTEL_RESOURCE_ATTRIBUTES", "team=rl"),
                (
                    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                    "http://collector:4317"
                ),
                ("NEMO_LENS_RUN_ID", "run7"),
            ]),
            None
        );
        let asked = ("NEMO_LENS_EXPORTER", "prometheus");
        for off in [
            ("NEMO_LENS_ENABLED", "false"),
            ("NEMO_LENS_ENABLED", "0"),
            ("NEMO_LENS_METRICS_ENABLED", "false"),
            ("OTEL_SDK_DISABLED", "true"),
        ] {
            assert_eq!(notice(&[asked, off]), None, "{off:?}");
            assert_eq!(
                notice(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4317"), off]),
                None,
                "{off:?}"
            );
        }
        // Enabled: it exports, nothing to explain.
        assert_eq!(notice(&[asked, ("NEMO_LENS_ENABLED", "1")]), None);
        // A configuration built in code asks for nothing.
        assert_eq!(off_by_default_notice(&NemoLensConfig::default()), None);
    }
}
