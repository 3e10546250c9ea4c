//! The built-in nemo-lens instrument sets: inference (OpenTelemetry GenAI
//! conventions), RL (`rl.*`) and gym (`gym.*`).
//!
//! Names, units, descriptions and attributes match Python nemo-lens 0.2.0
//! exactly, so a Rust service and a Python trainer feed the same dashboards.
//! Use them through `nemo_lens::instruments`.

#![warn(missing_docs)]

pub mod gym;
mod inference;
pub mod rl;

pub use inference::{record_inference_metrics, InferenceMetrics, InferenceMetricsSet};
