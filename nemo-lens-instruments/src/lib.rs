//! The built-in nemo-lens instrument sets: the GenAI server and client sets
//! with guards that time a request or a call, an inference engine's
//! scheduling gauges and timings (`nemo.inference.*`), RL (`rl.*`) and gym
//! (`gym.*`).
//!
//! Names, units, descriptions and attributes of the sets Python nemo-lens
//! 0.2.0 has match it exactly, so a Rust service and a Python trainer feed the
//! same dashboards. Use them through `nemo_lens::instruments`.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

mod genai;
pub mod goodput;
mod guard;
pub mod gym;
mod modality;
mod model_call;
mod request;
pub mod rl;
pub mod serving;
mod timing;

pub use genai::{
    record_inference_metrics, GenAiAttributes, InferenceMetrics, InferenceMetricsSet,
    ModelCallMetrics, ModelCallMetricsSet, EMBEDDINGS, FETCH_RESPONSE,
};
pub use guard::DROPPED_ERROR_TYPE;
pub use modality::TokenModality;
pub use model_call::ModelCall;
pub use request::InferenceRequest;
