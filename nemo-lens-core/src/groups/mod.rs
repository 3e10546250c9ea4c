//! Runtime metric groups: Lens's `MetricSpec` registry, for metrics known
//! only at run time (a gym server reading its environments' specs, a
//! trainer declaring rows from a file).
//!
//! A group is registered once ([`register_metric_group`]), its specs checked
//! with the derive's rules; then any [`Meter`](crate::Meter) records it by
//! key ([`record_metrics`]). Instruments are built the first time a meter
//! records a group and cached on that meter, so they are freed with it.
//! Recording never fails the caller: each problem is one `tracing` warning,
//! once. Groups can come from JSON spec files ([`SpecFile`]) with Lens's
//! field names, and any derived set can be written out as one
//! ([`SpecFile::of`]) for a Python process to register the same metrics.
//!
//! ```
//! use nemo_lens::groups::{record_metrics, register_metric_group, MetricKind, MetricSpec};
//! use nemo_lens::opentelemetry::metrics::MeterProvider as _;
//! use nemo_lens::opentelemetry_sdk::metrics::SdkMeterProvider;
//! use nemo_lens::Meter;
//!
//! register_metric_group(
//!     "doc_trainer",
//!     [
//!         MetricSpec::new("reward_mean", "rl.reward.mean", MetricKind::Gauge)
//!             .description("Mean rollout reward."),
//!         MetricSpec::new("step_duration", "rl.step.duration", MetricKind::Histogram)
//!             .unit("s")
//!             .description("Wall-clock duration of a training step."),
//!     ],
//! )?;
//! let provider = SdkMeterProvider::builder().build();
//! let meter = Meter::new(provider.meter("nemo.lens"));
//! record_metrics(&meter, "doc_trainer", [("reward_mean", 0.75), ("step_duration", 12.5)], &[]);
//! # Ok::<(), nemo_lens::groups::SpecError>(())
//! ```

mod check;
mod export;
mod file;
mod record;
mod registry;
mod spec;
mod warn;

pub use check::{check_group, Problem, Rule, SpecError};
pub use file::{SpecFile, SpecFileError};
pub(crate) use record::GroupCache;
pub use record::{create_metric_instruments, record_metrics};
pub use registry::{
    register_metric_group, register_metric_group_with_override, registered_metric_groups,
    unregister_metric_group,
};
pub use spec::{MetricKind, MetricSpec, ObservableCallback};
