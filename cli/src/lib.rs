//! Generators over nemo-lens instrument sets: a catalog (Markdown or JSON),
//! a Grafana dashboard and Prometheus recording and alerting rules, with the
//! Prometheus names the exporter gives each instrument
//! ([`Descriptor::prometheus_names`](nemo_lens::Descriptor::prometheus_names)).
//!
//! The `nemo-lens` binary runs them on the built-in sets; call them from a
//! program of your own to cover your sets too:
//!
//! ```
//! use nemo_lens::Instruments;
//! use nemo_lens_cli::{builtin_sets, dashboard, rules, AlertPolicy, InstrumentSet};
//!
//! /// Metrics of one Megatron-style training iteration.
//! #[derive(Instruments, Default)]
//! #[instruments(prefix = "megatron")]
//! struct IterationMetrics {
//!     /// Time of one training iteration.
//!     #[histogram("megatron.iteration.duration", unit = "s")]
//!     iteration_time_s: Option<f64>,
//! }
//!
//! let mut sets = builtin_sets();
//! sets.push(InstrumentSet::of::<IterationMetrics>("Megatron"));
//! let dashboard = dashboard(&sets);
//! let rules = rules(&sets, &AlertPolicy::default());
//! assert!(dashboard.to_string().contains("megatron_iteration_duration_seconds_bucket"));
//! assert!(rules.to_yaml().contains("megatron_iteration_duration_seconds_bucket"));
//! ```

#![warn(missing_docs)]

mod catalog;
mod dashboard;
mod goodput_rules;
pub mod promql;
mod rules;
mod sets;
pub mod top;
mod units;

pub use catalog::{catalog_json, catalog_markdown};
pub use dashboard::{dashboard, DASHBOARD_UID};
pub use goodput_rules::{goodput_rules, Engine, GoodputPolicy, GoodputRules, BURN_ALERTS};
pub use rules::{rules, AlertPolicy, AlertRule, LatencyAlert, RecordingRule, RuleFile};
pub use sets::{
    builtin_group, builtin_sets, builtin_sets_for, spec_sets, unreleased_sets, Attribute,
    BuiltinGroup, Instrument, InstrumentSet,
};
pub use units::grafana_unit;
